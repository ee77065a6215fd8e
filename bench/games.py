"""Rules speed per game: random full playouts per second and record replay time.

Run: `uv run python bench/games.py [--seconds S] [--cpu] [--game NAME] [--json FILE]`.

A playout is a whole game of random legal moves (move choice, `play`,
forced moves and the final result included). Replay is what auditing a
record costs: parse every logged notation, play it, score the end.

Playouts are timed by the wall clock, or with `--cpu` by the CPU time of
this process, which on a machine shared with other work moves less (it
still moves: the other work shares the core's caches).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from referee import games
from referee.games import AnyGame
from referee.playout import steps
from referee.record import Header, Record, chain
from referee.replay import replay
from referee.rng import Rng, commitment

# The goals of issues 2 and 24 (random playouts on one core: the search is only
# as strong as its playouts), printed beside the figures of the smallest
# player count of their game, which they apply to.
GOALS = {
    "subdivision": "goal >= 10,000 playouts/s, replay < 1 ms",
    "ice_palace": "goal >= 1,000 playouts/s",
    "mandala_stones": "goal >= 2,000 playouts/s",
}


def playouts_per_second(
    game: AnyGame, players: int, seconds: float, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    options = game.load_options({}, players)
    count = moves = 0
    chooser = Rng("bench")
    started = clock()
    while clock() - started < seconds:
        played = list(steps(game, players, options, f"bench-{count}", chooser))
        assert game.result(played[-1].state) is not None
        count += 1
        moves += len(played)
    elapsed = clock() - started
    return count / elapsed, moves / count


def a_record(game: AnyGame, players: int, seed: str) -> Record:
    options = game.load_options({}, players)
    played = steps(game, players, options, seed, Rng(seed))
    header = Header(
        game.name,
        tuple(f"p{i}" for i in range(players)),
        options,
        commitment(seed),
        game.rules_version,
        seed,
    )
    moves = [(step.seat, game.notate(step.move), None) for step in played]
    return Record(header, chain(header.seed_commitment, moves))


def replay_ms(game: AnyGame, players: int, runs: int) -> tuple[float, float, int]:
    record = a_record(game, players, "bench-replay")
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        replayed = replay(record)
        game.result(replayed.final)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.99)], len(record.entries)


def figures_of(
    game: AnyGame,
    players: int,
    seconds: float,
    replays: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    """Every rules figure of one game at one player count, as written to JSON."""
    per_second, length = playouts_per_second(game, players, seconds, clock)
    p50, p99, moves = replay_ms(game, players, replays)
    return {
        "game": game.name,
        "players": players,
        "playouts_per_second": round(per_second, 1),
        "moves_per_game": round(length, 1),
        "replay_ms_p50": round(p50, 3),
        "replay_ms_p99": round(p99, 3),
        "replay_moves": moves,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per playout figure")
    parser.add_argument("--replays", type=int, default=200, help="replays per record")
    parser.add_argument(
        "--cpu", action="store_true", help="time playouts by this process's CPU time"
    )
    parser.add_argument("--game", action="append", help="only this game (again for more)")
    parser.add_argument("--json", dest="json_path", help="also write the figures to this file")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter

    figures: list[dict[str, Any]] = []
    header = f"{'game':16} {'seats':>5} {'playouts/s':>11} {'moves/game':>10} "
    print(header + f"{'replay p50 ms':>13} {'p99 ms':>8} {'moves':>6}")
    for game in games.all_games():
        if args.game and game.name not in args.game:
            continue
        for players in game.players:
            row = figures_of(game, players, args.seconds, args.replays, clock)
            row["clock"] = "cpu" if args.cpu else "wall"
            figures.append(row)
            goal = GOALS.get(game.name, "") if players == min(game.players) else ""
            print(
                f"{game.name:16} {players:>5} {row['playouts_per_second']:>11.1f} "
                f"{row['moves_per_game']:>10.1f} {row['replay_ms_p50']:>13.3f} "
                f"{row['replay_ms_p99']:>8.3f} {row['replay_moves']:>6}  {goal}"
            )
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)


if __name__ == "__main__":
    main()
