"""Subdivision: the rules file's examples, every option, and playout properties.

Hand-built positions come from `position`, which writes pieces as
`<colour><size><cell>` tokens (`R3c4` is a red large on c4; colours R, B, G,
Y are seats 0 to 3) and goes through `state_from_json`, so the derived masks
are the game's own. The reference functions at the end of the helpers work
on the view only, cell by cell, without any bitboard: the playout
properties compare the game against them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import games
from referee.engine import BadOptions, IllegalMove, Played, Resign, Result, ScoreLine
from referee.games.subdivision import GAME, Park, Place, State, seat_lines
from referee.i18n import speaking
from referee.rng import Rng

COLOURS = "RBGY"
STANDARD_2P = ("a1", "f1", "a6", "f6", "c3", "d4")


def position(
    layout: str,
    *,
    players: int = 2,
    side: int = 6,
    parks: tuple[str, ...] = STANDARD_2P,
    each: int = 5,
    stash: list[list[int]] | None = None,
    to_move: int | None = 0,
    private_parks: bool = False,
    resigned: tuple[int, ...] = (),
) -> State:
    """A constructed position; stashes default to `each` minus what is on the board."""
    pieces: dict[str, dict[str, int]] = {}
    placed = [[0, 0, 0] for _ in range(players)]
    for token in layout.split():
        seat, size, cell = COLOURS.index(token[0]), int(token[1]), token[2:]
        assert cell not in pieces and cell not in parks, token
        pieces[cell] = {"seat": seat, "size": size}
        placed[seat][size - 1] += 1
    if stash is None:
        stash = [[max(each - n, 0) for n in counts] for counts in placed]
    return GAME.state_from_json(
        {
            "size": side,
            "parks": list(parks),
            "parks_to_place": 0,
            "pieces": pieces,
            "stash": stash,
            "resigned": list(resigned),
            "private_parks": private_parks,
            "to_move": to_move,
        }
    )


def scores_of(state: State) -> list[int]:
    scores: list[int] = GAME.view(state, None)["scores"]
    return scores


def play(state: State, *moves: str) -> State:
    """Plays `moves` (notation), each by the seat whose turn it is."""
    for text in moves:
        (seat,) = GAME.actors(state)
        state = GAME.play(state, seat, GAME.parse(text))
    return state


def refused(state: State, seat: int, text: str, code: str = "illegal_move") -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, GAME.parse(text))
    assert caught.value.code == code
    assert caught.value.reason
    return caught.value.reason


def started(players: int = 2, seed: str = "seed", **options: Any) -> State:
    return GAME.start(players, GAME.load_options(options, players), Rng(seed))


def through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def placements(moves: list[Any]) -> set[tuple[int, str]]:
    assert all(isinstance(move, Place) for move in moves)
    return {(move.size, move.cell) for move in moves}


def position3(layout: str, **rest: Any) -> State:
    """A constructed position of the standard 3-player board."""
    return position(layout, players=3, side=7, parks=("a1", "g1", "a7", "g7"), **rest)


# -- an independent reference, written plainly over the view -------------------


def xy(cell: str) -> tuple[int, int]:
    return ord(cell[0]) - ord("a"), int(cell[1:]) - 1


def is_near(a: str, b: str) -> bool:
    (ax, ay), (bx, by) = xy(a), xy(b)
    return max(abs(ax - bx), abs(ay - by)) == 1


def is_next_to(a: str, b: str) -> bool:
    (ax, ay), (bx, by) = xy(a), xy(b)
    return abs(ax - bx) + abs(ay - by) == 1


def all_cells(side: int) -> list[str]:
    return [f"{chr(ord('a') + x)}{y + 1}" for y in range(side) for x in range(side)]


def reference_groups(cells: set[str]) -> list[set[str]]:
    groups: list[set[str]] = []
    left = set(cells)
    while left:
        group = {left.pop()}
        frontier = list(group)
        while frontier:
            cell = frontier.pop()
            for other in [c for c in left if is_next_to(cell, c)]:
                left.discard(other)
                group.add(other)
                frontier.append(other)
        groups.append(group)
    return groups


def reference_scores(view: dict[str, Any]) -> list[int]:
    pieces = view["pieces"]
    parks = set(view["parks"])
    smalls = [cell for cell, piece in pieces.items() if piece["size"] == 1]
    out = []
    for seat in range(len(view["stash"])):
        own = {cell for cell, piece in pieces.items() if piece["seat"] == seat}
        groups = reference_groups(own)
        score = sum(pieces[cell]["size"] for cell in own) - len(groups)
        for cell in own:
            if pieces[cell]["size"] == 3:
                near_smalls = sum(1 for small in smalls if is_near(cell, small))
                score -= min(max(near_smalls - 1, 0), 3)
        if view["private_parks"]:
            for park in parks:
                ring = {c for c in all_cells(view["size"]) if is_near(park, c) and c not in parks}
                if ring and any(ring <= group for group in groups):
                    score += 3
        out.append(score)
    return out


def reference_legal(view: dict[str, Any], seat: int) -> set[tuple[int, str]]:
    """Every (size, cell) the rules allow `seat`, ignoring whose turn it is."""
    pieces = view["pieces"]
    small, medium, large = view["stash"][seat]
    legal = set()
    for cell in all_cells(view["size"]):
        if cell in pieces or cell in view["parks"]:
            continue
        around = [piece for other, piece in pieces.items() if is_near(cell, other)]
        if medium:
            legal.add((2, cell))
        if large and not any(p["seat"] == seat and p["size"] == 3 for p in around):
            legal.add((3, cell))
        if small and any(p["seat"] != seat and p["size"] != 2 for p in around):
            legal.add((1, cell))
    return legal


def reference_next(view: dict[str, Any], after: int) -> int | None:
    """The first seat after `after` (itself last) that can place."""
    players = len(view["stash"])
    for step in range(1, players + 1):
        seat = (after + step) % players
        if seat not in view["resigned"] and reference_legal(view, seat):
            return seat
    return None


# -- registry and setup --------------------------------------------------------


def test_registered() -> None:
    assert games.get("subdivision") is GAME
    assert GAME.players == (2, 3, 4)
    assert GAME.rules_version == "1"


def test_default_options() -> None:
    assert GAME.load_options(None, 2) == {
        "parks": "standard",
        "cells": [],
        "three_house": False,
        "private_parks": False,
    }


@pytest.mark.parametrize(
    ("players", "three_house", "side", "parks", "each", "free"),
    [
        (2, False, 6, ["a1", "f1", "c3", "d4", "a6", "f6"], 5, 30),
        (3, False, 7, ["a1", "g1", "a7", "g7"], 5, 45),
        (4, False, 8, ["a1", "h1", "a8", "h8"], 5, 60),
        (2, True, 5, ["a1", "c1", "e1", "c3", "a5", "c5", "e5"], 3, 18),
        (3, True, 6, ["a1", "f1", "a3", "c3", "d3", "c4", "d4", "a6", "f6"], 3, 27),
        (4, True, 6, [], 3, 36),
    ],
)
def test_standard_boards(
    players: int, three_house: bool, side: int, parks: list[str], each: int, free: int
) -> None:
    state = started(players, three_house=three_house)
    view = GAME.view(state, None)
    assert view["size"] == side
    assert sorted(view["parks"]) == sorted(parks)
    assert view["stash"] == [[each, each, each]] * players
    assert view["pieces"] == {}
    assert view["to_move"] == 0
    assert view["phase"] == "pyramids"
    mediums = [cell for size, cell in placements(GAME.legal_moves(state, 0)) if size == 2]
    assert len(mediums) == free


def test_unknown_and_bad_options_are_refused() -> None:
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({"colour": "red"}, 2)
    assert "colour" in caught.value.errors
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({"parks": "everywhere"}, 2)
    assert "parks" in caught.value.errors
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({}, 5)
    assert "_players" in caught.value.errors


# -- parks options ---------------------------------------------------------------


def test_random_parks_are_drawn_from_the_seed() -> None:
    def parks(seed: str, players: int = 2, three_house: bool = False) -> list[str]:
        view = GAME.view(started(players, seed, parks="random", three_house=three_house), None)
        assert view["phase"] == "pyramids"
        parks: list[str] = view["parks"]
        return parks

    assert parks("one") == parks("one")
    drawn = [parks(f"seed {n}") for n in range(8)]
    assert len({tuple(p) for p in drawn}) > 1
    for cells in drawn:
        assert len(set(cells)) == 6
        assert all(cell[0] in "abcdef" and 1 <= int(cell[1:]) <= 6 for cell in cells)
    assert len(parks("x", 3)) == 4 and len(parks("x", 3, True)) == 9
    assert parks("x", 4, True) == []


def test_players_place_the_parks_in_turn_order_before_the_first_pyramid() -> None:
    state = started(2, parks="players")
    view = GAME.view(state, None)
    assert (view["phase"], view["parks_to_place"], view["parks"]) == ("parks", 6, [])
    assert refused(state, 0, "2b2").startswith("the parks are placed first")
    refused(state, 1, "c3", "not_your_turn")
    assert {type(move) for move in GAME.legal_moves(state, 0)} == {Park}
    assert len(GAME.legal_moves(state, 0)) == 36
    seats = []
    for cell in ["c3", "d4", "a1", "b5", "e2", "f6"]:
        (seat,) = GAME.actors(state)
        seats.append(seat)
        if cell == "d4":
            assert refused(state, seat, "c3") == "c3 is a park"
            assert "not on the board" in refused(state, seat, "g1")
        state = GAME.play(state, seat, GAME.parse(cell))
    assert seats == [0, 1, 0, 1, 0, 1]
    view = GAME.view(state, None)
    assert view["phase"] == "pyramids" and view["to_move"] == 0
    assert sorted(view["parks"]) == ["a1", "b5", "c3", "d4", "e2", "f6"]
    assert "parks are all placed" in refused(state, 0, "b2")
    assert "c3 is a park" in refused(state, 0, "2c3")
    state = play(state, "2b2")
    assert GAME.view(state, None)["pieces"] == {"b2": {"seat": 0, "size": 2}}


def test_random_move_places_parks_then_pyramids() -> None:
    state = started(4, parks="players")
    rng = Rng("parks")
    kinds = []
    while GAME.actors(state):
        (seat,) = GAME.actors(state)
        move = GAME.random_move(state, seat, rng)
        kinds.append(type(move))
        state = GAME.play(state, seat, move)
    assert kinds[:4] == [Park] * 4
    assert set(kinds[4:]) == {Place}
    assert len(GAME.view(state, None)["parks"]) == 4


@pytest.mark.parametrize(
    ("players", "three_house", "parks"),
    [(3, False, 4), (2, True, 7)],
)
def test_players_parks_refused_where_they_do_not_divide_evenly(
    players: int, three_house: bool, parks: int
) -> None:
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({"parks": "players", "three_house": three_house}, players)
    (message,) = caught.value.errors["parks"]
    assert f"{parks} parks cannot be shared evenly among {players} players" in message


@pytest.mark.parametrize(
    ("players", "three_house", "each"), [(2, False, 3), (4, False, 1), (3, True, 3)]
)
def test_players_parks_accepted_where_they_divide_evenly(
    players: int, three_house: bool, each: int
) -> None:
    state = started(players, parks="players", three_house=three_house)
    assert GAME.view(state, None)["parks_to_place"] == each * players


def test_players_parks_with_no_parks_at_all_start_with_the_pyramids() -> None:
    # The ruling: 0 parks divide evenly, so the option stands and does nothing.
    state = started(4, parks="players", three_house=True)
    view = GAME.view(state, None)
    assert (view["phase"], view["parks"], view["parks_to_place"]) == ("pyramids", [], 0)
    assert {type(move) for move in GAME.legal_moves(state, 0)} == {Place}


def test_cells_parks() -> None:
    cells = ["b2", "C5", " e3 ", "a6", "f1", "d4"]
    view = GAME.view(started(2, parks="cells", cells=cells), None)
    assert sorted(view["parks"]) == ["a6", "b2", "c5", "d4", "e3", "f1"]
    assert view["phase"] == "pyramids"
    assert GAME.view(started(4, parks="cells", cells=[], three_house=True), None)["parks"] == []


@pytest.mark.parametrize(
    ("players", "options", "expected"),
    [
        (2, {"cells": ["a1"] * 6}, "a1 is given twice"),
        (2, {"cells": ["a1", "A1", "b1", "c1", "d1", "e1"]}, "a1 is given twice"),
        (2, {"cells": ["a1", "b1", "c1", "d1", "e1"]}, "need exactly 6 park cells, not 5"),
        (3, {"cells": ["a1", "b1", "c1", "d1", "e1"]}, "need exactly 4 park cells, not 5"),
        (2, {"cells": ["a1", "b1", "c1", "d1", "e1", "g1"]}, "g1 is not on the 6x6 board"),
        (2, {"cells": ["a1", "b1", "c1", "d1", "e1", "a7"]}, "a7 is not on the 6x6 board"),
        (2, {"cells": ["a1", "b1", "c1", "d1", "e1", "park"]}, "'park' is not a cell"),
        (2, {"cells": []}, "need exactly 6 park cells, not 0"),
        (4, {"cells": ["a1"], "three_house": True}, "need exactly 0 park cells, not 1"),
    ],
)
def test_cells_parks_errors(players: int, options: dict[str, Any], expected: str) -> None:
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({"parks": "cells", **options}, players)
    assert any(expected in message for message in caught.value.errors["cells"])


def test_cells_without_parks_cells_is_refused() -> None:
    with pytest.raises(BadOptions) as caught:
        GAME.load_options({"cells": ["a1"] * 6}, 2)
    assert caught.value.errors["cells"] == ["cells is only used with parks=cells, not standard"]


# -- scoring examples --------------------------------------------------------------

C4_NEAR = ["b3", "d5", "b5", "d3", "c5", "b4", "d4", "c3"]


@pytest.mark.parametrize(
    ("smalls", "worth"),
    # The rules: the first small near a large is free, each further one costs
    # 1, and a large never costs more than its own 3 points.
    [(0, 3), (1, 3), (2, 2), (3, 1), (4, 0), (5, 0), (6, 0), (7, 0), (8, 0)],
)
def test_a_large_loses_a_point_for_each_small_near_it_after_the_first(
    smalls: int, worth: int
) -> None:
    layout = "R3c4 " + " ".join(f"B1{cell}" for cell in C4_NEAR[:smalls])
    state = position(layout, parks=(), each=8)
    # Red's only group costs 1; the rest of Red's score is the large's worth.
    assert scores_of(state)[0] == worth - 1


def test_smalls_of_any_colour_count_and_only_smalls_near() -> None:
    # Red's own small c5 counts beside Blue's b3: 2 smalls, 1 point off.
    assert scores_of(position("R3c4 R1c5 B1b3", parks=()))[0] == 3 + 1 - 1 - 1
    # Mediums never count, nor smalls two cells away.
    assert scores_of(position("R3c4 B2b3 B2d5 B2b5 B1a2 B1e4", parks=()))[0] == 3 - 1


def test_a_small_near_two_larges_counts_for_both() -> None:
    state = position("R3b2 R3d2 B1c3 B1a1 B1e1", parks=())
    assert scores_of(state) == [6 - 2 - 1 - 1, 3 - 3]


def test_groups_are_linked_next_to_not_diagonally() -> None:
    assert scores_of(position("R2b2 R2c3", parks=())) == [4 - 2, 0]
    assert scores_of(position("R2b2 R2b3 R2c3", parks=())) == [6 - 1, 0]
    # A piece of another colour between splits a group.
    assert scores_of(position("R2b2 B2c2 R2d2", parks=())) == [4 - 2, 2 - 1]


def test_groups_around_a_hole_count_once() -> None:
    ring = "R2b2 R2c2 R2d2 R2b3 R2d3 R2b4 R2c4 R2d4"
    assert scores_of(position(ring, parks=(), each=8)) == [16 - 1, 0]
    # Filled, it is still one group.
    assert scores_of(position(ring + " R1c3", parks=(), each=8)) == [17 - 1, 0]
    # A group inside a wider ring is one of its own.
    wide = "R2b2 R2c2 R2d2 R2e2 R2f2 R2b3 R2f3 R2b4 R2f4 R2b5 R2f5 R2b6 R2c6 R2d6 R2e6 R2f6"
    assert scores_of(position(wide + " R1d4", parks=(), each=20)) == [33 - 2, 0]
    # Cells meeting by a corner only: the ring is open, the hole reaches the edge.
    assert scores_of(position("R2b2 R2c3 R2b4 R2a3", parks=(), each=8)) == [8 - 4, 0]


@settings(max_examples=300, deadline=None)
@given(side=st.sampled_from([5, 6, 7, 8]), taken=st.lists(st.booleans(), min_size=64, max_size=64))
def test_groups_count_like_the_reference(side: int, taken: list[bool]) -> None:
    """Groups, holes in them included, on boards of every side."""
    chosen = [cell for cell, chosen in zip(all_cells(side), taken, strict=False) if chosen]
    layout = " ".join(f"R2{cell}" for cell in chosen)
    state = position(layout, side=side, parks=(), each=64)
    assert scores_of(state)[0] == 2 * len(chosen) - len(reference_groups(set(chosen)))


# The full-game example of the rules, as a real game on the standard 2-player
# board (## are parks):
#
#   6  ##  RM  RS  RS  RS  ##
#   5  BM  BL  BM  BS  BL  BS
#   4  RL  RM  RL  ##  BS  RL
#   3  BS  RM  ##  BM  BL  RM
#   2  BL  BM  BL  RM  RL  RS
#   1  ##  RL  RS  BM  BS  ##
#       a   b   c   d   e   f
#
# Red, 30 pips: groups {b6 c6 d6 e6}, {a4 b4 c4 b3}, {f4 f3 f2 e2 d2},
# {b1 c1}: 4. Larges: a4 has a3 near (1 small, free), c4 has d5 (free),
# f4 has f5 and e4 (2: -1), e2 has f2 and e1 (2: -1), b1 has c1 (free).
# 30 - 4 - 1 - 1 = 24.
# Blue, 30 pips: groups {a5 b5 c5 d5 e5 f5 e4 e3 d3}, {a3 a2 b2 c2}, {d1 e1}:
# 3. Larges: e5 has d6 e6 d5 f5 e4 near (5 smalls: -3), e3 has e4 and f2
# (2: -1), b5 has c6, a2 has a3, c2 has c1 (free each). 30 - 3 - 3 - 1 = 23.
# Each player places larges, then mediums, then smalls: every small is near
# a large of the other colour, and no two larges of one colour are near.
ROUNDS = [  # (red, blue)
    ("3a4", "3b5"),
    ("3c4", "3e5"),
    ("3f4", "3e3"),
    ("3e2", "3a2"),
    ("3b1", "3c2"),
    ("2b6", "2a5"),
    ("2b4", "2c5"),
    ("2b3", "2d3"),
    ("2f3", "2b2"),
    ("2d2", "2d1"),
    ("1c6", "1d5"),
    ("1d6", "1f5"),
    ("1e6", "1e4"),
    ("1f2", "1a3"),
    ("1c1", "1e1"),
]


def test_full_game_example_red_24_blue_23() -> None:
    state = started(2)
    for red, blue in ROUNDS:
        assert GAME.actors(state) == {0}
        state = GAME.play(state, 0, GAME.parse(red))
        assert GAME.actors(state) == {1}
        state = GAME.play(state, 1, GAME.parse(blue))
    assert GAME.actors(state) == frozenset()
    assert GAME.result(state) == Result((24, 23), (0,))
    view = GAME.view(state, None)
    assert view["stash"] == [[0, 0, 0], [0, 0, 0]]
    assert len(view["pieces"]) == 30
    assert view["scores"] == [24, 23] == reference_scores(view)


def test_the_breakdown_of_the_full_game_example_counts_as_the_rules_do() -> None:
    start = state = started(2)
    played = []
    for red, blue in ROUNDS:
        for seat, text in ((0, red), (1, blue)):
            state = GAME.play(state, seat, GAME.parse(text))
            played.append(Played(seat, GAME.parse(text), state))
    red, blue = GAME.breakdown(start, played)
    pips = [
        ScoreLine("5 smalls at 1 point", 5),
        ScoreLine("5 mediums at 2 points", 10),
        ScoreLine("5 larges at 3 points", 15),
    ]
    # Red: 30 - 4 groups - 1 (e2) - 1 (f4) = 24.
    assert red == (
        *pips,
        ScoreLine("4 groups, a point off each", -4),
        ScoreLine("large on e2: 2 smalls near", -1),
        ScoreLine("large on f4: 2 smalls near", -1),
    )
    # Blue: 30 - 3 groups - 1 (e3) - 3 (e5, five smalls near) = 23.
    assert blue == (
        *pips,
        ScoreLine("3 groups, a point off each", -3),
        ScoreLine("large on e3: 2 smalls near", -1),
        ScoreLine("large on e5: 5 smalls near", -3),
    )


@pytest.mark.parametrize(("smalls", "off"), [(0, 0), (1, 0), (2, 1), (4, 3), (5, 3)])
def test_the_breakdown_names_each_large_that_loses_points(smalls: int, off: int) -> None:
    layout = "R3c4 " + " ".join(f"B1{cell}" for cell in C4_NEAR[:smalls])
    red = seat_lines(position(layout, parks=(), each=8), 0)
    expected = [ScoreLine(f"large on c4: {smalls} smalls near", -off)] if off else []
    assert red == (
        ScoreLine("1 large at 3 points", 3),
        ScoreLine("1 group, a point off", -1),
        *expected,
    )


def test_the_breakdown_counts_a_private_park() -> None:
    red = seat_lines(position("R2a2 R2b1 R2b2", private_parks=True), 0)
    assert red == (
        ScoreLine("3 mediums at 2 points", 6),
        ScoreLine("1 group, a point off", -1),
        ScoreLine("park on a1 surrounded", 3),
    )
    # A seat with nothing on the board has nothing to break down.
    assert seat_lines(position("R2a2 R2b1 R2b2", private_parks=True), 1) == ()


def test_the_maximum_score_is_29() -> None:
    # 15 red pyramids in one group; each large has at most one small near it.
    #   6  ##  RL  ..  ..  ..  ##
    #   5  ..  RM  RS  RS  ..  ..
    #   4  RL  RS  ..  ##  ..  ..
    #   3  RM  RM  ##  ..  RS  ..
    #   2  RL  RS  RL  RM  RL  ..
    #   1  ##  ..  RM  ..  ..  ##
    layout = "R3b6 R2b5 R1c5 R1d5 R3a4 R1b4 R2a3 R2b3 R1e3 R3a2 R1b2 R3c2 R2d2 R3e2 R2c1"
    state = position(layout)
    assert scores_of(state) == [29, 0]
    assert reference_scores(GAME.view(state, None)) == [29, 0]


def test_ties_share_the_win() -> None:
    state = position("R2b2 B2e5 B2e4", stash=[[0, 1, 0], [0, 0, 0]])
    state = play(state, "2b3")
    assert GAME.result(state) == Result((3, 3), (0, 1))


# -- private parks -------------------------------------------------------------


def test_private_parks_corner_park() -> None:
    layout = "R2a2 R2b1 R2b2"
    assert scores_of(position(layout, private_parks=True)) == [6 - 1 + 3, 0]
    assert scores_of(position(layout)) == [6 - 1, 0]
    # One of the three cells another colour's: no bonus for anyone.
    assert scores_of(position("R2a2 R2b1 B2b2", private_parks=True)) == [4 - 2, 2 - 1]
    # One of them empty: no bonus.
    assert scores_of(position("R2a2 R2b2", private_parks=True)) == [4 - 1, 0]


def test_private_parks_inner_park_with_a_park_beside_it() -> None:
    # c3's near cells but the park d4: b2 c2 d2 b3 d3 b4 c4.
    ring = "R2b2 R1c2 R2d2 R2b3 R3d3 R1b4 R2c4"
    assert scores_of(position(ring, private_parks=True)) == [13 - 1 + 3, 0]
    # d4's near cells but c3 as well: two private parks.
    both = ring + " R2e3 R2c5 R2d5 R1e5 R2e4"
    assert scores_of(position(both, private_parks=True)) == [22 - 1 + 6, 0]


def test_private_parks_need_one_single_group() -> None:
    # c3's free near cells are two rows that touch only through a2 a3 a4.
    parks = ("b3", "c3", "d3")
    rows = "R2b2 R2c2 R2d2 R2b4 R2c4 R2d4"
    assert scores_of(position(rows, parks=parks, private_parks=True, each=10)) == [12 - 2, 0]
    # Joined by a2 a3 a4: c3 and b3 (whose free near cells are a2 b2 c2 a3
    # a4 b4 c4) become private; d3 is not (e2 e3 e4 are empty).
    joined = rows + " R2a2 R2a3 R2a4"
    assert scores_of(position(joined, parks=parks, private_parks=True, each=10)) == [
        18 - 1 + 6,
        0,
    ]


def test_private_park_with_only_parks_around_scores_for_nobody() -> None:
    # a1's near cells are all parks: no bonus, for Blue with no pyramid
    # either. Red owns all the free near cells of a2 (a3 b3), b1 (c1 c2) and
    # b2 (c1 c2 c3 a3 b3).
    parks = ("a1", "a2", "b1", "b2", "e5", "f6")
    layout = "R2a3 R2b3 R2c3 R2c2 R2c1"
    assert scores_of(position(layout, parks=parks, private_parks=True)) == [10 - 1 + 9, 0]


# -- placement rules ---------------------------------------------------------------


def test_a_large_may_not_go_near_another_large_of_your_colour() -> None:
    state = position("R3b2 B3e5", to_move=0)
    for cell in ["a3", "b3", "c2", "c1"]:
        reason = refused(state, 0, f"3{cell}")
        assert reason.startswith("a large may not be placed near another large of your colour")
    # Two cells away, or near another colour's large, is fine.
    play(state, "3d2")
    play(state, "3e4")
    state = position("R3b2 B3e5", to_move=1)
    play(state, "3c2")


def test_a_small_needs_a_small_or_large_of_another_colour_near_it() -> None:
    empty = position("", to_move=0)
    assert refused(empty, 0, "1b2").startswith("a small must be placed near a small or large")
    # A medium of another colour does not count, nor one two cells away.
    refused(position("B2c2 B3e4"), 0, "1b2")
    # Your own small or large never counts, built up in play or found in a position.
    refused(position("R3c2 R1a2"), 0, "1b2")
    refused(play(started(2), "3c2", "2f5"), 0, "1b2")
    play(position("B1c2"), "1b2")
    play(position("B3c2"), "1b2")
    # A resigned colour still counts as another colour.
    play(position3("G3c2", resigned=(2,)), "1b2")


def test_a_medium_may_go_on_any_empty_cell() -> None:
    state = position("R3b2 B3c3 R1b3 B1a3", parks=())
    for cell in ["a1", "a2", "c2", "f6", "b1"]:
        assert (2, cell) in placements(GAME.legal_moves(state, 0))
        play(state, f"2{cell}")


def test_parks_occupied_cells_and_the_board_edge_are_refused() -> None:
    state = position("R2b2 B2e5")
    assert refused(state, 0, "2c3") == "c3 is a park"
    assert refused(state, 0, "2a1") == "a1 is a park"
    assert refused(state, 0, "2b2") == "b2 is already built on"
    assert refused(state, 0, "2e5") == "e5 is already built on"
    assert refused(state, 0, "2g2") == "g2 is not on the board (a1 to f6)"
    assert refused(state, 0, "2b7") == "b7 is not on the board (a1 to f6)"


def test_an_empty_stash_size_is_refused() -> None:
    state = position("", stash=[[1, 0, 1], [5, 5, 5]])
    assert refused(state, 0, "2b2") == "you have no medium pyramid left"
    assert {size for size, _ in placements(GAME.legal_moves(state, 0))} == {3}


def test_turns_and_the_end_are_enforced() -> None:
    state = started(2)
    refused(state, 1, "2b2", "not_your_turn")
    state = play(state, "2b2")
    refused(state, 0, "2b3", "not_your_turn")
    assert GAME.legal_moves(state, 0) == []
    with pytest.raises(IllegalMove) as caught:
        GAME.random_move(state, 0, Rng("x"))
    assert caught.value.code == "not_your_turn"


def test_legal_moves_match_the_rules() -> None:
    state = position("R3b2 B3e5 B1d2 R2c5")
    for seat in (0, 1):
        state = GAME.state_from_json({**GAME.state_to_json(state), "to_move": seat})
        legal = placements(GAME.legal_moves(state, seat))
        assert legal == reference_legal(GAME.view(state, None), seat)
    # Red's smalls: only near Blue's small d2 and large e5.
    red = position("R3b2 B3e5 B1d2 R2c5")
    smalls = {cell for size, cell in placements(GAME.legal_moves(red, 0)) if size == 1}
    near_d2 = {"c1", "d1", "e1", "c2", "e2", "d3", "e3"}
    near_e5 = {"d6", "e6", "d5", "f5", "e4", "f4"}
    assert smalls == near_d2 | near_e5


# -- skipping and the end --------------------------------------------------------


def test_a_player_who_cannot_place_is_skipped_without_a_move() -> None:
    # Blue has only smalls left and no red small or large is on the board.
    state = position("", stash=[[5, 5, 5], [2, 0, 0]])
    assert GAME.actors(state) == {0}
    state = play(state, "2b2")
    assert GAME.actors(state) == {0}
    assert GAME.legal_moves(state, 1) == []
    refused(state, 1, "1a2", "not_your_turn")
    state = play(state, "3e5")
    assert GAME.actors(state) == {1}
    state = play(state, "1e4")
    assert GAME.actors(state) == {0}


def test_skipping_passes_the_turn_to_the_next_player_who_can_place() -> None:
    state = position3("", stash=[[5, 5, 5], [3, 0, 0], [5, 5, 5]])
    state = play(state, "2b2")
    assert GAME.actors(state) == {2}
    state = play(state, "3f6")
    assert GAME.actors(state) == {0}
    state = play(state, "2d4")
    assert GAME.actors(state) == {1}


def test_the_game_ends_when_nobody_can_place() -> None:
    # three_house, 2 players (## parks); b5 and e3 empty, Blue to place its
    # last medium, Red has one small left:
    #   5  ##  ..  ##  RS  ##
    #   4  RL  BM  RM  BL  RS
    #   3  BS  RM  ##  BS  ..
    #   2  BL  RL  BS  RM  BL
    #   1  ##  BM  ##  RL  ##
    parks = ("a1", "c1", "e1", "c3", "a5", "c5", "e5")
    layout = "R1d5 R3a4 B2b4 R2c4 B3d4 R1e4 B1a3 R2b3 B1d3 B3a2 R3b2 B1c2 R2d2 B3e2 B2b1 R3d1"
    state = position(layout, side=5, parks=parks, each=3, to_move=1)
    assert GAME.view(state, None)["stash"] == [[1, 0, 0], [0, 1, 0]]
    # On b5 Red's small would see only its own large a4 and mediums.
    after = play(state, "2e3")
    assert GAME.actors(after) == frozenset()
    assert GAME.result(after) is not None
    assert GAME.view(after, None)["stash"][0] == [1, 0, 0]
    refused(after, 0, "1b5", "game_over")
    # Filling b5 instead leaves e3, near Blue's large d4: Red places.
    assert GAME.actors(play(state, "2b5")) == {0}


# -- resign ------------------------------------------------------------------------


def test_resign_with_two_players_ends_the_game_for_the_other() -> None:
    state = position("R2b2 R2b3 R3e5 B1a2", to_move=1)
    assert scores_of(state)[0] > scores_of(state)[1]
    state = GAME.play(state, 1, Resign())
    assert GAME.actors(state) == frozenset()
    result = GAME.result(state)
    assert result is not None and result.winners == (0,)
    state = GAME.play(position("R2b2 R2b3 R3e5 B1a2", to_move=1), 0, Resign())
    result = GAME.result(state)
    assert result is not None and result.winners == (1,)


def test_a_resigned_seat_is_skipped_and_ranks_last() -> None:
    state = position3("")
    state = GAME.play(state, 1, Resign())  # not its turn: resigning is always allowed
    assert GAME.actors(state) == {0}
    with pytest.raises(IllegalMove):
        GAME.play(state, 1, Resign())
    state = play(state, "2b2")
    assert GAME.actors(state) == {2}
    state = GAME.play(state, 2, Resign())
    assert GAME.actors(state) == frozenset()
    assert GAME.result(state) == Result((1, 0, 0), (0,))
    # The resigned seat keeps its pyramids and its score, but cannot win.
    stash = [[0, 1, 0], [0, 0, 0], [0, 0, 0]]
    state = position3("B3b2 B3d2 B3f2 R2f6", resigned=(1,), stash=stash)
    state = play(state, "2e6")
    result = GAME.result(state)
    assert result is not None
    assert result.scores[1] > result.scores[0] and result.winners == (0,)
    assert GAME.view(state, None)["pieces"]["b2"] == {"seat": 1, "size": 3}


def test_resign_while_parks_are_placed() -> None:
    state = started(4, parks="players")
    state = play(state, "a1")
    state = GAME.play(state, 1, Resign())
    assert GAME.actors(state) == {2}
    state = play(state, "b1", "c1", "d1")
    view = GAME.view(state, None)
    assert (view["phase"], view["to_move"], len(view["parks"])) == ("pyramids", 0, 4)


# -- notation and JSON ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("3c4", Place(3, "c4")),
        ("2d4", Place(2, "d4")),
        ("1b2", Place(1, "b2")),
        ("L C4", Place(3, "c4")),
        ("large c4", Place(3, "c4")),
        ("LARGE C4", Place(3, "c4")),
        ("3 C4", Place(3, "c4")),
        ("medium d4", Place(2, "d4")),
        ("med d4", Place(2, "d4")),
        ("m d4", Place(2, "d4")),
        ("s b2", Place(1, "b2")),
        ("small b2", Place(1, "b2")),
        ("sb2", Place(1, "b2")),
        ("  1 b 2  ", Place(1, "b2")),
        ("2h8", Place(2, "h8")),
        ("c3", Park("c3")),
        (" C3 ", Park("c3")),
        ("h8", Park("h8")),
        ("resign", Resign()),
        ("Resign", Resign()),
    ],
)
def test_parse_is_forgiving(text: str, move: Any) -> None:
    assert GAME.parse(text) == move


@pytest.mark.parametrize(
    ("move", "text"), [(Place(3, "c4"), "3c4"), (Place(1, "b2"), "1b2"), (Park("c3"), "c3")]
)
def test_notate_is_canonical(move: Any, text: str) -> None:
    assert GAME.notate(move) == text
    assert GAME.parse(text) == move


@pytest.mark.parametrize("text", ["", "4c4", "3c", "large", "xl c4", "3c0", "3 c 4 5", "c", "33"])
def test_bad_notation_says_what_is_expected(text: str) -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.parse(text)
    assert caught.value.code == "bad_notation"
    assert "expected a size and a cell such as 3c4" in caught.value.reason


def test_there_is_no_pass() -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.parse("pass")
    assert caught.value.code == "bad_notation"
    assert caught.value.reason.startswith("there is no pass")


def test_moves_round_trip_through_json() -> None:
    moves: list[Place | Park | Resign] = [Place(1, "a1"), Place(3, "h8"), Park("c3"), Resign()]
    for move in moves:
        data = through_json(GAME.move_to_json(move))
        assert GAME.move_from_json(data) == move
    assert GAME.move_to_json(Place(3, "c4")) == {"type": "place", "size": 3, "cell": "c4"}
    assert GAME.move_to_json(Park("c3")) == {"type": "park", "cell": "c3"}


@pytest.mark.parametrize(
    "data",
    [
        {"type": "place", "size": 4, "cell": "c4"},
        {"type": "place", "size": True, "cell": "c4"},
        {"type": "place", "size": "3", "cell": "c4"},
        {"type": "place", "size": 3, "cell": "C4"},
        {"type": "place", "size": 3, "cell": 7},
        {"type": "place", "size": 3},
        {"type": "place", "size": 3, "cell": "c4", "extra": 1},
        {"type": "park", "cell": "c"},
        {"type": "park", "size": 2, "cell": "c3"},
        {"type": "resign", "cell": "c3"},
        {"type": "pass"},
        ["place", 3, "c4"],
    ],
)
def test_bad_move_json_is_refused(data: Any) -> None:
    with pytest.raises(IllegalMove) as caught:
        GAME.move_from_json(data)
    assert caught.value.code == "bad_move"
    assert caught.value.reason


def test_states_round_trip_through_json() -> None:
    state = started(3, parks="random", private_parks=True)
    assert GAME.state_from_json(through_json(GAME.state_to_json(state))) == state
    state = play(started(3, private_parks=True), "2b2", "3c3", "1b3")
    state = GAME.play(state, 2, Resign())
    assert GAME.state_from_json(through_json(GAME.state_to_json(state))) == state
    state = started(2, parks="players")
    state = play(state, "a1")
    assert GAME.state_from_json(through_json(GAME.state_to_json(state))) == state


def test_view_shows_everything_to_everyone() -> None:
    state = play(started(2), "3b2", "2e5")
    views = [GAME.view(state, viewer) for viewer in (None, 0, 1)]
    assert views[0] == views[1] == views[2]
    view = views[0]
    assert view["pieces"] == {"b2": {"seat": 0, "size": 3}, "e5": {"seat": 1, "size": 2}}
    assert view["stash"] == [[5, 5, 4], [5, 4, 5]]
    assert view["scores"] == [3 - 1, 2 - 1]
    assert view["to_move"] == 0
    assert through_json(view) == view


# -- playout properties --------------------------------------------------------------

OPTIONS = st.fixed_dictionaries(
    {
        "parks": st.sampled_from(["standard", "random", "players"]),
        "three_house": st.booleans(),
        "private_parks": st.booleans(),
    }
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.text(min_size=1, max_size=12),
    players=st.sampled_from([2, 3, 4]),
    options=OPTIONS,
    resign_at=st.none() | st.integers(0, 60),
)
def test_random_playouts_follow_the_rules_and_score_like_the_reference(
    seed: str, players: int, options: dict[str, Any], resign_at: int | None
) -> None:
    try:
        loaded = GAME.load_options(options, players)
    except BadOptions:
        assert options["parks"] == "players"
        loaded = GAME.load_options({**options, "parks": "standard"}, players)
    rng = Rng(seed)
    state = GAME.start(players, loaded, rng)
    for turn in range(200):
        actors = GAME.actors(state)
        if not actors:
            break
        (seat,) = actors
        view = GAME.view(state, None)
        if turn == resign_at:
            state = GAME.play(state, seat, Resign())
            continue
        move = GAME.random_move(state, seat, rng)
        legal = GAME.legal_moves(state, seat)
        assert move in legal
        if view["phase"] == "pyramids":
            assert placements(legal) == reference_legal(view, seat)
        state = GAME.play(state, seat, move)
        assert GAME.parse(GAME.notate(move)) == move
        assert GAME.state_from_json(through_json(GAME.state_to_json(state))) == state
        after = GAME.view(state, None)
        if isinstance(move, Place):
            # The turn passes to the next seat that can place; None: the end.
            assert after["to_move"] == reference_next(after, seat)
    else:
        pytest.fail("the playout did not end")
    result = GAME.result(state)
    assert result is not None
    view = GAME.view(state, None)
    assert view["scores"] == reference_scores(view) == list(result.scores)
    if len(view["resigned"]) < players - 1:
        # Over without a resignation ending it: nobody still playing can place.
        assert all(
            not reference_legal(view, seat)
            for seat in range(players)
            if seat not in view["resigned"]
        )
    assert [
        sum(line.points for line in seat_lines(state, seat)) for seat in range(players)
    ] == list(result.scores)
    if not options["private_parks"]:
        assert max(result.scores) <= 29
    for seat in range(players):
        larges = [c for c, p in view["pieces"].items() if p == {"seat": seat, "size": 3}]
        assert not any(is_near(a, b) for a in larges for b in larges)


def test_the_breakdown_and_the_building_are_said_in_the_page_language() -> None:
    with speaking("fr"):
        red = seat_lines(position("R2a2 R2b1 R2b2", private_parks=True), 0)
        layout = "R3c4 " + " ".join(f"B1{cell}" for cell in C4_NEAR[:2])
        large = seat_lines(position(layout, parks=(), each=8), 0)
    assert [line.label for line in red] == [
        "3 moyennes à 2 points",
        "1 groupe, un point de moins",
        "parc en a1 entouré",
    ]
    assert [line.label for line in large] == [
        "1 grande à 3 points",
        "1 groupe, un point de moins",
        "grande en c4 : 2 petites voisines",
    ]
    state = started()
    with speaking("fr"):
        first = GAME.build(state, 0, ())
    english = GAME.build(state, 0, ())
    assert first.prompt in ("Choisissez une case pour un parc", "Choisissez une case")
    assert [c.step for c in first.choices] == [c.step for c in english.choices]
    assert all(" en " in c.label for c in first.choices)
    assert all(" on " in c.label for c in english.choices)
