"""How many moves a game usually lasts: the figures the lobby states (referee/render/showcase.py).

    uv run python -m bench.game_lengths [--games 8]

Per game, at its fewest and its most players, default options: the median,
fewest and most moves of games played by `greedy` bots in every seat, each
from its own seed, counting the moves the referee records by itself.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from referee import bots, games
from referee.replay import new_state
from referee.rng import Rng


def _length(game: Any, players: int, seed: str) -> int:
    options = game.load_options({}, players)
    state = new_state(game, seed, players, options)
    moves = 0
    while game.result(state) is None:
        seat = min(game.actors(state))
        rng = Rng(f"{seed}:{moves}")
        move = bots.decide(
            game,
            "greedy",
            state,
            seat,
            players=players,
            options=options,
            rng=rng,
            seconds=0.01,
            bots=range(players),
        )
        state = game.play(state, seat, move)
        moves += 1
        forced = game.forced_moves(state)
        while True:
            try:
                next(forced)
                moves += 1
            except StopIteration as done:
                state = done.value
                break
    return moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8)
    count = parser.parse_args().games
    for game in games.all_games():
        for players in sorted({game.players[0], game.players[-1]}):
            found = [_length(game, players, f"length-{n}") for n in range(count)]
            print(
                f"{game.name:15} {players} players: median {statistics.median(found):g} moves"
                f" ({min(found)} to {max(found)})"
            )


if __name__ == "__main__":
    main()
