"""Ice Palace as a picture and as a text board, drawn from a view.

The yard and the palace are drawn as grids around what is built, one
empty cell of margin, with their `x,y` coordinates on the edges (x to the
right, y upwards). A stack is drawn as nested pyramids seen from above, the
largest outermost: in the yard that is the top (each cover is larger), in
the palace the bottom (each cover is smaller), whose stacks also show
their height, the points they give. Hands are pyramids for the viewer's
own hand and counts by size for everyone else's: the view holds no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.engine import JSON, Building
from referee.render.common import COLOUR_NAMES, board_text, clip, column, seat_name
from referee.render.svg import (
    INK,
    LINE,
    MUTED,
    PYRAMID_COLOURS,
    Canvas,
    mark_box,
    open_ghost,
    pyramid,
)

SIZE_ORDER = {"S": 1, "M": 2, "L": 3}
SCALE = {"S": 0.4, "M": 0.64, "L": 0.88}
WIDTH = 1000.0  # of the picture; the grids share what the margins leave
MARGIN = 50.0
GRID_GAP = 70.0
BIG_CELL = 60.0
# Below this cell size the yard and the palace are drawn one above the other.
SMALL_CELL = 36.0
TOP = 110.0
SEAT_H = 58.0


def _cells(grid: dict[str, list[str]]) -> dict[tuple[int, int], list[str]]:
    cells = {}
    for key, stack in grid.items():
        x, y = key.split(",")
        cells[int(x), int(y)] = stack
    return cells


def _bounds(cells: Iterable[tuple[int, int]]) -> tuple[int, int, int, int]:
    """The columns and rows drawn: every stack with a cell of margin, 0,0 included."""
    cells = list(cells)
    xs = [x for x, _ in cells] or [0]
    ys = [y for _, y in cells] or [0]
    return min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1


@dataclass(frozen=True, slots=True)
class _Grid:
    """Where one board is drawn: its cells, the part of the plane shown, the cell size,
    and what the last move changed there (stacks it grew, stacks it took away)."""

    cells: dict[tuple[int, int], list[str]]
    bounds: tuple[int, int, int, int]
    left: float
    top: float
    cell: float
    grown: frozenset[tuple[int, int]] = frozenset()
    gone: tuple[tuple[tuple[int, int], list[str]], ...] = ()

    @property
    def columns(self) -> int:
        return self.bounds[1] - self.bounds[0] + 1

    @property
    def rows(self) -> int:
        return self.bounds[3] - self.bounds[2] + 1

    @property
    def bottom(self) -> float:
        return self.top + self.rows * self.cell


@dataclass(frozen=True, slots=True)
class _Changes:
    """One board's cells and what the last move did to them."""

    cells: dict[tuple[int, int], list[str]]
    grown: frozenset[tuple[int, int]]
    gone: tuple[tuple[tuple[int, int], list[str]], ...]

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        # A stack taken away is drawn as a ghost where it stood, so it stays in the picture.
        return _bounds([*self.cells, *(cell for cell, _ in self.gone)])


def _changes(view: JSON, before: JSON | None, board: str) -> _Changes:
    cells = _cells(view[board])
    if before is None:
        return _Changes(cells, frozenset(), ())
    earlier = _cells(before[board])
    grown = frozenset(cell for cell, stack in cells.items() if earlier.get(cell) != stack)
    gone = tuple(sorted((cell, stack) for cell, stack in earlier.items() if cell not in cells))
    return _Changes(cells, grown, gone)


def _layout(view: JSON, before: JSON | None) -> tuple[_Grid, _Grid]:
    """The yard and the palace side by side at one scale, or one above the other."""
    yard, palace = _changes(view, before, "yard"), _changes(view, before, "palace")
    yb, pb = yard.bounds, palace.bounds
    y_cols, p_cols = yb[1] - yb[0] + 1, pb[1] - pb[0] + 1
    room = WIDTH - 2 * MARGIN
    cell = min(BIG_CELL, (room - GRID_GAP) / (y_cols + p_cols))
    if cell >= SMALL_CELL:
        first = _grid_of(yard, MARGIN, TOP, cell)
        return first, _grid_of(palace, MARGIN + y_cols * cell + GRID_GAP, TOP, cell)
    first = _grid_of(yard, MARGIN, TOP, min(BIG_CELL, room / y_cols))
    return first, _grid_of(palace, MARGIN, first.bottom + 70, min(BIG_CELL, room / p_cols))


def _grid_of(changes: _Changes, left: float, top: float, cell: float) -> _Grid:
    return _Grid(changes.cells, changes.bounds, left, top, cell, changes.grown, changes.gone)


