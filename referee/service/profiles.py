"""What a player shows strangers: its public name; and whom it does not want to meet.

A public name follows `referee.names.public_refusal` and is unique on the
server compared without case or width (`referee.names.public_key`): the
store's unique key on that form settles two players asking for one name
at once. Seeks and, later, ratings and messages show a player by this
name and never by its address.

A block is one-way to make and two-way in effect: two players of whom one
blocked the other see none of each other's open games and cannot join
them (`referee.service.seeks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlmodel import Session

from referee.i18n import LANGUAGES, SOURCE_LANGUAGE, UTC_ZONE, _, known_language, known_zone
from referee.names import public_key, public_refusal
from referee.service import refusals
from referee.service.players import Player
from referee.store import addresses, player_rows
from referee.store.clock import stamp

if TYPE_CHECKING:
    from referee.service import Referee

# How stale a player's `seen_at` may be: it is written at most this often.
SEEN_EVERY = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Profile:
    name: str | None
    # What pages and mail speak to the player, and the zone they say times in.
    language: str = SOURCE_LANGUAGE
    time_zone: str = UTC_ZONE


def profile(referee: Referee, player: Player) -> Profile:
    with referee.db.reading() as session:
        name = player_rows.public_name(session, player.address)
        language, time_zone = player_rows.speech(session, player.address)
    return Profile(name, language or SOURCE_LANGUAGE, time_zone or UTC_ZONE)


def speech(referee: Referee, player: Player) -> tuple[str | None, str | None]:
    """The language and time zone the player chose (None: it chose none)."""
    with referee.db.reading() as session:
        return player_rows.speech(session, player.address)


def set_profile(
    referee: Referee,
    player: Player,
    name: str | None = None,
    language: str | None = None,
    time_zone: str | None = None,
) -> Profile:
    """Change what is given of the player's profile: its public name (unless the rule or
    another player refuses it), its language and its time zone; the rest stays."""
    why = None if name is None else public_refusal(name)
    if why is not None:
        raise refusals.BadRequest(why, errors={"name": [why]})
    if language is not None and known_language(language) != language:
        raise refusals.BadRequest(
            _("the referee speaks {languages}").format(languages=", ".join(LANGUAGES)),
            errors={"language": ["unknown"]},
        )
    if time_zone is not None and known_zone(time_zone) is None:
        raise refusals.BadRequest(
            _("{zone} is not an IANA time zone (such as Europe/Paris)").format(
                zone=repr(time_zone)
            ),
            errors={"time_zone": ["unknown"]},
        )
    with referee.db.transaction() as session:
        # A player signed in by mail whose address no seat named yet has no row to hold
        # its choices: one is made for it.
        addresses.ensure(session, referee.secret(), player.address)
        if name is not None and not player_rows.set_public_name(
            session, player.address, name, public_key(name)
        ):
            raise refusals.NameTaken(
                _("another player is called {name} already").format(name=repr(name))
            )
        player_rows.set_speech(session, player.address, language, time_zone)
    return profile(referee, player)


def seen(referee: Referee, address: str, moment: datetime | None = None) -> None:
    """Note that the player came by (signed in, or used a session or a player token),
    writing at most hourly; standing seeks of a player long unseen pause."""
    moment = moment or datetime.now(UTC)
    before = stamp(moment - SEEN_EVERY)
    # Read first: most requests find it fresh, and a read takes no write lock.
    with referee.db.reading() as session:
        last = player_rows.seen_at(session, address)
    if last is None or last < before:
        with referee.db.transaction() as session:
            player_rows.mark_seen(session, address, stamp(moment), before)


def blocks(referee: Referee, player: Player) -> list[str]:
    """The public names of the players this player blocks, in the order it blocked them."""
    with referee.db.reading() as session:
        blocked = player_rows.blocked_by(session, player.address)
        names = player_rows.names_of(session, blocked)
    return [names[address] for address in blocked if address in names]


def block(referee: Referee, player: Player, name: str) -> list[str]:
    """Block the player called `name`; the blocks after."""
    with referee.db.transaction() as session:
        player_rows.block(session, player.address, _address(session, player, name), _now())
    return blocks(referee, player)


def unblock(referee: Referee, player: Player, name: str) -> list[str]:
    with referee.db.transaction() as session:
        player_rows.unblock(session, player.address, _address(session, player, name))
    return blocks(referee, player)


def _address(session: Session, player: Player, name: str) -> str:
    address = player_rows.address_named(session, public_key(name)) if len(name) <= 100 else None
    if address is None or address == player.address:
        raise refusals.NotFound(_("no other player is called {name}").format(name=repr(name)))
    return address


def _now() -> str:
    return stamp(datetime.now(UTC))
