"""The board marks what the last move did, from the same viewer's view a move earlier.

Every mark is an element with `class="last"` and `data-last` (`added`,
`moved`, `removed`, `changed`) and `data-` attributes naming what it marks.
Per game, a known move must mark exactly what it changed and took away;
without a view before (move 0) nothing is marked; and since both views are
the viewer's own, a seat and a spectator see the same marks (only public
things are ever marked), checked along whole random games.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from referee import games, render
from referee.engine import JSON
from referee.games import AnyGame
from referee.games.maniki import Pass, shortest_solution
from referee.playout import steps
from referee.replay import new_state
from referee.rng import Rng

Mark = tuple[tuple[str, str], ...]


def marks(game: AnyGame, after: Any, before: Any | None, seat: int | None = None) -> set[Mark]:
    """The marks of `after`'s picture: each as its sorted `data-` attributes."""
    previous = None if before is None else game.view(before, seat)
    picture = render.render_svg(game.name, game.view(after, seat), None, previous)
    found = set()
    for element in ET.fromstring(picture).iter():
        if "last" in element.get("class", "").split():
            found.add(
                tuple(sorted((k, v) for k, v in element.attrib.items() if k.startswith("data-")))
            )
    return found


def start(name: str, players: int, options: JSON | None = None) -> tuple[AnyGame, Any]:
    game = games.get(name)
    return game, new_state(game, "5eed", players, game.load_options(options or {}, players))


def mark(**data: str | int) -> Mark:
    return tuple(sorted((f"data-{k.replace('_', '-')}", str(v)) for k, v in data.items()))


def test_nothing_is_marked_at_the_start_or_when_nothing_changed() -> None:
    for game in games.all_games():
        players = game.players[0]
        state = new_state(game, "5eed", players, game.load_options({}, players))
        assert marks(game, state, None) == set()
        assert marks(game, state, state) == set()
        assert 'class="last"' not in render.render_svg(game.name, game.view(state, None))


def test_subdivision_marks_the_cell_just_filled() -> None:
    game, state = start("subdivision", 2)
    after = game.play(state, 0, game.parse("2c4"))
    assert marks(game, after, state) == {mark(last="added", cell="c4")}
    later = game.play(after, 1, game.parse("3e5"))
    assert marks(game, later, after) == {mark(last="added", cell="e5")}


def test_subdivision_marks_a_park_placed_by_a_player() -> None:
    game, state = start("subdivision", 2, {"parks": "players"})
    after = game.play(state, 0, game.parse("c3"))
    assert marks(game, after, state) == {mark(last="added", cell="c3")}


def test_mandala_marks_the_pawns_step_what_it_took_and_what_went_to_the_eye() -> None:
    game, state = start("mandala", 2)
    first = game.actors(state)
    (seat,) = first
    view = game.view(state, None)
    after = game.play(state, seat, game.parse("take 5"))
    kind = view["path"][5]
    assert marks(game, after, state) == {
        mark(last="moved", index=5, seat=seat),
        mark(last="removed", place="path", index=5, kind=kind),
        mark(last="added", place="collection", kind=kind, seat=seat),
    }
    # The other pawn passes index 5 too: what lies behind both pawns goes to the eye.
    other = 1 - seat
    later = game.play(after, other, game.parse("take 8"))
    eyed = {k for k in view["path"][:5]}
    expected = {
        mark(last="moved", index=8, seat=other),
        mark(last="removed", place="path", index=8, kind=view["path"][8]),
        mark(last="added", place="collection", kind=view["path"][8], seat=other),
        *(mark(last="removed", place="path", index=i, kind=view["path"][i]) for i in range(5)),
        *(mark(last="added", place="eye", kind=k) for k in eyed),
    }
    assert marks(game, later, after) == expected


def test_mandala_marks_where_a_pawn_came_from() -> None:
    game, state = start("mandala", 2)
    (seat,) = game.actors(state)
    state = game.play(state, seat, game.parse("take 3"))
    state = game.play(state, 1 - seat, game.parse("take 1"))
    after = game.play(state, seat, game.parse("take 9"))
    assert mark(last="removed", place="pawn", index=3, seat=seat) in marks(game, after, state)


def _ice_palace_moves(game: AnyGame, start: Any) -> Iterator[tuple[Any, Any]]:
    """Each state of a random Ice Palace game from `start`, with the one before it."""
    played = [step.state for step in steps(game, 3, game.load_options({}, 3), "5eed", Rng("c"))]
    yield from zip([start, *played], played, strict=False)


def test_ice_palace_marks_the_stack_placed_on_and_the_round_going_to_the_palace() -> None:
    game, state = start("ice_palace", 3)
    built = 0
    for before, after in _ice_palace_moves(game, state):
        was, now = game.view(before, None), game.view(after, None)
        found = marks(game, after, before)
        grown_yard = {c for c, s in now["yard"].items() if was["yard"].get(c) != s}
        grown_palace = {c for c, s in now["palace"].items() if was["palace"].get(c) != s}
        gone = set(was["yard"]) - set(now["yard"])
        expected = {mark(last="added", place="yard", cell=c) for c in grown_yard}
        expected |= {mark(last="added", place="palace", cell=c) for c in grown_palace}
        expected |= {mark(last="removed", place="yard", cell=c) for c in gone}
        assert found == expected
        if gone and len(gone) == len(was["yard"]):
            built += 1
    assert built >= 2, "the random game builds the palace"


def test_ice_palace_lead_marks_the_centre() -> None:
    game, state = start("ice_palace", 3)
    (leader,) = game.actors(state)
    piece = game.view(state, leader)["hands"][leader][0]
    after = game.play(state, leader, game.parse(f"{piece}@0,0"))
    assert marks(game, after, state, leader) == {mark(last="added", place="yard", cell="0,0")}


