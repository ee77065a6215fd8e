"""Mandala Stones as a picture and as a text board, drawn from a view.

The picture is narrow and tall, so that a phone shows every word at a
readable size: the main board on top (the rules' 7 by 7 lattice: numbered
circles, the artists on them, the stone stacks between them), then each
seat's board, then the mandala. Stones are drawn as the box's round stones
seen a little from the side: a stack shows the colour of each of its stones
(all public), and only its top face shows a pattern (a star or a circle),
as the view gives no other. The mandala is seen from above, filled from the
centre outwards.

While a move is built, the targets lie where the move is made: on the
artists, the circles, the stacks around the chosen circle, the seat's tower
spaces and tops, and a button per colour that may be scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building, Choice
from referee.games.mandala_stones import CIRCLE_STACKS, DIRECTIONS, STACK_CELLS
from referee.i18n import N_, _, ngettext
from referee.render.common import board_text, column, person_name, prose, seat_name
from referee.render.svg import (
    MUTED,
    TARGET,
    Canvas,
    chosen_box,
    fit,
    mark_box,
    mark_round,
    name_label,
    number,
    open_ghost,
    ring_box,
    seat_panel,
    shade,
    spiral,
    target_box,
    target_round,
    text_width,
)

Stone = tuple[str, str | None]  # colour, and pattern where the view shows it

# Calm colours, each still told apart from the others by a colour-blind eye.
STONE_COLOURS = {"Y": "#e3b23c", "B": "#3f72af", "R": "#c4493a", "V": "#7a5c99"}
COLOUR_WORDS = {"Y": "yellow", "B": "blue", "R": "red", "V": "violet"}
PATTERN_INK = "#fff8e7"
ARTIST_PATTERNS = {"A1": "*", "A2": "*", "A3": "o", "A4": "o"}
# Under each tower space, how it scores (the numbers read alike in every language).
SPACE_RULES = (N_("heights"), "4·2·1·1", "1·3·4·1", "1·2·4·6", N_("1+colours"))

# The picture is 420 wide: shown 358 px wide on a 390 px phone, its smallest
# text (13) reads at 11 px there.
WIDTH = 420.0
MARGIN = 14.0
SMALL = 13.0
CELL = 56.0
BOARD_Y = 68.0
BOARD = 7 * CELL
# A stone seen from the side: half its width, half its top face's height, its thickness.
STACK_STONE = (20.0, 8.0, 7.0)
TOWER_STONE = (24.0, 8.0, 8.0)
BAND_H = 60.0
PANEL_W = WIDTH - 2 * MARGIN
PANEL_H = 138.0
SPACE_W, SPACE_H, SPACE_GAP = 68.0, 70.0, 7.0
MANDALA_H = 246.0
MANDALA_STEP = 22.0


def _circle_cell(circle: int) -> tuple[int, int]:
    return 2 * ((circle - 1) // 3) + 1, 2 * ((circle - 1) % 3) + 1


def _circle_xy(circle: int) -> tuple[float, float]:
    row, col = _circle_cell(circle)
    return MARGIN + (col + 0.5) * CELL, BOARD_Y + (row + 0.5) * CELL


def _stack_xy(index: int) -> tuple[float, float]:
    row, col = STACK_CELLS[index]
    return MARGIN + (col + 0.5) * CELL, BOARD_Y + (row + 0.5) * CELL


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    if to_move is None:
        return _("Game over")
    return _("{name} to move").format(name=person_name(names, to_move))


def _symbol(canvas: Canvas, cx: float, cy: float, r: float, pattern: str, colour: str) -> None:
    """The star or the circle of a stone or an artist."""
    if pattern == "*":
        points = []
        for k in range(10):
            radius = r if k % 2 == 0 else r * 0.45
            angle = -math.pi / 2 + k * math.pi / 5
            points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
        canvas.polygon(points, fill=colour)
    else:
        canvas.circle(cx, cy, r * 0.7, fill="none", stroke=colour, stroke_width=r * 0.36)


def _stone(
    canvas: Canvas, cx: float, y: float, size: tuple[float, float, float], stone: Stone, top: bool
) -> None:
    """One stone whose top face is centred at `y`: its side, and on top its face and pattern."""
    rx, ry, h = size
    fill = STONE_COLOURS[stone[0]]
    edge = shade(fill, -0.45)
    n = number
    left, right, low = n(cx - rx), n(cx + rx), n(y + h)
    canvas.path(
        f"M{left} {n(y)}V{low}A{n(rx)} {n(ry)} 0 0 0 {right} {low}V{n(y)}Z",
        fill=shade(fill, -0.18),
        stroke=edge,
    )
    if top:
        canvas.element(
            "ellipse",
            {"cx": cx, "cy": y, "rx": rx, "ry": ry, "fill": fill, "stroke": edge},
        )
        if stone[1] is not None:
            _symbol(canvas, cx, y, ry * 0.92, stone[1], PATTERN_INK)


def _column(
    canvas: Canvas,
    cx: float,
    bottom: float,
    size: tuple[float, float, float],
    stones: Sequence[Stone],
    data: dict[str, str | int | None],
    taken: Stone | None = None,
) -> None:
    """Stones stacked bottom first, the lowest one's rounded side ending at `bottom`.
    `taken` is the top stone the last move took off, drawn as a ghost above what is
    left (it showed its pattern: it was on top)."""
    _, ry, h = size
    y = bottom - ry - h
    for k, (colour, pattern) in enumerate(stones):
        canvas.open({"class": "stone", "data-colour": colour, "data-pattern": pattern, **data})
        _stone(canvas, cx, y, size, (colour, pattern), k == len(stones) - 1)
        canvas.close()
        y -= h
    if taken is not None:
        open_ghost(canvas, {"data-colour": taken[0], "data-pattern": taken[1], **data})
        _stone(canvas, cx, y, size, taken, True)
        canvas.close()


def _taken(now: Sequence[Stone], was: Sequence[Stone] | None) -> Stone | None:
    """The top stone the last move took off a column, if it took one."""
    if was is not None and len(was) == len(now) + 1:
        return was[-1]
    return None


def _colour_choices(building: Building[Any] | None) -> list[Choice]:
    if building is None or building.steps:
        return []
    return [choice for choice in building.choices if choice.step in STONE_COLOURS]


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["boards"])
    colours = _colour_choices(building)
    band_y = BOARD_Y + BOARD + 12
    panels_y = band_y + (BAND_H if colours else 0)
    mandala_y = panels_y + seats * (PANEL_H + 10) + 4
    title = _("Mandala Stones: {status}").format(status=_status(view, names))
    canvas = Canvas(WIDTH, mandala_y + MANDALA_H, title)
    status = _status(view, names)
    if view["end_triggered"] and view.get("to_move") is not None:
        status = _("{status}: the last round").format(status=status)
    canvas.text(MARGIN, 30, _("Mandala Stones"), size=22, bold=True)
    canvas.text(MARGIN, 54, status, size=15, fill=MUTED)
    _main_board(canvas, view, before)
    for seat in range(seats):
        _seat_board(canvas, view, names, seat, panels_y + seat * (PANEL_H + 10), before)
    _mandala(canvas, view, before, mandala_y)
    if building is not None:
        _building(canvas, building, band_y, panels_y)
    return canvas.finish()


def _stack_stones(stack: Sequence[JSON]) -> list[Stone]:
    return [(stone["colour"], stone["pattern"]) for stone in stack]


def _main_board(canvas: Canvas, view: JSON, before: JSON | None) -> None:
    canvas.rect(MARGIN, BOARD_Y, BOARD, BOARD, fill="#efe6d6", stroke="#c9b896", rx=16)
    # The circles' links to their stacks, as on the printed board.
    for circle in range(1, 10):
        cx, cy = _circle_xy(circle)
        canvas.line(cx - CELL, cy, cx + CELL, cy, "#e0d3b8", 5)
        canvas.line(cx, cy - CELL, cx, cy + CELL, "#e0d3b8", 5)
    artist_at = {circle: artist for artist, circle in sorted(view["artists"].items())}
    moved = {} if before is None else _moved_artists(view, before)
    arrived = {view["artists"][artist] for artist in moved}
    for circle in range(1, 10):
        cx, cy = _circle_xy(circle)
        if circle in arrived:
            mark_round(canvas, cx, cy, CELL * 0.48, "moved", {"data-circle": circle})
        canvas.circle(cx, cy, 22, fill="#fbf6ea", stroke="#c9b896", stroke_width=2)
        canvas.text(cx - CELL / 2 + 2, cy - CELL / 2 + 12, str(circle), size=SMALL, fill=MUTED)
        if circle in artist_at:
            artist = artist_at[circle]
            canvas.open({"class": "artist", "data-artist": artist, "data-circle": circle})
            _artist(canvas, cx, cy, artist)
            canvas.close()
        for artist in sorted(a for a, was in moved.items() if was == circle):
            # Where the moved artist stood: its ghost on the circle it left.
            open_ghost(canvas, {"data-artist": artist, "data-circle": circle})
            _artist(canvas, cx, cy, artist)
            canvas.close()
    for index, stack in enumerate(view["stacks"]):
        cx, cy = _stack_xy(index)
        stones = _stack_stones(stack)
        was = None if before is None else _stack_stones(before["stacks"][index])
        if not stones:
            canvas.element(
                "ellipse", {"cx": cx, "cy": cy + 10, "rx": 18.0, "ry": 6.0, "fill": "#e2d6bd"}
            )
        data: dict[str, str | int | None] = {"data-place": "stack", "data-stack": index}
        _column(canvas, cx, cy + 21, STACK_STONE, stones, data, _taken(stones, was))


def _moved_artists(view: JSON, before: JSON) -> dict[str, int]:
    """The circle each artist the last move moved stood on before (the new one is in `view`)."""
    return {
        artist: was
        for artist, was in before["artists"].items()
        if view["artists"].get(artist) != was
    }


def _artist(canvas: Canvas, cx: float, cy: float, artist: str) -> None:
    """An artist seen from above: a dark token showing its pattern and its name."""
    canvas.circle(cx, cy, 19, fill="#3d3433", stroke="#1f1a19", stroke_width=1.5)
    _symbol(canvas, cx, cy - 6, 6.5, ARTIST_PATTERNS[artist], PATTERN_INK)
    canvas.text(cx, cy + 13, artist, size=SMALL, anchor="middle", fill="#ffffff", bold=True)


def _mandala(canvas: Canvas, view: JSON, before: JSON | None, top: float) -> None:
    spaces: int = view["mandala_spaces"]
    placed = view["mandala"]
    centres = _mandala_spiral(spaces, MARGIN + 112, top + 118)
    x, y = centres[-1]
    reach = math.hypot(x - centres[0][0], y - centres[0][1]) + 14
    canvas.circle(*centres[0], reach, fill="#f4ecdc", stroke="#c9b48d", stroke_width=2)
    placed_before = len(placed) if before is None else len(before["mandala"])
    for index, (x, y) in enumerate(centres):
        if placed_before <= index < len(placed):
            mark_round(canvas, x, y, 12.5, "added", {"data-place": "mandala", "data-space": index})
        if index < len(placed):
            stone = placed[index]
            fill = STONE_COLOURS[stone[0]]
            canvas.open({"class": "stone", "data-place": "mandala", "data-colour": stone[0]})
            canvas.circle(x, y, 9.5, fill=fill, stroke=shade(fill, -0.45))
            _symbol(canvas, x, y, 6, stone[1], PATTERN_INK)
            canvas.close()
        else:
            canvas.circle(x, y, 9.5, fill="#fbf7ee", stroke="#d9caa9")
    left = MARGIN + 246
    canvas.text(left, top + 40, _("Mandala"), size=17, bold=True)
    filled = _("{placed} of {spaces} filled").format(placed=len(placed), spaces=spaces)
    canvas.text(left, top + 62, filled, size=SMALL, fill=MUTED)
    if view.get("set_aside"):
        aside = _("{count} set aside").format(count=view["set_aside"])
        canvas.text(left, top + 80, aside, size=SMALL, fill=MUTED)
    for k, (artists, pattern, words) in enumerate(
        (("A1", "*", _("take stars")), ("A3", "o", _("take circles")))
    ):
        y = top + 118 + k * 44
        canvas.circle(left + 14, y, 14, fill="#3d3433")
        _symbol(canvas, left + 14, y, 7, pattern, PATTERN_INK)
        pair = "A1, A2" if artists == "A1" else "A3, A4"
        canvas.text(left + 36, y - 2, pair, size=SMALL, bold=True)
        room = WIDTH - MARGIN - (left + 36)
        canvas.text(left + 36, y + 14, fit(words, SMALL, room), size=SMALL, fill=MUTED)


def _mandala_spiral(spaces: int, cx: float, cy: float) -> list[tuple[float, float]]:
    """Space centres from the centre outwards, evenly along the spiral."""
    ring = spiral(spaces - 1, MANDALA_STEP, MANDALA_STEP, MANDALA_STEP + 1)
    return [(cx, cy)] + [
        (cx + r * math.cos(a - math.pi / 2), cy + r * math.sin(a - math.pi / 2)) for r, a in ring
    ]


def _objectives(canvas: Canvas, objectives: list[int] | int, right: float, y: float) -> None:
    """Objective cards: face up when the viewer may see them, else their backs."""
    cards: list[int | None] = (
        list(objectives) if isinstance(objectives, list) else [None] * objectives
    )
    for k, card in enumerate(reversed(cards)):
        x = right - (k + 1) * 28
        if card is None:
            canvas.open({"class": "objective-back"})
            canvas.rect(x, y, 24, 32, fill="#6d5a86", stroke="#4a3b5e", rx=3)
            canvas.circle(x + 12, y + 16, 6, fill="none", stroke="#b7a6cc", stroke_width=1.5)
        else:
            canvas.open({"class": "objective-card", "data-card": card})
            canvas.rect(x, y, 24, 32, fill="#fffdf6", stroke="#8c7a5b", rx=3)
            canvas.text(x + 12, y + 21, str(card), size=SMALL, anchor="middle", bold=True)
        canvas.close()


def _objectives_text(objectives: list[int] | int) -> str:
    if isinstance(objectives, list):
        shown = ", ".join(str(card) for card in objectives)
        return _("objectives: {cards}").format(cards=shown) if shown else _("objectives: none")
    if not objectives:
        return _("objectives: none")
    return _("objectives: {count} hidden").format(count=objectives)


def _space_box(seat_top: float, space: int) -> tuple[float, float]:
    """The top-left corner of a tower space (0-4) of the seat panel at `seat_top`."""
    return MARGIN + 12 + space * (SPACE_W + SPACE_GAP), seat_top + 44


def _seat_board(
    canvas: Canvas,
    view: JSON,
    names: Sequence[str] | None,
    seat: int,
    y: float,
    before: JSON | None,
) -> None:
    x = MARGIN
    moving = view.get("to_move") == seat
    seat_panel(canvas, x, y, PANEL_W, PANEL_H, seat, moving)
    objectives = view["objectives"][seat]
    held = len(objectives) if isinstance(objectives, list) else objectives
    # The name has the top line up to the objective cards.
    room = PANEL_W - 92 - 28 * held - 8 - 18
    note = ""
    if seat in view.get("resigned", []):
        note = " " + _("(out)")
    elif seat == view["first_player"]:
        note = " " + _("(first)")
    label = name_label(seat_name(names, seat), 15, room - text_width(note, 15, True)) + note
    canvas.text(x + 18, y + 27, label, size=15, bold=True)
    score = view["scores"][seat]
    points = ngettext("{count} point", "{count} points", score).format(count=score)
    canvas.text(x + PANEL_W - 12, y + 27, points, size=15, anchor="end", bold=True)
    _objectives(canvas, view["objectives"][seat], x + PANEL_W - 92, y + 6)
    for space, tower in enumerate(view["boards"][seat]):
        left, top = _space_box(y, space)
        cx, bottom = left + SPACE_W / 2, top + SPACE_H
        was = None if before is None else [(s[0], s[1]) for s in before["boards"][seat][space]]
        stones: list[Stone] = [(stone[0], stone[1]) for stone in tower]
        data: dict[str, str | int | None] = {"data-place": "tower", "data-seat": seat}
        canvas.rect(left, top, SPACE_W, SPACE_H, fill="#efe7d7", stroke="#d4c6aa", rx=6)
        if was is not None and not was and stones:
            mark_box(canvas, left, top, SPACE_W, SPACE_H, "added", {**data, "data-space": space})
        canvas.text(left + 5, top + 15, str(space + 1), size=SMALL, fill=MUTED, bold=True)
        _column(canvas, cx, bottom - 5, TOWER_STONE, stones, data, _taken(stones, was))
        rule = fit(_(SPACE_RULES[space]), SMALL, SPACE_W + SPACE_GAP)
        canvas.text(cx, bottom + 17, rule, size=SMALL, anchor="middle", fill=MUTED)


# -- building a move ----------------------------------------------------------


def _building(canvas: Canvas, building: Building[Any], band_y: float, panels_y: float) -> None:
    """The steps taken, marked, then the next choices as targets, drawn last (on top)."""
    view, steps = building.view, building.steps
    seat = view["to_move"]
    seat_top = panels_y + seat * (PANEL_H + 10)
    picking = bool(steps) and steps[0].startswith("A")
    if picking:
        _chosen_round(canvas, *_circle_xy(view["artists"][steps[0]]))
    for order, index in enumerate(view.get("taking", []), 1):
        cx, cy = _stack_xy(index)
        _badge(canvas, cx + 19, cy - 20, order)
    if picking and len(steps) == 4:
        left, top = _space_box(seat_top, int(steps[3]) - 1)
        chosen_box(canvas, left, top, SPACE_W, SPACE_H)
    tops = [int(step[1]) for step in steps if step.startswith("t")]
    for order, space in enumerate(tops, 1):
        left, top = _space_box(seat_top, space - 1)
        chosen_box(canvas, left, top, SPACE_W, SPACE_H)
        _badge(canvas, left + SPACE_W - 10, top + 12, order)
    for k, choice in enumerate(_colour_choices(building)):
        _colour_button(canvas, choice, MARGIN + k * (PANEL_W + 10) / 2, band_y)
    for choice in building.choices:
        _target(canvas, choice, steps, view, seat_top)


def _target(
    canvas: Canvas, choice: Choice, steps: Sequence[str], view: JSON, seat_top: float
) -> None:
    """One choice's target where its step is made (colours have their buttons)."""
    step = choice.step
    if step.startswith("A"):
        target_round(canvas, *_circle_xy(view["artists"][step]), 25, choice)
    elif step.startswith("t") or (steps and len(steps) == 3):
        left, top = _space_box(seat_top, int(step[-1]) - 1)
        target_box(canvas, left - 2, top - 2, SPACE_W + 4, SPACE_H + 4, choice)
    elif step in DIRECTIONS:
        circle = int(steps[1])
        cx, cy = _stack_xy(CIRCLE_STACKS[circle - 1][DIRECTIONS.index(step)])
        target_box(canvas, cx - 26, cy - 26, 52, 52, choice)
    elif steps:
        target_round(canvas, *_circle_xy(int(step)), 25, choice)


