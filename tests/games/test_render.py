"""The board pictures and text boards of every registered game.

States come from random playouts (a few options per game, a resignation
too); each is drawn from the view of every seat and of a spectator. The
pictures must be well-formed SVG without scripts or outside references,
draw exactly the pieces their view holds (the drawings mark them with a
class and `data-` attributes), and show nothing hidden from their viewer;
text boards must fit 72 columns and say what the board holds; PNGs must
decode. A registered game without a picture fails here.
"""

from __future__ import annotations

import struct
import unicodedata
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import resvg_py

from referee import games, render
from referee.engine import JSON, Resign
from referee.games import AnyGame
from referee.playout import steps
from referee.replay import new_state
from referee.rng import Rng

SVG = "{http://www.w3.org/2000/svg}"
NAMES = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
HOSTILE = [
    '<b>&amp;"Ann"</b>',
    "Bob' onload='x",
    "Cy\x00\x1b]",
    "]]><x/>",
    "王小明" * 12,
    "Flo\u202egnp.exe",
]

# Options played besides the defaults, where a game's picture changes with them.
VARIANTS: dict[str, list[JSON]] = {
    "maniki": [{"mode": "sealed"}, {"expert": True}],
    "subdivision": [{"parks": "players"}, {"three_house": True, "private_parks": True}],
    "mandala_stones": [{"objectives": "off"}],
}


