"""Mandala as a picture and as a text board, drawn from a view.

The path winds inwards from index 0 on the outside to the eye in the
centre, where passed pyramids go; every index is numbered, since a move
names the index to move to. Pawns are numbered tokens in their seat's
colour. The eye and every collection are drawn as the same grid of the 15
kinds (colours across, sizes down), so majorities can be compared at a
glance; a kind already scored is faded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building
from referee.games.mandala import COLOURS, PATH_LENGTH
from referee.render.common import board_text, clip, column, seat_name
from referee.render.svg import (
    LINE,
    MUTED,
    PYRAMID_COLOURS,
    SEAT_COLOURS,
    Canvas,
    ghost_ring,
    mark_box,
    mark_round,
    open_ghost,
    pyramid,
    seat_token,
    spiral,
)

SIZES = "LMS"  # the grids' rows, largest first
SIDE = {"S": 13.0, "M": 19.0, "L": 25.0}

CENTRE_X = 300.0
CENTRE_Y = 344.0
EYE_RADIUS = 104.0
SLOT_GAP = 35.0  # along the path, between neighbouring indices
TURN_GAP = 46.0  # between one turn of the spiral and the next
PANEL_X = 610.0
# One kind's cell in the eye and collection grids.
GRID_X = 34.0
GRID_Y = 24.0


def _slots() -> list[tuple[float, float, float]]:
    """Centre and outward angle of each index, index 0 outermost."""
    # Numbered from the outside in, turned so that index 0 is at the top and
    # the path winds clockwise on its way in.
    polar = spiral(PATH_LENGTH, EYE_RADIUS + 26, SLOT_GAP, TURN_GAP)
    outer = polar[-1][1]
    slots = []
    for radius, angle in reversed(polar):
        heading = -math.pi / 2 + outer - angle
        slots.append(
            (CENTRE_X + radius * math.cos(heading), CENTRE_Y + radius * math.sin(heading), heading)
        )
    return slots


SLOTS = _slots()


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    return "Game over" if to_move is None else f"{seat_name(names, to_move)} to move"


def _kind_grid(
    canvas: Canvas,
    x: float,
    y: float,
    counts: dict[str, int],
    scored: set[str],
    place: str,
    seat: int | None,
    before: dict[str, int] | None = None,
) -> None:
    """The 15 kinds as a grid, each held kind a pyramid with its count.

    A kind with more than `before` held is marked: the last move brought it.
    """
    for row, size in enumerate(SIZES):
        for col, colour in enumerate(COLOURS):
            kind = size + colour
            cx, cy = x + col * GRID_X + GRID_X / 2, y + row * GRID_Y + GRID_Y / 2
            count = counts.get(kind, 0)
            if before is not None and count > before.get(kind, 0):
                data = {"data-place": place, "data-kind": kind, "data-seat": seat}
                mark_box(
                    canvas,
                    cx - GRID_X / 2 + 1,
                    cy - GRID_Y / 2 + 1,
                    GRID_X - 2,
                    GRID_Y - 2,
                    "added",
                    data,
                    rx=4,
                )
            if not count:
                canvas.circle(cx, cy, 1.6, fill=LINE)
                continue
            faded = kind in scored
            canvas.open({"opacity": "0.35" if faded else None})
            pyramid(
                canvas,
                cx - 4,
                cy,
                SIDE[size] * 0.7,
                PYRAMID_COLOURS[colour],
                {"data-place": place, "data-kind": kind, "data-count": count, "data-seat": seat},
            )
            if count > 1:
                canvas.text(cx + 12, cy + 4, str(count), size=10, anchor="middle", bold=True)
            canvas.close()


def _path_marks(canvas: Canvas, view: JSON, before: JSON) -> None:
    """Where the pawns went, halos behind the path; drawn before the path's pieces."""
    for seat, (now, was) in enumerate(zip(view["pawns"], before["pawns"], strict=True)):
        if now != was and now >= 0:
            x, y, _ = SLOTS[now]
            mark_round(canvas, x, y, 19, "moved", {"data-index": now, "data-seat": seat})


