"""What pages say in words: players' names, deadlines, results, what a timeout does.

Times are said in UTC, as every page and mail of the referee says them:
the page is rendered on the server, which does not know the reader's zone.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from referee.names import shown as shown_name
from referee.names import with_bot
from referee.store.tables import TimeoutPolicy

# What the referee plays for a seat out of time, as the pages say it.
ON_TIMEOUT: dict[str, str] = {
    TimeoutPolicy.RANDOM: "the referee plays a random legal move for them",
    TimeoutPolicy.PASS: "the referee passes for them",
    TimeoutPolicy.FORFEIT: "they forfeit the game",
    TimeoutPolicy.BOT: "a bot plays for them",
}


def shown_names(seats: list[Any]) -> list[str]:
    """The players' names as pages show them (`names.shown`); `Seat N` where none is left;
    a bot's seat says so (`Name (bot, strong)`)."""
    return [with_bot(shown_name(s.name) or f"Player {s.seat + 1}", s.bot) for s in seats]


def bot_names(handed: list[Any]) -> dict[int, tuple[str, int]]:
    """For each seat a person took over from a bot (`SeatHandover` rows), the bot's name
    as pages show it and the first move that is no longer the bot's."""
    return {
        h.seat: (with_bot(shown_name(h.bot_name) or f"Player {h.seat + 1}", h.bot), h.from_seq or 0)
        for h in handed
    }


# Up to this far ahead a deadline is said as a count of hours ("in 3 hours").
_COUNTED = timedelta(hours=12)
_WEEK = 7
_DAY, _HOUR, _MINUTE = timedelta(days=1), timedelta(hours=1), timedelta(minutes=1)


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def deadline_words(due: datetime | None, now: datetime) -> str:
    """When a turn runs out, as a person says it: "in 3 hours", "tomorrow at 07:00 UTC",
    "overdue"; "no time limit" for none."""
    if due is None:
        return "no time limit"
    left = due - now
    if left <= timedelta(0):
        return "overdue"
    if left < timedelta(minutes=1):
        return "in under a minute"
    # Rounded to the nearest: a 3-hour turn just begun is "in 3 hours", not 2.
    if left < timedelta(minutes=59, seconds=30):
        return f"in {_plural(round(left / timedelta(minutes=1)), 'minute')}"
    if left < _COUNTED:
        return f"in {_plural(round(left / timedelta(hours=1)), 'hour')}"
    at = due.strftime("%H:%M UTC")
    days = (due.date() - now.date()).days
    if days == 0:
        return f"today at {at}"
    if days == 1:
        return f"tomorrow at {at}"
    if days < _WEEK:
        return f"on {due:%A} at {at}"
    day = f"{due.day} {due:%b}" + ("" if due.year == now.year else f" {due.year}")
    return f"on {day} at {at}"


def result_words(result: dict[str, Any] | None, mine: Collection[int]) -> str:
    """How a finished game went for the player: "You won", "You lost", "Draw"."""
    if not result:
        return "Finished"
    winners = set(result.get("winners", []))
    if winners.isdisjoint(mine):
        return "You lost"
    return "You won" if len(winners) == 1 else "Draw"


def per_turn_words(seconds: int | None) -> str:
    """A game's time per turn: "3 days per turn", "90 minutes per turn", "no time limit"."""
    if seconds is None:
        return "no time limit"
    turn = timedelta(seconds=seconds)
    for unit, size in (("day", _DAY), ("hour", _HOUR), ("minute", _MINUTE)):
        if turn % size == timedelta(0):
            return f"{_plural(turn // size, unit)} per turn"
    return f"{_plural(round(turn / _MINUTE), 'minute')} per turn"


def ago_words(then: datetime, now: datetime) -> str:
    """How long ago something happened, as a person says it: "just now", "3 hours ago"."""
    past = now - then
    for unit, size in (("day", _DAY), ("hour", _HOUR), ("minute", _MINUTE)):
        if past >= size:
            return f"{_plural(past // size, unit)} ago"
    return "just now"