def test_mandala_stones_marks_the_artist_the_stones_picked_and_the_new_tower() -> None:
    game, state = start("mandala_stones", 2)
    (seat,) = game.actors(state)
    move = game.legal_moves(state, seat)[0]
    after = game.play(state, seat, move)
    was, now = game.view(state, None), game.view(after, None)
    (artist,) = [a for a in was["artists"] if was["artists"][a] != now["artists"][a]]
    (space,) = [k for k, tower in enumerate(now["boards"][seat]) if tower != was["boards"][seat][k]]
    taken = [
        mark(
            last="removed", place="stack", stack=k, colour=s[-1]["colour"], pattern=s[-1]["pattern"]
        )
        for k, s in enumerate(was["stacks"])
        if len(now["stacks"][k]) < len(s)
    ]
    assert taken, game.notate(move)
    assert marks(game, after, state) == {
        mark(last="moved", circle=now["artists"][artist]),
        mark(last="removed", artist=artist, circle=was["artists"][artist]),
        mark(last="added", place="tower", seat=seat, space=space),
        *taken,
    }


def test_mandala_stones_marks_a_scoring_the_stones_off_the_towers_and_onto_the_mandala() -> None:
    game = games.get("mandala_stones")
    options = game.load_options({}, 2)
    for step, before in _scorings(game, options):
        after = step.state
        was, now = game.view(before, None), game.view(after, None)
        towers = was["boards"][step.seat]
        expected = {
            mark(last="removed", place="tower", seat=step.seat, colour=t[-1][0], pattern=t[-1][1])
            for k, t in enumerate(towers)
            if len(now["boards"][step.seat][k]) < len(t)
        }
        placed = range(len(was["mandala"]), len(now["mandala"]))
        expected |= {mark(last="added", place="mandala", space=k) for k in placed}
        assert marks(game, after, before) == expected
        return
    pytest.fail("no scoring in the random game")


def _scorings(game: AnyGame, options: JSON) -> Iterator[tuple[Any, Any]]:
    before = new_state(game, "5eed", 2, options)
    for step in steps(game, 2, options, "5eed", Rng("c")):
        if game.notate(step.move).startswith("score"):
            yield step, before
        before = step.state


def test_maniki_marks_the_round_won_the_animals_moved_and_the_winner() -> None:
    game, state = start("maniki", 3)
    view = game.view(state, None)
    orders = shortest_solution(view["position"], view["target"])
    after = game.play(state, 2, game.parse(" ".join(orders)))
    found = marks(game, after, state)
    assert mark(last="changed", position=view["position"]) in found
    assert mark(last="changed", seat=2) in found
    assert mark(last="changed", round=view["target"]) in found
    moved = {dict(m)["data-animal"] for m in found if dict(m)["data-last"] == "moved"}
    now, was = game.view(after, None)["position"], view["position"]
    assert moved == {a for a in "BEL" if _place(now, a) != _place(was, a)} and moved
    # A pass only marks the seat that passed: the animals stay.
    passed = game.play(after, 0, game.parse("pass"))
    assert marks(game, passed, after) == {mark(last="changed", seat=0)}


def test_a_maniki_round_decided_marks_what_it_decided_not_the_seats_back_in() -> None:
    game, state = start("maniki", 3)
    view = game.view(state, None)
    missed = game.play(state, 0, game.parse("pass"))
    orders = shortest_solution(view["position"], view["target"])
    won = game.play(missed, 1, game.parse(" ".join(orders)))
    after = game.view(won, None)
    found = marks(game, won, missed)
    # Seat 0 is in again for the new card: that is no news of the round.
    assert {dict(m).get("data-seat") for m in found} == {None, "1"}
    assert mark(last="changed", target=after["target"]) in found
    assert mark(last="changed", round=view["target"]) in found
    # A card nobody wins: the new card and the last card's line, the animals stay.
    passed = game.play(game.play(game.play(won, 0, Pass()), 1, Pass()), 2, Pass())
    before = game.play(game.play(won, 0, Pass()), 1, Pass())
    assert marks(game, passed, before) == {
        mark(last="changed", target=game.view(passed, None)["target"]),
        mark(last="changed", round=after["target"]),
    }


def _place(arrangement: str, animal: str) -> tuple[int, int]:
    for stool, stack in enumerate(arrangement.split("/")):
        if animal in stack:
            return stool, stack.index(animal)
    raise AssertionError(animal)


def test_a_sealed_maniki_answer_is_marked_without_its_orders() -> None:
    game, state = start("maniki", 3, {"mode": "sealed"})
    after = game.play(state, 1, game.parse("KI LO"))
    for viewer in (None, 0, 1, 2):
        assert marks(game, after, state, viewer) == {mark(last="changed", seat=1)}
        before = game.view(state, viewer)
        picture = render.render_svg("maniki", game.view(after, viewer), None, before)
        assert "KI LO" not in picture


@pytest.mark.parametrize("game", games.all_games(), ids=lambda game: game.name)
def test_every_viewer_sees_the_same_marks_along_a_whole_game(game: AnyGame) -> None:
    """Marks fall only on public things: a hand, an objective or a sealed answer
    changed by a move would show up as a mark one viewer has and another has not."""
    players = game.players[-1] if game.name != "subdivision" else 3
    options = game.load_options({}, players)
    before = new_state(game, "a11ce", players, options)
    seen = 0
    for step in steps(game, players, options, "a11ce", Rng("a11cec")):
        watched = marks(game, step.state, before)
        seen += bool(watched)
        for seat in range(players):
            assert marks(game, step.state, before, seat) == watched, game.notate(step.move)
        before = step.state
    assert seen, "moves are marked"
