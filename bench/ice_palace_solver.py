"""Ice Palace's exact build solver: time per decision on palaces from real playouts.

Run: `uv run python bench/ice_palace_solver.py [--n N] [--games G] [--seed S]`.

Palaces are harvested from random full playouts (3 to 6 players): every
palace a builder faced. Against them, N random yards of 1 to 36 pyramids
(sizes and colours uniform over that game's player colours) are solved;
each decision is timed in wall-clock and in CPU time (wall-clock includes
whatever else the machine runs). The builds the playouts themselves made
are timed too. Goal (issue 4): p99 under 20 ms per decision.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from referee.games.ice_palace import BUILD, GAME, _build_input
from referee.games.ice_palace_solver import Cell, Piece, solve
from referee.playout import steps
from referee.rng import Rng

Tops = dict[Cell, Piece]
GOAL_MS = 20.0


def harvest(games: int) -> tuple[list[tuple[str, Tops]], list[tuple[Tops, list[Piece]]]]:
    """The palaces builders faced in random playouts, and the real builds."""
    palaces: list[tuple[str, Tops]] = []
    builds: list[tuple[Tops, list[Piece]]] = []
    for number in range(games):
        players = 3 + number % 4
        phase = ""
        for step in steps(GAME, players, {}, f"bench-{number}", Rng(f"chooser-{number}")):
            state = step.state
            if state.phase == BUILD and phase != BUILD:
                tops, pieces = _build_input(state)
                builds.append((tops, pieces))
                if tops:
                    palaces.append((state.colours, tops))
            phase = state.phase
    return palaces, builds


def timed(cases: list[tuple[Tops, list[Piece]]]) -> tuple[list[float], list[float]]:
    wall: list[float] = []
    cpu: list[float] = []
    for tops, pieces in cases:
        started, started_cpu = time.perf_counter(), time.process_time()
        solve(tops, pieces)
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return wall, cpu


def figures(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p50 = statistics.median(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    verdict = "meets" if p99 < GOAL_MS else "MISSES"
    return (
        f"  {label:<5} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   max {ms[-1]:8.3f} ms   "
        f"({verdict} the p99 goal of {GOAL_MS:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="random yards to solve")
    parser.add_argument("--games", type=int, default=120, help="playouts to take palaces from")
    parser.add_argument("--seed", default="ice palace bench", help="seed of the random yards")
    args = parser.parse_args()

    started = time.perf_counter()
    palaces, builds = harvest(args.games)
    sizes = sorted(len(tops) for _, tops in palaces)
    print(
        f"{len(palaces)} palaces from {args.games} playouts in "
        f"{time.perf_counter() - started:.1f} s: stacks median {statistics.median(sizes):.0f}, "
        f"max {sizes[-1]}"
    )

    rng = random.Random(args.seed)
    cases: list[tuple[Tops, list[Piece]]] = []
    for _ in range(args.n):
        colours, tops = rng.choice(palaces)
        count = rng.randint(1, 36)
        cases.append((tops, [(rng.randint(1, 3), rng.choice(colours)) for _ in range(count)]))
    wall, cpu = timed(cases)
    print(f"{args.n} random yards of 1-36 pyramids against those palaces, per decision:")
    print(figures("wall", wall))
    print(figures("cpu", cpu))

    wall, cpu = timed(builds)
    yard = sorted(len(pieces) for _, pieces in builds)
    print(
        f"the playouts' own {len(builds)} builds (yards of median {statistics.median(yard):.0f}, "
        f"max {yard[-1]} pyramids), per decision:"
    )
    print(figures("wall", wall))
    print(figures("cpu", cpu))


if __name__ == "__main__":
    main()
