"""Ratings: how a finished game's order moves its players' skills, and how a skill reads.

A skill is openskill's pair: `mu`, the estimate, and `sigma`, how unsure
it is. Every game is rated as one free-for-all result, the whole finishing
order at once, with openskill's Bradley-Terry "full pairing" model.
Plackett-Luce, the library's default, can leave a player tied for a place
below one who finished after it (openskill.py issues 155 and 173);
Bradley-Terry full never does, for any order of up to six seats (a test
checks every one), and moves tied players alike.

The finishing order (`finishing_ranks`): the winners first, together; the
other seats by score, equal scores sharing a place; seats that resigned
or were handed to a bot after timeouts last, together, whatever their
score.

What people read (`Shown`): a rating on the familiar Elo-like scale,
`1500 + 42 * (mu - 25)`, and a deviation `42 * sigma`, so a newcomer
reads 1500 with a deviation of 350. A rating is provisional while its
deviation is above `SETTLED_DEVIATION`, some ten to twenty games.

Pure: no I/O. The same results in the same order give the same figures,
bit for bit, which is what `referee ratings rebuild` relies on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from openskill.models import BradleyTerryFull

_MODEL = BradleyTerryFull()
# The shown scale: a newcomer's mu reads `CENTRE`, one sigma `SCALE` points.
CENTRE = 1500
SCALE = 42.0
SETTLED_DEVIATION = 110


@dataclass(frozen=True, slots=True)
class Skill:
    mu: float
    sigma: float


START = Skill(_MODEL.mu, _MODEL.sigma)


@dataclass(frozen=True, slots=True)
class Shown:
    """A skill as pages and answers show it."""

    rating: int
    deviation: int
    provisional: bool


def shown(skill: Skill) -> Shown:
    deviation = round(SCALE * skill.sigma)
    rating = round(CENTRE + SCALE * (skill.mu - START.mu))
    return Shown(rating, deviation, deviation > SETTLED_DEVIATION)


def finishing_ranks(
    scores: Sequence[int], winners: Collection[int], last: Collection[int] = ()
) -> list[int]:
    """Each seat's place (1 is first; tied seats share a place and the next is skipped,
    as in 1, 1, 3): winners first, then by score, then `last` (resigned, or handed to
    a bot) whatever their score."""
    seats = range(len(scores))

    def key(seat: int) -> tuple[int, int]:
        if seat in last:
            return (2, 0)
        return (0, 0) if seat in winners else (1, -scores[seat])

    return [1 + sum(1 for other in seats if key(other) < key(seat)) for seat in seats]


def updated(skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
    """The players' skills after a game they finished in `ranks` (1 is first)."""
    teams = [[_MODEL.rating(mu=skill.mu, sigma=skill.sigma)] for skill in skills]
    rated = _MODEL.rate(teams, ranks=[float(rank) for rank in ranks])
    return [Skill(team[0].mu, team[0].sigma) for team in rated]
