"""A bot pace: how fast a machine thinks, as a factor of pace 1, the machine
the bots' `iterations_per_second` were rated on.

A game keeps the pace it was created at (its record too), so its bots'
budgets, counted in iterations, can be worked out again anywhere; how a
process measures its own is `referee.service.bot_pace`.
"""

from __future__ import annotations

# A pace outside these bounds is a measurement or a setting gone wrong, not a
# machine: the settings, records and the measurement all hold to them.
SLOWEST, FASTEST = 0.1, 10.0
BOUNDS_TEXT = f"from {SLOWEST:g} to {FASTEST:g}"


def is_pace(value: float) -> bool:
    return SLOWEST <= value <= FASTEST


def paced(seconds: float, pace: float | None) -> float:
    """A budget of `seconds` at `pace` (games from before paces count as 1), in
    seconds at pace 1: what the bots' `iterations_per_second` are rated for."""
    return seconds * (pace or 1.0)
