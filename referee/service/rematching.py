"""Rematch: a finished game played again, the same game, seats and options, a new seed.

Every seat of the finished game is offered a rematch (on its page, by API,
by replying "rematch" to the game-over mail). The new game starts when the
last seat accepts, and each seat is told as for a new game (an invitation,
mailed where the seat has an address the referee may mail). Its seats'
tokens are derived from the server's secret, so that whoever holds a seat
of the old game can be handed the same seat of the new one at any time
(`rematch_seat`), without the referee ever keeping a token.

A seat a bot played from the start accepts by itself and is the same
bot's in the rematch; a seat handed to a bot after timeouts is its
player's again, who must accept like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlmodel import Session

from referee.i18n import _
from referee.service import refusals
from referee.service.creating import NewGame, Player, create_game
from referee.service.publishing import Published, publish
from referee.service.submitting import SeatRef, seat_of
from referee.store import clock, reads, rematches
from referee.store.creation import new_id
from referee.store.keys import seat_link_token
from referee.store.tables import Game, GameStatus, TimeoutPolicy

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Rematch:
    """Where a finished game's rematch stands."""

    seats: int
    accepted: tuple[int, ...]
    # The new game, once every seat has accepted.
    game_id: str | None

    @property
    def waiting_for(self) -> tuple[int, ...]:
        return tuple(seat for seat in range(self.seats) if seat not in self.accepted)


def rematch_of(session: Session, game: Game) -> Rematch:
    seats = reads.seats(session, game.id)
    # A bot's seat from the start has no one to ask: it accepts.
    bots = {seat.seat for seat in seats if seat.bot and seat.bot_since is None}
    accepted = tuple(sorted(bots | set(rematches.accepted(session, game.id))))
    return Rematch(len(seats), accepted, rematches.rematch_id(session, game.id))


def accept_rematch(referee: Referee, game_id: str, seat: SeatRef) -> Rematch:
    """`seat` accepts a rematch of the finished game; the last to accept starts it."""
    with referee.db.transaction() as session:
        game = rematches.locked(session, game_id)
        if game is None:
            raise refusals.NotFound.game()
        standing, claimed = record_acceptance(session, game, seat_of(session, game.id, seat))
    if claimed is not None:
        start_rematch(referee, game, claimed)
    else:
        # The finished game's followers (its seats' pages) show who accepted as they do.
        publish(referee, Published(changed=[game.id]))
    return standing


def record_acceptance(session: Session, game: Game, seat: int) -> tuple[Rematch, str | None]:
    """Record that `seat` accepts, in `session`, with the game locked (`rematches.locked`).

    With every seat in, the rematch's id is claimed and returned: the caller
    starts it (`start_rematch`) once `session` is committed.
    """
    if game.status != GameStatus.OVER:
        raise refusals.StillInPlay(_("a rematch is offered once the game is over"))
    rematches.accept(session, game.id, seat, clock.now())
    standing = rematch_of(session, game)
    if standing.waiting_for or standing.game_id is not None:
        return standing, None
    claimed = new_id()
    rematches.claim(session, game.id, claimed, clock.now())
    return Rematch(standing.seats, standing.accepted, claimed), claimed


def start_rematch(referee: Referee, game: Game, rematch_id: str) -> None:
    """Create the rematch under the id claimed for it; drop the claim if that fails."""
    with referee.db.reading() as session:
        seats = reads.seats(session, game.id)
    players = [
        Player(seat.name, bot=seat.bot)
        if seat.bot and seat.bot_since is None
        else Player(seat.name, seat.email)
        for seat in seats
    ]
    deadline = None if game.deadline_seconds is None else f"{game.deadline_seconds}s"
    command = NewGame(
        game=game.name,
        players=players,
        options=game.options,
        deadline=deadline,
        on_timeout=game.on_timeout or TimeoutPolicy.RANDOM,
        trusted=game.trusted,
        language=game.language,
        game_id=rematch_id,
        derived_tokens=True,
    )
    try:
        create_game(referee, command)
    except BaseException:
        with referee.db.transaction() as session:
            rematches.unclaim(session, game.id)
        raise
    # Told once the new game exists: the old game's pages open it.
    publish(referee, Published(changed=[game.id]))


def rematch_seat(referee: Referee, game_id: str, seat: SeatRef) -> tuple[str, str]:
    """The rematch's id and the token of the same seat in it, for a seat of the old game."""
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        if game is None:
            raise refusals.NotFound.game()
        number = seat_of(session, game.id, seat)
        rematch_id = rematches.rematch_id(session, game.id)
        started = rematch_id is not None and session.get(Game, rematch_id) is not None
    if rematch_id is None or not started:
        raise refusals.NotFound(_("this game has no rematch yet"))
    return rematch_id, seat_link_token(referee.secret(), rematch_id, number)
