"""Random playouts: whole games played by random legal moves; and the rngs of the
moves the referee makes up for a seat.

Property tests, benchmarks and load generators use them; they drive a game
exactly as the worker does (a move, then whatever the referee records by
itself), so a playout's log replays like a real one.

A bot's seat's move after `version` moves draws from `bot_rng` and a move
played for a seat out of time from `timeout_rng`: both are seeded with the
game's secret seed, the number of moves logged before it and the seat, so
the move is fixed by what a finished game's record holds
(`referee.automatic` plays them, and works them out again for `referee
verify` and `referee suggest`).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, islice
from typing import Any

from referee.engine import JSON, Played
from referee.games import AnyGame
from referee.replay import new_state
from referee.rng import Rng


def bot_rng(seed: str, version: int, seat: int) -> Rng:
    """The rng of a bot's seat's move after `version` moves."""
    return Rng(f"{seed}:bot:{version}:{seat}")


def timeout_rng(seed: str, version: int, seat: int) -> Rng:
    """The rng of the move the referee plays for a seat out of time after `version` moves."""
    return Rng(f"{seed}:timeout:{version}:{seat}")


class PlayoutTooLong(RuntimeError):
    """A playout that did not end within its move budget."""


def steps(
    game: AnyGame, players: int, options: JSON, seed: str, chooser: Rng, limit: int = 100_000
) -> Iterator[Played[Any, Any]]:
    """Play random legal moves from the start until the game ends
    (`Game.random_playout`), `PlayoutTooLong` after `limit` moves.

    `seed` fixes the game's own shuffle; `chooser` picks the acting seat
    and its move, so one deal can be played many ways.
    """
    played = game.random_playout(new_state(game, seed, players, options), chooser)
    # Chained rather than yielded from here: a move then passes through no
    # frame of this module on its way to the caller.
    return chain(islice(played, limit), _ended_within(game, played, limit))


def _ended_within(game: AnyGame, played: Iterator[Played[Any, Any]], limit: int) -> Iterator[Any]:
    """No move, once `played` has given its `limit` moves; `PlayoutTooLong` if it has more."""
    if next(played, None) is not None:
        raise PlayoutTooLong(f"{game.name} did not end within {limit} moves")
    yield from ()
