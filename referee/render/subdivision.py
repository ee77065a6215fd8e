"""Subdivision as a picture and as a text board, drawn from a view.

The board is drawn as a chess diagram: file letters under it, rank numbers
beside it, `a1` bottom left. Pyramids are seen from above in their seat's
colour, their size showing their pips; parks are lawns with trees. Beside
the board each seat has its score and the pyramids it still has to place.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine import JSON
from referee.render.common import board_text, clip, column, seat_name
from referee.render.svg import INK, LINE, MUTED, SEAT_COLOURS, Canvas, mark_box, pyramid

CELL = 60
LEFT = 44
TOP = 78
PANEL = 340
SIZE_LETTERS = {1: "S", 2: "M", 3: "L"}
# The side of a pyramid, as a share of its cell, by its pips.
SCALE = {1: 0.42, 2: 0.62, 3: 0.84}


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    if to_move is None:
        return "Game over"
    who = seat_name(names, to_move)
    if view.get("parks_to_place"):
        return f"{who} to place a park ({view['parks_to_place']} left)"
    return f"{who} to move"


def _cell_xy(cell: str, size: int) -> tuple[int, int]:
    """Column and row on the picture (row 0 at the top) of a cell like `c4`."""
    return ord(cell[0]) - ord("a"), size - int(cell[1:])


def _placed(view: JSON, before: JSON | None) -> list[str]:
    """The cells the last move filled: a pyramid or a park (nothing ever leaves)."""
    if before is None:
        return []
    filled = set(view["pieces"]) | set(view["parks"])
    return sorted(filled - set(before["pieces"]) - set(before["parks"]))


def svg(view: JSON, names: Sequence[str] | None, before: JSON | None = None) -> str:
    size: int = view["size"]
    seats = len(view["stash"])
    board = size * CELL
    width = LEFT + board + 40 + PANEL
    height = max(TOP + board + 44, TOP + seats * 96 + 20)
    canvas = Canvas(width, height, f"Subdivision: {_status(view, names)}")
    canvas.text(LEFT, 34, "Subdivision", size=24, bold=True)
    canvas.text(LEFT, 58, _status(view, names), size=15, fill=MUTED)

    canvas.rect(LEFT - 4, TOP - 4, board + 8, board + 8, fill="#e9e1cf", stroke=INK, rx=4)
    for row in range(size):
        for col in range(size):
            light = (row + col) % 2 == 0
            canvas.rect(
                LEFT + col * CELL,
                TOP + row * CELL,
                CELL,
                CELL,
                fill="#f6f0e1" if light else "#efe6d2",
                stroke=LINE,
                stroke_width=0.6,
            )
    for index in range(size):
        x = LEFT + index * CELL + CELL / 2
        canvas.text(x, TOP + board + 26, chr(ord("a") + index), size=15, anchor="middle")
        y = TOP + index * CELL + CELL / 2 + 5
        canvas.text(LEFT - 20, y, str(size - index), size=15, anchor="middle")

    for cell in _placed(view, before):
        col, row = _cell_xy(cell, size)
        x, y = LEFT + col * CELL, TOP + row * CELL
        mark_box(canvas, x + 1, y + 1, CELL - 2, CELL - 2, "added", {"data-cell": cell})

    for cell in view["parks"]:
        col, row = _cell_xy(cell, size)
        x, y = LEFT + col * CELL, TOP + row * CELL
        canvas.open({"class": "park", "data-cell": cell})
        canvas.rect(x + 2, y + 2, CELL - 4, CELL - 4, fill="#b9d8a4", stroke="#7fae66", rx=6)
        for dx, dy, r in ((0.32, 0.36, 0.14), (0.66, 0.44, 0.17), (0.42, 0.7, 0.13)):
            canvas.circle(x + dx * CELL, y + dy * CELL, r * CELL, fill="#5f9a4a")
        canvas.close()

    for cell, piece in view["pieces"].items():
        col, row = _cell_xy(cell, size)
        seat, pips = piece["seat"], piece["size"]
        pyramid(
            canvas,
            LEFT + col * CELL + CELL / 2,
            TOP + row * CELL + CELL / 2,
            SCALE[pips] * CELL,
            SEAT_COLOURS[seat],
            {"data-place": "board", "data-cell": cell, "data-seat": seat, "data-size": pips},
        )

    _panel(canvas, view, names, LEFT + board + 40)
    return canvas.finish()


def _panel(canvas: Canvas, view: JSON, names: Sequence[str] | None, x: float) -> None:
    resigned = set(view.get("resigned", []))
    for seat, stash in enumerate(view["stash"]):
        y = TOP + seat * 96
        colour = SEAT_COLOURS[seat]
        moving = view.get("to_move") == seat
        canvas.rect(
            x,
            y,
            PANEL - 10,
            86,
            fill="#ffffff" if moving else "#f7f3ea",
            stroke=colour if moving else LINE,
            stroke_width=2.5 if moving else 1,
            rx=8,
        )
        canvas.rect(x, y, 8, 86, fill=colour, rx=3)
        label = clip(seat_name(names, seat), 18)
        if seat in resigned:
            label += " (resigned)"
        canvas.text(x + 18, y + 24, label, size=15, bold=True)
        canvas.text(x + PANEL - 22, y + 26, str(view["scores"][seat]), size=22, anchor="end")
        canvas.text(x + PANEL - 22, y + 42, "points", size=10, anchor="end", fill=MUTED)
        if not sum(stash):
            canvas.text(x + 20, y + 66, "all placed", size=13, fill=MUTED)
            continue
        left = x + 20
        for pips in (3, 2, 1):
            count = stash[pips - 1]
            side = SCALE[pips] * 24
            for k in range(count):
                pyramid(
                    canvas,
                    left + side / 2 + k * (side + 2),
                    y + 62,
                    side,
                    colour,
                    {"data-place": "stash", "data-seat": seat, "data-size": pips},
                )
            if count == 0:
                canvas.text(left + 4, y + 66, "-", size=13, fill=MUTED)
            left += max(count, 1) * (side + 2) + 12


def text(view: JSON, names: Sequence[str] | None) -> str:
    size: int = view["size"]
    parks = set(view["parks"])
    pieces = view["pieces"]
    lines = [f"Subdivision: {_status(view, names)}", ""]
    files = [chr(ord("a") + i) for i in range(size)]
    header = "     " + "".join(f"{f:<4}" for f in files)
    lines.append(header)
    for rank in range(size, 0, -1):
        cells = []
        for f in files:
            cell = f"{f}{rank}"
            if cell in parks:
                cells.append("##")
            elif cell in pieces:
                piece = pieces[cell]
                cells.append(f"{SIZE_LETTERS[piece['size']]}{piece['seat']}")
            else:
                cells.append(". ")
        lines.append(f"{rank:>2}   " + "  ".join(cells) + f"   {rank}")
    lines.append(header)
    lines.append("")
    lines.append("L/M/S = large/medium/small, digit = seat, ## = park")
    lines.append("")
    resigned = set(view.get("resigned", []))
    for seat, stash in enumerate(view["stash"]):
        small, medium, large = stash
        note = " resigned" if seat in resigned else ""
        who = column(seat_name(names, seat), 24)
        lines.append(
            f"{seat} {who} score {view['scores'][seat]:>3}"
            f"   to place L{large} M{medium} S{small}{note}"
        )
    return board_text(lines)
