"""Mandala Stones: the rules file's examples and rules, on constructed and random states."""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee import games
from referee.engine import BadOptions, IllegalMove, Played, Resign, ScoreLine
from referee.games import mandala_stones_data
from referee.games.mandala_stones import (
    CIRCLE_STACKS,
    GAME,
    STACK_CELLS,
    Card,
    Pick,
    ScoreColour,
    ScoreTops,
    State,
    objective_card,
    objective_holds,
    stone_name,
    stone_value,
)
from referee.i18n import speaking
from referee.rng import Rng

Stacks = dict[int, str]

# Stack indices in lattice row order, worked out by hand from the rules'
# 7x7 lattice: row 0 holds stacks 0-2 at columns 1, 3, 5; row 1 stacks 3-6
# at columns 0, 2, 4, 6; row 2 stacks 7-9; row 3 stacks 10-13; and so on.
# Circle 5 (row 3, column 3) touches N = (2,3) = 8, E = (3,4) = 12,
# S = (4,3) = 15, W = (3,2) = 11.
C5 = {"N": 8, "E": 12, "S": 15, "W": 11}


def stones(text: str) -> tuple[int, ...]:
    return tuple(stone_value(name) for name in text.split())


def board(*towers: str) -> tuple[tuple[int, ...], ...]:
    padded = [*towers, *([""] * (5 - len(towers)))]
    return tuple(stones(tower) for tower in padded)


def make(
    players: int = 2,
    *,
    stacks: Stacks | None = None,
    artists: tuple[int, ...] = (2, 4, 6, 8),
    boards: list[tuple[tuple[int, ...], ...]] | None = None,
    mandala: int = 0,
    current: int = 0,
    first: int = 0,
    scores: tuple[int, ...] | None = None,
    options: dict[str, Any] | None = None,
) -> State:
    """A state with exactly the given pieces; unnamed stacks are empty."""
    start = GAME.start(players, GAME.load_options(options, players), Rng("constructed"))
    return replace(
        start,
        stacks=tuple(stones((stacks or {}).get(i, "")) for i in range(24)),
        artists=artists,
        boards=tuple(boards or [board()] * players),
        scores=scores or (0,) * players,
        mandala=stones("Yo " * mandala),
        current=current,
        first_player=first,
    )


def towers_of(state: State, seat: int) -> list[str]:
    return [" ".join(stone_name(s) for s in tower) for tower in state.boards[seat]]


def refused(state: State, seat: int, move: Any) -> IllegalMove:
    with pytest.raises(IllegalMove) as error:
        GAME.play(state, seat, move)
    assert error.value.reason
    return error.value


# -- the main board -----------------------------------------------------------


def test_lattice_has_24_stacks_and_each_circle_touches_n_e_s_w() -> None:
    assert len(STACK_CELLS) == 24
    assert STACK_CELLS[:7] == ((0, 1), (0, 3), (0, 5), (1, 0), (1, 2), (1, 4), (1, 6))
    assert CIRCLE_STACKS[4] == (C5["N"], C5["E"], C5["S"], C5["W"])
    assert CIRCLE_STACKS[0] == (0, 4, 7, 3)  # circle 1 at (1,1)
    assert CIRCLE_STACKS[8] == (16, 20, 23, 19)  # circle 9 at (5,5)
    touching = Counter(stack for around in CIRCLE_STACKS for stack in around)
    # The 12 border stacks touch one circle, the 12 inside ones two.
    assert sorted(Counter(touching.values()).items()) == [(1, 12), (2, 12)]


@given(seed=st.text(min_size=1, max_size=12), players=st.sampled_from([2, 3, 4]))
@settings(max_examples=30, deadline=None)
def test_setup_builds_24_stacks_of_4_from_96_stones_and_places_the_artists(
    seed: str, players: int
) -> None:
    state = GAME.start(players, GAME.load_options({}, players), Rng(seed))
    assert [len(stack) for stack in state.stacks] == [4] * 24
    assert Counter(s for stack in state.stacks for s in stack) == Counter(
        {stone: 12 for stone in range(8)}
    )
    assert sorted(state.artists) == [2, 4, 6, 8]
    assert [len(cards) for cards in state.objectives] == [2] * players
    dealt = [card.number for cards in state.objectives for card in cards]
    assert len(set(dealt)) == 2 * players and set(dealt) <= set(range(1, 11))
    assert 0 <= state.first_player < players
    assert GAME.actors(state) == frozenset({state.first_player})


def test_the_seed_decides_the_setup() -> None:
    options = GAME.load_options({}, 3)
    one = GAME.start(3, options, Rng("alpha"))
    assert one == GAME.start(3, options, Rng("alpha"))
    others = [GAME.start(3, options, Rng(f"beta{i}")) for i in range(5)]
    assert any(other.stacks != one.stacks for other in others)
    assert any(other.objectives != one.objectives for other in others)


# -- picks --------------------------------------------------------------------


def test_an_artist_on_the_other_side_of_a_stack_blocks_it() -> None:
    # A1 (star) goes from circle 9 to 5; A3 on circle 2 blocks stack N of 5
    # (it touches circles 2 and 5), stack E touches circle 6, which is empty.
    state = make(
        stacks={C5["N"]: "Bo Y*", C5["E"]: "Vo R*"},
        artists=(9, 4, 2, 8),
    )
    error = refused(state, 0, Pick(1, 5, "N", 1))
    assert "E" in error.reason
    after = GAME.play(state, 0, Pick(1, 5, "E", 1))
    assert towers_of(after, 0)[0] == "R*"
    assert after.stacks[C5["N"]] == stones("Bo Y*")
    assert after.stacks[C5["E"]] == stones("Vo")
    assert after.artists == (5, 4, 2, 8)


def test_the_artist_that_moves_does_not_block_the_stack_it_leaves() -> None:
    # A1 leaves circle 2 for circle 5: stack N of 5 touched A1's old circle.
    state = make(stacks={C5["N"]: "Bo Y*"}, artists=(2, 1, 3, 7))
    after = GAME.play(state, 0, Pick(1, 5, "N", 2))
    assert towers_of(after, 0)[1] == "Y*"
    assert after.stacks[C5["N"]] == stones("Bo")


def test_a_circle_artist_takes_only_circle_tops() -> None:
    state = make(
        stacks={C5["N"]: "Y*", C5["E"]: "Bo", C5["S"]: "R*", C5["W"]: "Vo"},
        artists=(1, 3, 9, 7),
    )
    circle_pick = GAME.play(state, 0, Pick(3, 5, "E", 1))
    assert towers_of(circle_pick, 0)[0] == "Bo Vo"
    star_pick = GAME.play(state, 0, Pick(1, 5, "S", 1))
    assert towers_of(star_pick, 0)[0] == "R* Y*"


