"""What pages say in words: players' names, deadlines, results, what a timeout does.

Times are said in the reader's zone and language (`referee.i18n`: the player's,
else the browser's, else UTC), the zone named, so a reader never has to guess.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from babel.dates import format_date, format_skeleton

from referee.i18n import N_, _, clock, language, ngettext, zone
from referee.names import shown as shown_name
from referee.names import with_bot
from referee.store.tables import TimeoutPolicy

# What the referee plays for a seat out of time, as the pages say it (through `_`).
ON_TIMEOUT: dict[str, str] = {
    TimeoutPolicy.RANDOM: N_("the referee plays a random legal move for them"),
    TimeoutPolicy.PASS: N_("the referee passes for them"),
    TimeoutPolicy.FORFEIT: N_("they forfeit the game"),
    TimeoutPolicy.BOT: N_("a bot plays for them"),
}


def on_timeout_words(policy: str) -> str:
    """What the referee does for a seat out of time, in the reader's language."""
    return _(ON_TIMEOUT[policy])


def seat_words(seat: int) -> str:
    """A seat without a name: "Player 2"."""
    return _("Player %(number)d") % {"number": seat + 1}


def shown_names(seats: list[Any]) -> list[str]:
    """The players' names as pages show them (`names.shown`); `Player N` where none is left;
    a bot's seat says so (`Name (bot, strong)`)."""
    return [with_bot(shown_name(s.name) or seat_words(s.seat), s.bot) for s in seats]


def bot_names(handed: list[Any]) -> dict[int, tuple[str, int]]:
    """For each seat a person took over from a bot (`SeatHandover` rows), the bot's name
    as pages show it and the first move that is no longer the bot's."""
    return {
        h.seat: (with_bot(shown_name(h.bot_name) or seat_words(h.seat), h.bot), h.from_seq or 0)
        for h in handed
    }


# Up to this far ahead a deadline is said as a count of hours ("in 3 hours").
_COUNTED = timedelta(hours=12)
_WEEK = 7
_DAY, _HOUR, _MINUTE = timedelta(days=1), timedelta(hours=1), timedelta(minutes=1)


def _counted(left: timedelta) -> str:
    """A deadline under `_COUNTED` away, rounded to the nearest: a 3-hour turn just begun
    is "in 3 hours", not 2."""
    if left < timedelta(minutes=59, seconds=30):
        minutes = round(left / _MINUTE)
        return ngettext("in %(num)d minute", "in %(num)d minutes", minutes) % {"num": minutes}
    hours = round(left / _HOUR)
    return ngettext("in %(num)d hour", "in %(num)d hours", hours) % {"num": hours}


def deadline_words(due: datetime | None, now: datetime) -> str:
    """When a turn runs out, as a person says it, in the reader's zone: "in 3 hours",
    "tomorrow at 7:00 AM UTC", "demain à 08:00 CET", "overdue"; "no time limit" for none."""
    if due is None:
        return _("no time limit")
    left = due - now
    if left <= timedelta(0):
        return _("overdue")
    if left < _MINUTE:
        return _("in under a minute")
    if left < _COUNTED:
        return _counted(left)
    local, today = due.astimezone(zone()), now.astimezone(zone())
    at = clock(due)
    days = (local.date() - today.date()).days
    if days == 0:
        return _("today at %(time)s") % {"time": at}
    if days == 1:
        return _("tomorrow at %(time)s") % {"time": at}
    if days < _WEEK:
        weekday = format_date(local, "EEEE", locale=language())
        return _("on %(weekday)s at %(time)s") % {"weekday": weekday, "time": at}
    skeleton = "MMMd" if local.year == today.year else "yMMMd"
    day = format_skeleton(skeleton, local, locale=language())
    return _("on %(day)s at %(time)s") % {"day": day, "time": at}


def won(result: dict[str, Any] | None, mine: Collection[int]) -> bool:
    """Whether the player won a finished game alone."""
    winners = set((result or {}).get("winners", []))
    return len(winners) == 1 and not winners.isdisjoint(mine)


def result_words(result: dict[str, Any] | None, mine: Collection[int]) -> str:
    """How a finished game went for the player: "You won", "You lost", "Draw"."""
    if not result:
        return _("Finished")
    winners = set(result.get("winners", []))
    if winners.isdisjoint(mine):
        return _("You lost")
    return _("You won") if len(winners) == 1 else _("Draw")


def per_turn_words(seconds: int | None) -> str:
    """A game's time per turn: "3 days per turn", "90 minutes per turn", "no time limit"."""
    if seconds is None:
        return _("no time limit")
    turn = timedelta(seconds=seconds)
    if turn % _DAY == timedelta(0):
        days = turn // _DAY
        return ngettext("%(num)d day per turn", "%(num)d days per turn", days) % {"num": days}
    if turn % _HOUR == timedelta(0):
        hours = turn // _HOUR
        return ngettext("%(num)d hour per turn", "%(num)d hours per turn", hours) % {"num": hours}
    minutes = round(turn / _MINUTE)
    return ngettext("%(num)d minute per turn", "%(num)d minutes per turn", minutes) % {
        "num": minutes
    }


def ago_words(then: datetime, now: datetime) -> str:
    """How long ago something happened, as a person says it: "just now", "3 hours ago"."""
    past = now - then
    if past >= _DAY:
        days = past // _DAY
        return ngettext("%(num)d day ago", "%(num)d days ago", days) % {"num": days}
    if past >= _HOUR:
        hours = past // _HOUR
        return ngettext("%(num)d hour ago", "%(num)d hours ago", hours) % {"num": hours}
    if past >= _MINUTE:
        minutes = past // _MINUTE
        return ngettext("%(num)d minute ago", "%(num)d minutes ago", minutes) % {"num": minutes}
    return _("just now")