def sample_states(game: AnyGame, players: int, options: JSON, seed: str) -> list[Any]:
    """The start, four states along a random playout, its end, and a resignation."""
    played = [step.state for step in steps(game, players, options, seed, Rng(seed + "c"))]
    picks = [played[len(played) * k // 5] for k in range(1, 5)]
    states = [new_state(game, seed, players, options), *picks, played[-1]]
    middle = played[len(played) // 2]
    if game.result(middle) is None:
        states.append(game.play(middle, 0, Resign()))
    return states


def cases() -> Iterator[tuple[AnyGame, int, JSON]]:
    for game in games.all_games():
        for players in sorted({game.players[0], game.players[-1]}):
            for options in [{}, *VARIANTS.get(game.name, [])]:
                if players == 4 and options.get("parks") == "players":
                    continue  # four players' parks do not divide: the option is refused
                yield game, players, game.load_options(options, players)


CASES = list(cases())
IDS = [f"{game.name}-{players}p-{i}" for i, (game, players, _) in enumerate(CASES)]


def views(game: AnyGame, players: int, options: JSON) -> Iterator[tuple[int | None, JSON]]:
    for seed in ("5eed", "a11ce"):
        for state in sample_states(game, players, options, seed):
            for seat in [None, *range(players)]:
                yield seat, game.view(state, seat)


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def counted(root: ET.Element) -> Counter[str]:
    """Drawn things by class, and by class and `data-place` (`pyramid/board`).

    An element standing for several pieces says how many in `data-count`.
    """
    found: Counter[str] = Counter()
    for element in root.iter():
        weight = int(element.get("data-count", "1"))
        place = element.get("data-place")
        for name in element.get("class", "").split():
            found[name] += weight
            if place:
                found[f"{name}/{place}"] += weight
    return found


# -- what each game's picture must draw, counted from the view alone ---------


def subdivision_pieces(view: JSON) -> dict[str, int]:
    return {
        "pyramid/board": len(view["pieces"]),
        "pyramid/stash": sum(sum(stash) for stash in view["stash"]),
        "park": len(view["parks"]),
    }


def mandala_pieces(view: JSON) -> dict[str, int]:
    return {
        "pyramid/path": sum(kind is not None for kind in view["path"]),
        "pyramid/eye": sum(view["eye"].values()),
        "pyramid/collection": sum(sum(c.values()) for c in view["collections"]),
        "pawn": len(view["pawns"]),
    }


def maniki_pieces(view: JSON) -> dict[str, int]:
    return {"animal": 3 + (3 if view["target"] else 0)}


def mandala_stones_pieces(view: JSON) -> dict[str, int]:
    return {
        "stone/stack": sum(len(stack) for stack in view["stacks"]),
        "stone/tower": sum(len(tower) for towers in view["boards"] for tower in towers),
        "stone/mandala": len(view["mandala"]),
        "artist": len(view["artists"]),
        "objective-card": sum(len(o) for o in view["objectives"] if isinstance(o, list)),
        "objective-back": sum(o for o in view["objectives"] if isinstance(o, int)),
    }


def ice_palace_pieces(view: JSON) -> dict[str, int]:
    return {
        "pyramid/yard": sum(len(stack) for stack in view["yard"].values()),
        "pyramid/palace": sum(len(stack) for stack in view["palace"].values()),
        "pyramid/hand": sum(len(hand) for hand in view["hands"] if isinstance(hand, list)),
        "hidden-hand": sum(isinstance(hand, dict) for hand in view["hands"]),
    }


PIECES: dict[str, Callable[[JSON], dict[str, int]]] = {
    "subdivision": subdivision_pieces,
    "mandala": mandala_pieces,
    "maniki": maniki_pieces,
    "mandala_stones": mandala_stones_pieces,
    "ice_palace": ice_palace_pieces,
}


# -- what each game's text board must say -------------------------------------


def grid_rows(text: str, labels: list[int], width: int) -> dict[int, list[str]]:
    """The cells of the grid's rows, by the number each row starts with.

    The grid comes first: later lines starting with a seat number are not rows.
    """
    rows: dict[int, list[str]] = {}
    for line in text.splitlines():
        words = line.split()
        if words and words[0].isdigit() and int(words[0]) in labels and int(words[0]) not in rows:
            rows[int(words[0])] = words[1 : 1 + width]
    return rows


def subdivision_says(view: JSON, text: str) -> None:
    size = view["size"]
    rows = grid_rows(text, list(range(1, size + 1)), size)
    for rank in range(1, size + 1):
        for file in range(size):
            cell = f"{chr(ord('a') + file)}{rank}"
            piece = view["pieces"].get(cell)
            expected = "##" if cell in view["parks"] else "."
            if piece:
                expected = "SML"[piece["size"] - 1] + str(piece["seat"])
            assert rows[rank][file] == expected, cell
    for seat, score in enumerate(view["scores"]):
        assert f"score {score:>3}" in seat_line(text, seat)


def mandala_says(view: JSON, text: str) -> None:
    rows = grid_rows(text, list(range(0, 75, 10)), 10)
    pawn_at = {index: seat for seat, index in enumerate(view["pawns"]) if index >= 0}
    for index, kind in enumerate(view["path"]):
        shown = rows[index - index % 10][index % 10]
        if index in pawn_at:
            assert shown == f"@{pawn_at[index] + 1}"  # players counted from 1
        else:
            assert shown == (kind or "..")
    assert "Scored: " + (" ".join(view["scored"]) or "none yet") in text
    for seat, score in enumerate(view["scores"]):
        assert f"score {score:>3}" in seat_line(text, seat)


def seat_line(text: str, seat: int) -> str:
    """The line of the text board that starts with the player's number (from 1) and name."""
    (line,) = [
        line
        for line in text.splitlines()
        if line.lstrip(" *").startswith(f"{seat + 1} {NAMES[seat]} ")
    ]
    return line


def maniki_says(view: JSON, text: str) -> None:
    assert f"Now: {view['position']}" in text
    if view["target"]:
        assert f"Target: {view['target']}" in text
    for seat, won in enumerate(view["cards_won"]):
        assert f"cards {won:>2}" in seat_line(text, seat)
    assert ("NI " in text) != view["expert"]


def mandala_stones_says(view: JSON, text: str) -> None:
    assert " ".join(view["mandala"][:3]) in text
    for towers in view["boards"]:
        line = "  ".join(
            f"{space + 1}:{''.join(tower) or '-'}" for space, tower in enumerate(towers)
        )
        assert line in text
    for objectives in view["objectives"]:
        if isinstance(objectives, list):
            assert "objectives: " + (", ".join(map(str, objectives)) or "none") in text
        else:
            assert (
                f"objectives: {objectives} hidden" if objectives else "objectives: none"
            ) in text


def ice_palace_says(view: JSON, text: str) -> None:
    for grid in (view["yard"], view["palace"]):
        for stack in grid.values():
            assert "".join(stack) in text
    for hand in view["hands"]:
        if isinstance(hand, list):
            assert "hand: " + " ".join(hand) in text
        else:
            assert f"S{hand['S']} M{hand['M']} L{hand['L']} (hidden)" in text


SAYS: dict[str, Callable[[JSON, str], None]] = {
    "subdivision": subdivision_says,
    "mandala": mandala_says,
    "maniki": maniki_says,
    "mandala_stones": mandala_stones_says,
    "ice_palace": ice_palace_says,
}


# -- the tests ------------------------------------------------------------------


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_every_registered_game_has_a_picture_and_its_checks(game: AnyGame) -> None:
    assert game.name in render.games()
    assert game.name in PIECES and game.name in SAYS


def test_an_unknown_game_has_no_picture() -> None:
    with pytest.raises(KeyError, match="no picture for game 'chess'"):
        render.render_svg("chess", {})


@pytest.mark.parametrize(("game", "players", "options"), CASES, ids=IDS)
def test_pictures_draw_exactly_what_the_view_holds(
    game: AnyGame, players: int, options: JSON
) -> None:
    for seat, view in views(game, players, options):
        svg = render.render_svg(game.name, view, NAMES[:players])
        root = parse(svg)
        assert root.get("viewBox", "").startswith("0 0 ")
        title = root.find(f"{SVG}title")
        assert title is not None and title.text and game.title.split()[0] in title.text
        for element in root.iter():
            assert element.tag not in (f"{SVG}script", f"{SVG}style", f"{SVG}image")
            assert not any(name.startswith("on") or "href" in name for name in element.attrib)
        assert "url(" not in svg and "@import" not in svg
        found = counted(root)
        for what, count in PIECES[game.name](view).items():
            assert found[what] == count, (what, seat)
        assert svg == render.render_svg(game.name, view, NAMES[:players])


@pytest.mark.parametrize(("game", "players", "options"), CASES, ids=IDS)
def test_text_boards_fit_72_columns_and_say_what_the_board_holds(
    game: AnyGame, players: int, options: JSON
) -> None:
    for _, view in views(game, players, options):
        text = render.render_text(game.name, view, NAMES[:players])
        assert text.endswith("\n")
        assert all(len(line) <= 72 for line in text.splitlines()), text
        for name in NAMES[:players]:
            assert name in text
        SAYS[game.name](view, text)


def columns(line: str) -> int:
    """Columns a line takes in a monospace font, East Asian wide characters taking 2,
    format characters (the isolates around a name) none."""
    return sum(
        0
        if unicodedata.category(c) == "Cf"
        else 2
        if unicodedata.east_asian_width(c) in "WF"
        else 1
        for c in line
    )


FSI, PDI = "\u2068", "\u2069"
# A Hebrew name ending in digits, and an Arabic one long enough to be clipped.
RIGHT_TO_LEFT = [
    "\u05d3\u05e0\u05d9 42",
    "\u0633\u0627\u0631\u0629 \u0639\u0628\u062f\u0627\u0644\u0644\u0647 "
    "\u0627\u0644\u0639\u0644\u064a \u0627\u0644\u062d\u0633\u0646",
]


def isolates_closed(line: str) -> bool:
    """Each isolate opened on the line is closed on it, after what it isolates."""
    depth = 0
    for char in line:
        depth += (char == FSI) - (char == PDI)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_a_right_to_left_name_is_isolated_and_moves_nothing_around_it(game: AnyGame) -> None:
    players = game.players[-1]
    names = [*RIGHT_TO_LEFT, *(f"P{n}" for n in range(2, players))][:players]
    state = new_state(game, "5eed", players, game.load_options({}, players))
    view = game.view(state, 0)
    text = render.render_text(game.name, view, names)
    root = parse(render.render_svg(game.name, view, names))
    lines = [
        *text.splitlines(),
        *("".join(element.itertext()) for element in root.iter() if element.text),
    ]
    shown = [line for line in lines if any("\u0590" <= c <= "\u06ff" for c in line)]
    assert shown, "no name shown"
    for line in shown:
        assert isolates_closed(line), repr(line)
        # Every right-to-left letter lies inside an isolate.
        depth = 0
        for char in line:
            depth += (char == FSI) - (char == PDI)
            assert depth > 0 or not "\u0590" <= char <= "\u06ff", repr(line)
    assert all(columns(line) <= 72 for line in text.splitlines()), text


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_names_are_escaped_and_fit(game: AnyGame) -> None:
    players = game.players[-1]
    options = game.load_options({}, players)
    state = new_state(game, "5eed", players, options)
    view = game.view(state, 0)
    root = parse(render.render_svg(game.name, view, HOSTILE[:players]))
    shown = " ".join("".join(element.itertext()) for element in root)
    # Whole, or cut to the width of its card: the markup is text either way (the parse
    # above and the tags below say no element came of it).
    assert '<b>&amp;"Ann' in shown
    assert "Cy ]" in shown  # control characters, which XML forbids, are dropped
    assert all(element.tag.startswith(SVG) for element in root.iter())
    assert not any(name.startswith("on") for element in root.iter() for name in element.attrib)
    text = render.render_text(game.name, view, HOSTILE[:players])
    assert "Cy ]" in text and "\x1b" not in text and "\u202e" not in text
    assert all(columns(line) <= 72 for line in text.splitlines()), text


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, after checking every chunk and inflating its pixels."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + data) == crc, kind
        chunks.append((kind, data))
        at += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    pixels = zlib.decompress(b"".join(data for kind, data in chunks if kind == b"IDAT"))
    assert len(pixels) == height * (1 + (width * channels * depth + 7) // 8)
    return width, height


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_pngs_decode_at_the_size_of_the_picture(game: AnyGame) -> None:
    players = game.players[-1]
    options = game.load_options({}, players)
    state = sample_states(game, players, options, "5eed")[2]
    view = game.view(state, 0)
    root = parse(render.render_svg(game.name, view, NAMES))
    expected = (round(float(root.get("width", 0))), round(float(root.get("height", 0))))
    assert png_size(render.render_png(game.name, view, NAMES)) == expected


def test_png_text_is_drawn_with_the_packaged_font_on_any_machine() -> None:
    game = games.get("subdivision")
    view = game.view(game.start(2, game.load_options({}, 2), Rng("font")), None)
    png = render.render_png(game.name, view, NAMES)
    # The same picture with no font at all: text would vanish, as on a machine
    # without the SVG's fonts if the PNG relied on them.
    fontless = bytes(
        resvg_py.svg_to_bytes(
            svg_string=render.render_svg(game.name, view, NAMES), skip_system_fonts=True
        )
    )
    assert png != fontless
    assert render.render_png(game.name, view, NAMES) == png


# -- hidden information -------------------------------------------------------


def ice_palace_view(seat: int | None) -> JSON:
    """An Ice Palace view built by hand, as the rules file lists its fields."""
    hands: list[Any] = [["Lr", "Sk", "Mw", "Sg", "Mb", "Lk"], ["Sy", "My", "Ly", "Sw", "Mo", "Lb"]]
    hands += [["Sg", "Mg", "Lg", "Sk", "Mk", "Lw"]]
    return {
        "colours": ["r", "y", "g"],
        "marker": 1,
        "phase": "yard",
        "hands": [h if s == seat else {"S": 2, "M": 2, "L": 2} for s, h in enumerate(hands)],
        "pool": {"S": 14, "M": 13, "L": 15},
        "yard": {"0,0": ["Sr", "Mw", "Ly"], "1,0": ["Mr"], "0,1": ["Sk", "Lg"]},
        "palace": {"0,0": ["Lr", "Mr", "Sy"], "1,0": ["Lg", "Sg"], "-3,2": ["Lb"]},
        "last_placer": 2,
        "passes": 1,
        "builder": None,
        "build_max": None,
        "out_of_game": 7,
    }


def test_ice_palace_hands_show_only_as_counts_to_others() -> None:
    for seat in (None, 0, 1):
        view = ice_palace_view(seat)
        root = parse(render.render_svg("ice_palace", view, NAMES[:3]))
        found = counted(root)
        for what, count in ice_palace_pieces(view).items():
            assert found[what] == count, what
        hands = [e for e in root.iter() if e.get("data-place") == "hand"]
        assert {e.get("data-seat") for e in hands} == (set() if seat is None else {str(seat)})
        text = render.render_text("ice_palace", view, NAMES[:3])
        assert text.count("S2 M2 L2 (hidden)") == 3 - (seat is not None)
        assert all(len(line) <= 72 for line in text.splitlines())
        ice_palace_says(view, text)


def test_ice_palace_points_are_each_stacks_height_to_its_tops_colour() -> None:
    text = render.render_text("ice_palace", ice_palace_view(None), NAMES[:3])
    # Red tops nothing; yellow tops the stack of 3 at 0,0; green the 2 at 1,0.
    for seat, points in enumerate((0, 3, 2)):
        assert f" {points:>3} pts" in seat_line(text, seat)


def test_a_wide_palace_is_listed_not_drawn_past_72_columns() -> None:
    view = ice_palace_view(None)
    view["palace"] = {f"{x},0": ["Lr"] for x in range(-12, 12)}
    text = render.render_text("ice_palace", view, NAMES[:3])
    assert all(len(line) <= 72 for line in text.splitlines())
    assert "  -12,0 Lr     -11,0 Lr     -10,0 Lr" in text
    found = counted(parse(render.render_svg("ice_palace", view, NAMES[:3])))
    assert found["pyramid/palace"] == 24


def test_mandala_stones_objectives_are_cards_only_for_their_holder() -> None:
    game = games.get("mandala_stones")
    options = game.load_options({}, 3)
    running = new_state(game, "5eed", 3, options)
    for seat in (None, 0, 2):
        found = counted(parse(render.render_svg(game.name, game.view(running, seat))))
        assert found["objective-card"] == (0 if seat is None else 2)
        assert found["objective-back"] == (6 if seat is None else 4)
    over = [s.state for s in steps(game, 3, options, "5eed", Rng("c"))][-1]
    found = counted(parse(render.render_svg(game.name, game.view(over, None))))
    assert (found["objective-card"], found["objective-back"]) == (6, 0)


def test_mandala_stones_fourth_colour_is_drawn_and_named_red() -> None:
    game = games.get("mandala_stones")
    view = game.view(new_state(game, "5eed", 2, game.load_options({}, 2)), None)
    root = parse(render.render_svg(game.name, view))
    colours = {stone.get("data-colour") for stone in root.iter() if stone.get("class") == "stone"}
    assert colours == {"Y", "B", "R", "V"}
    red_stones = [s for s in root.iter() if s.get("data-colour") == "R"]
    fills = {shape.get("fill") for stone in red_stones for shape in stone if shape.get("rx")}
    assert fills == {"#c4493a"}
    text = render.render_text(game.name, view)
    assert "R red" in text and "pink" not in text.lower()


def test_maniki_sealed_answers_show_who_answered_not_what() -> None:
    game = games.get("maniki")
    options = game.load_options({"mode": "sealed"}, 3)
    state = new_state(game, "5eed", 3, options)
    state = game.play(state, 1, game.parse("KI LO"))
    for seat in (None, 0, 1):
        view = game.view(state, seat)
        text = render.render_text(game.name, view, NAMES[:3])
        svg = render.render_svg(game.name, view, NAMES[:3])
        assert "answered (sealed)" in text and "answered (sealed)" in svg
        assert "KI LO" not in text and "KI LO" not in svg


def test_mandala_stones_building_draws_its_choices_as_targets_readable_on_a_phone() -> None:
    """Every choice is one target named by its label, large enough to tap, and
    every text reads at 11 px or more where the picture is shown 358 px wide."""
    game = games.get("mandala_stones")
    options = game.load_options({}, 3)
    walker = Rng("walk")
    for step in list(steps(game, 3, options, "5eed", Rng("c")))[::6]:
        state = step.state
        if game.result(state) is not None:
            continue
        (seat,) = game.actors(state)
        built = game.build(state, seat, ())
        while True:
            root = parse(
                render.render_svg(game.name, game.view(state, seat), NAMES[:3], None, built)
            )
            width = float(root.get("viewBox", "").split()[2])
            assert all(
                float(text.get("font-size", 0)) * 358 / width >= 11
                for text in root.iter(f"{SVG}text")
            )
            targets = [e for e in root.iter() if e.get("data-step")]
            assert {(e.get("data-step"), e.get("aria-label")) for e in targets} == {
                (choice.step, choice.label) for choice in built.choices
            }
            assert len(targets) == len(built.choices)
            for target in targets:
                ring = next(e for e in target.iter() if e.get("class") == "ring")
                side = 2 * float(ring.get("r", 0)) or min(
                    float(ring.get("width", 0)), float(ring.get("height", 0))
                )
                assert side >= 36, target.get("aria-label")
            if not built.choices:
                break
            chosen = built.choices[walker.below(len(built.choices))]
            built = game.build(state, seat, (*built.steps, chosen.step))


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_every_choice_of_a_move_being_built_is_exactly_one_target(game: AnyGame) -> None:
    """A click picks one choice: each is drawn as one target, never two (an Ice
    Palace builder's hand holding the pyramid the yard offers, say), and nothing
    else is a target."""
    players = game.players[0]
    options = game.load_options({}, players)
    walker = Rng("walk")
    for seed in ("5eed", "a11ce"):
        for index, step in enumerate(steps(game, players, options, seed, Rng(seed))):
            for seat in sorted(game.actors(step.state)):
                built = game.build(step.state, seat, ())
                view = game.view(step.state, seat)
                # Each position's first choices; a whole move built at every fifth.
                for _ in range(40 if index % 5 == 0 else 1):
                    root = parse(render.render_svg(game.name, view, NAMES[:players], None, built))
                    drawn = Counter(e.get("data-step") for e in root.iter() if e.get("data-step"))
                    assert drawn == Counter(choice.step for choice in built.choices), built.steps
                    if not built.choices:
                        break
                    chosen = built.choices[walker.below(len(built.choices))]
                    built = game.build(step.state, seat, (*built.steps, chosen.step))


def test_mandala_pawns_and_labels_count_players_from_one() -> None:
    """Pictures count players as people do (Player 1 is seat 0); the `data-seat`
    a script reads keeps the API's seat."""
    game = games.get("mandala")
    played = [step.state for step in steps(game, 3, game.load_options({}, 3), "5eed", Rng("p"))]
    view = game.view(played[1], None)
    root = parse(render.render_svg("mandala", view, NAMES[:3]))
    pawns = [e for e in root.iter() if e.get("class") == "pawn"]
    assert pawns
    for pawn in pawns:
        (number,) = [t.text for t in pawn.iter(f"{SVG}text")]
        assert number == str(int(pawn.get("data-seat", "")) + 1)
    labels = [e for e in root.iter() if e.get("class") == "seat"]
    assert [t.text for label in labels for t in label.iter(f"{SVG}text")] == ["1", "2", "3"]
