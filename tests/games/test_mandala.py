"""Mandala: the rules file's examples, its rulings, and playout properties.

Hand-built positions use `build`, which puts every copy not on the path or
in a collection into the eye (so the 5 copies of each kind are always
accounted for) and marks the sets with no copy left on the path as scored.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import games
from referee.engine import BadOptions, IllegalMove, Played, Resign, ScoreLine
from referee.games.mandala import GAME, GAME_V1, KIND_OF, KINDS, OVER, PATH_LENGTH, State, Take
from referee.i18n import speaking
from referee.rng import Rng


def build(
    path: dict[int, str],
    pawns: list[int],
    collections: list[dict[str, int]] | None = None,
    to_move: int = 0,
    resigned: tuple[int, ...] = (),
    scores: list[int] | None = None,
) -> State:
    players = len(pawns)
    collections = collections or [{} for _ in range(players)]
    cells = [-1] * PATH_LENGTH
    for index, name in path.items():
        cells[index] = KIND_OF[name]
    held = [[c.get(name, 0) for name in KINDS] for c in collections]
    on_path = Counter(cells)
    eye = []
    for kind in range(len(KINDS)):
        rest = 5 - on_path[kind] - sum(h[kind] for h in held)
        assert rest >= 0, f"more than 5 copies of {KINDS[kind]}"
        eye.append(rest)
    return State(
        path=tuple(cells),
        pawns=tuple(pawns),
        collections=tuple(tuple(h) for h in held),
        eye=tuple(eye),
        scored=tuple(kind for kind in range(len(KINDS)) if on_path[kind] == 0),
        scores=tuple(scores or [0] * players),
        first_player=0,
        to_move=to_move,
        resigned=resigned,
    )


def take(state: State, seat: int, index: int) -> State:
    return GAME.play(state, seat, Take(index))


def refused(state: State, seat: int, move: Take | Resign) -> IllegalMove:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, move)
    assert caught.value.reason
    return caught.value


# -- setup ---------------------------------------------------------------------


def test_registered() -> None:
    assert games.get("mandala") is GAME
    assert GAME.players == (2, 3, 4, 5)


def test_options_none_and_unknown_refused() -> None:
    assert GAME.load_options(None, 3) == {}
    with pytest.raises(BadOptions):
        GAME.load_options({"variant": "short"}, 3)
    for players in (1, 6):
        with pytest.raises(BadOptions):
            GAME.load_options({}, players)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_start_lays_every_pyramid_and_no_pawn(players: int) -> None:
    state = GAME.start(players, {}, Rng("laying"))
    assert Counter(state.path) == {kind: 5 for kind in range(15)}
    assert state.pawns == (-1,) * players
    assert state.scores == (0,) * players
    assert state.scored == () and sum(state.eye) == 0
    assert state.to_move == state.first_player
    assert GAME.actors(state) == {state.first_player}
    assert GAME.legal_moves(state, state.first_player) == [Take(i) for i in range(75)]


def test_start_pins_the_draw_order() -> None:
    # The seeded shuffle is part of every record's meaning: path first, from
    # the kinds in order five copies each, then the first player.
    rng = Rng("pinned")
    path = rng.shuffled([kind for kind in range(15) for _ in range(5)])
    first = rng.below(4)
    state = GAME.start(4, {}, Rng("pinned"))
    assert state.path == tuple(path)
    assert state.first_player == first


def test_start_depends_on_the_seed_only() -> None:
    assert GAME.start(3, {}, Rng("a")) == GAME.start(3, {}, Rng("a"))
    paths = {GAME.start(3, {}, Rng(f"s{i}")).path for i in range(20)}
    assert len(paths) == 20
    firsts = {GAME.start(4, {}, Rng(f"s{i}")).first_player for i in range(60)}
    assert firsts == {0, 1, 2, 3}


# -- moving --------------------------------------------------------------------


def test_moves_are_forward_to_indices_still_holding_a_pyramid() -> None:
    state = build({3: "Sr", 8: "Sy", 9: "Sy", 40: "Lk"}, [5, 2], to_move=0)
    assert GAME.legal_moves(state, 0) == [Take(8), Take(9), Take(40)]
    assert GAME.legal_moves(state, 1) == []
    assert "forward" in refused(state, 0, Take(3)).reason
    assert "forward" in refused(state, 0, Take(5)).reason
    assert "no pyramid" in refused(state, 0, Take(20)).reason
    for index in (75, -3):
        assert refused(state, 0, Take(index)).code == "illegal_move"
    assert refused(state, 1, Take(8)).code == "not_your_turn"


def test_moving_is_compulsory_there_is_no_pass() -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.parse("pass")
    assert caught.value.code == "bad_notation"
    state = build({30: "Mg", 31: "Mg"}, [10, 20])
    assert GAME.legal_moves(state, 0) == [Take(30), Take(31)]


def test_a_move_takes_the_pyramid_and_passes_the_turn() -> None:
    state = build({10: "Sr", 20: "Mg", 30: "Mg"}, [5, 8], [{"Sr": 3}, {}], to_move=0)
    after = take(state, 0, 20)
    assert after.pawns == (20, 8)
    assert after.path[20] == -1
    assert after.collections[0][KIND_OF["Mg"]] == 1
    assert after.to_move == 1


def test_pawns_before_the_path_keep_everything_on_it() -> None:
    state = GAME.start(3, {}, Rng("eye"))
    first = state.to_move
    state = take(state, first, 74)
    state = take(state, state.to_move, 10)
    assert sum(state.eye) == 0, "one pawn is still before index 0"
    low = list(state.path[:5])
    state = take(state, state.to_move, 5)
    assert state.path[:5] == (-1,) * 5
    assert Counter({kind: n for kind, n in enumerate(state.eye) if n}) == Counter(low)


def test_pyramids_behind_the_rearmost_pawn_go_to_the_eye() -> None:
    state = build({12: "Lr", 14: "Ly", 16: "Ly", 40: "Sg", 41: "Sg"}, [10, 15, 13], to_move=0)
    after = take(state, 0, 40)
    # The rearmost pawn is now seat 2 on 13: only index 12 lies behind it.
    assert after.path[12] == -1 and after.path[14] == KIND_OF["Ly"]
    assert after.eye[KIND_OF["Lr"]] == 5


# -- scoring -------------------------------------------------------------------


def test_sole_holder_scores_five() -> None:
    state = build({10: "Sr", 20: "Mg", 30: "Mg"}, [5, 8], [{"Sr": 4}, {}], to_move=0)
    after = take(state, 0, 10)
    assert after.scores == (5, 0)
    assert after.scored[-1] == KIND_OF["Sr"]
    assert after.to_move == 1


@pytest.mark.parametrize(("pawn0", "pawn1", "expected"), [(35, 30, (3, 2, 0)), (30, 35, (2, 3, 0))])
def test_tie_for_first_goes_to_the_pawn_further_along(
    pawn0: int, pawn1: int, expected: tuple[int, int, int]
) -> None:
    state = build(
        {40: "Lb", 50: "Sy", 60: "Sy"},
        [pawn0, pawn1, 33],
        [{"Lb": 2}, {"Lb": 2}, {}],
        to_move=2,
    )
    assert take(state, 2, 40).scores == expected


@pytest.mark.parametrize(("pawn1", "pawn2", "expected"), [(31, 36, (3, 0, 2)), (36, 31, (3, 2, 0))])
def test_tie_for_second_goes_to_the_pawn_further_along(
    pawn1: int, pawn2: int, expected: tuple[int, int, int]
) -> None:
    state = build(
        {40: "Lb", 50: "Sy", 60: "Sy"},
        [20, pawn1, pawn2],
        [{"Lb": 2}, {"Lb": 1}, {"Lb": 1}],
        to_move=0,
    )
    assert take(state, 0, 40).scores == expected


def test_tie_break_uses_the_movers_new_position() -> None:
    # Seat 1 stands behind seat 0 before its move and ahead of it after.
    state = build({50: "Lk", 60: "Sy", 70: "Sy"}, [45, 40], [{"Lk": 2}, {"Lk": 1}], to_move=1)
    assert take(state, 1, 50).scores == (2, 3)


def test_set_wholly_in_the_eye_scores_for_no_one() -> None:
    state = build(
        {12: "Lk", 14: "Lk", 20: "Sg", 30: "Sg", 40: "Sg"},
        [10, 15, 16],
        to_move=0,
    )
    after = take(state, 0, 20)
    assert after.eye[KIND_OF["Lk"]] == 5
    assert after.scores == (0, 0, 0)
    assert after.scored.count(KIND_OF["Lk"]) == 1
    assert GAME.view(after, None)["scored"][-1] == "Lk"


def test_several_sets_completed_by_one_move() -> None:
    state = build(
        {11: "Mr", 13: "My", 25: "Ly", 50: "Sb", 60: "Sb"},
        [10, 20],
        [{"Mr": 2, "Ly": 1}, {"Mr": 1, "My": 4, "Ly": 3}],
        to_move=0,
    )
    after = take(state, 0, 25)
    # Mr 2:1 -> 3/2; My only seat 1 -> 5; Ly 2:3 -> 2/3.
    assert after.scores == (3 + 2, 2 + 5 + 3)
    assert [KINDS[kind] for kind in after.scored[-3:]] == ["Mr", "My", "Ly"]
    assert after.to_move == 1


def test_a_set_is_scored_once() -> None:
    state = build({10: "Sr", 20: "Mg", 30: "Mg", 40: "Mg"}, [5, 8], [{"Sr": 4}, {}], to_move=0)
    state = take(state, 0, 10)
    state = take(state, 1, 20)
    assert state.scores == (5, 0)
    assert state.scored.count(KIND_OF["Sr"]) == 1


# -- the end -------------------------------------------------------------------


def test_final_sweep_scores_the_rest_and_the_pawn_further_along_wins_the_tie() -> None:
    state = build(
        {40: "Sk", 45: "Sk", 50: "Mb"},
        [44, 30],
        [{"Sk": 2, "Mb": 1}, {"Sk": 1, "Mb": 1}],
        to_move=0,
    )
    after = take(state, 0, 50)
    # Mb 2:1 -> seat 0 3, seat 1 2; seat 1 sweeps both Sk: 2:3 -> seat 1 3, seat 0 2.
    assert after.path == (-1,) * 75
    assert after.collections[1][KIND_OF["Sk"]] == 3
    assert after.scores == (5, 5)
    assert after.pawns == (50, 30), "the sweeping pawn does not move"
    assert len(after.scored) == 15
    assert GAME.actors(after) == frozenset()
    result = GAME.result(after)
    # 5 each: seat 0's pawn on 50 is further along than seat 1's on 30.
    assert result is not None and result.winners == (0,)
    assert refused(after, 1, Take(60)).code == "game_over"


def test_the_sweeping_pawn_loses_ties_it_stands_behind() -> None:
    state = build({45: "Sk", 50: "Mb"}, [44, 30], [{"Sk": 2}, {"Sk": 1}], to_move=0)
    after = take(state, 0, 50)
    # Sk ends 2:2; seat 0 on 50 is further along than seat 1 still on 30.
    assert after.collections[1][KIND_OF["Sk"]] == 2
    assert after.scores == (3 + 5, 2)
    result = GAME.result(after)
    assert result is not None and result.winners == (0,)


def over(pawns: list[int], scores: list[int], resigned: tuple[int, ...] = ()) -> State:
    """An ended game with the given pawns and totals (the path already empty)."""
    return build({}, pawns, to_move=OVER, scores=scores, resigned=resigned)


def test_equal_totals_of_two_players_go_to_the_pawn_further_along() -> None:
    for pawns, winner in [([60, 61], 1), ([74, 12], 0), ([-1, 40], 1)]:
        result = GAME.result(over(pawns, [17, 17]))
        assert result is not None and result.winners == (winner,)
        assert result.scores == (17, 17)
    # Totals first: the pawn only breaks ties.
    result = GAME.result(over([74, 12], [16, 17]))
    assert result is not None and result.winners == (1,)


@pytest.mark.parametrize(
    ("pawns", "scores", "winner"),
    [
        ([50, 70, 60], [20, 20, 20], 1),
        ([50, 70, 60], [20, 19, 20], 2),
        ([73, 70, 60], [20, 19, 20], 0),
        ([30, 55, 40, 72], [12, 25, 25, 9], 1),
        ([30, 55, 64, 72, 10], [25, 25, 25, 9, 25], 2),
        ([-1, 55, 64, 72, 10], [30, 25, 25, 9, 25], 0),
    ],
)
def test_equal_totals_of_three_or_more_go_to_the_pawn_furthest_along(
    pawns: list[int], scores: list[int], winner: int
) -> None:
    result = GAME.result(over(pawns, scores))
    assert result is not None and result.winners == (winner,)


def test_a_resigned_seat_never_wins_a_tie_however_far_its_pawn() -> None:
    # Seat 2 resigned with the best total and the pawn furthest along.
    result = GAME.result(over([50, 70, 74], [20, 20, 30], resigned=(2,)))
    assert result is not None and result.winners == (1,)
    result = GAME.result(over([50, 40, 74, 73], [20, 20, 20, 20], resigned=(2, 3)))
    assert result is not None and result.winners == (0,)


def test_rules_version_1_games_still_share_ties() -> None:
    assert (GAME.rules_version, GAME_V1.rules_version) == ("2", "1")
    assert games.get("mandala", "1") is GAME_V1 and games.get("mandala", "2") is GAME
    with pytest.raises(KeyError, match="known versions: 1, 2"):
        games.get("mandala", "3")
    ended = over([50, 70, 74], [20, 20, 20], resigned=(2,))
    result = GAME_V1.result(ended)
    assert result is not None and result.winners == (0, 1)
    assert GAME_V1.result(replace(ended, to_move=0)) is None
    # Only the result differs: the same moves lead to the same states.
    state = GAME.start(3, {}, Rng("v1"))
    for _ in range(6):
        move = GAME.legal_moves(state, state.to_move)[0]
        assert GAME_V1.play(state, state.to_move, move) == GAME.play(state, state.to_move, move)
        state = GAME.play(state, state.to_move, move)


def test_last_pyramid_taken_leaves_nobody_to_sweep() -> None:
    state = build({72: "Lg"}, [70, 71], [{"Lg": 1}, {"Lg": 3}], to_move=0)
    after = take(state, 0, 72)
    assert after.to_move == OVER
    assert after.scores == (2, 3)
    assert GAME.view(after, None)["at_end"] == [0, 1]


def test_players_at_the_end_are_skipped() -> None:
    state = build({20: "Sr", 30: "Sr", 40: "Sy", 41: "Sy", 50: "Sg"}, [60, 10, 15], to_move=1)
    assert GAME.view(state, None)["at_end"] == [0]
    state = take(state, 1, 20)
    assert GAME.actors(state) == {2}
    state = take(state, 2, 30)
    assert GAME.actors(state) == {1}
    assert GAME.legal_moves(state, 0) == []
    assert refused(state, 0, Take(40)).code == "not_your_turn"


def test_a_seat_reaches_the_end_when_its_last_pyramid_is_taken() -> None:
    state = build({30: "Sg", 40: "Sg", 60: "Sg"}, [10, 55, 20, 25], to_move=2)
    state = take(state, 2, 60)
    # Seat 1 on 55 had only 60 ahead: it has reached the end too.
    assert GAME.view(state, None)["at_end"] == [1, 2]
    assert GAME.actors(state) == {3}
    state = take(state, 3, 30)
    assert GAME.actors(state) == {0}


def test_game_goes_on_in_seat_order_from_the_first_player() -> None:
    state = GAME.start(4, {}, Rng("order"))
    seen: list[int] = []
    for _ in range(4):
        seat = state.to_move
        seen.append(seat)
        state = GAME.play(state, seat, GAME.legal_moves(state, seat)[0])
    first = seen[0]
    assert seen == [(first + k) % 4 for k in range(4)]


# -- resigning -----------------------------------------------------------------


def test_resign_of_two_leaves_the_other_seat_winning_after_its_sweep() -> None:
    state = build({20: "Sr", 30: "Sr"}, [10, 15], [{}, {"Sr": 3}], to_move=0, scores=[0, 40])
    after = GAME.play(state, 1, Resign())
    assert after.collections[0][KIND_OF["Sr"]] == 2
    assert after.path == (-1,) * 75
    result = GAME.result(after)
    assert result is not None and result.winners == (0,)
    assert result.scores == (2, 43)


def test_resigned_rearmost_pawn_is_lifted_and_the_eye_catches_up() -> None:
    state = build(
        {10: "Sr", 25: "Sr", 40: "Lk", 50: "Lk"},
        [5, 20, 30],
        [{}, {"Sr": 3}, {}],
        to_move=1,
    )
    after = GAME.play(state, 0, Resign())
    assert after.resigned == (0,)
    assert after.path[10] == -1 and after.eye[KIND_OF["Sr"]] == 1
    assert after.pawns == (5, 20, 30)
    assert after.to_move == 1
    assert GAME.view(after, None)["resigned"] == [0]
    # Seat 0 is skipped from now on.
    after = take(after, 1, 25)
    assert after.to_move == 2
    after = take(after, 2, 40)
    assert after.to_move == 1


def test_resigned_collection_still_counts_and_its_pawn_breaks_ties() -> None:
    # Seat 0 resigned on 55 and still beats seat 1 (now on 50) in the 2:2 tie.
    state = build(
        {50: "Lk", 60: "Sy", 70: "Sy"},
        [55, 40, 42],
        [{"Lk": 2}, {"Lk": 1}, {}],
        to_move=1,
        resigned=(0,),
    )
    after = take(state, 1, 50)
    assert after.scores == (3, 2, 0)


def test_resign_of_the_seat_to_move_passes_the_turn() -> None:
    state = GAME.start(3, {}, Rng("resign"))
    seat = state.to_move
    after = GAME.play(state, seat, Resign())
    assert after.to_move == (seat + 1) % 3
    assert refused(after, seat, Resign()).code == "illegal_move"
    assert refused(after, seat, Take(70)).code == "not_your_turn"
    after = GAME.play(after, (seat + 2) % 3, Resign())
    result = GAME.result(after)
    assert result is not None and result.winners == ((seat + 1) % 3,)
    assert refused(after, (seat + 1) % 3, Resign()).code == "game_over"


def test_resigned_seat_ranks_last_whatever_its_score() -> None:
    state = build({72: "Lg"}, [70, 71, 10], [{"Lg": 1}, {"Lg": 3}, {}], to_move=0, resigned=(2,))
    state = replace(state, scores=(0, 0, 99))
    after = take(state, 0, 72)
    result = GAME.result(after)
    assert result is not None and result.winners == (1,)
    assert result.scores == (2, 3, 99)


# -- notation and JSON -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("take 17", Take(17)),
        ("17", Take(17)),
        ("t17", Take(17)),
        ("Take 17", Take(17)),
        ("  TAKE   0 ", Take(0)),
        ("T 74", Take(74)),
        ("take07", Take(7)),
        ("resign", Resign()),
        (" Resign ", Resign()),
    ],
)
def test_parse_is_forgiving(text: str, move: Take | Resign) -> None:
    assert GAME.parse(text) == move


@pytest.mark.parametrize(
    "text", ["", "take", "take x", "move 17", "take -1", "take 75", "take 99999999", "17 18"]
)
def test_parse_refuses_with_what_is_expected(text: str) -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.parse(text)
    assert caught.value.code == "bad_notation"
    assert "take N" in caught.value.reason


def test_notation_is_canonical() -> None:
    assert GAME.notate(Take(17)) == "take 17"
    assert GAME.notate(Resign()) == "resign"
    for index in range(75):
        assert GAME.parse(GAME.notate(Take(index))) == Take(index)


def test_move_json_round_trip_and_refusals() -> None:
    for move in (Take(0), Take(74), Resign()):
        data = json.loads(json.dumps(GAME.move_to_json(move)))
        assert GAME.move_from_json(data) == move
    assert GAME.move_to_json(Take(17)) == {"type": "take", "index": 17}
    malformed: list[Any] = [
        None,
        [],
        "take 17",
        {},
        {"type": "pass"},
        {"type": "take"},
        {"type": "take", "index": "17"},
        {"type": "take", "index": True},
        {"type": "take", "index": 17.0},
        {"type": "take", "index": 75},
        {"type": "take", "index": 3, "extra": 1},
        {"type": "resign", "seat": 1},
    ]
    for bad in malformed:
        with pytest.raises(IllegalMove) as caught:
            GAME.move_from_json(bad)
        assert caught.value.code == "bad_move" and caught.value.reason


def test_view_has_the_listed_fields_and_hides_nothing() -> None:
    state = build({10: "Sr", 20: "Mg"}, [5, 8], [{"Sr": 4}, {"Mg": 1}], to_move=1)
    views = [GAME.view(state, seat) for seat in (None, 0, 1)]
    assert views[0] == views[1] == views[2]
    view = views[0]
    listed = {"path", "pawns", "collections", "eye", "scored", "scores", "at_end", "first_player"}
    assert listed <= set(view)
    assert json.loads(json.dumps(view)) == view
    assert view["path"][10] == "Sr" and view["path"][11] is None and len(view["path"]) == 75
    assert view["pawns"] == [5, 8]
    assert view["collections"] == [{"Sr": 4}, {"Mg": 1}]
    assert view["eye"]["Mg"] == 3 and "Sr" not in view["eye"]
    assert view["to_move"] == 1 and view["at_end"] == []


# -- playouts ------------------------------------------------------------------


def naive_score(v: dict[str, Any]) -> None:
    """The scoring rule written out plainly, for kinds newly off the path."""
    players = len(v["pawns"])
    for name in KINDS:
        if name in v["scored"] or name in v["path"]:
            continue
        v["scored"].append(name)
        held = {s: v["collections"][s].get(name, 0) for s in range(players)}
        holders = [s for s in range(players) if held[s]]
        if len(holders) == 1:
            v["scores"][holders[0]] += 5
        elif holders:
            best = max(holders, key=lambda s: (held[s], v["pawns"][s]))
            rest = [s for s in holders if s != best]
            runner = max(rest, key=lambda s: (held[s], v["pawns"][s]))
            v["scores"][best] += 3
            v["scores"][runner] += 2


def naive_after(v: dict[str, Any], seat: int, move: Take | Resign) -> dict[str, Any]:
    """The rules file applied literally to a view, as an oracle."""
    v = copy.deepcopy(v)
    players = len(v["pawns"])
    turn_from = v["to_move"]
    if isinstance(move, Resign):
        v["resigned"] = sorted([*v["resigned"], seat])
    else:
        name = v["path"][move.index]
        v["path"][move.index] = None
        v["collections"][seat][name] = v["collections"][seat].get(name, 0) + 1
        v["pawns"][seat] = move.index
        turn_from = seat + 1
    playing = [s for s in range(players) if s not in v["resigned"]]
    rear = min(v["pawns"][s] for s in playing)
    for i in range(max(rear, 0)):
        name = v["path"][i]
        if name is not None:
            v["eye"][name] = v["eye"].get(name, 0) + 1
            v["path"][i] = None
    naive_score(v)
    racing = [s for s in playing if any(v["path"][v["pawns"][s] + 1 :])]
    if len(racing) <= 1:
        for s in racing:
            for i, name in enumerate(v["path"]):
                if name is not None:
                    v["collections"][s][name] = v["collections"][s].get(name, 0) + 1
                    v["path"][i] = None
        naive_score(v)
        v["to_move"] = None
    else:
        v["to_move"] = next(
            (turn_from + k) % players for k in range(players) if (turn_from + k) % players in racing
        )
    v["at_end"] = [s for s in playing if s not in racing or v["to_move"] is None]
    return v


def check_invariants(state: State) -> None:
    players = len(state.pawns)
    for kind in range(15):
        held = sum(c[kind] for c in state.collections)
        assert state.path.count(kind) + state.eye[kind] + held == 5
    assert len(set(state.scored)) == len(state.scored)
    assert set(state.scored) == {kind for kind in range(15) if kind not in state.path}
    # Every set scored with at least one holder gives exactly 5 points
    # (5 alone, or 3 + 2); a set wholly in the eye gives none.
    held_sets = [k for k in state.scored if any(c[k] for c in state.collections)]
    assert sum(state.scores) == 5 * len(held_sets)
    on_path = [p for p in state.pawns if p >= 0]
    assert len(on_path) == len(set(on_path)), "two pawns on one index"
    rear = min(state.pawns[s] for s in range(players) if s not in state.resigned)
    assert all(kind == -1 for kind in state.path[: max(rear, 0)])
    if state.to_move != OVER:
        assert GAME.legal_moves(state, state.to_move), "the seat to move can move"


@settings(max_examples=60, deadline=None)
@given(
    seed=st.text(max_size=8),
    players=st.integers(2, 5),
    chooser=st.integers(0, 2**32),
    resigns=st.booleans(),
)
def test_playouts_follow_the_rules_and_end(
    seed: str, players: int, chooser: int, resigns: bool
) -> None:
    rng = Rng(str(chooser))
    state = GAME.start(players, {}, Rng(seed))
    view = GAME.view(state, None)
    log: list[tuple[int, str]] = []
    while GAME.result(state) is None:
        assert len(log) < 80
        check_invariants(state)
        (seat,) = GAME.actors(state)
        legal = GAME.legal_moves(state, seat)
        for option in legal:
            assert GAME.parse(GAME.notate(option)) == option
            assert GAME.move_from_json(json.loads(json.dumps(GAME.move_to_json(option)))) == option
        move: Take | Resign = GAME.random_move(state, seat, rng)
        assert move in legal
        if resigns and rng.below(6) == 0:
            seat = rng.choice([s for s in range(players) if s not in state.resigned])
            move = Resign()
        state = GAME.play(state, seat, move)
        log.append((seat, GAME.notate(move)))
        view = naive_after(view, seat, move)
        assert GAME.view(state, None) == view
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
    check_invariants(state)
    assert state.path == (-1,) * 75
    assert len(state.scored) == 15
    wholly_in_eye = sum(1 for kind in range(15) if state.eye[kind] == 5)
    assert sum(state.scores) == 5 * (15 - wholly_in_eye)
    result = GAME.result(state)
    assert result is not None and len(result.winners) == 1
    playing = [s for s in range(players) if s not in state.resigned]
    (winner,) = result.winners
    assert winner in playing
    best = max(state.scores[s] for s in playing)
    tied = [s for s in playing if state.scores[s] == best]
    assert winner == max(tied, key=lambda s: state.pawns[s])
    assert len({state.pawns[s] for s in tied}) == len(tied), "no two tied pawns share an index"

    replayed = GAME.start(players, {}, Rng(seed))
    for seat, text in log:
        replayed = GAME.play(replayed, seat, GAME.parse(text))
    assert replayed == state


def test_random_move_refuses_a_seat_not_to_move() -> None:
    state = build({30: "Mg"}, [10, 20], to_move=0)
    with pytest.raises(IllegalMove) as caught:
        GAME.random_move(state, 1, Rng("x"))
    assert caught.value.code == "not_your_turn"


# -- building a move on the board -----------------------------------------------


def test_a_move_is_built_by_one_click_on_a_pyramid_ahead_of_the_pawn() -> None:
    state = build({3: "Lr", 5: "Sk", 9: "Mg"}, [4, 1], to_move=0)
    started = GAME.build(state, 0, ())
    assert [(c.step, c.label) for c in started.choices] == [
        ("5", "Take the small black pyramid at 5"),
        ("9", "Take the medium green pyramid at 9"),
    ]
    assert started.move is None and started.view == GAME.view(state, 0)
    built = GAME.build(state, 0, ("9",))
    assert (
        built.move == Take(9) and built.choices == () and built.prompt == "Play the move, or undo"
    )
    assert built.view["pawns"] == [9, 1] and built.view["path"][9] is None
    assert built.view["collections"][0] == {"Mg": 1}
    # Seat 1's pawn on 1 still keeps index 3 from the eye.
    assert built.view["path"][3] == "Lr" and built.view["eye"] == GAME.view(state, 0)["eye"]
    for refused_step in ("3", "4", "75", "x"):
        with pytest.raises(IllegalMove) as caught:
            GAME.build(state, 0, (refused_step,))
        assert caught.value.code == "bad_step"
    with pytest.raises(IllegalMove) as caught:
        GAME.build(state, 1, ())
    assert caught.value.code == "not_your_turn"


@pytest.mark.parametrize("game", [GAME, GAME_V1], ids=["v2", "v1"])
def test_the_preview_shows_the_pawn_the_take_and_the_eye_as_the_move_leaves_them(
    game: Any,
) -> None:
    state = build({3: "Lr", 5: "Sk", 9: "Mg"}, [4, 1], to_move=1)
    built = game.build(state, 1, ("5",))
    played = game.view(game.play(state, 1, built.move), 1)
    for field in ("path", "pawns", "collections", "eye"):
        assert built.view[field] == played[field], field
    assert built.view["eye"]["Lr"] == GAME.view(state, 1)["eye"].get("Lr", 0) + 1


# -- the breakdown -------------------------------------------------------------


def test_the_breakdown_keeps_the_tie_break_of_the_moment_a_set_was_scored() -> None:
    # Lb ties 2:2 while seat 0's pawn leads (3 to seat 0, 2 to seat 1); seat 1
    # then overtakes and ends further along. Scored again with the final
    # pawns, Lb would go the other way: the breakdown must not.
    start = build(
        {40: "Lb", 50: "Sy", 60: "Sy"}, [35, 30, 33], [{"Lb": 2}, {"Lb": 2}, {}], to_move=2
    )
    played = []
    state = start
    for seat, index in ((2, 40), (0, 50), (1, 60)):
        state = take(state, seat, index)
        played.append(Played(seat, Take(index), state))
    result = GAME.result(state)
    assert result is not None and state.pawns[1] > state.pawns[0]
    assert GAME.breakdown(start, played) == (
        (
            ScoreLine("large blue (Lb): 2 held, most (tie broken by the pawns)", 3),
            ScoreLine("small yellow (Sy): 1 held, second most (tie broken by the pawns)", 2),
        ),
        (
            ScoreLine("large blue (Lb): 2 held, second most (tie broken by the pawns)", 2),
            ScoreLine("small yellow (Sy): 1 held, most (tie broken by the pawns)", 3),
        ),
        (),
    )
    assert result.scores == (5, 5, 0)


def test_the_breakdown_names_the_only_holder_and_no_one_for_a_set_in_the_eye() -> None:
    start = build({10: "Sr", 20: "Mg", 30: "Mg"}, [5, 8], [{"Sr": 4}, {}], to_move=0)
    played = [Played(0, Take(10), take(start, 0, 10))]
    assert GAME.breakdown(start, played) == (
        (ScoreLine("small red (Sr): 5 held, only holder", 5),),
        (),
    )
    # Lk goes wholly to the eye and is scored for no one: no line.
    start = build({12: "Lk", 14: "Lk", 20: "Sg", 30: "Sg", 40: "Sg"}, [10, 15, 16], to_move=0)
    played = [Played(0, Take(20), take(start, 0, 20))]
    assert KIND_OF["Lk"] in played[0].state.scored
    assert GAME.breakdown(start, played) == ((), (), ())


def test_the_pyramids_to_take_are_said_in_the_page_language() -> None:
    state = build({3: "Lr", 5: "Sk", 9: "Mg"}, [4, 1], to_move=0)
    with speaking("fr"):
        started = GAME.build(state, 0, ())
    assert [(c.step, c.label) for c in started.choices] == [
        ("5", "Prendre la petite pyramide noire en 5"),
        ("9", "Prendre la pyramide moyenne verte en 9"),
    ]
    assert started.prompt == "Choisissez une pyramide à prendre"
