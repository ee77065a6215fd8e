"""Mandala as a picture and as a text board, drawn from a view.

The path is a square spiral of numbered tiles winding clockwise and inwards
from index 0 at the top left to the eye in the centre, where passed
pyramids go; every tile is numbered, since a move names the index to move
to. The picture is narrow (ten tiles across) so that on a phone the tiles
are large enough to tap and every number reads at 11 CSS px or more; the
seats' collections sit under the board, two to a row. Pawns are numbered
tokens in their seat's colour. The eye and every collection are drawn as
the same grid of the 15 kinds (colours across, sizes down), so majorities
can be compared at a glance; while the game runs, a kind already scored is
faded (once it is over every kind is, and the final holdings show plainly).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building
from referee.games.mandala import COLOURS, PATH_LENGTH
from referee.i18n import _
from referee.render.common import board_text, column, person_name, seat_name
from referee.render.svg import (
    LINE,
    MUTED,
    PYRAMID_COLOURS,
    SEAT_COLOURS,
    Canvas,
    chosen_box,
    ghost_ring,
    mark_box,
    name_label,
    open_ghost,
    pyramid,
    ring_box,
    seat_token,
)

SIZES = "LMS"  # the grids' rows, largest first
SIDE = {"S": 12.0, "M": 16.0, "L": 20.0}

# The board: COLUMNS x ROWS squares of PITCH, the path on three rings of them.
PITCH = 40.0
COLUMNS = 10
ROWS = 9
LEFT = 8.0
TOP = 90.0
WIDTH = LEFT * 2 + COLUMNS * PITCH
TILE = PITCH - 6  # a tile, a gap of 6 between neighbours
# The smallest text: 11 CSS px when the picture is shown 358 px wide.
SMALL_TEXT = 13.0
# The eye fills the 5 x 3 squares the innermost ring leaves free (the path
# ends at the last square of that ring's bottom row); its top left square.
EYE_AT = (2, 3)

PANELS_TOP = TOP + ROWS * PITCH + 12
PANEL_WIDTH = (WIDTH - 2 * LEFT - 8) / 2
PANEL_HEIGHT = 126.0

ROAD = "#dccfb2"
TILE_FILL = "#fffaf0"
TILE_EMPTY = "#efe7d6"
EYE_FILL = "#efe4cc"
EYE_EDGE = "#b8a98a"
EYE_INK = "#7a6a4c"


def _squares() -> list[tuple[int, int]]:
    """The (column, row) of each index: clockwise round each ring, ring by ring inwards."""
    squares: list[tuple[int, int]] = []
    ring = 0
    while len(squares) < PATH_LENGTH:
        x0, y0, x1, y1 = ring, ring, COLUMNS - 1 - ring, ROWS - 1 - ring
        squares += [(x, y0) for x in range(x0, x1 + 1)]
        squares += [(x1, y) for y in range(y0 + 1, y1 + 1)]
        squares += [(x, y1) for x in range(x1 - 1, x0 - 1, -1)]
        squares += [(x0, y) for y in range(y1 - 1, y0, -1)]
        ring += 1
    return squares[:PATH_LENGTH]


SQUARES = _squares()


def _corner(index: int) -> tuple[float, float]:
    """The top left corner of the tile of path index `index`."""
    col, row = SQUARES[index]
    return LEFT + col * PITCH + 3, TOP + row * PITCH + 3


def _centre(index: int) -> tuple[float, float]:
    """Where the tile's pyramid or pawn stands: below and right of its number."""
    x, y = _corner(index)
    return x + TILE / 2 + 3, y + TILE / 2 + 5.5


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    if to_move is None:
        return _("Game over")
    return _("{name} to move").format(name=person_name(names, to_move))


def _kind_grid(
    canvas: Canvas,
    origin: tuple[float, float],
    cell: tuple[float, float],
    counts: dict[str, int],
    scored: set[str],
    data: dict[str, str | int | None],
    before: dict[str, int] | None,
) -> None:
    """The 15 kinds as a grid of `cell`s, each held kind a pyramid with its count.

    A kind with more than `before` held is marked: the last move brought it.
    """
    width, height = cell
    for row, size in enumerate(SIZES):
        for col, colour in enumerate(COLOURS):
            kind = size + colour
            x, y = origin[0] + col * width, origin[1] + row * height
            cx, cy = x + width / 2, y + height / 2
            count = counts.get(kind, 0)
            if before is not None and count > before.get(kind, 0):
                mark_box(
                    canvas,
                    x + 1,
                    y + 1,
                    width - 2,
                    height - 2,
                    "added",
                    {**data, "data-kind": kind},
                    rx=4,
                )
            if not count:
                canvas.circle(cx, cy, 1.8, fill=LINE)
                continue
            canvas.open({"opacity": "0.35" if kind in scored else None})
            pyramid(
                canvas,
                cx - 6,
                cy,
                SIDE[size] * 0.9,
                PYRAMID_COLOURS[colour],
                {**data, "data-kind": kind, "data-count": count},
            )
            if count > 1:
                canvas.text(
                    cx + 11, cy + 4.5, str(count), size=SMALL_TEXT, anchor="middle", bold=True
                )
            canvas.close()