FOUR_STARS = {C5["N"]: "Vo Y*", C5["E"]: "Y* B*", C5["S"]: "R*", C5["W"]: "Bo Bo V*"}


@pytest.mark.parametrize(
    ("first", "tower"),
    [
        ("N", "Y* B* R* V*"),
        ("E", "B* R* V* Y*"),
        ("S", "R* V* Y* B*"),
        ("W", "V* Y* B* R*"),
    ],
)
def test_stones_are_taken_clockwise_from_the_chosen_first(first: str, tower: str) -> None:
    # Artists on the corners touch none of circle 5's stacks.
    state = make(stacks=FOUR_STARS, artists=(9, 1, 3, 7))
    after = GAME.play(state, 0, Pick(1, 5, first, 3))
    assert towers_of(after, 0)[2] == tower  # the first taken is the bottom
    assert [after.stacks[C5[d]] for d in "NESW"] == [
        stones("Vo"),
        stones("Y*"),
        (),
        stones("Bo Bo"),
    ]


@pytest.mark.parametrize(
    ("first", "tower"), [("N", "Y* R* V*"), ("S", "R* V* Y*"), ("W", "V* Y* R*")]
)
def test_clockwise_order_skips_stacks_that_are_not_collectable(first: str, tower: str) -> None:
    stacks = {**FOUR_STARS, C5["E"]: "Y* Bo"}  # E shows a circle
    state = make(stacks=stacks, artists=(9, 1, 3, 7))
    after = GAME.play(state, 0, Pick(2, 5, first, 5))
    assert towers_of(after, 0)[4] == tower
    assert after.stacks[C5["E"]] == stones("Y* Bo")
    assert refused(state, 0, Pick(2, 5, "E", 5)).code == "illegal_move"


def test_every_first_offered_in_legal_moves_is_a_collectable_direction() -> None:
    stacks = {**FOUR_STARS, C5["E"]: "Y* Bo"}
    state = make(
        stacks=stacks, artists=(9, 1, 3, 7), boards=[board("", "Y*", "Y*", "Y*", ""), board()]
    )
    picks = [m for m in GAME.legal_moves(state, 0) if isinstance(m, Pick) and m.circle == 5]
    stars = {(artist, first, space) for artist in (1, 2) for first in "NSW" for space in (1, 5)}
    circles = {(artist, "E", space) for artist in (3, 4) for space in (1, 5)}
    assert {(m.artist, m.first, m.space) for m in picks} == stars | circles


def test_a_pick_that_collects_nothing_is_refused() -> None:
    # Circle 5's only stack with a star top touches A3's circle 2.
    state = make(stacks={C5["N"]: "Y*", C5["E"]: "Bo"}, artists=(9, 1, 2, 7))
    error = refused(state, 0, Pick(1, 5, "N", 1))
    assert error.code == "illegal_move"
    assert "no stone" in error.reason
    empty_corner = refused(state, 0, Pick(1, 3, "N", 1))
    assert "no stone" in empty_corner.reason


def test_picks_onto_taken_circles_or_spaces_are_refused() -> None:
    state = make(
        stacks={C5["N"]: "Y*"},
        artists=(9, 1, 3, 7),
        boards=[board("Bo"), board()],
    )
    assert "already" in refused(state, 0, Pick(1, 9, "N", 2)).reason
    assert "A2" in refused(state, 0, Pick(1, 1, "N", 2)).reason
    assert "space 1" in refused(state, 0, Pick(1, 5, "N", 1)).reason
    assert refused(state, 1, Pick(1, 5, "N", 2)).code == "not_your_turn"


def test_a_full_board_forces_a_score() -> None:
    state = make(
        stacks={C5["N"]: "Y*"},
        artists=(9, 1, 3, 7),
        boards=[board("Y*", "Bo", "Y*", "R*", "Vo"), board()],
    )
    moves = GAME.legal_moves(state, 0)
    assert moves and not any(isinstance(m, Pick) for m in moves)
    assert ScoreColour("Y") in moves and ScoreTops((5, 1)) in moves
    assert "no empty tower space" in refused(state, 0, Pick(1, 5, "N", 1)).reason


def test_without_a_legal_pick_a_seat_must_score() -> None:
    # The only stone shows a circle and touches A2's circle 2.
    state = make(stacks={C5["N"]: "Vo"}, artists=(9, 2, 3, 7), boards=[board("Y*"), board("B*")])
    assert GAME.legal_moves(state, 0) == [ScoreTops((1,))]


def test_stacks_are_never_refilled() -> None:
    state = make(stacks={C5["N"]: "Y*", C5["S"]: "Bo"}, artists=(9, 1, 3, 7))
    after = GAME.play(state, 0, Pick(1, 5, "N", 1))
    assert after.stacks[C5["N"]] == ()
    assert sum(len(stack) for stack in after.stacks) == 1


# -- scoring ------------------------------------------------------------------


def test_the_rulebook_example_scores_13_for_violet() -> None:
    # Heights 1, 2, 3, 3, 4: exactly the values 1-4. Violet tops towers 1,
    # 4 (3 high) and 5 (four colours).
    towers = board("V*", "Y* B*", "Y* Yo B*", "Y* B* Vo", "Yo Bo Ro V*")
    state = make(boards=[towers, board("Y*")], scores=(3, 0))
    after = GAME.play(state, 0, ScoreColour("V"))
    assert after.scores == (3 + 13, 0)
    assert [stone_name(s) for s in after.mandala] == ["V*", "Vo", "V*"]
    assert towers_of(after, 0) == ["", "Y* B*", "Y* Yo B*", "Y* B*", "Yo Bo Ro"]
    assert after.current == 1


