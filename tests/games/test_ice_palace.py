"""Ice Palace: the rules file's statements and rulings, notation, views and playouts.

Hand-built positions come from `position`, which fills in a state from
what a test cares about; the pool there is whatever the test gives (it
need not add up to the whole game's pyramids).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.ice_palace_fairness import (
    SMALLEST,
    TRIED_ALL,
    at_best,
    best_of_all,
    compare_builds,
    recorded_builds,
    wins_by_colour,
)
from referee import games, render
from referee.engine import BadOptions, Breakdown, Game, IllegalMove, Resign, ScoreLine
from referee.games import ice_palace, ice_palace_solver
from referee.games.ice_palace import (
    BUILD,
    GAME,
    NOBODY,
    YARD,
    Board,
    Build,
    Pass,
    Place,
    State,
)
from referee.i18n import speaking
from referee.playout import steps
from referee.record import Header, Record, chain
from referee.replay import ReplayError, replay
from referee.rng import Rng, commitment

seeds = st.text(alphabet="0123456789abcdef", min_size=4, max_size=12)
playouts = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def board(cells: dict[tuple[int, int], str]) -> Board:
    """A board from `{(x, y): "Lr Mg"}` (a stack bottom first)."""
    return tuple((x, y, tuple(cells[x, y].split())) for x, y in sorted(cells))


def position(
    hands: list[str],
    *,
    yard: dict[tuple[int, int], str] | None = None,
    palace: dict[tuple[int, int], str] | None = None,
    pool: tuple[str, str, str] = ("kkkkkkkkkk", "kkkkkkkkkk", "kkkkkkkkkk"),
    marker: int = 0,
    turn: int = 0,
    passes: int = 0,
    last_placer: int = NOBODY,
    resigned: tuple[int, ...] = (),
) -> State:
    """A yard-phase state; hands are given as `"Lr Sk ..."` per seat."""
    return State(
        colours="rygbpo"[: len(hands)],
        hands=tuple(tuple(hand.split()) for hand in hands),
        pool=pool,
        yard=board(yard or {}),
        palace=board(palace or {}),
        marker=marker,
        turn=turn,
        phase=YARD,
        passes=passes,
        last_placer=last_placer,
        build_max=0,
        build_plan=(),
        out_of_game=0,
        resigned=resigned,
    )


def run_forced(state: State) -> State:
    for _, _, after in GAME.forced_moves(state):
        state = after
    return state


def refused(state: State, seat: int, move: Any) -> IllegalMove:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, move)
    assert caught.value.reason
    return caught.value


FULL_HAND = "Sr Sy Mr My Lr Ly"


# -- setup ----------------------------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_setup_hands_pool_and_marker(players: int) -> None:
    state = GAME.start(players, GAME.load_options({}, players), Rng("setup"))
    colours = "rygbpo"[:players]
    assert state.colours == colours
    for seat, hand in enumerate(state.hands):
        sizes = Counter(p[0] for p in hand)
        assert sizes == {"S": 2, "M": 2, "L": 2}
        for size in "SML":
            assert size + colours[seat] in hand
    # Every pyramid of the game is in a hand or in the pool, once.
    everything = Counter(
        [p for hand in state.hands for p in hand]
        + [size + c for size, part in zip("SML", state.pool, strict=True) for c in part]
    )
    for size in "SML":
        for colour in colours + "kw":
            assert everything[size + colour] == 5
    assert sum(everything.values()) == 15 * (players + 2)
    assert state.turn == state.marker and state.phase == YARD and not state.yard


def test_the_first_player_is_drawn_at_random_and_the_seed_fixes_it() -> None:
    markers = [GAME.start(4, {}, Rng(f"first {i}")).marker for i in range(120)]
    assert set(markers) == {0, 1, 2, 3}
    assert markers == [GAME.start(4, {}, Rng(f"first {i}")).marker for i in range(120)]


def test_options_are_refused_and_player_counts_checked() -> None:
    with pytest.raises(BadOptions):
        GAME.load_options({"variant": 1}, 4)
    with pytest.raises(BadOptions):
        GAME.load_options({}, 2)
    with pytest.raises(BadOptions):
        GAME.load_options({}, 7)
    assert GAME.load_options({}, 3) == {}
    assert games.get("ice_palace") is GAME


# -- the yard -------------------------------------------------------------------------


def test_the_lead_goes_at_the_origin_and_cannot_pass() -> None:
    state = position([FULL_HAND, "Sy", "Sg"])
    assert refused(state, 0, Pass()).code == "illegal_move"
    assert "0,0" in refused(state, 0, Place("Lr", 1, 0)).reason
    assert GAME.legal_moves(state, 0) == [
        Place(p, 0, 0) for p in ["Lr", "Ly", "Mr", "My", "Sr", "Sy"]
    ]
    after = GAME.play(state, 0, Place("Mr", 0, 0))
    assert after.yard == board({(0, 0): "Mr"})
    assert after.hands[0] == ("Sr", "Sy", "My", "Lr", "Ly")
    assert after.turn == 1 and after.last_placer == 0


def test_the_timeout_pass_is_offered_only_to_the_seat_to_move_in_a_led_yard() -> None:
    lead = position([FULL_HAND, "Sy", "Sg"])
    assert GAME.pass_move(lead, 0) is None
    state = position(["Sr Lr", "Sy Ly", "Sg Lg"], yard={(0, 0): "Mr"}, turn=1, last_placer=0)
    assert [GAME.pass_move(state, seat) for seat in range(3)] == [None, Pass(), None]
    for seat in (1, 2, 0):
        state = GAME.play(state, seat, Pass())
    assert state.phase == BUILD and GAME.pass_move(state, 0) is None


def test_cover_needs_a_strictly_smaller_top_whatever_the_colours() -> None:
    state = position(["Sr", "Mg Lk Sb", "Sy"], yard={(0, 0): "Sr", (1, 0): "Lr"}, turn=1)
    legal = GAME.legal_moves(state, 1)
    assert Place("Mg", 0, 0) in legal and Place("Lk", 0, 0) in legal
    assert Place("Mg", 1, 0) not in legal  # nothing covers a large
    assert "strictly larger" in refused(state, 1, Place("Sb", 0, 0)).reason


def test_a_black_large_led_ends_the_round_at_once() -> None:
    state = GAME.play(
        position(["Lk Sr Mr", "Sy My Ly Sk", "Sg Mg Lg Sw"], marker=0, turn=0),
        0,
        Place("Lk", 0, 0),
    )
    # Nobody can place (nothing covers a large, nothing founds next to black):
    # every seat, the lead too, is asked in turn and can only pass.
    for seat in (1, 2, 0):
        assert GAME.actors(state) == {seat} and GAME.legal_moves(state, seat) == [Pass()]
        assert list(GAME.forced_moves(state)) == []
        state = GAME.play(state, seat, Pass())
    # The round ends, the yard's black leaves the game, and with nothing to
    # build the referee builds by itself, so the next round starts with the
    # marker moved on.
    forced = list(GAME.forced_moves(state))
    assert [(seat, move) for seat, move, _ in forced] == [(0, Build())]
    final = forced[-1][2]
    assert final.marker == 1 and final.turn == 1 and final.phase == YARD
    assert final.yard == () and final.palace == ()
    assert final.out_of_game == 1


def test_a_small_black_is_placeable_only_as_the_lead() -> None:
    tops = ["Lr", "Mw", "Sk", "Sg", "Ly"]
    for top in tops:
        state = position(["Sk", "Sk", "Sk"], yard={(0, 0): top}, turn=1)
        assert GAME.legal_moves(state, 1) == [Pass()]
        assert GAME.actors(state) == {1} and GAME.forced_move(state) is None
    lead = position(["Sk", "Sk", "Sk"])
    assert GAME.legal_moves(lead, 0) == [Place("Sk", 0, 0)]


def test_a_seat_that_cannot_place_is_asked_like_any_other() -> None:
    # Seat 1's hidden hand fits nowhere in one position and somewhere in the
    # other; nobody else can tell them apart, before or after its pass.
    yard = {(0, 0): "Lr", (1, 0): "Mg"}
    stuck = position([FULL_HAND, "Sk Sy", "Sg Lg"], yard=yard, turn=1, last_placer=0)
    free = replace(stuck, hands=(stuck.hands[0], ("Sg", "Sy"), stuck.hands[2]))
    assert GAME.legal_moves(stuck, 1) == [Pass()]
    assert Place("Sg", 1, 1) in GAME.legal_moves(free, 1)
    for state in (stuck, free):
        assert GAME.actors(state) == {1} and GAME.forced_move(state) is None
        assert GAME.random_move(state, 1, Rng("any")) in GAME.legal_moves(state, 1)
    passed = [GAME.play(state, 1, Pass()) for state in (stuck, free)]
    for viewer in (None, 0, 2):
        assert GAME.view(stuck, viewer) == GAME.view(free, viewer)
        assert GAME.view(passed[0], viewer) == GAME.view(passed[1], viewer)
    assert GAME.actors(passed[0]) == GAME.actors(passed[1]) == {2}
    assert GAME.random_move(stuck, 1, Rng("timeout")) == Pass()


@playouts
@given(seed=seeds, chooser=seeds, players=st.sampled_from([3, 4, 5, 6]))
def test_the_referee_records_only_builds_by_itself(seed: str, chooser: str, players: int) -> None:
    # A pass for want of a placement is the seat's own move: its hand is hidden.
    for step in steps(GAME, players, {}, seed, Rng(chooser)):
        state = step.state
        forced = GAME.forced_move(state)
        assert forced is None or forced == (state.turn, Build())
        if forced is None and GAME.result(state) is None:
            (seat,) = GAME.actors(state)
            assert GAME.legal_moves(state, seat), "a seat asked always has a move"


def test_white_founds_next_to_any_colour_but_black_and_any_colour_next_to_white() -> None:
    state = position(["Sr", "Mw Mr Mk", "Sy"], yard={(0, 0): "Lg", (5, 0): "Lw", (9, 0): "Lk"})
    state = replace(state, turn=1)
    legal = set(GAME.legal_moves(state, 1))
    assert Place("Mw", 1, 0) in legal  # white next to a green top
    assert Place("Mr", 6, 0) in legal  # red next to a white top
    assert Place("Mw", 6, 0) in legal  # white next to white
    assert Place("Mr", 1, 0) not in legal  # red next to green
    assert Place("Mw", 10, 0) not in legal  # nothing matches black
    assert Place("Mk", 6, 0) not in legal and Place("Mk", 10, 0) not in legal
    assert "matches" in refused(state, 1, Place("Mr", 1, 0)).reason
    assert "next to a yard stack" in refused(state, 1, Place("Mr", 3, 3)).reason


def test_moves_out_of_turn_and_wrong_pyramids_are_refused() -> None:
    state = position([FULL_HAND, "Sy My", "Sg"], yard={(0, 0): "Sr"}, turn=1)
    assert refused(state, 0, Place("Mr", 0, 0)).code == "not_your_turn"
    assert "no Lg in your hand" in refused(state, 1, Place("Lg", 0, 0)).reason
    assert "still on" in refused(state, 1, Build(auto=True)).reason


def test_a_player_may_pass_and_place_later_and_passes_in_a_row_end_the_round() -> None:
    state = position(["Sr Lr", "Sy Ly", "Sg Lg"], yard={(0, 0): "Mr"}, turn=1, last_placer=0)
    state = GAME.play(state, 1, Pass())
    state = GAME.play(state, 2, Pass())
    assert state.passes == 2 and state.turn == 0
    state = GAME.play(state, 0, Place("Lr", 0, 0))  # passing did not stop anyone
    assert state.passes == 0 and state.last_placer == 0
    state = GAME.play(state, 1, Pass())
    state = GAME.play(state, 2, Pass())
    state = GAME.play(state, 0, Pass())
    # Three passes in a row with three players: seat 0 placed last and builds.
    assert state.phase == BUILD and state.turn == 0
    assert state.build_max == 2
    assert GAME.view(state, 2)["builder"] == 0 and GAME.view(state, None)["build_max"] == 2


# -- building -----------------------------------------------------------------------


def build_position(
    yard: dict[tuple[int, int], str],
    palace: dict[tuple[int, int], str],
    builder: int = 0,
    pool: tuple[str, str, str] = ("kkkkkkkkkk", "kkkkkkkkkk", "kkkkkkkkkk"),
    hands: list[str] | None = None,
) -> State:
    """The state right after the round ended with `builder` placing last."""
    hands = hands or ["Sr Mr Lr Sr Mr Lr", "Sy My Ly Sy My Ly", "Sg Mg Lg Sg Mg Lg"]
    before = position(
        hands,
        yard=yard,
        palace=palace,
        pool=pool,
        turn=(builder + 2) % 3,
        passes=2,
        last_placer=builder,
    )
    return GAME.play(before, before.turn, Pass())


def test_black_and_white_leave_and_the_builder_must_reach_the_maximum() -> None:
    state = build_position({(0, 0): "Sr Mw Lg", (1, 0): "Sk", (0, 1): "Mg"}, {(0, 0): "Lg"})
    assert state.phase == BUILD and state.turn == 0
    assert state.out_of_game == 2  # the white and the black
    assert state.build_max == 3
    short = refused(state, 0, Build((Place("Sr", 0, 0),)))
    assert "must place 3" in short.reason
    # Covering first would leave a red top, and the green large needs green.
    wrong = Build((Place("Mg", 0, 0), Place("Sr", 0, 0), Place("Lg", 1, 0)))
    assert "step 3" in refused(state, 0, wrong).reason
    plan = Build((Place("Lg", 1, 0), Place("Mg", 0, 0), Place("Sr", 0, 0)))
    after = GAME.play(state, 0, plan)
    assert dict(((x, y), s) for x, y, s in after.palace) == {
        (0, 0): ("Lg", "Mg", "Sr"),
        (1, 0): ("Lg",),
    }
    assert "no Mw left" in refused(state, 0, Build((Place("Mw", 0, 0),))).reason


def test_the_palace_needs_exactly_the_same_colour_to_found() -> None:
    # The yard's yellow large stood next to white; the palace has no yellow.
    state = build_position({(0, 0): "Mr", (1, 0): "Mw", (2, 0): "Ly"}, {(0, 0): "Lg"})
    assert state.build_max == 1  # only the medium, by covering the large
    reason = refused(state, 0, Build((Place("Ly", 1, 0),))).reason
    assert "exactly its colour" in reason
    assert "strictly smaller" in refused(state, 0, Build((Place("Ly", 0, 0),))).reason
    GAME.play(state, 0, Build((Place("Mr", 0, 0),)))


def test_the_first_palace_pyramid_goes_at_the_origin_and_auto_builds_the_maximum() -> None:
    state = build_position({(0, 0): "Sr Mr Lr"}, {})
    assert state.build_max == 3
    assert "0,0" in refused(state, 0, Build((Place("Lr", 1, 0),))).reason
    auto = GAME.play(state, 0, Build(auto=True))
    assert sum(len(s) for _, _, s in auto.palace) == 3
    assert GAME.legal_moves(state, 0) == [Build(state.build_plan), Build(auto=True)]
    assert GAME.play(state, 0, Build(state.build_plan)) == auto


def test_a_build_whose_search_runs_out_of_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # The RULINGS: out of budget, the required number is the best plan's,
    # `build auto` plays a plan placing that many, and a plan placing more is
    # accepted.
    # Issue 12's shape in yellow; the yard Mr Lr Lr. With its budget the
    # solver sees that the red medium must cover a yellow large first (3
    # placed); starved, it keeps the greedy plan (a red large into a hole, 2).
    palace = {(x, y): "My" for x in range(5) for y in (0, -2)}
    palace |= {(0, -1): "My", (4, -1): "My", (2, -1): "Lr"}
    palace |= {(1, 0): "Ly", (2, 0): "Ly", (0, -2): "Ly", (2, -2): "Ly"}
    yard = {(0, 0): "Mr", (1, 0): "Lr", (2, 0): "Lr"}
    full = build_position(yard, palace)
    assert full.build_max == 3
    solve = ice_palace_solver.solve
    monkeypatch.setattr(
        ice_palace_solver,
        "solve",
        lambda tops, pieces, order=(): solve(tops, pieces, budget=len(tops), order=order),
    )
    starved = build_position(yard, palace)
    assert starved.build_max == 2 and len(starved.build_plan) == 2
    # `build auto` plays a plan placing that many too: the best for the builder
    # the search finds from the plan kept (rules version 3).
    auto = GAME.play(starved, 0, Build(auto=True))
    assert len(GAME.auto_plan(starved)) == 2
    assert auto == GAME.play(starved, 0, Build(GAME.auto_plan(starved)))
    assert GAME.play(starved, 0, Build(full.build_plan)).out_of_game == starved.out_of_game
    assert "must place 2" in refused(starved, 0, Build(full.build_plan[:1])).reason


def test_a_build_with_nothing_to_place_is_made_by_the_referee() -> None:
    state = build_position({(0, 0): "Lr"}, {(0, 0): "Sg"})
    assert state.build_max == 0
    assert GAME.forced_move(state) == (0, Build())
    after = GAME.play(state, 0, Build())
    assert after.out_of_game == 1 and after.phase == YARD


def test_the_marker_moves_on_and_refills_start_from_the_new_marker_holder() -> None:
    hands = ["Sr Mr Lr Sr Mr", "Sy My Ly Sy My", "Sg Mg Lg Sg Mg Lg"]
    state = build_position({(0, 0): "Lr"}, {}, builder=0, pool=("", "", "bkw"), hands=hands)
    after = GAME.play(state, 0, Build(auto=True))
    assert after.marker == 1 and after.turn == 1
    # Seat 1 (the new marker holder) draws first: the pool's first large.
    assert "Lb" in after.hands[1] and "Lk" in after.hands[0]
    assert after.pool == ("", "", "w")
    assert all(Counter(p[0] for p in h) == {"S": 2, "M": 2, "L": 2} for h in after.hands)


def test_the_game_ends_before_a_refill_that_cannot_be_completed() -> None:
    hands = ["Sr Mr Lr Sr Mr", "Sy My Ly Sy My", "Sg Mg Lg Sg Mg Lg"]
    state = build_position({(0, 0): "Lr"}, {}, pool=("kk", "kk", "b"), hands=hands)
    after = GAME.play(state, 0, Build(auto=True))
    assert GAME.result(after) is not None and GAME.actors(after) == frozenset()
    # No draw at all: the one large left would have filled seat 1's hand.
    assert after.pool == ("kk", "kk", "b") and after.hands == state.hands
    with pytest.raises(IllegalMove) as over:
        GAME.play(after, 1, Pass())
    assert over.value.code == "game_over"


def test_scores_count_stack_heights_for_the_top_colour_and_ties_share() -> None:
    hands = ["Sr Mr Lr Mr Lr", FULL_HAND, FULL_HAND]
    state = build_position(
        {(0, 0): "Sr"},
        {(0, 0): "Lg My", (1, 0): "Lr", (2, 0): "Lg", (3, 0): "My", (4, 0): "Mg"},
        pool=("", "", ""),
        hands=hands,
    )
    after = GAME.play(state, 0, Build(auto=True))
    result = GAME.result(after)
    assert result is not None
    # Sr covers a medium or a large; whatever it covers, the totals add up.
    assert sum(result.scores) == 7
    tie = replace(after, palace=board({(0, 0): "Lr", (1, 0): "Ly", (2, 0): "Mg"}))
    tied = GAME.result(tie)
    assert tied is not None and tied.scores == (1, 1, 1) and tied.winners == (0, 1, 2)


# -- resigning ----------------------------------------------------------------------


def test_resigning_on_ones_turn_is_a_pass_and_the_seat_passes_from_then_on() -> None:
    state = position(["Sr Lr", "Sy Ly", "Sg Lg"], yard={(0, 0): "Mr"}, turn=1, last_placer=0)
    state = GAME.play(state, 1, Resign())
    assert state.resigned == (1,) and state.hands[1] == () and state.out_of_game == 2
    assert state.turn == 2 and state.passes == 1
    state = GAME.play(state, 2, Pass())
    # Seat 0 may still place after two passes in a row.
    assert state.turn == 0 and state.passes == 2
    state = GAME.play(state, 0, Place("Lr", 0, 0))
    state = GAME.play(state, 2, Pass())
    # The resigned seat 1 passed by itself between 0 and 2.
    assert state.turn == 0 and state.passes == 2
    state = GAME.play(state, 0, Pass())
    assert state.phase == BUILD and state.turn == 0
    assert 1 not in GAME.actors(state)
    assert GAME.legal_moves(state, 1) == []
    assert "already resigned" in refused(state, 1, Resign()).reason


def test_a_resigning_lead_hands_the_lead_and_the_marker_on() -> None:
    state = position([FULL_HAND, FULL_HAND, FULL_HAND], marker=1, turn=1)
    after = GAME.play(state, 1, Resign())
    assert after.marker == 2 and after.turn == 2 and after.yard == ()
    assert refused(after, 2, Pass()).code == "illegal_move"


def test_a_resigned_builder_builds_nothing() -> None:
    state = build_position({(0, 0): "Sr Mr Lr"}, {}, builder=0)
    after = GAME.play(state, 0, Resign())
    assert after.palace == () and after.phase == YARD
    assert after.out_of_game == state.out_of_game + 3 + 6
    assert after.marker == 1 and after.turn == 1


def test_resigning_out_of_turn_and_the_last_seat_standing_wins() -> None:
    state = position([FULL_HAND, FULL_HAND, FULL_HAND], palace={(0, 0): "Lr"})
    state = GAME.play(state, 2, Resign())
    assert state.turn == 0 and state.resigned == (2,)
    state = GAME.play(state, 0, Resign())
    result = GAME.result(state)
    assert result is not None and result.winners == (1,)
    assert result.scores == (1, 0, 0)  # the resigned seat keeps its points but ranks last


# -- notation and JSON ------------------------------------------------------------------


def test_notation_is_forgiving_and_canonical() -> None:
    assert GAME.parse("Mw@1,0") == Place("Mw", 1, 0)
    assert GAME.parse("  mW @ 1 , -2 ") == Place("Mw", 1, -2)
    assert GAME.parse("wm@(1,0)") == Place("Mw", 1, 0)
    assert GAME.parse("PASS") == Pass()
    assert GAME.parse("build") == Build()
    assert GAME.parse("Build  AUTO") == Build(auto=True)
    plan = Build((Place("Lr", 0, 1), Place("Mg", 0, 1), Place("Sg", 2, 0)))
    assert GAME.parse("build Lr@0,1 Mg@0,1 Sg@2,0") == plan
    assert GAME.parse("BUILD lr@0,1, mg @ 0,1; SG@2,0") == plan
    assert GAME.notate(plan) == "build Lr@0,1 Mg@0,1 Sg@2,0"
    for move in [plan, Build(), Build(auto=True), Pass(), Place("Sk", -3, 12), Resign()]:
        assert GAME.parse(GAME.notate(move)) == move
    assert GAME.notate(Build()) == "build" and GAME.notate(Build(auto=True)) == "build auto"


@pytest.mark.parametrize("text", ["Qr@0,0", "Lz@0,0", "Lr@0", "Lr 0,0", "build Lr@0,1 xyz", "go"])
def test_bad_notation_says_what_is_expected(text: str) -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.parse(text)
    assert caught.value.code == "bad_notation"
    assert "Mw@1,0" in caught.value.reason or "build Lr@0,1" in caught.value.reason


def test_moves_round_trip_through_json_and_bad_json_is_refused() -> None:
    moves = [Place("Lr", 0, -1), Pass(), Build(), Build(auto=True), Resign()]
    moves.append(Build((Place("Lr", 0, 1), Place("Sg", 2, 0))))
    for move in moves:
        data = json.loads(json.dumps(GAME.move_to_json(move)))
        assert GAME.move_from_json(data) == move
    for bad in [
        {"type": "place", "pyramid": "Xr", "x": 0, "y": 0},
        {"type": "place", "pyramid": "Lr", "x": "0", "y": 0},
        {"type": "place", "pyramid": "Lr", "x": True, "y": 0},
        {"type": "build", "auto": "yes"},
        {"type": "build", "auto": True, "plan": [{"pyramid": "Lr", "x": 0, "y": 0}]},
        {"type": "build", "plan": "Lr@0,0"},
        {"type": "build", "plan": [3]},
    ]:
        with pytest.raises(IllegalMove) as caught:
            GAME.move_from_json(bad)
        assert caught.value.code == "bad_move"


# -- hidden information -------------------------------------------------------------------


def disguised(state: State, viewer: int | None) -> State:
    """The same position with every hand but the viewer's, and the pool's order,
    changed (same sizes): nothing a viewer may see differs."""
    swap = {"r": "y", "y": "g", "g": "b", "b": "p", "p": "o", "o": "k", "k": "w", "w": "r"}
    hands = tuple(
        hand if seat == viewer else tuple(p[0] + swap[p[1]] for p in reversed(hand))
        for seat, hand in enumerate(state.hands)
    )
    small, medium, large = ("".join(reversed(part)) for part in state.pool)
    return replace(state, hands=hands, pool=(small, medium, large))


@playouts
@given(seed=seeds, chooser=seeds, players=st.sampled_from([3, 4, 5, 6]))
def test_views_show_others_only_counts_and_never_the_pool_order(
    seed: str, chooser: str, players: int
) -> None:
    played = list(steps(GAME, players, {}, seed, Rng(chooser)))
    for step in played[::3]:
        state = step.state
        for viewer in [None, *range(players)]:
            view = GAME.view(state, viewer)
            text = json.dumps(view)
            assert json.loads(text) == view
            assert GAME.view(disguised(state, viewer), viewer) == view
            for part in state.pool:
                if len(part) >= 4:
                    assert part not in text
            for seat, hand in enumerate(view["hands"]):
                held = state.hands[seat]
                if seat == viewer:
                    assert hand == list(held)
                else:
                    assert hand == {size: sum(p[0] == size for p in held) for size in "SML"}
            # What a seat is told when refused does not depend on what it may not see.
            if viewer is not None:
                for move in [Pass(), Place("Lr", 99, 99), Place("Sk", 0, 0), Build()]:
                    reason = _reason(state, viewer, move)
                    assert reason == _reason(disguised(state, viewer), viewer, move)


def _reason(state: State, seat: int, move: Any) -> str:
    try:
        GAME.play(state, seat, move)
    except IllegalMove as error:
        return error.reason
    return ""


def test_a_refused_placement_speaks_only_of_the_players_own_hand() -> None:
    state = position([FULL_HAND, "Sy My", "Lg Lg"], yard={(0, 0): "Sr"}, turn=1)
    reason = refused(state, 1, Place("Lg", 1, 0)).reason
    assert reason == "you have no Lg in your hand"
    assert _reason(disguised(state, 1), 1, Place("Lg", 1, 0)) == reason


def test_the_view_has_the_rules_fields() -> None:
    state = GAME.start(4, {}, Rng("fields"))
    view = GAME.view(state, 2)
    for field in [
        "colours",
        "marker",
        "phase",
        "hands",
        "pool",
        "yard",
        "palace",
        "last_placer",
        "passes",
        "builder",
        "build_max",
        "out_of_game",
    ]:
        assert field in view
    assert view["colours"] == ["r", "y", "g", "b"]
    assert view["pool"] == {"S": 22, "M": 22, "L": 22}
    assert view["hands"][2] == list(state.hands[2])
    assert view["hands"][0] == {"S": 2, "M": 2, "L": 2}
    assert view["builder"] is None and view["build_max"] is None


# -- playouts -------------------------------------------------------------------------


@playouts
@given(seed=seeds, chooser=seeds, players=st.sampled_from([3, 4, 5, 6]))
def test_playouts_end_replay_exactly_and_round_trip(seed: str, chooser: str, players: int) -> None:
    played = list(steps(GAME, players, {}, seed, Rng(chooser)))
    final = played[-1].state
    assert GAME.result(final) is not None
    state = GAME.start(players, {}, Rng(seed))
    for step in played:
        move = GAME.parse(GAME.notate(step.move))
        assert move == step.move
        state = GAME.play(state, step.seat, move)
        assert state == step.state
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
    # Pyramids are never made or lost: hands, pool, yard, palace and the
    # ones out of the game always make up every stash.
    total = 15 * (players + 2)
    held = sum(len(h) for h in final.hands) + sum(len(p) for p in final.pool)
    built = sum(len(s) for _, _, s in final.palace)
    assert held + built + final.out_of_game == total


@playouts
@given(seed=seeds, chooser=seeds, cut=st.integers(0, 200))
def test_playouts_with_a_resignation_end_without_the_resigned_seat(
    seed: str, chooser: str, cut: int
) -> None:
    played = list(steps(GAME, 4, {}, seed, Rng(chooser)))
    state = played[min(cut, len(played) - 1)].state
    if GAME.result(state) is not None:
        return
    quitter = min(GAME.actors(state))
    state = run_forced(GAME.play(state, quitter, Resign()))
    rng = Rng(chooser + "after")
    while GAME.result(state) is None:
        assert quitter not in GAME.actors(state)
        seat = min(GAME.actors(state))
        state = run_forced(GAME.play(state, seat, GAME.random_move(state, seat, rng)))
    result = GAME.result(state)
    assert result is not None and quitter not in result.winners
    total = 15 * 6
    held = sum(len(h) for h in state.hands) + sum(len(p) for p in state.pool)
    built = sum(len(s) for _, _, s in state.palace)
    assert held + built + state.out_of_game == total


@playouts
@given(seed=seeds, chooser=seeds, cut=st.integers(0, 200), players=st.sampled_from([3, 4, 5, 6]))
def test_a_playout_from_any_position_is_the_default_loop(
    seed: str, chooser: str, cut: int, players: int
) -> None:
    """Ice Palace's own `random_playout` (its yard written out) from a position read
    back from JSON, so without its yard's bits: in a yard mid-round, in a build,
    or with a resigned seat, it plays what `Game.random_playout` plays."""
    played = list(steps(GAME, players, {}, seed, Rng(chooser)))
    state = played[min(cut, len(played) - 1)].state
    starts = [state]
    if GAME.actors(state):
        starts.append(run_forced(GAME.play(state, min(GAME.actors(state)), Resign())))
    for start in starts:
        fresh = GAME.state_from_json(GAME.state_to_json(start))
        drawn, again = Rng(chooser + "on"), Rng(chooser + "on")
        own = list(GAME.random_playout(fresh, drawn))
        default = list(Game.random_playout(GAME, start, again))
        assert [(p.seat, p.move, p.state) for p in own] == [
            (p.seat, p.move, p.state) for p in default
        ]
        assert drawn.word() == again.word()


# -- the rounds decided -------------------------------------------------------------


def test_the_rounds_decided_rise_when_a_round_is_built_not_when_the_yard_closes() -> None:
    state = position(["Sr Lr", "Sy Ly", "Sg Lg"], yard={(0, 0): "Mr"}, turn=1, last_placer=0)
    assert GAME.rounds_decided(state) == 0
    state = GAME.play(state, 1, Pass())
    state = GAME.play(state, 2, Pass())
    state = GAME.play(state, 0, Pass())
    assert state.phase == BUILD and GAME.rounds_decided(state) == 0
    state = GAME.play(state, 0, Build(auto=True))
    assert state.phase == YARD and GAME.rounds_decided(state) == 1
    assert GAME.state_from_json(GAME.state_to_json(state)) == state


def test_a_forced_build_and_a_resigned_builder_each_finish_a_round() -> None:
    forced = build_position({(0, 0): "Lr"}, {(0, 0): "Sg"})
    assert GAME.rounds_decided(run_forced(forced)) == 1
    resigned = build_position({(0, 0): "Sr Mr Lr"}, {}, builder=0)
    assert GAME.rounds_decided(GAME.play(resigned, 0, Resign())) == 1


def test_the_breakdown_gives_each_palace_stack_to_the_colour_on_top() -> None:
    # The rules: a stack scores its height to the player whose colour tops it.
    final = position(
        ["", "", ""],
        palace={(0, 0): "Lg My", (1, 0): "Lr", (0, 1): "Lr Mg Sg", (2, 0): "Mr Sy"},
        pool=("", "", ""),
    )
    assert GAME.breakdown(final, []) == (
        (ScoreLine("stack at 1,0: Lr (1 high)", 1),),
        (
            ScoreLine("stack at 0,0: Lg My (2 high)", 2),
            ScoreLine("stack at 2,0: Mr Sy (2 high)", 2),
        ),
        (ScoreLine("stack at 0,1: Lr Mg Sg (3 high)", 3),),
    )
    assert _sums(GAME.breakdown(final, [])) == GAME.scores(final) == (1, 4, 3)


def _sums(lines: Breakdown) -> tuple[int, ...]:
    return tuple(sum(line.points for line in seat_lines) for seat_lines in lines)


# -- building a move on the board -----------------------------------------------------


def walk_first(state: State, seat: int, pick: int = 0) -> tuple[tuple[str, ...], Any]:
    """The steps and the move reached by always taking choice `pick` (or the last)."""
    taken: tuple[str, ...] = ()
    built = GAME.build(state, seat, taken)
    while built.move is None:
        choice = built.choices[min(pick, len(built.choices) - 1)]
        taken = (*taken, choice.step)
        built = GAME.build(state, seat, taken)
    return taken, built.move


def test_in_the_yard_a_pyramid_of_the_hand_then_its_cell_or_a_pass() -> None:
    state = position(
        ["Sr Lr Sk", "Sy My Ly", "Sg Mg Lg"], yard={(0, 0): "Mr"}, turn=0, last_placer=1
    )
    first = GAME.build(state, 0, ())
    # The black small can only ever lead; the large covers, the red small founds.
    assert [c.step for c in first.choices] == ["Sr", "Lr", "pass"]
    assert first.move is None and "pass" in first.prompt
    assert GAME.build(state, 0, ("pass",)).move == Pass()
    cells = GAME.build(state, 0, ("Sr",))
    assert [c.step for c in cells.choices] == ["-1,0", "0,-1", "0,1", "1,0"]
    placed = GAME.build(state, 0, ("Sr", "1,0"))
    assert placed.move == Place("Sr", 1, 0) and not placed.choices
    assert placed.view["yard"]["1,0"] == ["Sr"]
    assert placed.view["hands"][0] == ["Lr", "Sk"]
    assert placed.view["hands"][1] == {"S": 1, "M": 1, "L": 1}
    for bad in (("Sk",), ("Sr", "2,0"), ("pass", "Sr")):
        with pytest.raises(IllegalMove) as caught:
            GAME.build(state, 0, bad)
        assert caught.value.code == "bad_step"
    with pytest.raises(IllegalMove):
        GAME.build(state, 1, ())


def test_the_lead_cannot_pass_on_the_board() -> None:
    state = position(["Sr Lk", "Sy", "Sg"])
    first = GAME.build(state, 0, ())
    assert [c.step for c in first.choices] == ["Sr", "Lk"]
    assert [c.step for c in GAME.build(state, 0, ("Lk",)).choices] == ["0,0"]


def test_the_builder_is_offered_only_steps_that_keep_the_plan_maximal() -> None:
    # Both can be placed: the large first, the medium on it. The medium first
    # would leave the red large nothing to cover and no red to found beside.
    state = build_position({(0, 0): "Mg Lr", (1, 0): "Sk"}, {})
    assert state.build_max == 2
    first = GAME.build(state, 0, ())
    assert [c.step for c in first.choices] == ["Lr", "auto"]
    assert first.move is None and "2 more to place" in first.prompt
    with pytest.raises(IllegalMove) as caught:
        GAME.build(state, 0, ("Mg",))
    assert caught.value.code == "bad_step"
    assert [c.step for c in GAME.build(state, 0, ("Lr",)).choices] == ["0,0"]
    large = GAME.build(state, 0, ("Lr", "0,0"))
    assert large.view["palace"] == {"0,0": ["Lr"]}
    assert large.view["plan"] == ["Lr@0,0"]
    assert large.view["yard"] == {"0,0": ["Mg"], "1,0": ["Sk"]}
    assert [c.step for c in large.choices] == ["Mg"] and large.move is None
    done = GAME.build(state, 0, ("Lr", "0,0", "Mg", "0,0"))
    assert done.move == Build((Place("Lr", 0, 0), Place("Mg", 0, 0)))
    assert not done.choices and done.view["palace"] == {"0,0": ["Lr", "Mg"]}
    GAME.play(state, 0, done.move)
    auto = GAME.build(state, 0, ("auto",))
    assert auto.move == Build(auto=True) and not auto.choices
    with pytest.raises(IllegalMove):
        GAME.build(state, 0, ("auto", "Lr"))


def test_without_the_solver_the_known_plan_still_leads_to_a_maximal_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The RULINGS: past the search's budget, a step is offered when the plan
    # known so far can follow it; a walk through the choices never gets stuck.
    state = build_position(
        {(0, 0): "Sr Mw Lg", (1, 0): "Sy My Ly", (0, 1): "Mg Lr"}, {(0, 0): "Lg", (1, 0): "Ly"}
    )
    ice_palace._completion.cache_clear()
    monkeypatch.setattr(ice_palace_solver, "completes", lambda tops, pieces, need: None)
    try:
        for pick in range(4):
            _, move = walk_first(state, 0, pick)
            GAME.play(state, 0, move)
    finally:
        ice_palace._completion.cache_clear()


@playouts
@given(seed=seeds, chooser=seeds, walk=seeds)
def test_random_walks_through_a_build_end_in_a_maximal_plan(
    seed: str, chooser: str, walk: str
) -> None:
    wander = Rng(walk)
    builds = [
        step.state
        for step in steps(GAME, 3, {}, seed, Rng(chooser))
        if step.state.phase == BUILD and step.state.turn != NOBODY and step.state.build_max
    ]
    for state in builds[:3]:
        built = GAME.build(state, state.turn, ())
        while built.move is None:
            options = [c for c in built.choices if c.step != "auto"]
            built = GAME.build(
                state, state.turn, (*built.steps, options[wander.below(len(options))].step)
            )
        assert isinstance(built.move, Build) and len(built.move.steps) >= state.build_max
        GAME.play(state, state.turn, built.move)


def test_the_board_draws_each_choice_as_one_target_and_its_text_reads_on_a_phone() -> None:
    """The picture's targets are exactly the choices; at 390 px (the board shown
    358 px wide) no text is under 11 px, and every target is large enough to tap."""
    names = ["Ann", "Bob", "Cy"]
    wander = Rng("targets")
    for step in list(steps(GAME, 3, {}, "5eed", Rng("c")))[::4]:
        state = step.state
        if state.turn == NOBODY:
            continue
        built = GAME.build(state, state.turn, ())
        for _ in range(3):
            root = ET.fromstring(render.render_svg("ice_palace", built.view, names, None, built))
            scale = 358 / float(root.get("viewBox", "").split()[2])
            targets = [e for e in root.iter() if e.get("data-step") is not None]
            assert sorted(e.get("data-step", "") for e in targets) == sorted(
                c.step for c in built.choices
            )
            fonts = [float(e.get("font-size", 0)) for e in root.iter() if e.tag.endswith("text")]
            assert min(fonts) * scale >= 11
            rings = [e for e in root.iter() if e.get("class") == "ring"]
            assert all(float(e.get("width", 0)) * scale >= 22 for e in rings)
            if not built.choices or built.move is not None:
                break
            chosen = built.choices[wander.below(len(built.choices))]
            built = GAME.build(state, state.turn, (*built.steps, chosen.step))


def test_the_fairness_benchmarks_smallest_case() -> None:
    # bench/ice_palace_fairness.py at its smallest: under rules version 1 yellow won
    # most random 3-player games and green nearly none; under the current rules each
    # colour wins within the goal's bounds, and `build auto` never scores the builder
    # fewer points than the plans of versions 1 and 2 (it does better in some builds).
    count, builds = SMALLEST
    before = wins_by_colour(ice_palace.GAME_V1, count)
    assert before["y"] > 0.5 and before["g"] < 0.1
    shares = wins_by_colour(GAME, count)
    # The goal (27% to 40%) is for 600 games; a share of 60 games strays about 6
    # points from its mean, so this holds it to two of those either side.
    assert all(0.21 <= share <= 0.46 for share in shares.values()), shares
    states = recorded_builds(builds)
    for old_game in (ice_palace.GAME_V1, ice_palace.GAME_V2):
        compared = compare_builds(states, old_game)
        assert compared.fewer == 0 and compared.more > 0


def test_build_auto_is_the_best_of_all_maximal_plans_where_every_plan_can_be_tried() -> None:
    # Every plan of the small builds met in random games, tried one by one: `build
    # auto` (rules version 3) is the best for the builder, then the worst for the
    # leader; version 2's few solver plans were short of it in most of them.
    states = [state for state in recorded_builds(400) if state.build_max <= TRIED_ALL]
    assert len(states) >= 10
    reached, small = at_best(states)
    assert reached == small
    old = [_worth_of(state, ice_palace.GAME_V2) == best_of_all(state) for state in states]
    assert not all(old)


def _worth_of(state: ice_palace.State, game: ice_palace.IcePalace) -> tuple[int, int]:
    plan = game.referee_plan(state.palace, state.yard, state.colours, state.turn, state.resigned)
    palace = ice_palace._as_dict(state.palace)
    for step in ice_palace._places(plan):
        palace[step.x, step.y] = (*palace.get((step.x, step.y), ()), step.pyramid)
    mine = state.colours[state.turn]
    leader = ice_palace._leader(state.palace, state.colours, state.turn, state.resigned)
    points = {colour: 0 for colour in state.colours}
    for stack in palace.values():
        points[stack[-1][1]] = points.get(stack[-1][1], 0) + len(stack)
    return points[mine], -points[leader]


def test_best_plan_places_what_it_must_and_never_does_worse_than_its_start() -> None:
    # On builds of every size (past its budget too), the search's plan is legal
    # step by step, places `build_max`, and is worth at least its starting plan.
    for state in recorded_builds(40):
        quick = GAME.quick_plan(state.palace, state.yard, state.colours, state.turn, ())
        plan = GAME.referee_plan(state.palace, state.yard, state.colours, state.turn, ())
        assert plan.count == quick.count == state.build_max == len(plan.steps)
        assert GAME.play(state, state.turn, Build(ice_palace._places(plan))).rounds == (
            state.rounds + 1
        )
        assert _worth_of(state, GAME) >= _worth_of(state, ice_palace.GAME_V2)


@pytest.mark.parametrize(
    ("old", "new"),
    [(ice_palace.GAME_V1, ice_palace.GAME_V2), (ice_palace.GAME_V2, GAME)],
    ids=["v1", "v2"],
)
def test_an_old_games_build_auto_replays_under_its_rules_version(
    old: ice_palace.IcePalace, new: ice_palace.IcePalace
) -> None:
    # A random game of an old version whose `build auto` plays a plan the next
    # version would not: its record names its version and replays to the same end;
    # named the next version, the same log means another game.
    assert games.get("ice_palace", old.rules_version) is old and GAME.rules_version == "3"
    for number in range(100):
        seed = f"old {number}"
        played = list(steps(old, 3, old.load_options({}, 3), seed, Rng(f"c {number}")))
        before = [old.start(3, old.load_options({}, 3), Rng(seed))] + [p.state for p in played]
        differs = any(
            isinstance(p.move, Build)
            and p.move.auto
            and state.build_plan
            != ice_palace._places(
                new.referee_plan(
                    state.palace, state.yard, state.colours, state.turn, state.resigned
                )
            )
            for p, state in zip(played, before, strict=False)
        )
        if differs:
            break
    else:
        raise AssertionError("no game of the old version played a plan the next would not")
    moves = [(p.seat, old.notate(p.move), None) for p in played]
    header = Header("ice_palace", ("a", "b", "c"), {}, commitment(seed), old.rules_version, seed)
    record = Record(header, chain(header.seed_commitment, moves))
    assert replay(record).final == played[-1].state
    newer = Record(replace(header, rules_version=new.rules_version), record.entries)
    try:
        final = replay(newer).final
    except ReplayError:  # a later move refused under the other plan
        final = None
    assert final != played[-1].state


def test_the_yard_choices_are_said_in_the_page_language() -> None:
    state = position(
        ["Sr Lr Sk", "Sy My Ly", "Sg Mg Lg"], yard={(0, 0): "Mr"}, turn=0, last_placer=1
    )
    with speaking("fr"):
        first = GAME.build(state, 0, ())
        cells = GAME.build(state, 0, ("Lr",))
    assert [c.label for c in first.choices] == [
        "Poser une petite pyramide rouge",
        "Poser une grande pyramide rouge",
        "Passer",
    ]
    assert first.prompt == "Choisissez une pyramide à poser, ou passez"
    assert cells.prompt == "Choisissez où va la grande pyramide rouge sur le chantier"
    assert all(c.label.startswith("La grande pyramide rouge en ") for c in cells.choices)
    english = GAME.build(state, 0, ())
    assert [c.label for c in english.choices] == [
        "Place a small red pyramid",
        "Place a large red pyramid",
        "Pass",
    ]
    # The steps are the machine's: the same in both languages.
    assert [c.step for c in english.choices] == [c.step for c in first.choices]
