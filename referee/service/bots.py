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

A bot's move is a function of stored data only: the game's secret seed,
the version, the seat and the game's think budget (`bot_seconds` at the
game's `bot_pace`), so a finished game's record reproduces it (`referee
suggest`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from referee import bots
from referee.engine import IllegalMove
from referee.games import AnyGame
from referee.pace import paced
from referee.playout import bot_rng
from referee.rng import Rng
from referee.service import reachability
from referee.service.game_states import state_at
from referee.service.publishing import Published, publish
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.store import bot_seats
from referee.store.bot_seats import waiting_for_bots
from referee.store.clock import stamp
from referee.store.reads import rules_of
from referee.store.tables import Game, GameStatus, Source

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
        session.expunge(game)
    # No transaction is open while the bots think.
    rules = rules_of(game)
    seconds = paced(game.bot_seconds or referee.settings.bot_seconds, game.bot_pace)
    submitted = 0
    for seat in acting:
        if seat not in rules.actors(state):
            continue
        move = bots.answer(
            rules,
            levels[seat],
            state,
            seat,
            players=players,
            options=game.options,
            rng=bot_rng(game.seed, version, seat),
            seconds=seconds,
            bots=levels,
        )
        # A bot that holds its move (MaNiKi's, until the people in the round
        # have answered) is asked again after the next decision.
        if move is None:
            continue
        move = _playable(rules, state, seat, move, bot_rng(game.seed, version, seat))
        submit_move(
            referee,
            SubmitMove(
                game_id,
                KnownSeat(seat),
                rules.move_to_json(move),
                source=Source.BOT,
                seen_version=version,
                # Once per seat and turn, however many times the task runs.
                idempotency_key=f"bot:{version}:{seat}",
            ),
        )
        submitted += 1
    return submitted


def _playable(rules: AnyGame, state: Any, seat: int, move: Any, rng: Rng) -> Any:
    """`move`, or a random legal one where the rules refuse it: a bot's bug must not
    leave its game waiting for ever (its task would be refused at every sweep)."""
    try:
        rules.play(state, seat, move)
    except IllegalMove as refused:
        _log.error(
            "a %s bot chose a move the rules refuse (%s): a random one is played instead",
            rules.name,
            refused.code,
        )
        return rules.random_move(state, seat, rng)
    return move


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
