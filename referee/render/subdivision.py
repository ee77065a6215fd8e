"""Subdivision as a picture and as a text board, drawn from a view.

The board is drawn as a chess diagram: file letters under it, rank numbers
beside it, `a1` bottom left. Pyramids are seen from above in their seat's
colour, their size showing their pips; parks are lawns with trees. Beside
the board each seat has its score and the pyramids it still has to place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building
from referee.i18n import N_, _
from referee.render.common import board_text, column, person_name, seat_name
from referee.render.svg import (
    INK,
    LINE,
    MUTED,
    SEAT_COLOURS,
    Canvas,
    chosen_box,
    mark_box,
    name_label,
    pyramid,
    ring_box,
    seat_panel,
    target_box,
    text_width,
)

BOARD = 360
LEFT = 40
TOP = 76
WIDTH = LEFT + BOARD + 20
SIZE_LETTERS = {1: "S", 2: "M", 3: "L"}
SIZE_WORDS = {1: N_("Small"), 2: N_("Medium"), 3: N_("Large")}
# The side of a pyramid, as a share of its cell, by its pips.
SCALE = {1: 0.42, 2: 0.62, 3: 0.84}
# Seat panels sit two to a row under the board, so that the picture stays
# narrow: on a 390 px phone its smallest text still reads at 11 px.
PANEL_WIDTH = (WIDTH - LEFT - 14) / 2
PANEL_HEIGHT = 80
SIZE_BAND = 84


def _status(view: JSON, names: Sequence[str] | None) -> str:
    to_move = view.get("to_move")
    if to_move is None:
        return _("Game over")
    who = person_name(names, to_move)
    if view.get("parks_to_place"):
        return _("{name} to place a park ({count} left)").format(
            name=who, count=view["parks_to_place"]
        )
    return _("{name} to move").format(name=who)


def _cell_xy(cell: str, size: int) -> tuple[int, int]:
    """Column and row on the picture (row 0 at the top) of a cell like `c4`."""
    return ord(cell[0]) - ord("a"), size - int(cell[1:])


def _placed(view: JSON, before: JSON | None) -> list[str]:
    """The cells the last move filled: a pyramid or a park (nothing ever leaves)."""
    if before is None:
        return []
    filled = set(view["pieces"]) | set(view["parks"])
    return sorted(filled - set(before["pieces"]) - set(before["parks"]))


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    size: int = view["size"]
    cell_side = BOARD / size
    seats = len(view["stash"])
    choosing_size = building is not None and len(building.steps) == 1 and bool(building.choices)
    band = SIZE_BAND if choosing_size else 0
    panels_top = TOP + BOARD + 40 + band
    height = panels_top + (seats + 1) // 2 * (PANEL_HEIGHT + 10) + 6
    canvas = Canvas(WIDTH, height, _("Subdivision: {status}").format(status=_status(view, names)))
    canvas.text(LEFT, 32, "Subdivision", size=24, bold=True)
    canvas.text(LEFT, 58, _status(view, names), size=16, fill=MUTED)

    canvas.rect(LEFT - 4, TOP - 4, BOARD + 8, BOARD + 8, fill="#e9e1cf", stroke=INK, rx=4)
    for row in range(size):
        for col in range(size):
            light = (row + col) % 2 == 0
            canvas.rect(
                LEFT + col * cell_side,
                TOP + row * cell_side,
                cell_side,
                cell_side,
                fill="#f6f0e1" if light else "#efe6d2",
                stroke=LINE,
                stroke_width=0.6,
            )
    for index in range(size):
        x = LEFT + index * cell_side + cell_side / 2
        canvas.text(x, TOP + BOARD + 24, chr(ord("a") + index), size=16, anchor="middle")
        y = TOP + index * cell_side + cell_side / 2 + 6
        canvas.text(LEFT - 20, y, str(size - index), size=16, anchor="middle")

    for cell in _placed(view, before):
        x, y = _cell_origin(cell, size)
        mark_box(canvas, x + 1, y + 1, cell_side - 2, cell_side - 2, "added", {"data-cell": cell})

    for cell in view["parks"]:
        x, y = _cell_origin(cell, size)
        canvas.open({"class": "park", "data-cell": cell})
        canvas.rect(
            x + 2, y + 2, cell_side - 4, cell_side - 4, fill="#b9d8a4", stroke="#7fae66", rx=6
        )
        for dx, dy, r in ((0.32, 0.36, 0.14), (0.66, 0.44, 0.17), (0.42, 0.7, 0.13)):
            canvas.circle(x + dx * cell_side, y + dy * cell_side, r * cell_side, fill="#5f9a4a")
        canvas.close()

    for cell, piece in view["pieces"].items():
        x, y = _cell_origin(cell, size)
        seat, pips = piece["seat"], piece["size"]
        pyramid(
            canvas,
            x + cell_side / 2,
            y + cell_side / 2,
            SCALE[pips] * cell_side,
            SEAT_COLOURS[seat],
            {"data-place": "board", "data-cell": cell, "data-seat": seat, "data-size": pips},
        )

    if building is not None:
        _targets(canvas, size, building, TOP + BOARD + 36)
    for seat in range(seats):
        x = LEFT + (seat % 2) * (PANEL_WIDTH + 10)
        _panel(canvas, view, names, seat, x, panels_top + seat // 2 * (PANEL_HEIGHT + 10))
    return canvas.finish()


def _cell_origin(cell: str, size: int) -> tuple[float, float]:
    col, row = _cell_xy(cell, size)
    return LEFT + col * BOARD / size, TOP + row * BOARD / size


def _targets(canvas: Canvas, size: int, building: Building[Any], band_top: float) -> None:
    """The cells that may be chosen, or the sizes that fit the chosen cell."""
    cell_side = BOARD / size
    if building.steps:
        x, y = _cell_origin(building.steps[0], size)
        chosen_box(canvas, x + 2, y + 2, cell_side - 4, cell_side - 4)
    if not building.steps:
        for choice in building.choices:
            x, y = _cell_origin(choice.step, size)
            target_box(canvas, x + 3, y + 3, cell_side - 6, cell_side - 6, choice)
        return
    seat = building.view["to_move"]
    width = (BOARD - 16) / 3
    for k, choice in enumerate(building.choices):
        pips = int(choice.step)
        x = LEFT + k * (width + 8)
        canvas.target(choice)
        ring_box(canvas, x, band_top, width, SIZE_BAND - 12)
        # The pyramid over its size in words, both centred: "Medium" beside a large
        # pyramid would not fit a third of a phone's board.
        pyramid(
            canvas,
            x + width / 2,
            band_top + 26,
            SCALE[pips] * 44,
            SEAT_COLOURS[seat],
            {"data-place": "choice", "data-size": pips},
        )
        canvas.text(x + width / 2, band_top + 62, _(SIZE_WORDS[pips]), size=15, anchor="middle")
        canvas.close()


def _panel(
    canvas: Canvas, view: JSON, names: Sequence[str] | None, seat: int, x: float, y: float
) -> None:
    stash = view["stash"][seat]
    colour = SEAT_COLOURS[seat]
    moving = view.get("to_move") == seat
    seat_panel(canvas, x, y, PANEL_WIDTH, PANEL_HEIGHT, seat, moving)
    score = str(view["scores"][seat])
    # The name has the top line up to the score.
    room = PANEL_WIDTH - 16 - 10 - text_width(score, 20) - 8
    if seat in set(view.get("resigned", [])):
        out = " " + _("(out)")
        label = name_label(seat_name(names, seat), 15, room - text_width(out, 15, True))
        label += out
    else:
        label = name_label(seat_name(names, seat), 15, room)
    canvas.text(x + 16, y + 24, label, size=15, bold=True)
    canvas.text(x + PANEL_WIDTH - 10, y + 25, score, size=20, anchor="end")
    if not sum(stash):
        canvas.text(x + 16, y + 60, _("all placed"), size=14, fill=MUTED)
        return
    left = x + 16
    for pips in (3, 2, 1):
        count = stash[pips - 1]
        pyramid(
            canvas,
            left + 11,
            y + 55,
            SCALE[pips] * 26,
            colour if count else LINE,
            {"data-place": "stash", "data-seat": seat, "data-size": pips, "data-count": count},
        )
        canvas.text(left + 25, y + 61, f"{count}", size=15)
        left += 54


def text(view: JSON, names: Sequence[str] | None) -> str:
    size: int = view["size"]
    parks = set(view["parks"])
    pieces = view["pieces"]
    lines = [_("Subdivision: {status}").format(status=_status(view, names)), ""]
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
    lines.append(_("L/M/S = large/medium/small, digit = seat, ## = park"))
    lines.append("")
    resigned = set(view.get("resigned", []))
    for seat, stash in enumerate(view["stash"]):
        small, medium, large = stash
        note = " " + _("resigned") if seat in resigned else ""
        who = column(seat_name(names, seat), 24)
        lines.append(
            _("{seat} {who} score {score}   to place L{large} M{medium} S{small}{note}").format(
                seat=seat + 1,
                who=who,
                score=f"{view['scores'][seat]:>3}",
                large=large,
                medium=medium,
                small=small,
                note=note,
            )
        )
    return board_text(lines)
