"""Subdivision's bots: what they imagine matches what they see, and every level
plays legal, reproducible moves.

Nothing is hidden in Subdivision and nothing is left to draw (random parks
are drawn at the start and shown from then on), so the view fixes the whole
state: there are no two different states a seat could confuse. The
determinism tests check instead that the same view gives the same move
whatever state object it came from, and that other rng seeds, which may
change the move, never make it illegal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from referee import bots
from referee.bots import seen_by
from referee.bots.subdivision import KNOWLEDGE
from referee.engine import JSON, Resign
from referee.games.subdivision import GAME, State
from referee.rng import Rng

TABLES: list[tuple[int, dict[str, Any]]] = [
    (2, {}),
    (2, {"parks": "random", "private_parks": True}),
    (2, {"parks": "players"}),
    (2, {"three_house": True}),
    (2, {"parks": "cells", "cells": ["b2", "c5", "d1", "e4", "f6", "a3"]}),
    (3, {}),
    (3, {"parks": "random", "three_house": True, "private_parks": True}),
    (4, {"parks": "players"}),
    (4, {"three_house": True, "parks": "players"}),
]
TABLE_IDS = [f"{players}p-{options}" for players, options in TABLES]
LEVELS = ("random", "greedy", "strong")
# A budget that gives the strong bot a handful of iterations: enough to build a tree.
TINY = 0.005


def positions(players: int, raw: dict[str, Any], seed: str) -> Iterator[tuple[State, JSON]]:
    """Every position of a random playout, with its options; now and then a seat resigns."""
    options = GAME.load_options(raw, players)
    rng = Rng(seed)
    state = GAME.start(players, options, rng)
    yield state, options
    while GAME.actors(state):
        seat = min(GAME.actors(state))
        if rng.below(40) == 0 and len(GAME.resigned(state)) < players - 1:
            seat = rng.below(players)
            if seat not in GAME.resigned(state):
                state = GAME.play(state, seat, Resign())
                yield state, options
                continue
        state = GAME.play(state, seat, GAME.random_move(state, seat, rng))
        yield state, options


@pytest.mark.parametrize(("players", "raw"), TABLES, ids=TABLE_IDS)
def test_a_sample_is_the_state_the_seat_sees(players: int, raw: dict[str, Any]) -> None:
    for seed in ("one", "two", "three"):
        for state, options in positions(players, raw, f"{seed}-{players}"):
            for seat in range(players):
                seen = seen_by(GAME, state, seat, players=players, options=options)
                sample = KNOWLEDGE.sample(seen, Rng(f"sample-{seed}"))
                assert GAME.view(sample, seat) == seen.view
                for other in range(players):
                    assert GAME.legal_moves(sample, other) == GAME.legal_moves(state, other)
                assert GAME.result(sample) == GAME.result(state)
                if GAME.actors(sample):
                    mover = min(GAME.actors(sample))
                    move = GAME.random_move(sample, mover, Rng(seed))
                    assert GAME.view(GAME.play(sample, mover, move), seat) == GAME.view(
                        GAME.play(state, mover, move), seat
                    )


def test_the_value_is_a_share_of_the_win_between_0_and_1() -> None:
    for players, raw in TABLES:
        for state, _options in positions(players, raw, "value"):
            values = [KNOWLEDGE.value(state, seat) for seat in range(players)]
            assert all(0.0 <= value <= 1.0 for value in values)
            result = GAME.result(state)
            if result is not None:
                assert sum(values) == pytest.approx(1.0)


def test_more_iterations_where_less_is_left_to_play() -> None:
    state, options = next(positions(2, {}, "iterations"))
    opening = seen_by(GAME, state, 0, players=2, options=options)
    assert KNOWLEDGE.iterations(opening, 1.0) == int(KNOWLEDGE.iterations_per_second)
    assert KNOWLEDGE.iterations(opening, 0.0) == 1
    late = [position for position, _ in positions(2, {}, "iterations")][-2]
    seat = min(GAME.actors(late))
    assert KNOWLEDGE.iterations(
        seen_by(GAME, late, seat, players=2, options=options), 1.0
    ) > 2 * int(KNOWLEDGE.iterations_per_second)


def _some_positions(every: int) -> Iterator[tuple[int, State, JSON]]:
    """Every `every`th position of each table with a seat to move, for the levels to play."""
    for players, raw in TABLES:
        for index, (state, options) in enumerate(positions(players, raw, "levels")):
            if GAME.actors(state) and index % every == 0:
                yield players, state, options


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_plays_a_legal_move(level: str) -> None:
    for players, state, options in _some_positions(7):
        seat = min(GAME.actors(state))
        legal = GAME.legal_moves(state, seat)
        for seed in ("a", "b"):
            move = bots.decide(
                GAME,
                level,
                state,
                seat,
                players=players,
                options=options,
                rng=Rng(seed),
                seconds=TINY,
            )
            assert move in legal


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_view_seed_and_budget_give_the_same_move(level: str) -> None:
    for players, state, options in _some_positions(13):
        seat = min(GAME.actors(state))
        # The same position as another object, through its JSON: the view is all that counts.
        twin = GAME.state_from_json(GAME.state_to_json(state))
        assert twin is not state
        moves = {
            repr(
                bots.decide(
                    GAME,
                    level,
                    position,
                    seat,
                    players=players,
                    options=options,
                    rng=Rng("same"),
                    seconds=TINY,
                )
            )
            for position in (state, twin, state)
        }
        assert len(moves) == 1


@pytest.mark.parametrize("players", [2, 4])
def test_a_game_between_bots_ends(players: int) -> None:
    options = GAME.load_options({}, players)
    state = GAME.start(players, options, Rng("game"))
    seats = [LEVELS[seat % 3] for seat in range(players)]
    turns = 0
    while GAME.actors(state):
        seat = min(GAME.actors(state))
        move = bots.decide(
            GAME,
            seats[seat],
            state,
            seat,
            players=players,
            options=options,
            rng=Rng(f"turn {turns}"),
            seconds=TINY,
        )
        state = GAME.play(state, seat, move)
        turns += 1
    assert GAME.result(state) is not None