# Each case: the towers, the colour scored, the points by the rules' table.
# The second tower scored is a one-stone tower on space 5 (1 + 1 colour = 2)
# or on space 2 (height 1: 4), whose points are added in.
SPACE_CASES = [
    # space 2: height 1/2/3/4 -> 4/2/1/1
    (("", "Y*", "", "", "Yo"), 4 + 2),
    (("", "B* Y*", "", "", "Yo"), 2 + 2),
    (("", "B* B* Y*", "", "", "Yo"), 1 + 2),
    (("", "B* B* B* Y*", "", "", "Yo"), 1 + 2),
    # space 3: height 1/2/3/4 -> 1/3/4/1
    (("", "", "Y*", "", "Yo"), 1 + 2),
    (("", "", "B* Y*", "", "Yo"), 3 + 2),
    (("", "", "B* B* Y*", "", "Yo"), 4 + 2),
    (("", "", "B* B* B* Y*", "", "Yo"), 1 + 2),
    # space 4: height 1/2/3/4 -> 1/2/4/6
    (("", "", "", "Y*", "Yo"), 1 + 2),
    (("", "", "", "B* Y*", "Yo"), 2 + 2),
    (("", "", "", "B* B* Y*", "Yo"), 4 + 2),
    (("", "", "", "B* B* B* Y*", "Yo"), 6 + 2),
    # space 5: 1 + distinct colours in the tower
    (("", "Yo", "", "", "Y*"), 4 + 2),
    (("", "Yo", "", "", "Yo Y*"), 4 + 2),
    (("", "Yo", "", "", "Bo Y*"), 4 + 3),
    (("", "Yo", "", "", "Ro Bo Y*"), 4 + 4),
    (("", "Yo", "", "", "Ro Ro Ro Y*"), 4 + 3),
    (("", "Yo", "", "", "Vo Ro Bo Y*"), 4 + 5),
    # space 1: 1 per distinct height of the 5 spaces, empty = 0
    (("Y*", "", "", "", "Yo"), 2 + 2),  # heights 1 0 0 0 1
    (("B* Y*", "", "", "", "Yo"), 3 + 2),  # 2 0 0 0 1
    (("B* B* Y*", "Bo Bo", "Bo Bo Bo Bo", "", "Yo"), 5 + 2),  # 3 2 4 0 1
    (("B* B* B* Y*", "Bo Bo Bo Bo", "Ro Ro Ro Ro", "Vo Vo Vo Vo", "Yo"), 2 + 2),  # 4 4 4 4 1
]


@pytest.mark.parametrize(("towers", "points"), SPACE_CASES)
def test_each_space_scores_by_its_rule_at_every_height(
    towers: tuple[str, ...], points: int
) -> None:
    state = make(boards=[board(*towers), board("Y*")])
    after = GAME.play(state, 0, ScoreColour("Y"))
    assert after.scores[0] == points
    assert len(after.mandala) == 2


def test_a_colour_needs_two_towers_topped_by_it() -> None:
    state = make(boards=[board("Y*", "B* V*", "Vo Y*"), board("Y*")])
    assert "on top of 1" in refused(state, 0, ScoreColour("V")).reason
    assert "on top of 0" in refused(state, 0, ScoreColour("R")).reason
    assert GAME.play(state, 0, ScoreColour("Y")).scores[0] > 0


def test_score_tops_gives_one_point_each_in_the_listed_order() -> None:
    state = make(boards=[board("Y*", "B* V*", "Vo Ro"), board("Y*")])
    after = GAME.play(state, 0, ScoreTops((3, 1, 2)))
    assert after.scores[0] == 3
    assert [stone_name(s) for s in after.mandala] == ["Ro", "Y*", "V*"]
    assert towers_of(after, 0) == ["", "B*", "Vo", "", ""]


def test_score_tops_refuses_empty_repeated_or_no_towers() -> None:
    state = make(boards=[board("Y*", "", "Vo"), board("Y*")])
    assert "space 2 is empty" in refused(state, 0, ScoreTops((1, 2))).reason
    assert "once" in refused(state, 0, ScoreTops((1, 1))).reason
    assert "at least one" in refused(state, 0, ScoreTops(())).reason


def test_covering_bonus_spaces_scores_their_points_at_once() -> None:
    # Default board: +1 on space 5, +2 on space 10.
    state = make(boards=[board("Y* Y*", "Bo"), board("Y*")], mandala=4)
    assert GAME.play(state, 0, ScoreTops((2,))).scores[0] == 1 + 1
    state = make(boards=[board("Y* Y*", "Bo"), board("Y*")], mandala=8)
    assert GAME.play(state, 0, ScoreTops((1, 2))).scores[0] == 2 + 2
    state = make(boards=[board("Y* Y*", "Bo"), board("Y*")], mandala=12)
    assert GAME.play(state, 0, ScoreTops((1, 2))).scores[0] == 2


def test_a_full_mandala_sets_stones_aside() -> None:
    options = {"mandala_board": {"spaces": 3, "bonuses": {"3": 2}, "hands": {"2": 1}}}
    state = make(boards=[board("Y* Y*", "Bo Ro"), board("Y*")], mandala=2, options=options)
    after = GAME.play(state, 0, ScoreTops((1, 2)))
    assert len(after.mandala) == 3 and after.set_aside == 1
    assert after.scores[0] == 2 + 2
    assert GAME.view(after, None)["set_aside"] == 1


# -- the end ------------------------------------------------------------------

HANDS = {2: 38, 3: 48, 4: 58}


def everyone_has_towers(players: int) -> list[tuple[tuple[int, ...], ...]]:
    return [board("Y* Y* Y* Y*", "Bo Bo") for _ in range(players)]


@pytest.mark.parametrize(
    ("players", "first", "offset"),
    [
        (players, first, offset)
        for players in (2, 3, 4)
        for first in (0, 1)
        for offset in range(players)
    ],
)
def test_the_hands_space_triggers_the_end_and_the_round_is_completed(
    players: int, first: int, offset: int
) -> None:
    """`offset`: how many turns after the first player's the trigger comes."""
    trigger = (first + offset) % players
    state = make(
        players,
        boards=everyone_has_towers(players),
        mandala=HANDS[players] - 1,
        current=trigger,
        first=first,
    )
    state = GAME.play(state, trigger, ScoreTops((1,)))
    assert state.end_triggered
    # Everyone after the trigger up to the seat before the first plays once.
    for turn in range(players - 1 - offset):
        assert GAME.result(state) is None
        seat = (trigger + 1 + turn) % players
        assert GAME.actors(state) == frozenset({seat})
        state = GAME.play(state, seat, ScoreTops((2,)))
    result = GAME.result(state)
    assert result is not None
    assert GAME.actors(state) == frozenset()
    assert refused(state, first, ScoreTops((1,))).code == "game_over"


@pytest.mark.parametrize(("players", "space"), [(3, 38), (4, 38), (4, 48)])
def test_other_hands_spaces_do_nothing(players: int, space: int) -> None:
    state = make(players, boards=everyone_has_towers(players), mandala=space - 1)
    after = GAME.play(state, 0, ScoreTops((1,)))
    assert not after.end_triggered and len(after.mandala) == space