def _colour_button(canvas: Canvas, choice: Choice, x: float, y: float) -> None:
    width = (PANEL_W - 10) / 2
    fill = STONE_COLOURS[choice.step]
    canvas.target(choice)
    ring_box(canvas, x, y, width, BAND_H - 12, rx=8)
    canvas.circle(x + 26, y + (BAND_H - 12) / 2, 13, fill=fill, stroke=shade(fill, -0.45))
    # Some languages say it longer ("Décompter le violet"): smaller, never cut.
    room = width - 48 - 8
    size = min(16.0, 16.0 * room / text_width(choice.label, 16, True))
    canvas.text(x + 48, y + (BAND_H - 12) / 2 + 6, choice.label, size=size, bold=True)
    canvas.close()


def _chosen_round(canvas: Canvas, cx: float, cy: float) -> None:
    """The circle a step already chose: a solid ring around it."""
    canvas.circle(cx, cy, 25, fill="none", stroke=TARGET, stroke_width=4, **{"class": "chosen"})


def _badge(canvas: Canvas, cx: float, cy: float, order: int) -> None:
    """The order in which a step already taken takes a stone."""
    canvas.circle(cx, cy, 10, fill=TARGET, stroke="#ffffff", stroke_width=1.5)
    canvas.text(cx, cy + 4.5, str(order), size=SMALL, anchor="middle", fill="#ffffff", bold=True)


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = prose(_("Mandala Stones: {status}").format(status=_status(view, names)))
    if view["end_triggered"] and view.get("to_move") is not None:
        lines.extend(prose(_("The end is triggered: this round is the last.")))
    lines.append("")
    for key in (
        _("Stacks: colours bottom to top, then the top's pattern (* star, o ring)."),
        _("Circles: (n) empty, An artist. Y yellow, B blue, R red, V violet."),
    ):
        lines.extend(prose(key))
    lines.append("")
    lines.extend("   " + "".join(f"{cell:^8}" for cell in row) for row in _lattice_cells(view))
    lines.append("")
    placed = view["mandala"]
    header = _("Mandala ({placed} of {spaces}):").format(
        placed=len(placed), spaces=view["mandala_spaces"]
    )
    lines.extend(_wrapped(header, placed))
    lines.append("")
    for seat, towers in enumerate(view["boards"]):
        lines.extend(_seat_text(view, names, seat, towers))
    return board_text(lines)


