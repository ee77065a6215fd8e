"""How fast this machine thinks, as a factor of the machine the bots' rates were measured on.

A bot's budget is counted in search iterations, never read off a clock, so
that its move is a function of stored data (`referee suggest` works it out
again anywhere). Each game's `iterations_per_second` is its `strong` bot's
rate at pace 1; a machine twice as fast has pace 2 and thinks twice as many
iterations in the same seconds. The pace is measured once per process (or
set with `REFEREE_BOT_PACE`) and kept on each game that has a bot when it
is created (`bot_pace`, in its record too): think time stays within
`REFEREE_BOT_SECONDS` on the machine that plays, and the moves stay
reproducible on any other.
"""

from __future__ import annotations

import functools
import time

from referee.pace import FASTEST, SLOWEST
from referee.rng import QuickRng, Rng
from referee.settings import Settings

# CPU seconds of `_workload` on the machine the games' rates were measured on
# (pace 1): where those rates put a `strong` move at 2 s between 1.1 and 1.3 s
# of CPU at p50 (2026-11-26). Inferred on 2026-11-27 from a slower, noisier
# machine that ran the workload in 0.065-0.12 s and the same moves 1.7-2x
# slower; `python -m bench.bots --calibrate` prints a machine's figure.
REFERENCE_SECONDS = 0.030
_STEPS = 60_000
_RUNS = 7


def _workload() -> int:
    """Interpreter work shaped like a search's: draws, small tuples, dict
    lookups and bit counts, the same on every run."""
    rng = QuickRng(Rng("bot-pace"))
    table: dict[int, tuple[int, ...]] = {}
    total = 0
    for step in range(_STEPS):
        key = rng.below(1024)
        row = (*table.get(key, ())[-3:], step)
        table[key] = row
        total += len(row) + (key & step).bit_count()
    return total


def workload_seconds() -> float:
    """The fewest CPU seconds of a few runs of the workload: the least disturbed
    one (a shared host slows whole stretches of a second down, by up to half)."""
    best = float("inf")
    for _ in range(_RUNS):
        started = time.process_time()
        _workload()
        best = min(best, time.process_time() - started)
    return best


@functools.cache
def measured_pace() -> float:
    """This process's pace, two significant figures, within `SLOWEST`..`FASTEST`."""
    spent = max(workload_seconds(), 1e-6)
    return min(FASTEST, max(SLOWEST, float(f"{REFERENCE_SECONDS / spent:.2g}")))


def current_pace(settings: Settings) -> float:
    """The pace new games keep: `REFEREE_BOT_PACE` where set, else measured."""
    return settings.bot_pace if settings.bot_pace is not None else measured_pace()