def _ghosts_at(canvas: Canvas, index: int, view: JSON, before: JSON) -> None:
    """What the last move took from index `index` (taken, or gone to the eye), faint
    where it lay, and a pawn that left it."""
    x, y, _ = SLOTS[index]
    was = before["path"][index]
    if was and not view["path"][index]:
        open_ghost(canvas, {"data-place": "path", "data-index": index, "data-kind": was})
        pyramid(canvas, x, y, SIDE[was[0]], PYRAMID_COLOURS[was[1]], {})
        ghost_ring(canvas, x, y, 15)
        canvas.close()
    for seat, (now, then) in enumerate(zip(view["pawns"], before["pawns"], strict=True)):
        if then == index and now != then:
            open_ghost(canvas, {"data-place": "pawn", "data-index": index, "data-seat": seat})
            seat_token(canvas, x, y, 11, seat, {})
            canvas.close()


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["pawns"])
    scored = set(view["scored"])
    height = max(CENTRE_Y + 300, 96 + seats * 112.0)
    canvas = Canvas(PANEL_X + 300, height, f"Mandala: {_status(view, names)}")
    canvas.text(24, 36, "Mandala", size=24, bold=True)
    canvas.text(24, 60, _status(view, names), size=15, fill=MUTED)

    # The path itself: a faint ribbon through every index.
    canvas.path(
        "M " + " L ".join(f"{x:.2f},{y:.2f}" for x, y, _ in SLOTS),
        fill="none",
        stroke="#e6dcc6",
        stroke_width=30,
    )
    if before is not None:
        _path_marks(canvas, view, before)
    pawn_at = {index: seat for seat, index in enumerate(view["pawns"]) if index >= 0}
    for index, (x, y, heading) in enumerate(SLOTS):
        kind = view["path"][index]
        canvas.circle(x, y, 15, fill="#fffdf7" if kind else "#efe7d5", stroke=LINE)
        if before is not None:
            _ghosts_at(canvas, index, view, before)
        lx, ly = x + 22 * math.cos(heading), y + 22 * math.sin(heading)
        canvas.text(lx, ly + 3.5, str(index), size=9, anchor="middle", fill=MUTED)
        if kind:
            pyramid(
                canvas,
                x,
                y,
                SIDE[kind[0]],
                PYRAMID_COLOURS[kind[1]],
                {"data-place": "path", "data-index": index, "data-kind": kind},
            )
        if index in pawn_at:
            seat = pawn_at[index]
            seat_token(canvas, x, y, 11, seat, {"class": "pawn", "data-seat": seat})

    waiting = [seat for seat, index in enumerate(view["pawns"]) if index < 0]
    start_x, start_y, _ = SLOTS[0]
    for k, seat in enumerate(waiting):
        seat_token(
            canvas, start_x - 40 - k * 26, start_y, 11, seat, {"class": "pawn", "data-seat": seat}
        )
    if waiting:
        canvas.text(start_x - 40 - len(waiting) * 26, start_y + 4, "start", size=11, anchor="end")

    canvas.circle(CENTRE_X, CENTRE_Y, EYE_RADIUS, fill="#f3ecdc", stroke="#b8a98a", stroke_width=2)
    canvas.text(CENTRE_X, CENTRE_Y - 52, "Eye", size=14, anchor="middle", bold=True, fill="#7a6a4c")
    _kind_grid(
        canvas,
        CENTRE_X - 2.5 * GRID_X,
        CENTRE_Y - 1.5 * GRID_Y + 8,
        view["eye"],
        scored,
        "eye",
        None,
        None if before is None else before["eye"],
    )

    _panel(canvas, view, names, scored, before)
    return canvas.finish()


