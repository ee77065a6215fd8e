"""Ice Palace's fairness between colours: random games won by colour, and `build auto`
against the plans of rules versions 1 and 2 and against the true best.

Run: `uv run python bench/ice_palace_fairness.py [--games N] [--builds M]`.

Under rules version 1 `build auto` and the random builder (the `random` bot, every
playout) took the colours in alphabetical order, and the colour the greedy builder
meets last tops most stacks: in 3-player random games yellow won most and green
least. Version 2 draws the random builder's order from its stream and makes `build
auto` the best of several maximal plans for the builder; version 3 makes it the best
of all maximal plans (a search of fixed work that starts from version 2's). Printed:

- for each version, the share of N random 3-player games (`referee.playout.steps`,
  as every playout plays them) each colour won (a shared win counts as a share);
- over M builds met in random games of the current rules (3 to 6 players), how
  often `build auto` scores the builder fewer, as many or more palace points than
  version 1's plan and than version 2's (never fewer: the search starts from
  version 2's, which weighs version 1's), and the builder's points in all;
- of those builds small enough to try every plan (at most `TRIED_ALL` pyramids to
  place), how many `build auto` gets to the best of all (the builder's points,
  then the leader's): short of it only where its search ran out of work.

The goals (issue 38): at N = 600 no colour wins more than 40% or less than 27%;
no build scores fewer. `SMALLEST` runs in the suite (tests/games/test_ice_palace.py).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass

from referee.games import ice_palace
from referee.games.ice_palace import BUILD, NOBODY, IcePalace, State
from referee.playout import steps
from referee.rng import Rng

# (games, builds) of the figures the issue asks for, and of the suite's test.
FULL = (600, 1000)
SMALLEST = (60, 100)
# The most pyramids a build may place for `best_of_all` to try every plan.
TRIED_ALL = 3


@dataclass(frozen=True, slots=True)
class Builds:
    """Version 2's `build auto` against version 1's plan, by the builder's points."""

    fewer: int
    same: int
    more: int
    old_points: int
    new_points: int


def wins_by_colour(game: IcePalace, count: int, players: int = 3) -> dict[str, float]:
    """The share of `count` random games of `players` each colour won."""
    won: dict[str, float] = dict.fromkeys(ice_palace.PLAYER_COLOURS, 0.0)
    options = game.load_options({}, players)
    for number in range(count):
        state: State | None = None
        for played in steps(game, players, options, f"fair {number}", Rng(f"moves {number}")):
            state = played.state
        assert state is not None
        result = game.result(state)
        assert result is not None
        for seat in result.winners:
            won[state.colours[seat]] += 1 / len(result.winners)
    colours = ice_palace.PLAYER_COLOURS[:players]
    return {colour: won[colour] / count for colour in colours}


def recorded_builds(count: int) -> list[State]:
    """The first `count` builds with something to place met in random games of the
    current rules, 3 to 6 players in turn."""
    game = ice_palace.GAME
    found: list[State] = []
    number = 0
    while len(found) < count:
        players = 3 + number % 4
        options = game.load_options({}, players)
        for played in steps(game, players, options, f"build {number}", Rng(f"b {number}")):
            state = played.state
            if state.phase == BUILD and state.turn != NOBODY and state.build_max > 0:
                found.append(state)
        number += 1
    return found[:count]


def _worth(state: State, palace: dict[tuple[int, int], tuple[str, ...]]) -> tuple[int, int]:
    """The builder's palace points and the leader's, less, once `palace` is built."""
    points: dict[str, int] = {}
    for stack in palace.values():
        points[stack[-1][1]] = points.get(stack[-1][1], 0) + len(stack)
    leader = ice_palace._leader(state.palace, state.colours, state.turn, state.resigned)
    return points.get(state.colours[state.turn], 0), -points.get(leader, 0)