def test_a_custom_mandala_board_moves_the_hands() -> None:
    options = {"mandala_board": {"spaces": 10, "bonuses": {}, "hands": {"2": 4}}}
    state = make(boards=everyone_has_towers(2), mandala=2, options=options)
    after = GAME.play(state, 0, ScoreTops((1, 2)))
    assert after.end_triggered and after.scores[0] == 2


def test_a_seat_that_can_neither_pick_nor_score_ends_the_game_at_once() -> None:
    # No stones left on the main board and seat 1 has no tower.
    state = make(3, boards=[board("Y*"), board(), board("Bo")], first=1)
    after = GAME.play(state, 0, ScoreTops((1,)))
    assert GAME.result(after) is not None
    assert not after.end_triggered
    assert after.boards[2] == board("Bo")  # seat 2 never got its turn


def test_a_seat_that_can_only_score_or_only_pick_plays_on() -> None:
    # No stones on the main board: seat 1 can still score its tower.
    state = make(3, boards=[board("Y*"), board("Vo"), board()])
    state = GAME.play(state, 0, ScoreTops((1,)))
    assert GAME.actors(state) == frozenset({1})
    assert GAME.legal_moves(state, 1) == [ScoreTops((1,))]
    # Seat 2 has no tower and no pick: the game ends before its turn.
    assert GAME.result(GAME.play(state, 1, ScoreTops((1,)))) is not None

    # With a star north of circle 5, seat 2 has a pick and plays.
    state = make(
        3, boards=[board("Y*"), board("Vo"), board()], stacks={C5["N"]: "Y*"}, artists=(9, 1, 3, 7)
    )
    state = GAME.play(GAME.play(state, 0, ScoreTops((1,))), 1, ScoreTops((1,)))
    assert GAME.actors(state) == frozenset({2})


def test_ties_go_to_the_earliest_seat_in_turn_order_from_the_first_player() -> None:
    state = make(
        3,
        boards=everyone_has_towers(3),
        mandala=HANDS[3] - 1,
        first=2,
        current=1,
        scores=(10, 9, 10),
        options={"objectives": "off"},
    )
    state = GAME.play(state, 1, ScoreTops((1,)))  # seat 1 reaches 10 as well
    result = GAME.result(state)
    assert result is not None
    assert result.scores == (10, 10, 10)
    assert result.winners == (2,)  # turn order 2, 0, 1


def test_the_end_by_resignation_ranks_the_resigned_last() -> None:
    state = make(3, boards=everyone_has_towers(3), scores=(50, 0, 1))
    state = GAME.play(state, 0, Resign())
    assert GAME.actors(state) == frozenset({1})
    state = GAME.play(state, 2, Resign())
    result = GAME.result(state)
    assert result is not None and result.winners == (1,)


def test_resign_from_a_seat_not_on_turn_keeps_the_turn() -> None:
    state = make(3, boards=everyone_has_towers(3))
    after = GAME.play(state, 2, Resign())
    assert GAME.actors(after) == frozenset({0}) and after.resigned == (2,)
    after = GAME.play(after, 0, ScoreTops((1,)))
    after = GAME.play(after, 1, ScoreTops((1,)))
    assert GAME.actors(after) == frozenset({0})  # seat 2 is skipped
    assert refused(after, 2, Resign()).code == "illegal_move"


def test_the_round_ends_at_the_first_players_seat_even_if_it_resigned() -> None:
    state = make(4, boards=everyone_has_towers(4), mandala=HANDS[4] - 1, first=2, current=3)
    state = GAME.play(state, 2, Resign())
    state = GAME.play(state, 3, ScoreTops((1,)))  # triggers; seats 0 and 1 still play
    state = GAME.play(state, 0, ScoreTops((1,)))
    assert GAME.actors(state) == frozenset({1})
    state = GAME.play(state, 1, ScoreTops((1,)))
    assert GAME.result(state) is not None


# -- objectives ---------------------------------------------------------------

DECK = {card["card"]: objective_card(card) for card in mandala_stones_data.OBJECTIVES}