def _panel(
    canvas: Canvas,
    view: JSON,
    names: Sequence[str] | None,
    scored: set[str],
    before: JSON | None,
) -> None:
    at_end = set(view["at_end"])
    resigned = set(view.get("resigned", []))
    for seat, collection in enumerate(view["collections"]):
        y = 80 + seat * 112
        moving = view.get("to_move") == seat
        colour = SEAT_COLOURS[seat]
        canvas.rect(
            PANEL_X,
            y,
            280,
            104,
            fill="#ffffff" if moving else "#f7f3ea",
            stroke=colour if moving else LINE,
            stroke_width=2.5 if moving else 1,
            rx=8,
        )
        seat_token(canvas, PANEL_X + 18, y + 18, 10, seat, {"class": "seat"})
        canvas.text(PANEL_X + 34, y + 23, clip(seat_name(names, seat), 18), size=14, bold=True)
        canvas.text(PANEL_X + 266, y + 26, str(view["scores"][seat]), size=22, anchor="end")
        canvas.text(PANEL_X + 266, y + 42, "points", size=10, anchor="end", fill=MUTED)
        pawn = view["pawns"][seat]
        canvas.text(PANEL_X + 186, y + 50, "start" if pawn < 0 else f"on {pawn}", size=11)
        note = "resigned" if seat in resigned else "at the end" if seat in at_end else ""
        if note:
            canvas.text(PANEL_X + 186, y + 66, note, size=11, fill=MUTED)
        held = None if before is None else before["collections"][seat]
        _kind_grid(canvas, PANEL_X + 10, y + 30, collection, scored, "collection", seat, held)
    if scored:
        canvas.text(
            PANEL_X,
            80 + len(view["collections"]) * 112 + 6,
            "Faded: sets already scored",
            size=11,
            fill=MUTED,
        )


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [f"Mandala: {_status(view, names)}", ""]
    lines.append("Path: a kind is size (S/M/L) + colour (r y g b k=black);")
    lines.append(".. = taken, @n = pawn of seat n. Index = row + column.")
    lines.append("")
    lines.extend(_path_lines(view))
    lines.append("")
    lines.extend(_counts_lines("Eye:", view["eye"]))
    lines.append("Scored: " + (" ".join(view["scored"]) or "none yet"))
    lines.append("")
    for seat, collection in enumerate(view["collections"]):
        who = column(seat_name(names, seat), 20)
        lines.append(f"{seat} {who} score {view['scores'][seat]:>3}  {_whereabouts(view, seat)}")
        lines.extend(_counts_lines("   holds", collection))
    return board_text(lines)


def _path_lines(view: JSON) -> list[str]:
    """The path ten indices to a row, pawns over their index, then pawns yet to enter."""
    path = view["path"]
    pawn_at = {index: seat for seat, index in enumerate(view["pawns"]) if index >= 0}
    lines = ["      " + "".join(f"+{col:<3}" for col in range(10))]
    for row in range(0, PATH_LENGTH, 10):
        cells = []
        for index in range(row, min(row + 10, PATH_LENGTH)):
            if index in pawn_at:
                cells.append(f"@{pawn_at[index]}")
            else:
                cells.append(path[index] or "..")
        lines.append(f"{row:>3}   " + "  ".join(cells))
    waiting = [str(seat) for seat, index in enumerate(view["pawns"]) if index < 0]
    if waiting:
        lines.append("Before the path: " + " ".join(f"@{seat}" for seat in waiting))
    return lines


def _whereabouts(view: JSON, seat: int) -> str:
    if seat in view.get("resigned", []):
        return "resigned"
    if seat in view["at_end"]:
        return "at end"
    pawn = view["pawns"][seat]
    return "start" if pawn < 0 else f"on {pawn}"


def _counts_lines(label: str, counts: dict[str, int]) -> list[str]:
    """`label` and the kinds held, as `Mg2`, wrapped within the text width."""
    items = [
        f"{size + colour}{counts[size + colour]}"
        for size in "SML"
        for colour in COLOURS
        if counts.get(size + colour)
    ]
    if not items:
        return [f"{label} nothing"]
    lines, line = [], label
    for item in items:
        if len(line) + 1 + len(item) > 70:
            lines.append(line)
            line = " " * len(label)
        line += " " + item
    lines.append(line)
    return lines
