"""Taking a bot's seat over: a player who joins an open game started with bots
(`referee.service.seeks`) plays one of the seats the bots held.

Which seat: the lowest-numbered seat a bot of the seek's level has held
since the game began (not one handed to a bot after timeouts) and nobody
took yet. The join holds the seek's lock (one join at a time) and takes the
game's, the one deciding takes, so no move is judged meanwhile:

- when the seat is not among those to act, it is the player's at once, from
  the game's next move (`from_seq` = version + 1);
- when it is (the bot's turn is under way), the bot plays that turn, and the
  seat becomes the player's in the very transaction that logs the move after
  which it no longer acts (`hand_over_due`, called by deciding): a seat is
  never half handed over.

From then on the seat is like any other seat with an address: it bears its
player's public name, its API token is derived from the secret
(`keys.seat_link_token`) so that its personal and play-now links work, and
it is mailed. The `seat_handover` row keeps that the bot played the seat's
moves before `from_seq`: the game's record says so (`Header.handovers`).

Who is told: the newcomer (`seat_taken`: which seat, the moves so far, the
board, its links) and every other seat news reaches (`arrived`: who took
which seat). A game in which a bot played stays unrated.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.i18n import _
from referee.service import reachability, refusals
from referee.service.notifying import write
from referee.store import handover_rows, keys, reads
from referee.store.appending import outbox_row
from referee.store.decision_rows import Reach
from referee.store.handover_rows import Waiting
from referee.store.tables import GameStatus, OutboxKind, SeatHandover, Seek

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class TakenOver:
    """The seat a joining player took: theirs at once, or after the bot's turn under way."""

    game_id: str
    seat: int
    at_once: bool


@dataclass(frozen=True, slots=True)
class Handover:
    """A seat a bot held and a player plays now: the bot's moves are those before `from_seq`."""

    seat: int
    bot: str
    from_seq: int
    name: str


def take_over(session: Session, secret: bytes, seek: Seek, address: str, at: str) -> TakenOver:
    """Give `address` one of the bots' seats of the game `seek` started, the seek locked."""
    assert seek.game_id is not None and seek.bots is not None
    game = handover_rows.locked_game(session, seek.game_id)
    if game is None or game.status != GameStatus.ACTIVE:
        raise refusals.SeekStarted(_("the game this open game started is over"))
    seat = handover_rows.free_bot_seat(session, game.id, seek.bots)
    if seat is None:
        raise refusals.SeekStarted(_("this open game has started and its bots' seats are taken"))
    handover_rows.insert(
        session,
        SeatHandover(
            game_id=game.id,
            seat=seat.seat,
            bot=seek.bots,
            bot_name=seat.name,
            address=address,
            joined_version=game.version,
            joined_at=at,
        ),
    )
    if seat.seat in game.to_act:
        return TakenOver(game.id, seat.seat, at_once=False)
    reach = reachability.reach(session, game.id)
    connection = session.connection()
    (waiting,) = [
        found for found in handover_rows.waiting(connection, game.id) if found.seat == seat.seat
    ]
    notices = _hand(connection, secret, game.id, waiting, game.version, reach.reachable, at)
    write(connection, None, notices)
    return TakenOver(game.id, seat.seat, at_once=True)


def hand_over_due(
    connection: sa.Connection,
    secret: bytes,
    game_id: str,
    changed: dict[str, Any],
    reach: Reach,
    stamp: str,
) -> list[dict[str, Any]]:
    """Hand over each seat whose handover waited for the bot's turn, when the moves just
    logged (the game's new fields, `changed`) left it no longer to act; the notices to
    write once the seats are updated. Deciding calls this under the game's lock."""
    if not reach.bots:
        return []
    due = [
        waiting
        for waiting in handover_rows.waiting(connection, game_id)
        if waiting.seat not in changed["to_act"]
    ]
    notices = []
    told = set(reach.reachable)
    for waiting in due:
        notices += _hand(connection, secret, game_id, waiting, changed["version"], told, stamp)
        told.add(waiting.seat)
    return notices


def _hand(
    connection: sa.Connection,
    secret: bytes,
    game_id: str,
    waiting: Waiting,
    version: int,
    reachable: Collection[int],
    stamp: str,
) -> list[dict[str, Any]]:
    """Make the seat its player's from move `version + 1` on; the notices telling of it."""
    token = keys.seat_link_token(secret, game_id, waiting.seat)
    handover_rows.hand_seat(
        connection,
        game_id,
        waiting.seat,
        name=waiting.name or f"seat {waiting.seat}",
        address=waiting.address,
        token_hash=keys.hash_token(token),
        from_seq=version + 1,
    )
    payload = {"seat": waiting.seat, "bot": waiting.bot, "version": version}
    others = sorted(seat for seat in reachable if seat != waiting.seat)
    return [
        outbox_row(game_id, OutboxKind.SEAT_TAKEN, waiting.seat, payload, stamp),
        *(outbox_row(game_id, OutboxKind.ARRIVED, seat, payload, stamp) for seat in others),
    ]


def handovers(referee: Referee, game_id: str) -> list[Handover]:
    """The game's seats taken over from bots, by seat, with who plays each now."""
    with referee.db.reading() as session:
        done = handover_rows.done(session, game_id)
        names = {seat.seat: seat.name for seat in reads.seats(session, game_id)}
    return [
        Handover(found.seat, found.bot, found.from_seq or 0, names.get(found.seat, ""))
        for found in done
    ]
