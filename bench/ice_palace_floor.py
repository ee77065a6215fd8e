"""Ice Palace: what a random playout costs besides its build solver.

Run: `uv run python bench/ice_palace_floor.py [--playouts N] [--players P]`.

Plays N of `bench/games.py`'s playouts twice, timed by this process's CPU
time. The first time whole; the second time every `solve` and random
builder's plan is answered from a list the first time filled, in order,
with the rng put back where the plan left it, so the same moves are
played. The second rate is the most playouts a second the rules could
reach with a solver that cost nothing: where it is below a goal, no
speedup of the solver alone meets that goal.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from referee.games import ice_palace, ice_palace_solver
from referee.games.ice_palace_solver import SEARCH_BUDGET, Cell, Piece, Plan
from referee.playout import steps
from referee.rng import Rng

REAL_SOLVE: Callable[..., Plan] = ice_palace_solver.solve
REAL_RANDOM_PLAN: Callable[..., Plan] = ice_palace_solver.random_plan


class Replayed:
    """The solver's answers of a first pass, given again in the same order."""

    def __init__(self) -> None:
        self.answers: list[tuple[Plan, dict[str, Any]]] = []
        self.replaying = False
        self.next = 0

    def solve(
        self,
        tops: Mapping[Cell, Piece],
        pieces: Iterable[Piece],
        budget: int = SEARCH_BUDGET,
        order: Sequence[str] = (),
    ) -> Plan:
        if self.replaying:
            return self._answer()[0]
        plan = REAL_SOLVE(tops, pieces, budget, order)
        self.answers.append((plan, {}))
        return plan

    def random_plan(
        self,
        tops: Mapping[Cell, Piece],
        pieces: Iterable[Piece],
        rng: Rng,
        order: Sequence[str] = (),
    ) -> Plan:
        if self.replaying:
            plan, where = self._answer()
            _put_back(rng, where)
            return plan
        plan = REAL_RANDOM_PLAN(tops, pieces, rng, order)
        self.answers.append((plan, _where(rng)))
        return plan

    def _answer(self) -> tuple[Plan, dict[str, Any]]:
        answer = self.answers[self.next]
        self.next += 1
        return answer


def _where(rng: Rng) -> dict[str, Any]:
    """Where `rng` stands in its stream: its fields, the words left to draw copied."""
    return {name: copy.copy(getattr(rng, name)) for name in Rng.__slots__}


def _put_back(rng: Rng, where: dict[str, Any]) -> None:
    for name, value in where.items():
        setattr(rng, name, copy.copy(value))


def playouts_per_second(players: int, count: int) -> float:
    """`count` of bench/games.py's playouts (its seeds, one chooser), by CPU time."""
    game = ice_palace.GAME
    options = game.load_options({}, players)
    chooser = Rng("bench")
    started = time.process_time()
    for number in range(count):
        for _ in steps(game, players, options, f"bench-{number}", chooser):
            pass
    return count / (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playouts", type=int, default=300)
    parser.add_argument("--players", type=int, default=3)
    args = parser.parse_args()
    replayed = Replayed()
    ice_palace_solver.solve = replayed.solve
    ice_palace_solver.random_plan = replayed.random_plan
    whole = playouts_per_second(args.players, args.playouts)
    replayed.replaying = True
    without = playouts_per_second(args.players, args.playouts)
    assert replayed.next == len(replayed.answers), "the second pass played other moves"
    print(f"Ice Palace {args.players}p, {args.playouts} playouts, CPU time:")
    print(f"  whole:                    {whole:7.1f} playouts/s")
    print(f"  solver answered for free: {without:7.1f} playouts/s")
    print(f"  the solver's share:       {1 - whole / without:7.1%}")


if __name__ == "__main__":
    main()
