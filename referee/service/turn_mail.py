"""How a player is told: reading and changing its turn mail settings, muting a game.

Reading needs the `read` scope (a player token may); changing settings
and mutes needs a signed-in browser (`manage`): a token handed to a
program must not be able to silence its owner's mail. A change may name
any of the settings; those it leaves out keep their values. What mail
follows from the settings is `referee.delivery.wishes`, asked at send
time; the digest is `referee.service.digests`, and what open games tell
(`seek_news` among them) `referee.service.seek_telling`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from referee import games
from referee.i18n import _
from referee.service import refusals
from referee.service.players import MANAGE, READ, Player
from referee.service.submitting import well_formed
from referee.store import digest_rows, mail_settings, player_seats, reads
from referee.store.clock import now
from referee.store.mail_settings import TurnMailSettings
from referee.store.tables import TurnMail

if TYPE_CHECKING:
    from referee.service import Referee

HOURS_IN_A_DAY = 24


@dataclass(frozen=True, slots=True)
class Told:
    """A player's settings and the games it muted."""

    settings: TurnMailSettings
    muted: list[str]


def settings_of(referee: Referee, player: Player) -> Told:
    player.require(READ)
    with referee.db.reading() as session:
        return Told(
            mail_settings.read(session, player.address),
            mail_settings.muted_games(session, player.address),
        )


def checked(current: TurnMailSettings, changes: Mapping[str, Any]) -> TurnMailSettings:
    """`current` with `changes` applied, each checked: refused with the first that is wrong."""
    unknown = sorted(set(changes) - {"turn_mail", "digest_hours", "reminders", "seek_news"})
    if unknown:
        raise refusals.BadRequest(_("unknown setting {name}").format(name=repr(unknown[0])))
    chosen = current
    if "turn_mail" in changes:
        value = changes["turn_mail"]
        if value not in [kind.value for kind in TurnMail]:
            raise refusals.BadRequest(_("turn_mail is one of 'each', 'digest' or 'off'"))
        chosen = replace(chosen, turn_mail=TurnMail(value))
    if "digest_hours" in changes:
        chosen = replace(chosen, digest_hours=_hours(changes["digest_hours"]))
    if "reminders" in changes:
        if not isinstance(changes["reminders"], bool):
            raise refusals.BadRequest(_("reminders is true or false"))
        chosen = replace(chosen, reminders=changes["reminders"])
    if "seek_news" in changes:
        chosen = replace(chosen, seek_news=_games(changes["seek_news"]))
    return chosen


def _games(given: Any) -> tuple[str, ...]:
    """The games whose new open games a player hears of: known names, each once."""
    known = games.names()
    if not isinstance(given, list | tuple) or any(name not in known for name in given):
        raise refusals.BadRequest(
            _("seek_news is a list of games, each one of {games}").format(games=", ".join(known))
        )
    return tuple(sorted(set(given)))


def _hours(given: Any) -> tuple[int, ...]:
    wrong = refusals.BadRequest(
        _("digest_hours is a list of 1 to 24 distinct hours of the player's day, each 0 to 23")
    )
    if not isinstance(given, list | tuple) or not 1 <= len(given) <= HOURS_IN_A_DAY:
        raise wrong
    if any(type(hour) is not int or not 0 <= hour < HOURS_IN_A_DAY for hour in given):
        raise wrong
    if len(set(given)) != len(given):
        raise refusals.BadRequest(_("digest_hours lists an hour twice"))
    return tuple(sorted(given))


def change_settings(referee: Referee, player: Player, changes: Mapping[str, Any]) -> Told:
    """Change some of the player's settings; the others keep their values."""
    player.require(MANAGE)
    with referee.db.transaction() as session:
        chosen = checked(mail_settings.read(session, player.address), changes)
        if not mail_settings.change(session, player.address, chosen):
            raise refusals.NotFound(_("the referee has never mailed this address"))
    return settings_of(referee, player)


def mute_game(referee: Referee, player: Player, game_id: str, muted: bool) -> Told:
    """Mute (or unmute) a game the player holds a seat in, for this player alone."""
    player.require(MANAGE)
    with referee.db.transaction() as session:
        if not well_formed(game_id) or not player_seats.seat_numbers(
            session, player.address, game_id
        ):
            raise refusals.NotFound(_("you hold no seat in a game with this id"))
        if muted:
            mail_settings.mute(session, player.address, game_id, now())
        else:
            mail_settings.unmute(session, player.address, game_id)
    return settings_of(referee, player)


@dataclass(frozen=True, slots=True)
class RunningGame:
    """One of the player's running games, as the settings page lists it."""

    game_id: str
    title: str
    names: list[str]
    my_turn: bool
    muted: bool


def running_games(referee: Referee, player: Player) -> list[RunningGame]:
    """The player's running games (one line per game), oldest first, each muted or not."""
    player.require(READ)
    with referee.db.reading() as session:
        held = mail_settings.running_seats(session, player.address)
        muted = set(mail_settings.muted_games(session, player.address))
        listed = digest_rows.listed_games(session, [game.id for game, _seat in held])
    found: dict[str, RunningGame] = {}
    for game, seat in held:
        mine = seat.seat in game.to_act
        if game.id in found:
            found[game.id] = replace(found[game.id], my_turn=found[game.id].my_turn or mine)
            continue
        title = reads.rules_of(game).title
        names = listed[game.id].names
        found[game.id] = RunningGame(game.id, title, names, mine, game.id in muted)
    return list(found.values())
