"""Bots' seats: the move a bot plays, worked out apart from any lock, then submitted
through the one path every move takes (`submitting.submit_move`, source `bot`).

Whenever a change leaves a bot's seat among the seats to act (a decision,
a game's creation, a timeout, a seat handed to a bot), the use case that
made it publishes `(game, version)` and the queue runs `play_bots` on its
own queue (`<REFEREE_QUEUE>.bots`; in the embedded default on a background
thread of its own, never in a request). The job reads the state, holds no
transaction while the bot thinks, and submits with `seen_version` the
version it thought about and the idempotency key `bot:{version}:{seat}`:
a second run of the same task records nothing new, and a move the game
moved on from is judged stale like any other. A game of bots alone goes on
by itself, each decision enqueueing the next bot's turn; the sweep
(`sweep_bots`) enqueues again a bot's turn whose task was lost.

A bot's move refused for any reason but staleness (the rules refuse it,
the bot fails, the service refuses its submission, at once or when it is
decided) never leaves the game waiting: the decision that refused it
enqueues the turn again, and the seat then plays the `random` level's move
(key `bot:{version}:{seat}:random`), the operators' log saying so once, with
the position as a spectator sees it.

A bot's move is a function of stored data only: the game's secret seed,
the version, the seat and the game's think budget (`bot_seconds` at the
game's `bot_pace`), so a finished game's record reproduces it (`referee
suggest`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from referee import automatic, bots
from referee.games import AnyGame
from referee.pace import paced
from referee.record import canonical_json
from referee.service import reachability, refusals
from referee.service.game_states import state_at
from referee.service.publishing import Published, publish
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.store import bot_seats, submissions
from referee.store.bot_seats import waiting_for_bots
from referee.store.clock import stamp
from referee.store.reads import rules_of
from referee.store.tables import Game, GameStatus, Source, SubmissionStatus

if TYPE_CHECKING:
    from referee.service import Referee

_log = logging.getLogger(__name__)


def play_bots(referee: Referee, game_id: str, version: int) -> int:
    """Submit the move of each bot's seat to act in the game at `version`; how many.

    Nothing when the game is over or has moved on: whoever moved it
    enqueued the turn after.
    """
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        if game is None or game.status != GameStatus.ACTIVE or game.version != version:
            return 0
        levels = bot_seats.levels(session, [game_id]).get(game_id, {})
        acting = [seat for seat in game.to_act if seat in levels]
        if not acting:
            return 0
        state = state_at(session, game, version)
        players = reachability.reach(session, game_id).seat_count
        refused = {seat: _refused(session, game_id, version, seat) for seat in acting}
        session.expunge(game)
    # No transaction is open while the bots think.
    rules = rules_of(game)
    turn = _Turn(referee, game, rules, state, version, players)
    submitted = 0
    for seat in acting:
        if seat not in rules.actors(state):
            continue
        earlier = refused[seat]
        if earlier is None:
            # A bot that holds its move (MaNiKi's, until the people in the round
            # have answered) is asked again after the next decision.
            holds = bots.holds(
                rules, levels[seat], state, seat, players=players, options=game.options, bots=levels
            )
            if holds:
                continue
            submitted += turn.own(seat, levels[seat], levels)
        elif earlier != _FALLEN_BACK:
            submitted += turn.fallback(seat, levels[seat], earlier)
    return submitted


# What `_refused` says of a seat whose `random` stand-in was submitted already.
_FALLEN_BACK = ""


def _key(version: int, seat: int, fallback: bool = False) -> str:
    """A bot's submission's idempotency key: once per seat and turn, however many times
    the task runs; the `random` level's stand-in has its own."""
    return f"bot:{version}:{seat}" + (f":{automatic.FALLBACK_LEVEL}" if fallback else "")


def _refused(session: Any, game_id: str, version: int, seat: int) -> str | None:
    """Why the service refused the bot's move for `seat` at `version` (None: it did not,
    or staleness did, which a later turn answers; `_FALLEN_BACK`: the stand-in is in)."""
    if submissions.find_by_key(session, game_id, seat, _key(version, seat, True)) is not None:
        return _FALLEN_BACK
    own = submissions.find_by_key(session, game_id, seat, _key(version, seat))
    if own is None or own.status != SubmissionStatus.REJECTED:
        return None
    if own.code == refusals.StaleVersion.code:
        return None
    return f"{own.code}: {own.reason}"


@dataclass(frozen=True, slots=True)
class _Turn:
    """A bots' turn being played: the game at `version`, as read before the bots think."""

    referee: Referee
    game: Game
    rules: AnyGame
    state: Any
    version: int
    players: int

    def own(self, seat: int, level: str, levels: dict[int, str]) -> int:
        """Submit the move of the seat's own level (or the `random` level's, if its own
        cannot be played): 1 when submitted."""
        game = self.game
        seconds = paced(game.bot_seconds or self.referee.settings.bot_seconds, game.bot_pace)
        choice = automatic.bot_choice(
            self.rules,
            level,
            self.state,
            seat,
            game.seed,
            self.version,
            players=self.players,
            options=game.options,
            seconds=seconds,
            bots_seats=levels,
        )
        if choice.refused is not None:
            self._say_fallen_back(seat, level, choice.refused)
        fallback = choice.refused is not None
        try:
            self._submit(seat, choice.move, fallback)
        except refusals.StaleVersion:
            return 0
        except refusals.Refusal as refused:
            if fallback:
                raise
            return self.fallback(seat, level, f"{refused.code}: {refused.reason}")
        return 1

    def fallback(self, seat: int, level: str, why: str) -> int:
        """Submit the `random` level's move for a seat whose own was refused: 1 when
        submitted."""
        self._say_fallen_back(seat, level, why)
        move = automatic.fallback_move(
            self.rules,
            self.state,
            seat,
            self.game.seed,
            self.version,
            players=self.players,
            options=self.game.options,
        )
        try:
            self._submit(seat, move, fallback=True)
        except refusals.StaleVersion:
            return 0
        return 1

    def _submit(self, seat: int, move: Any, fallback: bool) -> None:
        submit_move(
            self.referee,
            SubmitMove(
                self.game.id,
                KnownSeat(seat),
                self.rules.move_to_json(move),
                source=Source.BOT,
                seen_version=self.version,
                idempotency_key=_key(self.version, seat, fallback),
            ),
        )

    def _say_fallen_back(self, seat: int, level: str, why: str) -> None:
        """The operators' one line of a bot's move replaced, with the position (as a
        spectator sees it: no hidden hand, bag or seed)."""
        _log.error(
            "game %s, version %d, seat %d: the %s bot's %s move was refused (%s); the "
            "seat plays the %s level's move instead; position: %s",
            self.game.id,
            self.version,
            seat,
            level,
            self.rules.title,
            why,
            automatic.FALLBACK_LEVEL,
            canonical_json(self.rules.view(self.state, None)),
        )


def sweep_bots(referee: Referee, moment: datetime | None = None) -> int:
    """Enqueue again the bots' turns left waiting longer than `REFEREE_SWEEP_AFTER` seconds
    (a lost task, a process that stopped while its bot thought); how many."""
    moment = moment or datetime.now(UTC)
    cut = stamp(moment - timedelta(seconds=referee.settings.sweep_after))
    with referee.db.reading() as session:
        waiting = waiting_for_bots(session, cut)
    publish(referee, Published(bots=waiting))
    if waiting:
        _log.info("sweep: %d bots' turns enqueued again", len(waiting))
    return len(waiting)