# card -> (a board where its condition holds, boards where it does not)
OBJECTIVE_CASES: dict[int, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {
    1: (("Yo Y*", "", "B*"), [("Y*", "Bo"), ()]),
    2: (("Y* Yo", "Ro"), [("Yo", "B*"), ()]),
    3: (("Y*", "B*", "R*", "V*", "Yo"), [("Y*", "B*", "R*", "V*", ""), ()]),
    4: (("", "", "Y* B*"), [("Y*", "B*"), ()]),
    5: (("Y*", "Bo", "R*", "Vo", "Yo"), [("Y*", "Bo", "R*", "Ro", "Yo")]),
    6: (("Y*", "", "Bo Yo"), [("Y*",), ("Y*", "Bo")]),
    7: (("Y*", "Y* Y*", "Y* Y* Y*", "Y* Y* Y* Y*"), [("Y*", "Y* Y*", "Y* Y* Y*", "Y* Y* Y*")]),
    8: (("Y*", "Bo", "", "Vo", "Ro Ro"), [("Y*", "Bo", "Vo Vo")]),
    9: (("", "Y* B* R* V*"), [("Y* B* R*", "Y*")]),
    10: (("Y* B*", "", "Yo Yo", "R* R*"), [("Y* B*", "Yo Yo", "R*"), ("Y*", "B*", "R*", "V*")]),
}


def test_the_default_deck_is_the_rules_table() -> None:
    assert sorted(DECK) == list(range(1, 11))
    assert {n: card.points for n, card in DECK.items()} == {
        1: 7, 2: 7, 3: 5, 4: 5, 5: 6, 6: 6, 7: 6, 8: 5, 9: 4, 10: 6
    }  # fmt: skip


@pytest.mark.parametrize("number", sorted(OBJECTIVE_CASES))
def test_each_objective_condition(number: int) -> None:
    holds, fails = OBJECTIVE_CASES[number]
    assert objective_holds(DECK[number], board(*holds))
    for towers in fails:
        assert not objective_holds(DECK[number], board(*towers))


def test_the_better_objective_that_holds_is_scored_at_the_end() -> None:
    state = make(
        2,
        boards=[board("Y*", "B*", "R*", "V*", "Y* Yo"), board("Y*", "Yo")],
        mandala=HANDS[2] - 1,
        first=1,
        current=0,
    )
    # Seat 0: card 3 (5 towers, 5) and card 5 (4 colours on top, 6) both
    # hold once tower 5 shows Y*. Seat 1: card 1 (only stars, 7) fails on
    # Yo, card 6 (one colour on 2+ towers, 6) holds.
    state = replace(state, objectives=((DECK[3], DECK[5]), (DECK[1], DECK[6])))
    state = GAME.play(state, 0, ScoreTops((5,)))  # triggers; seat 0 is last in the round
    assert state.over
    assert state.objective_points == (6, 6)
    result = GAME.result(state)
    assert result is not None
    assert result.scores == (1 + 6, 6) and result.winners == (0,)


def test_objectives_are_revealed_once_over() -> None:
    state = make(2, boards=everyone_has_towers(2), mandala=HANDS[2] - 1, first=1)
    state = replace(state, objectives=((DECK[9], DECK[4]), (DECK[3], DECK[10])))
    running = GAME.view(state, 0)
    assert running["objectives"] == [[9, 4], 2]
    assert GAME.view(state, None)["objectives"] == [2, 2]
    over = GAME.play(state, 0, ScoreTops((2,)))
    assert over.over
    for viewer in (None, 0, 1):
        assert GAME.view(over, viewer)["objectives"] == [[9, 4], [3, 10]]
    assert GAME.view(over, None)["objective_points"] == [4, 0]


def test_a_custom_deck_is_dealt_and_off_plays_without() -> None:
    deck = [
        {"card": 21, "points": 3, "condition": {"kind": "tower_count", "count": 0}},
        {"card": 22, "points": 2, "condition": {"kind": "same_height", "count": 1}},
        {"card": 23, "points": 1, "condition": {"kind": "heights_present", "heights": [2]}},
        {"card": 24, "points": 9, "condition": {"kind": "top_pattern_only", "pattern": "o"}},
    ]
    options = GAME.load_options({"objectives": deck}, 2)
    state = GAME.start(2, options, Rng("custom"))
    assert sorted(card.number for cards in state.objectives for card in cards) == [21, 22, 23, 24]
    off = GAME.start(2, GAME.load_options({"objectives": "OFF"}, 2), Rng("custom"))
    assert off.objectives == ((), ())
    assert GAME.view(off, 0)["objectives"] == [[], 0]


# -- options ------------------------------------------------------------------


def test_default_options_are_the_data_module_and_load_again_unchanged() -> None:
    options = GAME.load_options({}, 4)
    assert options == {
        "mandala_board": mandala_stones_data.MANDALA_BOARD,
        "objectives": mandala_stones_data.OBJECTIVES,
    }
    assert json.loads(json.dumps(options)) == options
    assert GAME.load_options(copy.deepcopy(options), 4) == options
    options["mandala_board"]["bonuses"]["1"] = 5  # defaults are copies
    assert GAME.load_options({}, 4)["mandala_board"] == mandala_stones_data.MANDALA_BOARD


def test_the_default_mandala_board_is_the_rules_text() -> None:
    board_data = mandala_stones_data.MANDALA_BOARD
    assert board_data["spaces"] == 61
    assert {int(k): v for k, v in board_data["bonuses"].items()} == {
        **dict.fromkeys([5, 12, 19, 26, 33, 45, 52], 1),
        **dict.fromkeys([10, 20, 30, 40, 50], 2),
    }
    assert board_data["hands"] == {"2": 38, "3": 48, "4": 58}


GOOD_BOARD = {"spaces": 20, "bonuses": {"3": 1}, "hands": {"2": 10, "3": 15, "4": 20}}
GOOD_CARD = {"card": 1, "points": 5, "condition": {"kind": "tower_count", "count": 3}}


def card(**condition: Any) -> dict[str, Any]:
    return {"card": 1, "points": 5, "condition": condition}


@pytest.mark.parametrize(
    ("raw", "players", "path", "words"),
    [
        ({"colour": "red"}, 2, ["colour"], "Unknown"),
        ({"mandala_board": {**GOOD_BOARD, "spaces": 0}}, 2, ["mandala_board", "spaces"], ""),
        ({"mandala_board": {**GOOD_BOARD, "spaces": "61"}}, 2, ["mandala_board", "spaces"], ""),
        (
            {"mandala_board": {**GOOD_BOARD, "bonuses": {"21": 1}}},
            2,
            ["mandala_board", "bonuses"],
            "from 1 to 20",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "bonuses": {"first": 1}}},
            2,
            ["mandala_board", "bonuses"],
            "not a space",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "bonuses": {"3": 0}}},
            2,
            ["mandala_board", "bonuses"],
            "",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "hands": {"5": 10}}},
            2,
            ["mandala_board", "hands"],
            "",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "hands": {"2": 30}}},
            2,
            ["mandala_board", "hands"],
            "not from 1 to 20",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "hands": {"2": 10, "3": 10}}},
            2,
            ["mandala_board", "hands"],
            "share",
        ),
        (
            {"mandala_board": {"spaces": 20, "bonuses": {}}},
            2,
            ["mandala_board", "hands"],
            "required",
        ),
        (
            {"mandala_board": {**GOOD_BOARD, "hands": {"2": 10}}},
            3,
            ["mandala_board", "hands"],
            "no hands space for 3 players",
        ),
        ({"objectives": "none"}, 2, ["objectives"], "off"),
        ({"objectives": [GOOD_CARD] * 4}, 2, ["objectives"], "same number"),
        (
            {"objectives": [{**GOOD_CARD, "card": n} for n in range(1, 6)]},
            3,
            ["objectives"],
            "at least 6",
        ),
        ({"objectives": [{"card": 1, "points": 5}]}, 2, ["objectives", "0", "condition"], ""),
        ({"objectives": [card(kind="luck")]}, 2, ["objectives", "0", "condition", "kind"], ""),
        (
            {"objectives": [card(kind="tower_count")]},
            2,
            ["objectives", "0", "condition", "count"],
            "needs count",
        ),
        (
            {"objectives": [card(kind="tower_count", count=2, height=1)]},
            2,
            ["objectives", "0", "condition", "height"],
            "takes only count",
        ),
        (
            {"objectives": [card(kind="top_colours", count=5, min_towers=1)]},
            2,
            ["objectives", "0", "condition", "count"],
            "from 1 to 4",
        ),
        (
            {"objectives": [card(kind="heights_present", heights=[2, 2])]},
            2,
            ["objectives", "0", "condition", "heights"],
            "once",
        ),
        (
            {"objectives": [card(kind="top_pattern_only", pattern="x")]},
            2,
            ["objectives", "0", "condition", "pattern"],
            "",
        ),
    ],
)
def test_bad_options_are_refused_with_a_clear_error(
    raw: dict[str, Any], players: int, path: list[str], words: str
) -> None:
    with pytest.raises(BadOptions) as error:
        GAME.load_options(raw, players)
    messages: Any = error.value.errors
    for key in path:
        messages = messages[int(key)] if key not in messages and key.isdigit() else messages[key]
    assert words in json.dumps(messages)