def _status(view: JSON, names: Sequence[str] | None) -> str:
    # `turn` (the seat to act, None once over) is an extra of the game's view.
    if "turn" in view and view["turn"] is None:
        return "Game over"
    if view["phase"] == "build" and view.get("builder") is not None:
        builder = seat_name(names, view["builder"])
        return f"{builder} builds the palace: {view.get('build_max', 0)} to place"
    if view.get("last_placer") is None:
        leader: int = view["turn"] if "turn" in view else view["marker"]
        return f"{seat_name(names, leader)} leads the round"
    passes = view["passes"]
    status = f"{seat_name(names, view['last_placer'])} placed last"
    if passes:
        status += f", {passes} pass{'es' if passes != 1 else ''} since"
    if view.get("turn") is None:
        return status
    return f"{seat_name(names, view['turn'])} to place or pass; {status}"


def _points(view: JSON) -> dict[str, int]:
    """Palace points by colour letter: each stack's height to its top's colour."""
    totals: dict[str, int] = {}
    for stack in view["palace"].values():
        if stack:
            top = stack[-1][1]
            totals[top] = totals.get(top, 0) + len(stack)
    return totals


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["colours"])
    yard, palace = _layout(view, before)
    panel_y = max(yard.bottom, palace.bottom) + 76
    height = panel_y + seats * (SEAT_H + 8) + 50
    canvas = Canvas(WIDTH, height, f"Ice Palace: {_status(view, names)}")
    canvas.text(30, 36, "Ice Palace", size=24, bold=True)
    canvas.text(30, 60, _status(view, names), size=15, fill=MUTED)
    _grid(canvas, "Yard", yard, "yard")
    _grid(canvas, "Palace", palace, "palace")
    _seats(canvas, view, names, panel_y)
    return canvas.finish()


def _grid(canvas: Canvas, label: str, grid: _Grid, place: str) -> None:
    x0, _, _, y1 = grid.bounds
    cell, ox, oy = grid.cell, grid.left, grid.top
    width, height = grid.columns * cell, grid.rows * cell
    count = sum(len(stack) for stack in grid.cells.values())
    canvas.text(ox - 3, oy - 14, label, size=17, bold=True)
    canvas.text(
        ox + width + 3,
        oy - 14,
        f"{count} pyramid{'s' if count != 1 else ''}"
        + (" (faint: the last move took them)" if grid.gone else ""),
        size=12,
        fill=MUTED,
        anchor="end",
    )
    canvas.rect(ox - 3, oy - 3, width + 6, height + 6, fill="#e8eef3", stroke="#9fb3c4", rx=5)
    font = max(min(cell * 0.26, 13), 8)
    for col in range(grid.columns):
        for row in range(grid.rows):
            canvas.rect(
                ox + col * cell, oy + row * cell, cell, cell, fill="#f4f8fb", stroke="#cfdbe5"
            )
    for col in range(grid.columns):
        x = ox + col * cell + cell / 2
        canvas.text(
            x, oy + height + font + 6, str(x0 + col), size=font, anchor="middle", fill=MUTED
        )
    for row in range(grid.rows):
        y = oy + row * cell + cell / 2 + font / 3
        canvas.text(ox - 8, y, str(y1 - row), size=font, anchor="end", fill=MUTED)
    for x, y in sorted(grid.grown):
        left, top = ox + (x - x0) * cell, oy + (y1 - y) * cell
        mark_box(
            canvas,
            left + 1,
            top + 1,
            cell - 2,
            cell - 2,
            "added",
            {"data-place": place, "data-cell": f"{x},{y}"},
        )
    for (x, y), stack in grid.gone:
        cx = ox + (x - x0) * cell + cell / 2
        cy = oy + (y1 - y) * cell + cell / 2
        open_ghost(canvas, {"data-place": place, "data-cell": f"{x},{y}"})
        _stack(canvas, cx, cy, cell, stack, {})
        canvas.close()
    for (x, y), stack in sorted(grid.cells.items()):
        cx = ox + (x - x0) * cell + cell / 2
        cy = oy + (y1 - y) * cell + cell / 2
        _stack(canvas, cx, cy, cell, stack, {"data-place": place, "data-cell": f"{x},{y}"})
        if place == "palace" and len(stack) > 1:
            # The stack's height: the points it gives to its top's colour.
            bx, by, r = cx + cell * 0.36, cy - cell * 0.36, max(cell * 0.14, 6)
            canvas.circle(bx, by, r, fill="#ffffff", stroke=INK, stroke_width=0.8)
            canvas.text(bx, by + r * 0.45, str(len(stack)), size=r * 1.25, anchor="middle")


def _stack(
    canvas: Canvas, cx: float, cy: float, cell: float, stack: list[str], data: dict[str, str]
) -> None:
    """A stack as nested pyramids seen from above, the largest outermost."""
    for piece in sorted(stack, key=lambda p: -SIZE_ORDER[p[0]]):
        pyramid(
            canvas,
            cx,
            cy,
            SCALE[piece[0]] * cell,
            PYRAMID_COLOURS[piece[1]],
            {**data, "data-pyramid": piece} if data else {},
        )