def _road(canvas: Canvas) -> None:
    """The path as a band joining the tiles in order: the spiral's course shows
    between neighbours, while the rings stay apart."""
    points = " ".join(
        f"{x + TILE / 2:.2f},{y + TILE / 2:.2f}" for x, y in map(_corner, range(PATH_LENGTH))
    )
    canvas.element(
        "polyline",
        {
            "points": points,
            "fill": "none",
            "stroke": ROAD,
            "stroke-width": 18.0,
            "stroke-linejoin": "round",
        },
    )


def _tile(canvas: Canvas, view: JSON, index: int, arrived: int | None) -> None:
    """A tile and its number; halo-marked where the pawn of seat `arrived` just moved."""
    x, y = _corner(index)
    if arrived is not None:
        mark_box(canvas, x, y, TILE, TILE, "moved", {"data-index": index, "data-seat": arrived})
    else:
        kind = view["path"][index]
        canvas.rect(x, y, TILE, TILE, fill=TILE_FILL if kind else TILE_EMPTY, stroke=LINE, rx=6)
    canvas.text(x + 3.5, y + 12.5, str(index), size=SMALL_TEXT, fill=MUTED)


def _ghosts(canvas: Canvas, view: JSON, index: int, before: JSON) -> None:
    """What the last move took from index `index` (taken, or gone to the eye), faint
    where it lay, and a pawn that left it."""
    cx, cy = _centre(index)
    was = before["path"][index]
    if was and not view["path"][index]:
        open_ghost(canvas, {"data-place": "path", "data-index": index, "data-kind": was})
        pyramid(canvas, cx, cy, SIDE[was[0]], PYRAMID_COLOURS[was[1]], {})
        ghost_ring(canvas, cx, cy, SIDE[was[0]] * 0.72)
        canvas.close()
    for seat, (now, then) in enumerate(zip(view["pawns"], before["pawns"], strict=True)):
        if then == index and now != then:
            open_ghost(canvas, {"data-place": "pawn", "data-index": index, "data-seat": seat})
            seat_token(canvas, cx, cy, 11, seat, {})
            canvas.close()


def _path(canvas: Canvas, view: JSON, before: JSON | None) -> None:
    """The tiles with their pyramids and pawns, the pawns yet to enter above tile 0."""
    _road(canvas)
    pawn_at = {index: seat for seat, index in enumerate(view["pawns"]) if index >= 0}
    was = view["pawns"] if before is None else before["pawns"]
    arrived = {index: seat for index, seat in pawn_at.items() if was[seat] != index}
    for index in range(PATH_LENGTH):
        _tile(canvas, view, index, arrived.get(index))
        if before is not None:
            _ghosts(canvas, view, index, before)
        cx, cy = _centre(index)
        kind = view["path"][index]
        if kind:
            data = {"data-place": "path", "data-index": index, "data-kind": kind}
            pyramid(canvas, cx, cy, SIDE[kind[0]], PYRAMID_COLOURS[kind[1]], data)
        if index in pawn_at:
            seat = pawn_at[index]
            seat_token(canvas, cx, cy, 11, seat, {"class": "pawn", "data-seat": seat})
    waiting = [seat for seat, index in enumerate(view["pawns"]) if index < 0]
    first_x = _corner(0)[0] + TILE / 2
    for k, seat in enumerate(waiting):
        seat_token(
            canvas, first_x + k * 28, TOP - 18, 11, seat, {"class": "pawn", "data-seat": seat}
        )
    if waiting:
        canvas.text(
            first_x + len(waiting) * 28 - 8,
            TOP - 13,
            _("at the start"),
            size=SMALL_TEXT,
            fill=MUTED,
        )


def _eye(canvas: Canvas, view: JSON, scored: set[str], before: JSON | None) -> None:
    x, y = LEFT + EYE_AT[0] * PITCH + 3, TOP + EYE_AT[1] * PITCH + 3
    canvas.rect(
        x, y, 5 * PITCH - 6, 3 * PITCH - 6, fill=EYE_FILL, stroke=EYE_EDGE, stroke_width=1.5, rx=12
    )
    canvas.text(x + 8, y + 16, _("Eye"), size=SMALL_TEXT, bold=True, fill=EYE_INK)
    _kind_grid(
        canvas,
        (x + 2, y + 22),
        ((5 * PITCH - 10) / 5, 30.0),
        view["eye"],
        scored,
        {"data-place": "eye"},
        None if before is None else before["eye"],
    )


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["pawns"])
    # Fading tells scored sets from open ones: at the end none is open.
    scored = set(view["scored"]) if view.get("to_move") is not None else set()
    height = PANELS_TOP + (seats + 1) // 2 * (PANEL_HEIGHT + 8) + 22
    canvas = Canvas(WIDTH, height, _("Mandala: {status}").format(status=_status(view, names)))
    canvas.text(LEFT, 28, "Mandala", size=22, bold=True)
    canvas.text(LEFT, 52, _status(view, names), size=15, fill=MUTED)
    _path(canvas, view, before)
    _eye(canvas, view, scored, before)
    for seat in range(seats):
        _panel(canvas, view, names, seat, scored, before)
    if scored:
        canvas.text(LEFT, height - 8, _("Faded: sets already scored"), size=SMALL_TEXT, fill=MUTED)
    if building is not None:
        _targets(canvas, building)
    return canvas.finish()