def test_good_custom_options_load() -> None:
    deck = [{**GOOD_CARD, "card": n} for n in range(1, 5)]
    options = GAME.load_options({"mandala_board": GOOD_BOARD, "objectives": deck}, 2)
    assert options == {"mandala_board": GOOD_BOARD, "objectives": deck}


def test_player_counts() -> None:
    assert GAME.players == (2, 3, 4)
    with pytest.raises(BadOptions):
        GAME.load_options({}, 5)
    assert games.get("mandala_stones") is GAME


# -- notation and JSON -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("pick A2 to 5 first N on 3", Pick(2, 5, "N", 3)),
        ("  PICK a2   TO 5 first n ON 3 ", Pick(2, 5, "N", 3)),
        ("pick a4 to9 first west on1", Pick(4, 9, "W", 1)),
        ("pickA1to1firstSon5", Pick(1, 1, "S", 5)),
        ("score Y", ScoreColour("Y")),
        ("Score  violet", ScoreColour("V")),
        ("SCORE b", ScoreColour("B")),
        ("score red", ScoreColour("R")),
        ("score Red", ScoreColour("R")),
        ("score R", ScoreColour("R")),
        ("score r", ScoreColour("R")),
        ("score tops 1 4", ScoreTops((1, 4))),
        ("score TOPS 3,1, 2", ScoreTops((3, 1, 2))),
        ("score top 5", ScoreTops((5,))),
        ("Resign", Resign()),
    ],
)
def test_notation_is_forgiving(text: str, move: Any) -> None:
    assert GAME.parse(text) == move


@pytest.mark.parametrize(
    ("move", "text"),
    [
        (Pick(2, 5, "N", 3), "pick A2 to 5 first N on 3"),
        (ScoreColour("Y"), "score Y"),
        (ScoreColour("R"), "score R"),
        (ScoreTops((1, 4)), "score tops 1 4"),
        (Resign(), "resign"),
    ],
)
def test_canonical_notation_is_the_rules_files(move: Any, text: str) -> None:
    assert GAME.notate(move) == text
    assert GAME.parse(text) == move


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("pick A5 to 5 first N on 3", "pick A2 to 5 first N on 3"),
        ("pick A2 to 0 first N on 3", "circle 1-9"),
        ("pick A2 to 5 on 3", "N/E/S/W"),
        ("pick A2 to 5 first N on 6", "tower space 1-5"),
        ("score X", "score Y"),
        ("score tops", "score tops 1 4"),
        ("score tops 6", "tower spaces 1-5"),
        ("take 3", "resign"),
    ],
)
def test_bad_notation_says_what_is_expected(text: str, hint: str) -> None:
    with pytest.raises(IllegalMove) as error:
        GAME.parse(text)
    assert error.value.code == "bad_notation"
    assert hint in error.value.reason


@pytest.mark.parametrize(
    "data",
    [
        {"type": "pick", "artist": "A5", "circle": 5, "first": "N", "space": 3},
        {"type": "pick", "artist": "A2", "circle": True, "first": "N", "space": 3},
        {"type": "pick", "artist": "A2", "circle": "5", "first": "N", "space": 3},
        {"type": "pick", "artist": "A2", "circle": 5, "first": "n", "space": 3},
        {"type": "pick", "artist": "A2", "circle": 5, "first": "N", "space": 6},
        {"type": "pick", "artist": "A2", "circle": 5, "first": "N"},
        {"type": "pick", "artist": "A2", "circle": 5, "first": "N", "space": 3, "x": 1},
        {"type": "score", "colour": "y"},
        {"type": "score", "colour": ["Y"]},
        {"type": "score_tops", "spaces": "1 4"},
        {"type": "score_tops", "spaces": [1, 6]},
        {"type": "score_tops", "spaces": [1.0]},
        {"type": "resign", "seat": 1},
    ],
)
def test_malformed_move_json_is_refused(data: Any) -> None:
    with pytest.raises(IllegalMove) as error:
        GAME.move_from_json(data)
    assert error.value.code == "bad_move" and error.value.reason


@pytest.mark.parametrize("text", ["score P", "score p", "score pink", "Score PINK"])
def test_the_old_name_of_red_is_read_as_red(text: str) -> None:
    assert GAME.parse(text) == ScoreColour("R")
    assert GAME.notate(GAME.parse(text)) == "score R"


def test_old_move_json_and_stored_stones_say_p_for_red() -> None:
    assert GAME.move_from_json({"type": "score", "colour": "P"}) == ScoreColour("R")
    assert GAME.move_from_json({"type": "score", "colour": "R"}) == ScoreColour("R")
    assert stone_value("P*") == stone_value("R*") and stone_value("Po") == stone_value("Ro")
    state = make(stacks={0: "Ro R*"}, boards=[board("Y* Ro"), board("R*")], mandala=0)
    stored = GAME.state_to_json(state)
    assert stored["stacks"][0] == ["Ro", "R*"] and stored["boards"][1][0] == ["R*"]
    # A snapshot written before red had its name spells it P.
    old = json.loads(json.dumps(stored).replace('"R', '"P'))
    assert old["stacks"][0] == ["Po", "P*"]
    assert GAME.state_from_json(old) == state


def test_move_json_shapes() -> None:
    assert GAME.move_to_json(Pick(2, 5, "N", 3)) == {
        "type": "pick",
        "artist": "A2",
        "circle": 5,
        "first": "N",
        "space": 3,
    }
    assert GAME.move_to_json(ScoreColour("V")) == {"type": "score", "colour": "V"}
    assert GAME.move_to_json(ScoreColour("R")) == {"type": "score", "colour": "R"}
    assert GAME.move_to_json(ScoreTops((1, 4))) == {"type": "score_tops", "spaces": [1, 4]}


# -- views --------------------------------------------------------------------