def _seats(canvas: Canvas, view: JSON, names: Sequence[str] | None, top: float) -> None:
    totals = _points(view)
    canvas.text(30, top - 12, "Players", size=15, bold=True)
    canvas.text(330, top - 12, "Hand", size=13, fill=MUTED)
    canvas.text(WIDTH - 44, top - 12, "Points", size=13, fill=MUTED, anchor="end")
    for seat, colour in enumerate(view["colours"]):
        y = top + seat * (SEAT_H + 8)
        acting = seat == view.get("turn", view.get("builder"))
        canvas.rect(
            30,
            y,
            WIDTH - 60,
            SEAT_H,
            fill="#ffffff" if acting else "#f5f7f9",
            stroke=PYRAMID_COLOURS[colour] if acting else LINE,
            stroke_width=2.5 if acting else 1,
            rx=8,
        )
        pyramid(canvas, 56, y + SEAT_H / 2, 30, PYRAMID_COLOURS[colour], {"class": "seat-colour"})
        label = clip(seat_name(names, seat), 20)
        canvas.text(82, y + 25, label, size=15, bold=True)
        tags = [COLOUR_NAMES[colour]]
        if seat == view["marker"]:
            tags.append("holds the marker")
        if seat == view.get("last_placer"):
            tags.append("placed last")
        if seat in view.get("resigned", []):
            tags.append("resigned")
        canvas.text(82, y + 44, ", ".join(tags), size=12, fill=MUTED)
        hand = view["hands"][seat]
        if isinstance(hand, list):
            for k, piece in enumerate(sorted(hand, key=lambda p: (-SIZE_ORDER[p[0]], p[1]))):
                pyramid(
                    canvas,
                    346 + k * 44,
                    y + SEAT_H / 2,
                    SCALE[piece[0]] * 44,
                    PYRAMID_COLOURS[piece[1]],
                    {"data-place": "hand", "data-seat": seat, "data-pyramid": piece},
                )
        else:
            canvas.open({"class": "hidden-hand", "data-seat": seat})
            canvas.text(330, y + 35, _hidden_hand(hand), size=14)
            canvas.close()
        canvas.text(
            WIDTH - 44,
            y + 37,
            str(totals.get(colour, 0)),
            size=22,
            anchor="end",
        )
    bottom = top + len(view["colours"]) * (SEAT_H + 8) + 24
    pool = view["pool"]
    canvas.text(
        30,
        bottom,
        f"Pool: {pool['S']} small, {pool['M']} medium, {pool['L']} large.   "
        f"Out of the game: {view['out_of_game']}.   Cells are x,y: x across, y upwards.",
        size=13,
        fill=MUTED,
    )


def _hidden_hand(hand: dict[str, int]) -> str:
    return f"{hand['S']} small, {hand['M']} medium, {hand['L']} large (hidden)"


def _grid_text(grid: dict[str, list[str]]) -> list[str]:
    cells = _cells(grid)
    if not cells:
        return ["  empty"]
    x0, x1, y0, y1 = _bounds(cells)
    width = 7
    if 6 + (x1 - x0 + 1) * width > 72:
        # Too wide to draw: the stacks as `x,y stack`, row by row from the top.
        entries = [
            f"{x},{y} {''.join(stack)}"
            for (x, y), stack in sorted(cells.items(), key=lambda item: (-item[0][1], item[0][0]))
        ]
        return [
            "  " + "".join(f"{e:<13}" for e in entries[i : i + 5])
            for i in range(0, len(entries), 5)
        ]
    lines = ["  y\\x " + "".join(f"{x:^{width}}" for x in range(x0, x1 + 1))]
    for y in range(y1, y0 - 1, -1):
        row = "".join(
            f"{''.join(cells.get((x, y), [])) or '.':^{width}}" for x in range(x0, x1 + 1)
        )
        lines.append(f"  {y:>3} " + row)
    return lines


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [f"Ice Palace: {_status(view, names)}", ""]
    lines.append("A pyramid is size (S/M/L) + colour; stacks read bottom to top.")
    lines.append("")
    lines.append("Yard:")
    lines.extend(_grid_text(view["yard"]))
    lines.append("")
    lines.append("Palace:")
    lines.extend(_grid_text(view["palace"]))
    lines.append("")
    totals = _points(view)
    for seat, colour in enumerate(view["colours"]):
        who = column(seat_name(names, seat), 18)
        hand = view["hands"][seat]
        held = (
            " ".join(hand)
            if isinstance(hand, list)
            else f"S{hand['S']} M{hand['M']} L{hand['L']} (hidden)"
        )
        marker = "*" if seat == view["marker"] else " "
        lines.append(f"{marker}{seat} {who} {colour} {totals.get(colour, 0):>3} pts  hand: {held}")
    lines.append("* holds the marker")
    pool = view["pool"]
    lines.append(f"Pool: S {pool['S']}, M {pool['M']}, L {pool['L']}.")
    lines.append(f"Out of the game: {view['out_of_game']}.")
    return board_text(lines)
