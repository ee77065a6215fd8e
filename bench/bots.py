"""Bots: how strong they play, how fast the rules let them search, how long they think.

Run: `uv run python -m bench.bots [--games N] [--seconds S] [--only GAME] [--processes P]`.

- Strength: `--games` games (200) of each pairing, bots' seats swapped
  every other game, each bot move given `--seconds` (0.25) of thinking:
  `strong` against `random` and against `greedy` in 2-player Subdivision,
  Mandala and Mandala Stones, and `strong` against two `random` in
  3-player Ice Palace with its seat turning round the table. The win rate
  counts a shared win as half a game; its 95% interval is Wilson's.
- Speed: random playouts per second on one core (CPU time), as
  `bench/games.py --cpu` measures them.
- Think time: CPU seconds of a `strong` move at the service's budget
  (`--think-seconds`, 2 like `REFEREE_BOT_SECONDS`) at this machine's pace
  as the service measures it (`--pace` sets it), over `--think-moves`
  moves of each game; the goal is p99 within the budget + 10%. Strength
  is played at pace 1, so its figures are the same on every machine.
- `--calibrate`: the CPU seconds of the pace's workload here, the figure
  `referee.service.bot_pace.REFERENCE_SECONDS` holds for the machine the
  games' `iterations_per_second` were measured on.

Games run in `--processes` processes (2): each game is one process's work.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from bench.games import playouts_per_second
from referee import bots, games
from referee.pace import paced
from referee.replay import new_state
from referee.rng import Rng
from referee.service.bot_pace import REFERENCE_SECONDS, measured_pace, workload_seconds

# (game, players, the measured bot's level, its opponents' level, the goal's win rate)
PAIRINGS = (
    ("subdivision", 2, "strong", "random", 0.90),
    ("subdivision", 2, "strong", "greedy", 0.65),
    ("mandala", 2, "strong", "random", 0.90),
    ("mandala", 2, "strong", "greedy", 0.65),
    ("mandala_stones", 2, "strong", "random", 0.90),
    ("mandala_stones", 2, "strong", "greedy", 0.65),
    ("ice_palace", 3, "strong", "random", 0.60),
)
SPEED = (
    ("subdivision", 2),
    ("ice_palace", 3),
    ("mandala_stones", 2),
    ("maniki", 2),
    ("mandala", 2),
)
SPEED_GOALS = {"subdivision": 10_000, "ice_palace": 1_000, "mandala_stones": 2_000}


@dataclass(frozen=True)
class Match:
    game: str
    players: int
    levels: tuple[str, ...]
    seed: str
    seconds: float
    # The seat whose think times are kept: the bot being measured.
    measured: int = 0


def play(match: Match) -> tuple[tuple[float, ...], list[float]]:
    """Each seat's share of the win, and the CPU seconds of each of the measured seat's moves."""
    game = games.get(match.game)
    options = game.load_options({}, match.players)
    state = new_state(game, match.seed, match.players, options)
    every_seat = range(match.players)
    thought: list[float] = []
    number = 0
    while True:
        for _seat, _move, after in game.forced_moves(state):
            state = after
        actors = sorted(game.actors(state))
        if not actors:
            break
        # The first seat whose bot answers now (MaNiKi's may hold theirs).
        for seat in actors:
            started = time.process_time()
            move = bots.answer(
                game,
                match.levels[seat],
                state,
                seat,
                players=match.players,
                options=options,
                rng=Rng(f"{match.seed}:bot:{number}:{seat}"),
                seconds=match.seconds,
                bots=every_seat,
            )
            if move is not None:
                break
        if seat == match.measured:
            thought.append(time.process_time() - started)
        state = game.play(state, seat, move)
        number += 1
    result = game.result(state)
    assert result is not None
    share = 1.0 / len(result.winners)
    return tuple(share if seat in result.winners else 0.0 for seat in every_seat), thought


def wilson(wins: float, games_played: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    rate = wins / games_played
    centre = rate + z * z / (2 * games_played)
    spread = z * math.sqrt(rate * (1 - rate) / games_played + z * z / (4 * games_played**2))
    denominator = 1 + z * z / games_played
    return (centre - spread) / denominator, (centre + spread) / denominator


def matches(
    name: str, players: int, measured: str, other: str, count: int, seconds: float
) -> list[Match]:
    """The pairing's games; the measured bot's seat turns round the table."""
    planned = []
    for index in range(count):
        seat = index % players
        levels = tuple(measured if place == seat else other for place in range(players))
        seed = f"bench-bots-{name}-{other}-{index}"
        planned.append(Match(name, players, levels, seed, seconds, seat))
    return planned


def strength(count: int, seconds: float, only: str | None, processes: int) -> None:
    print(f"Strength: {count} games a pairing, {seconds} s of thinking a move")
    with ProcessPoolExecutor(processes) as pool:
        for name, players, measured, other, goal in PAIRINGS:
            if only and name != only:
                continue
            started = time.perf_counter()
            planned = matches(name, players, measured, other, count, seconds)
            outcomes = pool.map(play, planned)
            wins = sum(
                shares[match.measured]
                for match, (shares, _thought) in zip(planned, outcomes, strict=True)
            )
            low, high = wilson(wins, count)
            verdict = "met" if wins / count >= goal else "missed"
            print(
                f"  {name} {players}p {measured} vs {other}: won {wins:g} of {count}"
                f" = {wins / count:.1%} (95% CI {low:.1%}-{high:.1%});"
                f" goal >= {goal:.0%}: {verdict} ({time.perf_counter() - started:.0f} s)"
            )


def speed(only: str | None, seconds: float) -> None:
    print("Speed: random playouts per second on one core (CPU time)")
    for name, players in SPEED:
        if only and name != only:
            continue
        rate, moves = playouts_per_second(games.get(name), players, seconds, time.process_time)
        goal = SPEED_GOALS.get(name)
        told = "" if goal is None else f"; goal >= {goal:,}: {'met' if rate >= goal else 'missed'}"
        print(f"  {name} {players}p: {rate:,.0f} playouts/s ({moves:.0f} moves each){told}")


def think(only: str | None, seconds: float, moves: int, pace: float) -> None:
    print(f"Think time: CPU seconds of a strong move at a {seconds} s budget, pace {pace:g}")
    for name, players in SPEED:
        if only and name != only:
            continue
        game = games.get(name)
        times: list[float] = []
        index = 0
        while len(times) < moves:
            levels = ("strong",) + ("random",) * (players - 1)
            budget = paced(seconds, pace)
            _shares, thought = play(Match(name, players, levels, f"bench-think-{index}", budget))
            times.extend(thought)
            index += 1
        times = sorted(times[:moves])
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        verdict = "met" if p99 <= seconds * 1.1 else "missed"
        print(
            f"  {game.name}: p50 {statistics.median(times):.2f} s, p99 {p99:.2f} s,"
            f" max {times[-1]:.2f} s over {len(times)} moves;"
            f" goal <= {seconds * 1.1:.2f} s: {verdict}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.25)
    parser.add_argument("--think-seconds", type=float, default=2.0)
    parser.add_argument("--think-moves", type=int, default=30)
    parser.add_argument("--speed-seconds", type=float, default=5.0)
    parser.add_argument("--only", choices=games.names())
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--pace", type=float, help="think at this pace (default: measured)")
    parser.add_argument("--calibrate", action="store_true", help="print the pace's workload")
    parser.add_argument(
        "--skip", action="append", default=[], choices=("strength", "speed", "think")
    )
    args = parser.parse_args(argv)
    if args.calibrate:
        print(
            f"Pace workload: {workload_seconds():.4f} CPU s here (REFERENCE_SECONDS:"
            f" {REFERENCE_SECONDS}), pace {REFERENCE_SECONDS / workload_seconds():.2f}"
        )
        return
    if "speed" not in args.skip:
        speed(args.only, args.speed_seconds)
    if "think" not in args.skip:
        think(args.only, args.think_seconds, args.think_moves, args.pace or measured_pace())
    if "strength" not in args.skip:
        strength(args.games, args.seconds, args.only, args.processes)


if __name__ == "__main__":
    main()
