"""Random playouts: whole games played by random legal moves.

Property tests, benchmarks and load generators use them; they drive a game
exactly as the worker does (a move, then whatever the referee records by
itself), so a playout's log replays like a real one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from referee.engine import JSON, Played
from referee.games import AnyGame
from referee.replay import forced_moves, new_state
from referee.rng import Rng


class PlayoutTooLong(RuntimeError):
    """A playout that did not end within its move budget."""


def steps(
    game: AnyGame, players: int, options: JSON, seed: str, chooser: Rng, limit: int = 100_000
) -> Iterator[Played[Any, Any]]:
    """Play random legal moves from the start until the game ends.

    `seed` fixes the game's own shuffle; `chooser` picks the acting seat
    and its move, so one deal can be played many ways.
    """
    state = new_state(game, seed, players, options)
    for _ in range(limit):
        for forced_seat, forced, after in forced_moves(game, state):
            state = after
            yield Played(forced_seat, forced, state)
        # No seat acts exactly when the game is over (the contract): asking
        # `result` instead would score the final position once more.
        actors = sorted(game.actors(state))
        if not actors:
            return
        seat = actors[0] if len(actors) == 1 else chooser.choice(actors)
        move = game.random_move(state, seat, chooser)
        state = game.play(state, seat, move)
        yield Played(seat, move, state)
    raise PlayoutTooLong(f"{game.name} did not end within {limit} moves")