def _plan_worth(state: State, game: IcePalace) -> tuple[int, int]:
    plan = game.referee_plan(state.palace, state.yard, state.colours, state.turn, state.resigned)
    palace = ice_palace._as_dict(state.palace)
    for step in ice_palace._places(plan):
        palace[step.x, step.y] = (*palace.get((step.x, step.y), ()), step.pyramid)
    return _worth(state, palace)


def _builder_points(state: State, game: IcePalace) -> int:
    return _plan_worth(state, game)[0]


def best_of_all(state: State) -> tuple[int, int]:
    """The best worth (`_worth`) of every plan placing `build_max`, tried one by one:
    only for small builds, as the plans grow as a power of the pyramids."""
    palace = ice_palace._as_dict(state.palace)
    left = Counter(ice_palace._buildable(state.yard))
    tried: set[tuple[tuple[tuple[int, int], tuple[str, ...]], ...]] = set()
    best = (-1, 0)

    def place(still: int) -> None:
        nonlocal best
        position = tuple(sorted(palace.items()))
        if position in tried:
            return
        tried.add(position)
        if still == 0:
            best = max(best, _worth(state, palace))
            return
        cells = {(x + dx, y + dy) for x, y in palace for dx, dy in _AROUND} | set(palace)
        for pyramid in sorted(kind for kind, count in left.items() if count):
            for cell in sorted(cells or {(0, 0)}):
                if ice_palace._palace_refusal(pyramid, cell, palace):
                    continue
                before = palace.get(cell, ())
                palace[cell] = (*before, pyramid)
                left[pyramid] -= 1
                place(still - 1)
                left[pyramid] += 1
                if before:
                    palace[cell] = before
                else:
                    del palace[cell]

    place(state.build_max)
    return best


_AROUND = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))


def at_best(states: list[State]) -> tuple[int, int]:
    """Of the builds placing at most `TRIED_ALL`, how many `build auto` gets to the
    best of all plans for, and how many there are."""
    small = [state for state in states if state.build_max <= TRIED_ALL]
    reached = sum(_plan_worth(state, ice_palace.GAME) == best_of_all(state) for state in small)
    return reached, len(small)


def compare_builds(states: list[State], old_game: IcePalace = ice_palace.GAME_V1) -> Builds:
    """The builder's points of `build auto` under the current rules against
    `old_game`'s, build by build."""
    fewer = same = more = old_total = new_total = 0
    for state in states:
        old = _builder_points(state, old_game)
        new = _builder_points(state, ice_palace.GAME)
        fewer += new < old
        same += new == old
        more += new > old
        old_total += old
        new_total += new
    return Builds(fewer, same, more, old_total, new_total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=FULL[0])
    parser.add_argument("--builds", type=int, default=FULL[1])
    args = parser.parse_args()
    for game in (ice_palace.GAME_V1, ice_palace.GAME):
        started = time.process_time()
        shares = wins_by_colour(game, args.games)
        figures = ", ".join(f"{colour} {share:.1%}" for colour, share in shares.items())
        spent = time.process_time() - started
        print(f"rules v{game.rules_version}: {args.games} random 3-player games won: {figures}")
        print(f"  ({spent:.0f} s CPU; goal for the current rules: each within 27%-40%)")
    states = recorded_builds(args.builds)
    current = ice_palace.GAME.rules_version
    for old_game in (ice_palace.GAME_V1, ice_palace.GAME_V2):
        started = time.process_time()
        builds = compare_builds(states, old_game)
        spent = (time.process_time() - started) / len(states) * 1000
        print(
            f"{args.builds} builds, the builder's points with `build auto` of v{current} "
            f"against v{old_game.rules_version}'s plan: fewer {builds.fewer}, as many "
            f"{builds.same}, more {builds.more} ({builds.old_points} -> {builds.new_points} "
            f"points; goal: fewer 0; {spent:.1f} ms CPU a build for both plans)"
        )
    reached, small = at_best(states)
    print(
        f"of the {small} builds placing at most {TRIED_ALL}, `build auto` of v{current} "
        f"gets to the best of all plans in {reached}"
    )


if __name__ == "__main__":
    main()