def _targets(canvas: Canvas, building: Building[Any]) -> None:
    """The tiles whose pyramid may be taken, and the one already chosen."""
    for step in building.steps:
        x, y = _corner(int(step))
        chosen_box(canvas, x - 1, y - 1, TILE + 2, TILE + 2)
    for choice in building.choices:
        canvas.target(choice)
        x, y = _corner(int(choice.step))
        # A ring a little larger than the tile: a target of 36 squares.
        ring_box(canvas, x - 1, y - 1, TILE + 2, TILE + 2)
        canvas.close()


def _whereabouts(view: JSON, seat: int) -> str:
    if seat in view.get("resigned", []):
        return _("resigned")
    if seat in view["at_end"]:
        return _("at the end")
    pawn = view["pawns"][seat]
    return _("at the start") if pawn < 0 else _("on {index}").format(index=pawn)


def _panel(
    canvas: Canvas,
    view: JSON,
    names: Sequence[str] | None,
    seat: int,
    scored: set[str],
    before: JSON | None,
) -> None:
    x = LEFT + (seat % 2) * (PANEL_WIDTH + 8)
    y = PANELS_TOP + (seat // 2) * (PANEL_HEIGHT + 8)
    moving = view.get("to_move") == seat
    canvas.rect(
        x,
        y,
        PANEL_WIDTH,
        PANEL_HEIGHT,
        fill="#ffffff" if moving else "#f7f3ea",
        stroke=SEAT_COLOURS[seat] if moving else LINE,
        stroke_width=2.5 if moving else 1,
        rx=8,
    )
    seat_token(canvas, x + 17, y + 18, 11, seat, {"class": "seat"})
    # The name has the top line to itself, so that it is cut only when long.
    label = name_label(seat_name(names, seat), 14, PANEL_WIDTH - 33 - 8)
    canvas.text(x + 33, y + 23, label, size=14, bold=True)
    canvas.text(x + 10, y + 45, _whereabouts(view, seat), size=SMALL_TEXT, fill=MUTED)
    right = x + PANEL_WIDTH - 10
    canvas.text(right, y + 45, _("points"), size=SMALL_TEXT, anchor="end", fill=MUTED)
    canvas.text(right - 44, y + 46, str(view["scores"][seat]), size=18, anchor="end", bold=True)
    _kind_grid(
        canvas,
        (x + 8, y + 52),
        ((PANEL_WIDTH - 16) / 5, 23.0),
        view["collections"][seat],
        scored,
        {"data-place": "collection", "data-seat": seat},
        None if before is None else before["collections"][seat],
    )


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [_("Mandala: {status}").format(status=_status(view, names)), ""]
    lines.append(_("Path: a kind is size (S/M/L) + colour (r y g b k=black);"))
    lines.append(_(".. = taken, @n = pawn of seat n. Index = row + column."))
    lines.append("")
    lines.extend(_path_lines(view))
    lines.append("")
    lines.extend(_counts_lines(_("Eye:"), view["eye"]))
    lines.append(_("Scored: {kinds}").format(kinds=" ".join(view["scored"]) or _("none yet")))
    lines.append("")
    for seat, collection in enumerate(view["collections"]):
        who = column(seat_name(names, seat), 20)
        score = view["scores"][seat]
        lines.append(
            _("{seat} {who} score {score}  {where}").format(
                seat=seat + 1, who=who, score=f"{score:>3}", where=_whereabouts(view, seat)
            )
        )
        lines.extend(_counts_lines("   " + _("holds"), collection))
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
                cells.append(f"@{pawn_at[index] + 1}")
            else:
                cells.append(path[index] or "..")
        lines.append(f"{row:>3}   " + "  ".join(cells))
    waiting = [str(seat + 1) for seat, index in enumerate(view["pawns"]) if index < 0]
    if waiting:
        lines.append(_("Before the path:") + " " + " ".join(f"@{seat}" for seat in waiting))
    return lines


def _counts_lines(label: str, counts: dict[str, int]) -> list[str]:
    """`label` and the kinds held, as `Mg2`, wrapped within the text width."""
    items = [
        f"{size + colour}{counts[size + colour]}"
        for size in "SML"
        for colour in COLOURS
        if counts.get(size + colour)
    ]
    if not items:
        return [_("{label} nothing").format(label=label)]
    lines, line = [], label
    for item in items:
        if len(line) + 1 + len(item) > 70:
            lines.append(line)
            line = " " * len(label)
        line += " " + item
    lines.append(line)
    return lines
