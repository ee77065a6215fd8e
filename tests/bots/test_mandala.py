"""Mandala's bots: the view is the whole state, so a bot's imagined state is
the real one, and every level plays legal moves to the end."""

from __future__ import annotations

import itertools

import pytest

from referee import bots
from referee.bots.mandala import KNOWLEDGE
from referee.games import mandala
from referee.playout import steps
from referee.rng import Rng

GAME = mandala.GAME
OPTIONS = GAME.load_options({}, 2)


def positions(count: int) -> list[tuple[mandala.State, int]]:
    """Positions of random playouts, each with the seat to move."""
    found = []
    for game_index in itertools.count():
        for step in steps(GAME, 2, OPTIONS, f"bots-mandala-{game_index}", Rng(str(game_index))):
            for seat in GAME.actors(step.state):
                found.append((step.state, seat))
                if len(found) == count:
                    return found
    raise AssertionError("unreachable")


def test_the_imagined_state_is_the_real_one() -> None:
    for state, seat in positions(300):
        seen = bots.seen_by(GAME, state, seat, players=2, options=OPTIONS)
        assert KNOWLEDGE.sample(seen, Rng("any")) == state


@pytest.mark.parametrize("level", bots.levels("mandala"))
def test_every_level_plays_a_legal_move_and_the_same_one_again(level: str) -> None:
    for state, seat in positions(40):
        chosen = [
            bots.decide(
                GAME, level, state, seat, players=2, options=OPTIONS, rng=Rng("r"), seconds=0.01
            )
            for _ in range(2)
        ]
        assert chosen[0] == chosen[1]
        assert chosen[0] in GAME.legal_moves(state, seat)


def test_strong_plays_a_legal_move_at_any_budget() -> None:
    state, seat = positions(1)[0]
    for seconds in (0.001, 0.05):
        move = bots.decide(
            GAME, "strong", state, seat, players=2, options=OPTIONS, rng=Rng("s"), seconds=seconds
        )
        assert move in GAME.legal_moves(state, seat)


def test_greedy_takes_a_move_that_scores_when_one_does() -> None:
    # Over real positions, greedy's move never leaves its score lead lower
    # than the best one-move-ahead lead (it is greedy by construction).
    for state, seat in positions(60):
        move = bots.decide(
            GAME, "greedy", state, seat, players=2, options=OPTIONS, rng=Rng("g"), seconds=0
        )
        best = max(
            KNOWLEDGE.value(GAME.play(state, seat, other), seat)
            for other in GAME.legal_moves(state, seat)
        )
        assert KNOWLEDGE.value(GAME.play(state, seat, move), seat) == best
