"""Mandala Stones as a picture and as a text board, drawn from a view.

The main board is the rules' 7 by 7 lattice: numbered circles (artists
stand on them) with the stone stacks between them. A stack is drawn from
the side, bottom stone lowest, because the colours of all its stones are
public; only its top stone shows a pattern (a star or a ring), as the view
gives no other. Each seat's board shows its five towers the same way, and
the mandala fills its spiral from the centre outwards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building
from referee.games.mandala_stones import STACK_CELLS
from referee.render.common import board_text, clip, column, seat_name
from referee.render.svg import (
    LINE,
    MUTED,
    SEAT_COLOURS,
    Canvas,
    mark_box,
    mark_round,
    open_ghost,
    shade,
    spiral,
)

Stone = tuple[str, str | None]  # colour, and pattern where the view shows it

STONE_COLOURS = {"Y": "#f2c12e", "B": "#3b7dd8", "R": "#d8423a", "V": "#7d52b8"}
ARTIST_PATTERNS = {"A1": "*", "A2": "*", "A3": "o", "A4": "o"}
SPACE_RULES = ("distinct heights", "4 · 2 · 1 · 1", "1 · 3 · 4 · 1", "1 · 2 · 4 · 6", "1 + colours")

CELL = 70.0
BOARD_X, BOARD_Y = 30.0, 84.0
PILL_W, PILL_H, TOP_H = 46.0, 11.0, 18.0
MANDALA_X, MANDALA_Y = 790.0, 300.0
SEAT_W, SEAT_H = 520.0, 150.0


def _circle_cell(number: int) -> tuple[int, int]:
    return 2 * ((number - 1) // 3) + 1, 2 * ((number - 1) % 3) + 1


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    if to_move is None:
        return "Game over"
    return f"{seat_name(names, to_move)} to move"


def _symbol(canvas: Canvas, cx: float, cy: float, r: float, pattern: str, colour: str) -> None:
    """The star or the ring of a stone or an artist."""
    if pattern == "*":
        points = []
        for k in range(10):
            radius = r if k % 2 == 0 else r * 0.45
            angle = -math.pi / 2 + k * math.pi / 5
            points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
        canvas.polygon(points, fill=colour)
    else:
        canvas.circle(cx, cy, r * 0.72, fill="none", stroke=colour, stroke_width=r * 0.42)


def _stone(canvas: Canvas, cx: float, y: float, h: float, colour: str, pattern: str | None) -> None:
    fill = STONE_COLOURS[colour]
    canvas.rect(cx - PILL_W / 2, y, PILL_W, h, fill=fill, stroke=shade(fill, -0.45), rx=h / 2.4)
    if pattern is not None:
        _symbol(canvas, cx, y + h / 2, h * 0.38, pattern, "#ffffff")


def _tower(
    canvas: Canvas,
    cx: float,
    bottom: float,
    stones: Sequence[Stone],
    data: dict[str, str | int | None],
    taken: Stone | None = None,
) -> None:
    """A column of stones seen from the side, bottom first; the top one shows
    its pattern. `taken` is the top stone the last move took off, drawn as a
    ghost above what is left (it showed its pattern: it was on top)."""
    y = bottom
    for k, (colour, pattern) in enumerate(stones):
        top = k == len(stones) - 1
        h = TOP_H if top else PILL_H
        y -= h
        canvas.open({"class": "stone", "data-colour": colour, "data-pattern": pattern, **data})
        _stone(canvas, cx, y, h, colour, pattern)
        canvas.close()
    if taken is not None:
        open_ghost(canvas, {"data-colour": taken[0], "data-pattern": taken[1], **data})
        _stone(canvas, cx, y - TOP_H, TOP_H, *taken)
        canvas.close()


def _taken(now: Sequence[Stone], was: Sequence[Stone] | None) -> Stone | None:
    """The top stone the last move took off a column, if it took one."""
    if was is not None and len(was) == len(now) + 1:
        return was[-1]
    return None


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["boards"])
    boards_y = BOARD_Y + 7 * CELL + 30
    height = boards_y + ((seats + 1) // 2) * (SEAT_H + 12) + 10
    canvas = Canvas(2 * SEAT_W + 50, height, f"Mandala Stones: {_status(view, names)}")
    canvas.text(30, 36, "Mandala Stones", size=24, bold=True)
    canvas.text(30, 60, _status(view, names), size=15, fill=MUTED)
    _main_board(canvas, view, before)
    _mandala(canvas, view, before)
    canvas.text(
        MANDALA_X, 510, "A1 and A2 collect stars, A3 and A4 rings.", size=12, anchor="middle"
    )
    if view["end_triggered"] and view.get("to_move") is not None:
        canvas.text(
            MANDALA_X,
            530,
            "The end is triggered: this round is the last.",
            size=12,
            anchor="middle",
        )
    for seat in range(seats):
        x = 30 + (seat % 2) * (SEAT_W + 10)
        y = boards_y + (seat // 2) * (SEAT_H + 12)
        _seat_board(canvas, view, names, seat, (x, y), before)
    return canvas.finish()


def _stack_stones(stack: Sequence[JSON]) -> list[Stone]:
    return [(stone["colour"], stone["pattern"]) for stone in stack]


def _main_board(canvas: Canvas, view: JSON, before: JSON | None) -> None:
    size = 7 * CELL
    canvas.rect(BOARD_X, BOARD_Y, size, size, fill="#efe6d6", stroke="#b9a888", rx=18)
    # The circles' links to their stacks, as on the printed board.
    for number in range(1, 10):
        row, col = _circle_cell(number)
        cx, cy = BOARD_X + (col + 0.5) * CELL, BOARD_Y + (row + 0.5) * CELL
        canvas.line(cx - CELL, cy, cx + CELL, cy, "#d8cbb2", 6)
        canvas.line(cx, cy - CELL, cx, cy + CELL, "#d8cbb2", 6)
    artist_at = {circle: artist for artist, circle in sorted(view["artists"].items())}
    moved = {} if before is None else _moved_artists(view, before)
    arrived = {view["artists"][artist] for artist in moved}
    for number in range(1, 10):
        row, col = _circle_cell(number)
        cx, cy = BOARD_X + (col + 0.5) * CELL, BOARD_Y + (row + 0.5) * CELL
        if number in arrived:
            mark_round(canvas, cx, cy, CELL * 0.5, "moved", {"data-circle": number})
        canvas.circle(cx, cy, CELL * 0.42, fill="#fbf6ea", stroke="#b9a888", stroke_width=2)
        canvas.text(cx - CELL * 0.3, cy - CELL * 0.22, str(number), size=12, fill=MUTED)
        if number in artist_at:
            artist = artist_at[number]
            canvas.open({"class": "artist", "data-artist": artist, "data-circle": number})
            _artist(canvas, cx, cy, artist)
            canvas.close()
        for artist in sorted(a for a, was in moved.items() if was == number):
            # Where the moved artist stood: its ghost on the circle it left.
            open_ghost(canvas, {"data-artist": artist, "data-circle": number})
            _artist(canvas, cx, cy, artist)
            canvas.close()
    for index, ((row, col), stack) in enumerate(zip(STACK_CELLS, view["stacks"], strict=True)):
        cx = BOARD_X + (col + 0.5) * CELL
        bottom = BOARD_Y + (row + 0.5) * CELL + 30
        canvas.rect(cx - 27, bottom - 60, 54, 62, fill="#e4d8c0", stroke="#cbbb9c", rx=6)
        stones = _stack_stones(stack)
        was = None if before is None else _stack_stones(before["stacks"][index])
        data: dict[str, str | int | None] = {"data-place": "stack", "data-stack": index}
        _tower(canvas, cx, bottom - 2, stones, data, _taken(stones, was))


def _moved_artists(view: JSON, before: JSON) -> dict[str, int]:
    """The circle each artist the last move moved stood on before (the new one is in `view`)."""
    return {
        artist: was
        for artist, was in before["artists"].items()
        if view["artists"].get(artist) != was
    }


def _artist(canvas: Canvas, cx: float, cy: float, artist: str) -> None:
    canvas.circle(cx, cy + 2, CELL * 0.27, fill="#3a3130")
    _symbol(canvas, cx, cy - 5, CELL * 0.12, ARTIST_PATTERNS[artist], "#ffffff")
    canvas.text(cx, cy + 16, artist, size=11, anchor="middle", fill="#ffffff", bold=True)


def _mandala(canvas: Canvas, view: JSON, before: JSON | None) -> None:
    spaces: int = view["mandala_spaces"]
    placed = view["mandala"]
    canvas.text(MANDALA_X, BOARD_Y + 18, "Mandala", size=17, bold=True, anchor="middle")
    filled = f"{len(placed)} of {spaces} spaces filled"
    if view.get("set_aside"):
        filled += f", {view['set_aside']} set aside"
    canvas.text(MANDALA_X, BOARD_Y + 38, filled, size=12, fill=MUTED, anchor="middle")
    centres = _mandala_spiral(spaces)
    x, y = centres[-1]
    reach = math.hypot(x - MANDALA_X, y - MANDALA_Y) + 18
    canvas.circle(MANDALA_X, MANDALA_Y, reach, fill="#f4ecdc", stroke="#c9b48d", stroke_width=2)
    placed_before = len(placed) if before is None else len(before["mandala"])
    for index, (x, y) in enumerate(centres):
        if placed_before <= index < len(placed):
            mark_round(canvas, x, y, 13.5, "added", {"data-place": "mandala", "data-space": index})
        if index < len(placed):
            stone = placed[index]
            fill = STONE_COLOURS[stone[0]]
            canvas.open({"class": "stone", "data-place": "mandala", "data-colour": stone[0]})
            canvas.circle(x, y, 10.5, fill=fill, stroke=shade(fill, -0.45))
            _symbol(canvas, x, y, 6.5, stone[1], "#ffffff")
            canvas.close()
        else:
            canvas.circle(x, y, 10.5, fill="#fbf7ee", stroke="#d9caa9")


def _mandala_spiral(spaces: int) -> list[tuple[float, float]]:
    """Space centres from the centre outwards, 24 apart along the spiral."""
    ring = spiral(spaces - 1, 24, 24, 25)
    return [(MANDALA_X, MANDALA_Y)] + [
        (MANDALA_X + r * math.cos(a - math.pi / 2), MANDALA_Y + r * math.sin(a - math.pi / 2))
        for r, a in ring
    ]


def _objectives_text(objectives: list[int] | int) -> str:
    if isinstance(objectives, list):
        return "objectives: " + (", ".join(str(card) for card in objectives) or "none")
    return f"objectives: {objectives} hidden" if objectives else "objectives: none"


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
            canvas.text(x + 12, y + 21, str(card), size=12, anchor="middle", bold=True)
        canvas.close()


def _seat_board(
    canvas: Canvas,
    view: JSON,
    names: Sequence[str] | None,
    seat: int,
    at: tuple[float, float],
    before: JSON | None,
) -> None:
    x, y = at
    moving = view.get("to_move") == seat
    colour = SEAT_COLOURS[seat]
    canvas.rect(
        x,
        y,
        SEAT_W,
        SEAT_H,
        fill="#ffffff" if moving else "#f7f3ea",
        stroke=colour if moving else LINE,
        stroke_width=2.5 if moving else 1,
        rx=8,
    )
    canvas.rect(x, y, 8, SEAT_H, fill=colour, rx=3)
    label = clip(seat_name(names, seat), 22)
    if seat == view["first_player"]:
        label += " (first)"
    if seat in view.get("resigned", []):
        label += " (resigned)"
    canvas.text(x + 20, y + 24, label, size=15, bold=True)
    canvas.text(x + SEAT_W - 14, y + 28, str(view["scores"][seat]), size=24, anchor="end")
    canvas.text(x + SEAT_W - 14, y + 44, "points", size=10, anchor="end", fill=MUTED)
    _objectives(canvas, view["objectives"][seat], x + SEAT_W - 64, y + 8)
    for space, tower in enumerate(view["boards"][seat]):
        cx = x + 60 + space * 90
        bottom = y + SEAT_H - 30
        was = None if before is None else [(s[0], s[1]) for s in before["boards"][seat][space]]
        canvas.rect(cx - 32, bottom - 72, 64, 74, fill="#efe7d7", stroke="#d4c6aa", rx=6)
        stones: list[Stone] = [(stone[0], stone[1]) for stone in tower]
        data: dict[str, str | int | None] = {"data-place": "tower", "data-seat": seat}
        if was is not None and not was and stones:
            mark_box(canvas, cx - 32, bottom - 72, 64, 74, "added", {**data, "data-space": space})
        canvas.text(cx - 27, bottom - 58, str(space + 1), size=11, fill=MUTED, bold=True)
        _tower(canvas, cx, bottom - 2, stones, data, _taken(stones, was))
        canvas.text(cx, bottom + 17, SPACE_RULES[space], size=10, anchor="middle", fill=MUTED)


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [f"Mandala Stones: {_status(view, names)}"]
    if view["end_triggered"] and view.get("to_move") is not None:
        lines.append("The end is triggered: this round is the last.")
    lines.append("")
    lines.append("Stacks: colours bottom to top, then the top's pattern (* star, o ring).")
    lines.append("Circles: (n) empty, An artist. Y yellow, B blue, R red, V violet.")
    lines.append("")
    lines.extend("   " + "".join(f"{cell:^8}" for cell in row) for row in _lattice_cells(view))
    lines.append("")
    placed = view["mandala"]
    header = f"Mandala ({len(placed)} of {view['mandala_spaces']}):"
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
    for number in range(1, 10):
        row, col = _circle_cell(number)
        artist = artist_at.get(number)
        grid[row][col] = f"{artist}{ARTIST_PATTERNS[artist]}" if artist else f"({number})"
    return grid


def _seat_text(
    view: JSON, names: Sequence[str] | None, seat: int, towers: Sequence[Sequence[str]]
) -> list[str]:
    """A seat's line (score, objectives, notes) and the line of its towers."""
    who = column(seat_name(names, seat), 18)
    notes = []
    if seat == view["first_player"]:
        notes.append("first")
    if seat in view.get("resigned", []):
        notes.append("resigned")
    if view.get("to_move") == seat:
        notes.append("to move")
    cells = [f"{space + 1}:{''.join(tower) or '-'}" for space, tower in enumerate(towers)]
    return [
        f"{seat} {who} score {view['scores'][seat]:>3}  "
        f"{_objectives_text(view['objectives'][seat])}"
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
