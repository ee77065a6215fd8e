"""Fairness: ratings order players as their hidden strengths, in two-player games and in
five-player Ice Palace alike.

Twelve players of fixed strengths play 2,000 games, each among players drawn at
random. A player's showing in a game is its strength plus noise (a fixed
`random.Random` seed); its score is that showing rounded, so equal scores
happen and are ties, and the best score wins, as in a real result. The
results go through the referee's own finishing order and model, and the
players' ratings must then rank as their strengths (Spearman's rho at 0.9 or
more).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from referee.ratings import START, Skill, finishing_ranks, shown, updated

PLAYERS = 12
GAMES = 2_000
# Strengths one noise's width apart from the weakest to the strongest, in points of
# a game's score: a stronger player usually, not always, scores more.
STRENGTHS = [2.0 * number for number in range(PLAYERS)]
NOISE = 6.0


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's on the ranks (ties take their mean rank)."""
    return _pearson(_ranks(xs), _ranks(ys))


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda index: values[index])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    spread_x = sum((x - mean_x) ** 2 for x in xs) ** 0.5
    spread_y = sum((y - mean_y) ** 2 for y in ys) ** 0.5
    return covariance / (spread_x * spread_y)


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # Ties take their mean rank: [1, 2.5, 2.5, 4] against [1, 2, 3, 4].
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)


def simulate(seats: int, seed: int) -> list[Skill]:
    """The players' skills after `GAMES` games of `seats` seats with results drawn from
    `STRENGTHS`."""
    rng = random.Random(seed)
    skills = [START] * PLAYERS
    for _ in range(GAMES):
        players = rng.sample(range(PLAYERS), seats)
        scores = [round(STRENGTHS[player] + rng.gauss(0, NOISE)) for player in players]
        winners = [seat for seat, score in enumerate(scores) if score == max(scores)]
        ranks = finishing_ranks(scores, winners)
        after = updated([skills[player] for player in players], ranks)
        for player, skill in zip(players, after, strict=True):
            skills[player] = skill
    return skills


@pytest.mark.parametrize(("seats", "what"), [(2, "a two-player game"), (5, "Ice Palace, 5")])
def test_ratings_order_players_as_their_strengths(seats: int, what: str) -> None:
    skills = simulate(seats, seed=35)
    rho = spearman([skill.mu for skill in skills], STRENGTHS)
    assert rho >= 0.9, (what, rho)
    # What people read orders them too, and every player played enough to be settled.
    assert spearman([shown(skill).rating for skill in skills], STRENGTHS) >= 0.9
    assert not any(shown(skill).provisional for skill in skills)
