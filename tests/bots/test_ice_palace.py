"""Ice Palace's bots: deals consistent with the view, moves blind to what the
seat cannot see, and every level's move legal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest

from referee import bots
from referee.bots.ice_palace import (
    KNOWLEDGE,
    _built_scores,
    _distinct_yard_moves,
    _improved,
    _lead_after,
)
from referee.bots.levels import _advance
from referee.games import ice_palace
from referee.games.ice_palace import BUILD, GAME, STASH_PER_SIZE, Build, Pass, Place, State
from referee.replay import new_state
from referee.rng import QuickRng, Rng

PLAYERS = 3
LEVELS = bots.levels(GAME.name)


def positions(games: int, every: int) -> Iterator[State]:
    """Every `every`th position of random playouts, builds included."""
    for number in range(games):
        state = new_state(GAME, f"bots-{number}", PLAYERS, {})
        rng = QuickRng(Rng(f"moves-{number}"))
        made = 0
        while GAME.actors(state):
            if made % every == 0 or state.phase == BUILD:
                yield state
            seat = next(iter(GAME.actors(state)))
            state = _advance(GAME, GAME.play(state, seat, GAME.random_move(state, seat, rng)))
            made += 1


def test_the_levels_are_offered() -> None:
    assert LEVELS == ("random", "greedy", "strong")


def test_a_deal_is_one_the_seat_could_be_looking_at() -> None:
    rng = QuickRng(Rng("deals"))
    checked = 0
    for state in positions(games=4, every=3):
        for seat in range(PLAYERS):
            seen = bots.seen_by(GAME, state, seat, players=PLAYERS, options={})
            dealt = KNOWLEDGE.sample(seen, rng)
            assert GAME.view(dealt, seat) == seen.view
            assert tuple(GAME.legal_moves(dealt, seat)) == seen.legal
            # No more of a pyramid than the game holds.
            pieces = Counter(
                [p for hand in dealt.hands for p in hand]
                + [
                    size + colour
                    for size, part in zip("SML", dealt.pool, strict=True)
                    for colour in part
                ]
                + [
                    p
                    for board in (dealt.yard, dealt.palace)
                    for _x, _y, stack in board
                    for p in stack
                ]
            )
            assert max(pieces.values()) <= STASH_PER_SIZE
            for actor in GAME.actors(dealt):
                for move in KNOWLEDGE.candidates(dealt, actor):
                    GAME.play(dealt, actor, move)
                after = GAME.play(dealt, actor, GAME.random_move(dealt, actor, rng))
                assert GAME.view(after, seat) is not None
            checked += 1
    assert checked > 100


def test_the_deals_differ_in_what_is_hidden() -> None:
    state = next(positions(games=1, every=1))
    seen = bots.seen_by(GAME, state, 0, players=PLAYERS, options={})
    rng = QuickRng(Rng("several"))
    hands = {KNOWLEDGE.sample(seen, rng).hands[1] for _ in range(20)}
    assert len(hands) > 1


def hidden_swapped(state: State, seat: int) -> State:
    """`state` with the hidden pyramids dealt otherwise: size by size, the
    other hands' pieces and the pool's are rotated one place, so `seat`'s
    view (its hand, and the others' counts by size) stays the same."""
    hands = [list(hand) for hand in state.hands]
    pool = list(state.pool)
    for index, size in enumerate("SML"):
        slots = [
            (other, at)
            for other in range(PLAYERS)
            if other != seat
            for at, pyramid in enumerate(hands[other])
            if pyramid[0] == size
        ]
        colours = [hands[other][at][1] for other, at in slots] + list(pool[index])
        colours = colours[1:] + colours[:1]
        for (other, at), colour in zip(slots, colours, strict=False):
            hands[other][at] = size + colour
        pool[index] = "".join(colours[len(slots) :])
    return replace(
        state, hands=tuple(tuple(hand) for hand in hands), pool=(pool[0], pool[1], pool[2])
    )


@pytest.mark.parametrize("level", LEVELS)
def test_a_move_depends_only_on_what_the_seat_sees(level: str) -> None:
    differed = 0
    for number, state in enumerate(positions(games=2, every=9)):
        (seat,) = GAME.actors(state)
        other = hidden_swapped(state, seat)
        assert GAME.view(other, seat) == GAME.view(state, seat)
        differed += other != state
        moves = [
            bots.decide(
                GAME,
                level,
                position,
                seat,
                players=PLAYERS,
                options={},
                rng=Rng(f"same-{number}"),
                seconds=0.02,
            )
            for position in (state, other, state)
        ]
        assert moves[0] == moves[1] == moves[2]
    assert differed > 3


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_plays_a_legal_move(level: str) -> None:
    for number, state in enumerate(positions(games=2, every=4)):
        (seat,) = GAME.actors(state)
        move = bots.decide(
            GAME,
            level,
            state,
            seat,
            players=PLAYERS,
            options={},
            rng=Rng(f"legal-{number}"),
            seconds=0.01,
        )
        GAME.play(state, seat, move)  # raises IllegalMove if it is not legal
        if state.phase == BUILD:
            assert isinstance(move, Build)


def test_a_game_of_bots_ends() -> None:
    state = new_state(GAME, "bots-game", PLAYERS, {})
    seats = ("strong", "greedy", "random")
    made = 0
    while GAME.actors(state):
        (seat,) = GAME.actors(state)
        move = bots.decide(
            GAME,
            seats[seat],
            state,
            seat,
            players=PLAYERS,
            options={},
            rng=Rng(f"game-{made}"),
            seconds=0.005,
        )
        state = _advance(GAME, GAME.play(state, seat, move))
        made += 1
        assert made < 500
    assert GAME.result(state) is not None


def test_a_bettered_plan_is_legal_and_no_worse_for_its_builder() -> None:
    builds = [
        state
        for state in positions(games=3, every=1000)
        if state.phase == BUILD and state.build_max > 0
    ]
    bettered = 0
    for state in builds:
        builder = state.turn
        plan = _improved(state.palace, state.build_plan, state.colours, builder)
        assert len(plan) == len(state.build_plan)
        GAME.play(state, builder, Build(plan))  # raises IllegalMove if a step is refused
        solver = _lead_after(state.palace, state.build_plan, state.colours, builder)
        better = _lead_after(state.palace, plan, state.colours, builder)
        assert solver is not None and better is not None and better >= solver
        bettered += better > solver
    assert len(builds) > 5
    assert bettered > 0


def test_a_yard_is_judged_as_the_referees_quick_plan_would_build_it() -> None:
    # In the yard as at the build, the palace is judged as the plan the referee's
    # search (`build auto`) starts from would leave it: placing one's own colour
    # mostly looks better than passing.
    own_better = own_placements = 0
    for state in positions(games=3, every=1):
        if state.phase == BUILD or not state.yard:
            continue
        seat = state.turn
        passed = KNOWLEDGE.value(GAME.play(state, seat, Pass()), seat)
        for move in KNOWLEDGE.candidates(state, seat):
            if isinstance(move, Place) and move.pyramid[1] == state.colours[seat]:
                own_placements += 1
                own_better += KNOWLEDGE.value(GAME.play(state, seat, move), seat) > passed
    assert own_placements > 100
    assert own_better > 0.8 * own_placements
    for state in positions(games=2, every=1000):
        if state.phase == BUILD and state.build_max > 0:
            quick = GAME.quick_plan(
                state.palace, state.yard, state.colours, state.turn, state.resigned
            )
            plan = Build(ice_palace._places(quick))
            built = _advance(GAME, GAME.play(state, state.turn, plan))
            judged = _built_scores(
                GAME, state.palace, state.yard, state.colours, state.turn, state.resigned
            )
            assert judged == GAME.scores(built)


def test_a_hands_yard_moves_are_remembered_as_found() -> None:
    for state in positions(games=2, every=1):
        if state.phase == BUILD:
            continue
        seat = state.turn
        assert tuple(KNOWLEDGE.candidates(state, seat)) == tuple(_distinct_yard_moves(state, seat))