def test_view_has_the_rules_fields_and_hides_patterns_under_the_top() -> None:
    state = make(
        3,
        stacks={C5["N"]: "Vo Y* Bo", 0: "R*"},
        artists=(9, 1, 3, 7),
        boards=[board("Y* Bo"), board(), board("", "", "Vo")],
        mandala=2,
        first=1,
        scores=(4, 5, 6),
    )
    view = GAME.view(state, 1)
    assert {
        "stacks",
        "artists",
        "boards",
        "scores",
        "mandala",
        "objectives",
        "first_player",
        "end_triggered",
    } <= set(view)
    assert view["stacks"][C5["N"]] == [
        {"colour": "V", "pattern": None},
        {"colour": "Y", "pattern": None},
        {"colour": "B", "pattern": "o"},
    ]
    assert view["stacks"][0] == [{"colour": "R", "pattern": "*"}]
    assert view["stacks"][1] == []
    assert view["artists"] == {"A1": 9, "A2": 1, "A3": 3, "A4": 7}
    assert view["boards"][0] == [["Y*", "Bo"], [], [], [], []]
    assert view["boards"][2][2] == ["Vo"]
    assert view["scores"] == [4, 5, 6]
    assert view["mandala"] == ["Yo", "Yo"]
    assert view["objectives"][0] == 2 and view["objectives"][2] == 2
    assert view["objectives"][1] == [card.number for card in state.objectives[1]]
    assert view["first_player"] == 1 and view["end_triggered"] is False


OTHER_CARD = Card(99, 1, "tower_count", (0,))


def hidden_changed(state: State, viewer: int | None) -> State:
    """The same state as `viewer` sees it, with everything hidden from it changed."""
    stacks = tuple(tuple(s ^ 1 for s in stack[:-1]) + stack[-1:] for stack in state.stacks)
    objectives = tuple(
        cards if seat == viewer else (OTHER_CARD,) * len(cards)
        for seat, cards in enumerate(state.objectives)
    )
    return replace(state, stacks=stacks, objectives=objectives)


# -- building a move on the board ---------------------------------------------


def labels(built: Any) -> dict[str, str]:
    return {choice.step: choice.label for choice in built.choices}


def test_a_pick_is_built_from_the_artist_its_circle_the_first_stone_and_a_space() -> None:
    # A1 (star) may go to circle 5, whose N and E stacks show stars over hidden stones.
    state = make(
        stacks={C5["N"]: "Vo Y*", C5["E"]: "Ro B*", C5["S"]: "Bo"},
        artists=(9, 1, 3, 7),
        boards=[board("Yo"), board()],
    )
    start = GAME.build(state, 0, ())
    assert start.prompt == "Choose an artist to move, or score"
    assert labels(start)["A1"] == "Artist A1"
    assert labels(start)["t1"] == "Top of tower 1 (yellow circle)"
    artist = GAME.build(state, 0, ("A1",))
    assert labels(artist)["5"] == "Circle 5"
    assert artist.move is None and artist.prompt == "Choose a circle for A1"
    circle = GAME.build(state, 0, ("A1", "5"))
    assert labels(circle) == {"N": "First stone north (yellow)", "E": "First stone east (blue)"}
    assert circle.view["artists"]["A1"] == 5  # the artist moved, in the preview
    first = GAME.build(state, 0, ("A1", "5", "E"))
    assert labels(first) == {str(n): f"Build on space {n}" for n in (2, 3, 4, 5)}
    assert first.view["taking"] == [C5["E"], C5["N"]]  # clockwise from the first
    done = GAME.build(state, 0, ("A1", "5", "E", "3"))
    assert done.move == Pick(1, 5, "E", 3)
    assert (done.choices, done.prompt) == ((), "Play the move, or undo")
    assert done.view["boards"][0][2] == ["B*", "Y*"]
    assert done.view["boards"][0][2] == GAME.view(GAME.play(state, 0, done.move), 0)["boards"][0][2]
    # The stones under the taken tops keep their patterns hidden.
    assert done.view["stacks"][C5["E"]] == [{"colour": "R", "pattern": None}]
    assert done.view["stacks"][C5["N"]] == [{"colour": "V", "pattern": None}]


def test_a_colour_is_scored_in_one_click_and_its_preview_is_the_scoring() -> None:
    state = make(boards=[board("Y* Vo", "Bo", "R* Yo", "", "Vo"), board()], mandala=4)
    start = GAME.build(state, 0, ())
    assert start.prompt == "Score: choose a colour or a tower's top"
    assert labels(start)["V"] == "Score violet" and "Y" not in labels(start)
    built = GAME.build(state, 0, ("V",))
    assert (built.move, built.choices) == (ScoreColour("V"), ())
    after = GAME.view(GAME.play(state, 0, built.move), 0)
    for field in ("boards", "scores", "mandala"):
        assert built.view[field] == after[field], field
    assert built.view["to_move"] == 0


def test_tops_are_clicked_one_by_one_in_the_mandalas_order() -> None:
    state = make(boards=[board("Y* Vo", "Bo", "R* Yo"), board()])
    one = GAME.build(state, 0, ("t3",))
    assert one.move == ScoreTops((3,))
    assert labels(one) == {
        "t1": "Top of tower 1 (violet circle)",
        "t2": "Top of tower 2 (blue circle)",
    }
    assert one.prompt == "Play the move, or add another top"
    two = GAME.build(state, 0, ("t3", "t1"))
    assert (two.move, list(labels(two))) == (ScoreTops((3, 1)), ["t2"])
    assert two.view["mandala"] == ["Yo", "Vo"]
    with pytest.raises(IllegalMove) as again:
        GAME.build(state, 0, ("t3", "t3"))
    assert again.value.code == "bad_step"


# -- playouts -----------------------------------------------------------------

seeds = st.text(alphabet="0123456789abcdef", min_size=4, max_size=12)
playouts = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_out(players: int, seed: str, chooser: str) -> list[tuple[int, Any, State]]:
    state = GAME.start(players, GAME.load_options({}, players), Rng(seed))
    rng = Rng(chooser)
    steps: list[tuple[int, Any, State]] = [(-1, None, state)]
    while GAME.result(state) is None:
        assert len(steps) < 300
        (seat,) = GAME.actors(state)
        move = GAME.random_move(state, seat, rng)
        assert move in GAME.legal_moves(state, seat)
        state = GAME.play(state, seat, move)
        steps.append((seat, move, state))
    return steps


@given(players=st.sampled_from([2, 3]), seed=seeds, walker=seeds)
@settings(max_examples=10, deadline=None)
def test_previews_show_nothing_hidden_from_the_seat(players: int, seed: str, walker: str) -> None:
    rng = Rng(walker)
    for _, _, state in play_out(players, seed, walker)[1::4]:
        if GAME.result(state) is not None:
            continue
        (seat,) = GAME.actors(state)
        other = hidden_changed(state, seat)
        steps: tuple[str, ...] = ()
        built = GAME.build(state, seat, steps)
        while built.choices:
            steps = (*steps, built.choices[rng.below(len(built.choices))].step)
            built = GAME.build(state, seat, steps)
            assert built.view == GAME.build(other, seat, steps).view, steps