def _lattice_cells(view: JSON) -> list[list[str]]:
    """The 7 by 7 lattice as text cells: stacks between numbered circles or artists."""
    grid = [["" for _ in range(7)] for _ in range(7)]
    for (row, col), stack in zip(STACK_CELLS, view["stacks"], strict=True):
        if stack:
            grid[row][col] = "".join(s["colour"] for s in stack) + stack[-1]["pattern"]
        else:
            grid[row][col] = "--"
    artist_at = {circle: artist for artist, circle in view["artists"].items()}
    for circle in range(1, 10):
        row, col = _circle_cell(circle)
        artist = artist_at.get(circle)
        grid[row][col] = f"{artist}{ARTIST_PATTERNS[artist]}" if artist else f"({circle})"
    return grid


def _seat_text(
    view: JSON, names: Sequence[str] | None, seat: int, towers: Sequence[Sequence[str]]
) -> list[str]:
    """A seat's line (score, objectives, notes) and the line of its towers."""
    who = column(seat_name(names, seat), 18)
    notes = []
    if seat == view["first_player"]:
        notes.append(_("first"))
    if seat in view.get("resigned", []):
        notes.append(_("resigned"))
    if view.get("to_move") == seat:
        notes.append(_("to move"))
    cells = [f"{space + 1}:{''.join(tower) or '-'}" for space, tower in enumerate(towers)]
    return [
        _("{seat} {who} score {score}  {objectives}").format(
            seat=seat + 1,
            who=who,
            score=f"{view['scores'][seat]:>3}",
            objectives=_objectives_text(view["objectives"][seat]),
        )
        + (f"  ({', '.join(notes)})" if notes else ""),
        "    " + "  ".join(cells),
    ]


def _wrapped(header: str, items: Sequence[str]) -> list[str]:
    lines, line = [], header
    for item in items:
        if len(line) + 1 + len(item) > 70:
            lines.append(line)
            line = " "
        line += " " + item
    lines.append(line)
    return lines