@given(players=st.sampled_from([2, 3, 4]), seed=seeds, chooser=seeds)
@playouts
def test_playouts_end_keep_every_stone_and_give_equal_turns(
    players: int, seed: str, chooser: str
) -> None:
    steps = play_out(players, seed, chooser)
    for _, _, state in steps:
        everywhere = [s for stack in state.stacks for s in stack]
        everywhere += [s for towers in state.boards for tower in towers for s in tower]
        everywhere += list(state.mandala)
        assert len(everywhere) + state.set_aside == 96
        assert set(Counter(everywhere).values()) <= set(range(13))
    final = steps[-1][2]
    result = GAME.result(final)
    assert result is not None and len(result.winners) == 1
    if final.end_triggered:
        turns = Counter(seat for seat, _, _ in steps[1:])
        assert set(turns.values()) == {len(steps[1:]) // players}
    assert final.objective_points == tuple(
        max((c.points for c in cards if objective_holds(c, towers)), default=0)
        for cards, towers in zip(final.objectives, final.boards, strict=True)
    )


@given(players=st.sampled_from([2, 3, 4]), seed=seeds, chooser=seeds)
@playouts
def test_replay_from_the_notation_equals_live_play_and_json_round_trips(
    players: int, seed: str, chooser: str
) -> None:
    steps = play_out(players, seed, chooser)
    state = GAME.start(players, GAME.load_options({}, players), Rng(seed))
    for seat, move, live in steps[1:]:
        text = GAME.notate(move)
        assert GAME.parse(text) == move
        assert GAME.move_from_json(json.loads(json.dumps(GAME.move_to_json(move)))) == move
        state = GAME.play(state, seat, GAME.parse(text))
        assert state == live
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(live)))) == live


@given(players=st.sampled_from([2, 3, 4]), seed=seeds, chooser=seeds)
@playouts
def test_views_never_show_others_objectives_or_hidden_patterns(
    players: int, seed: str, chooser: str
) -> None:
    for _, _, state in play_out(players, seed, chooser)[::3]:
        if state.over:
            continue
        for viewer in [None, *range(players)]:
            text = json.dumps(GAME.view(state, viewer))
            assert text == json.dumps(GAME.view(hidden_changed(state, viewer), viewer))
            view = json.loads(text)
            for seat, shown in enumerate(view["objectives"]):
                assert shown == (
                    [c.number for c in state.objectives[seat]] if seat == viewer else 2
                )
            for stack in view["stacks"]:
                assert all(stone["pattern"] is None for stone in stack[:-1])


@given(players=st.sampled_from([2, 3, 4]), seed=seeds, chooser=seeds)
@settings(max_examples=6, deadline=None)
def test_legal_moves_are_exactly_the_moves_play_accepts(
    players: int, seed: str, chooser: str
) -> None:
    every_pick = [
        Pick(artist, circle, first, space)
        for artist in range(1, 5)
        for circle in range(1, 10)
        for first in "NESW"
        for space in range(1, 6)
    ]
    for _, _, state in play_out(players, seed, chooser)[1::9]:
        if state.over:
            continue
        (seat,) = GAME.actors(state)
        accepted = []
        for move in every_pick:
            try:
                GAME.play(state, seat, move)
            except IllegalMove as error:
                assert error.code == "illegal_move" and error.reason
            else:
                accepted.append(move)
        listed = GAME.legal_moves(state, seat)
        assert Counter(m for m in listed if isinstance(m, Pick)) == Counter(accepted)
        for legal in listed:
            GAME.play(state, seat, legal)


# -- the breakdown --------------------------------------------------------------


def test_the_breakdown_shows_each_scoring_with_its_mandala_bonus() -> None:
    # The rulebook example (13 for violet), its three stones on mandala
    # spaces 5-7: space 5 gives 1 more.
    towers = board("V*", "Y* B*", "Y* Yo B*", "Y* B* Vo", "Yo Bo Ro V*")
    start = make(boards=[towers, board("Y*")], mandala=4)
    after = GAME.play(start, 0, ScoreColour("V"))
    lines = GAME.breakdown(start, [Played(0, ScoreColour("V"), after)])
    assert lines[0][0] == ScoreLine("move 1: score V (mandala bonus 1)", 13 + 1)


def test_the_breakdown_ends_with_the_objective_that_scored_or_none() -> None:
    start = make(
        2,
        boards=[board("Y*", "B*", "R*", "V*", "Y* Yo"), board("Y*", "Yo")],
        mandala=HANDS[2] - 1,
        first=1,
        current=0,
    )
    # Seat 0: card 3 (5 towers, 5) and card 5 (4 colours on top, 6) both
    # hold: the better one scores.
    # Seat 1: card 1 (only stars) and card 2 (only circles) fail on Y* and Yo.
    start = replace(start, objectives=((DECK[3], DECK[5]), (DECK[1], DECK[2])))
    after = GAME.play(start, 0, ScoreTops((5,)))  # triggers; seat 0 is last in the round
    assert after.objective_points == (6, 0)
    assert GAME.breakdown(start, [Played(0, ScoreTops((5,)), after)]) == (
        (ScoreLine("move 1: score tops 5", 1), ScoreLine("objective: card 5 holds", 6)),
        (ScoreLine("objective: neither card 1 nor 2 holds", 0),),
    )
    assert after.scores == (1 + 6, 0)


def test_without_objectives_the_breakdown_has_no_objective_line() -> None:
    start = make(boards=[board("Y* Y*", "Bo"), board("Y*")], options={"objectives": "off"})
    after = GAME.play(start, 0, ScoreTops((1,)))
    assert GAME.breakdown(start, [Played(0, ScoreTops((1,)), after)]) == (
        (ScoreLine("move 1: score tops 1", 1),),
        (),
    )


def test_a_pick_is_built_in_the_page_language() -> None:
    state = make(
        stacks={C5["N"]: "Vo Y*", C5["E"]: "Ro B*", C5["S"]: "Bo"},
        artists=(9, 1, 3, 7),
        boards=[board("Yo"), board()],
    )
    with speaking("fr"):
        start = GAME.build(state, 0, ())
        circle = GAME.build(state, 0, ("A1", "5"))
    assert start.prompt == "Choisissez un artiste à déplacer, ou faites un décompte"
    assert labels(start)["A1"] == "Artiste A1"
    assert labels(start)["t1"] == "Sommet de la pile 1 (cercle jaune)"
    # The stone is feminine: its colour agrees.
    assert labels(circle) == {
        "N": "Première pierre au nord (jaune)",
        "E": "Première pierre à l\u2019est (bleue)",
    }
    assert circle.prompt == "Choisissez la première pierre que prend A1"
