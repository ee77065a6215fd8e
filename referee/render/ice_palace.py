"""Ice Palace as a picture and as a text board, drawn from a view.

The picture is narrow and tall, so that on a phone its smallest text still
reads at 11 px: the status, the yard, the viewer's hand (or, while the
palace is built, the yard's pyramids waiting to be built), the palace, and
the players, one under the other. The yard and the palace are grids around
what is built, one empty cell of margin, with their `x,y` coordinates on
the edges (x to the right, y upwards). A stack is drawn as nested pyramids
seen from above, the largest outermost: in the yard that is the top (each
cover is larger), in the palace the bottom (each cover is smaller), whose
stacks also show their height, the points they give. Each pyramid shows
its size as pips (1 to 3) on its front face. Hands are pyramids for the
viewer's own hand and counts by size for everyone else's: the view holds
no more.

While a move is built, the choices are targets: the hand's pyramids (one
target for identical ones) and the yard's cells, a Pass button; for the
builder, the yard's pyramids, the palace's cells and a button for the
referee's own plan. A preview (`plan` in the view) marks the cells the plan
has filled so far and says how many more it must place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.engine import JSON, Building, Choice
from referee.games.ice_palace import COLOUR_WORDS
from referee.i18n import _, ngettext
from referee.render.common import board_text, column, person_name, prose, seat_name
from referee.render.svg import (
    INK,
    LINE,
    MUTED,
    PYRAMID_COLOURS,
    Canvas,
    chosen_box,
    fit,
    mark_box,
    name_label,
    open_ghost,
    pyramid,
    ring_box,
    shade,
    target_box,
    text_width,
    wrap,
)

SIZE_ORDER = {"S": 1, "M": 2, "L": 3}
SIZE_WORDS = {"S": "small", "M": "medium", "L": "large"}
# A pyramid's side, as a share of its cell (or slot).
SCALE = {"S": 0.4, "M": 0.64, "L": 0.88}
# The picture's width: at 390 px it is shown about 358 px wide, so 13 units
# of text read as 11 px.
WIDTH = 420.0
PAD = 16.0
TEXT = 13.0
# The grids leave a gutter on the left for the row numbers.
GUTTER = 26.0
BIG_CELL = 52.0
GRID_ROWS = 3
TAP_CELL = 34.0
LABEL_ROOM = 30.0
BADGE_CELL = 36.0
SLOT = 58.0
SLOT_GAP = 8.0
BUTTON_H = 44.0
SEAT_H = 66.0
ICE = "#e6eef4"
ICE_CELL = "#f5f9fb"
ICE_LINE = "#c9d7e2"
ICE_EDGE = "#9fb3c4"
LEFT_GAME = "0.4"
# The status under the title: its size, and the width its lines wrap at.
STATUS_SIZE = 15.0
STATUS_WIDTH = WIDTH - 2 * PAD


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

    place: str
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
        """Under the column numbers."""
        return self.top + self.rows * self.cell + 24

    def centre(self, x: int, y: int) -> tuple[float, float]:
        x0, _, _, y1 = self.bounds
        return (
            self.left + (x - x0) * self.cell + self.cell / 2,
            self.top + (y1 - y) * self.cell + self.cell / 2,
        )

    def box(self, key: str, inset: float) -> tuple[float, float, float, float]:
        """The square of the cell `x,y`, `inset` inside its edges."""
        x, y = (int(part) for part in key.split(","))
        cx, cy = self.centre(x, y)
        half = self.cell / 2 - inset
        return cx - half, cy - half, 2 * half, 2 * half


def _grid(view: JSON, before: JSON | None, place: str, top: float) -> _Grid:
    """One board, centred in the width, its cells as large as fit (up to `BIG_CELL`), and
    as small as `TAP_CELL` to keep it `GRID_ROWS` big cells high."""
    cells = _cells(view[place])
    grown: frozenset[tuple[int, int]] = frozenset()
    gone: tuple[tuple[tuple[int, int], list[str]], ...] = ()
    if before is not None:
        earlier = _cells(before[place])
        grown = frozenset(c for c, stack in cells.items() if earlier.get(c) != stack)
        gone = tuple(sorted((c, stack) for c, stack in earlier.items() if c not in cells))
    # A stack taken away is drawn as a ghost where it stood, so it stays in the picture.
    bounds = _bounds([*cells, *(c for c, _ in gone)])
    room = WIDTH - PAD - GUTTER - PAD
    columns = bounds[1] - bounds[0] + 1
    rows = bounds[3] - bounds[2] + 1
    # No taller than the starting 3 by 3 while its cells stay easy to tap: what lies
    # below (the hand, the palace) stays where it was, on a phone's first screen above
    # the move box, as the yard grows.
    cell = min(BIG_CELL, room / columns, max(TAP_CELL, GRID_ROWS * BIG_CELL / rows))
    left = PAD + GUTTER + (room - columns * cell) / 2
    return _Grid(place, cells, bounds, left, top, cell, grown, gone)


def _status(view: JSON, names: Sequence[str] | None) -> str:
    # `turn` (the seat to act, None once over) is an extra of the game's view.
    if "turn" in view and view["turn"] is None:
        return _("Game over")
    if view["phase"] == "build" and view.get("builder") is not None:
        builder = seat_name(names, view["builder"])
        return _("{name} builds the palace: {count} to place").format(
            name=builder, count=view.get("build_max", 0)
        )
    if view.get("last_placer") is None:
        leader: int = view["turn"] if "turn" in view else view["marker"]
        return _("{name} leads the round").format(name=seat_name(names, leader))
    passes = view["passes"]
    status = _("{name} placed last").format(name=seat_name(names, view["last_placer"]))
    if passes:
        status += ngettext(", {count} pass since", ", {count} passes since", passes).format(
            count=passes
        )
    if view.get("turn") is None:
        return status
    return _("{name} to place or pass; {status}").format(
        name=seat_name(names, view["turn"]), status=status
    )


def _points(view: JSON) -> dict[str, int]:
    """Palace points by colour letter: each stack's height to its top's colour."""
    totals: dict[str, int] = {}
    for stack in view["palace"].values():
        if stack:
            top = stack[-1][1]
            totals[top] = totals.get(top, 0) + len(stack)
    return totals


def _status_names(names: Sequence[str] | None, seats: int) -> list[str]:
    """The names as the status says them: without a bot's level (its card says it),
    none wider than half a line."""
    return [fit(person_name(names, seat), STATUS_SIZE, STATUS_WIDTH / 2) for seat in range(seats)]


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["colours"])
    # Names in the status are short enough for its lines; in the players' rows
    # they have the width of the picture.
    lines = wrap(_status(view, _status_names(names, seats)), STATUS_SIZE, STATUS_WIDTH)
    heights = _Heights(view, building)
    yard = _grid(view, before, "yard", 78 + 20 * len(lines) + 30)
    palace = _grid(view, before, "palace", yard.bottom + heights.middle + 40)
    players_top = palace.bottom + 44
    height = players_top + len(view["colours"]) * (SEAT_H + 8) + 52
    canvas = Canvas(WIDTH, height, _("Ice Palace: {status}").format(status=_status(view, names)))
    canvas.text(PAD, 34, _("Ice Palace"), size=22, bold=True)
    for k, line in enumerate(lines):
        canvas.text(PAD, 60 + 20 * k, line, size=STATUS_SIZE, fill=INK if k == 0 else MUTED)
    _board(canvas, _("Yard"), yard, _yard_note(view, yard), view["phase"] == "build")
    _board(canvas, _("Palace"), palace, _palace_note(view), False)
    _middle(canvas, view, building, yard.bottom + 12)
    _seats(canvas, view, [seat_name(names, seat) for seat in range(seats)], players_top)
    if building is not None:
        _grid_targets(canvas, yard, palace, view, building)
    return canvas.finish()


@dataclass(frozen=True, slots=True)
class _Heights:
    """How tall the band between the yard and the palace is: the viewer's hand,
    and while the palace is built the pyramids waiting for it."""

    view: JSON
    building: Building[Any] | None

    @property
    def hand(self) -> float:
        seat = _viewer(self.view)
        if seat is None:
            return 0.0
        return 30 + SLOT + (BUTTON_H + 10 if _choice(self.building, "pass") else 0) + 16

    @property
    def tray(self) -> float:
        if self.view["phase"] != "build" or self.view.get("builder") is None:
            return 0.0
        rows = max(1, -(-len(_kinds(_to_build(self.view))) // 6))
        button = BUTTON_H + 10 if _choice(self.building, "auto") else 0
        return 30 + rows * (SLOT + SLOT_GAP) + button + 16

    @property
    def middle(self) -> float:
        return self.hand + self.tray


def _viewer(view: JSON) -> int | None:
    """The seat whose hand the view shows (None for a spectator)."""
    for seat, hand in enumerate(view["hands"]):
        if isinstance(hand, list):
            return seat
    return None


def _choice(building: Building[Any] | None, step: str) -> Choice | None:
    if building is None:
        return None
    return next((c for c in building.choices if c.step == step), None)


def _to_build(view: JSON) -> list[str]:
    """The yard's pyramids the builder places: black and white have left the game."""
    return [p for stack in view["yard"].values() for p in stack if p[1] not in "kw"]


def _kinds(pyramids: Iterable[str]) -> list[tuple[str, int]]:
    """Each kind of pyramid with its count, largest first, then by colour."""
    counts: dict[str, int] = {}
    for piece in pyramids:
        counts[piece] = counts.get(piece, 0) + 1
    order = "rygbpokw"
    return sorted(counts.items(), key=lambda kv: (-SIZE_ORDER[kv[0][0]], order.index(kv[0][1])))


def _yard_note(view: JSON, grid: _Grid) -> str:
    count = sum(len(stack) for stack in view["yard"].values())
    note = ngettext("{count} pyramid", "{count} pyramids", count).format(count=count)
    if grid.gone:
        note += _(", faint: the last move took them")
    if view["phase"] == "build" and any(p[1] in "kw" for s in view["yard"].values() for p in s):
        note += _(", black and white faint: they leave")
    return note


def _palace_note(view: JSON) -> str:
    if view.get("build_max") is not None and view.get("plan"):
        more = view["build_max"] - len(view["plan"])
        return _("plan: {placed} placed, {more} more to place").format(
            placed=len(view["plan"]), more=max(more, 0)
        )
    count = sum(len(stack) for stack in view["palace"].values())
    return ngettext("{count} pyramid", "{count} pyramids", count).format(count=count)


def _heading(canvas: Canvas, baseline: float, label: str, note: str) -> None:
    """A section's name on the left and a note about it on the right, on one line."""
    canvas.text(PAD, baseline, label, size=17, bold=True)
    canvas.text(WIDTH - PAD, baseline, note, size=TEXT, fill=MUTED, anchor="end")


def _board(canvas: Canvas, label: str, grid: _Grid, note: str, faint: bool) -> None:
    """A grid with its stacks; `faint`: black and white have left the game."""
    x0, _, _, y1 = grid.bounds
    cell, ox, oy = grid.cell, grid.left, grid.top
    width, height = grid.columns * cell, grid.rows * cell
    _heading(canvas, oy - 14, label, note)
    canvas.rect(ox - 3, oy - 3, width + 6, height + 6, fill=ICE, stroke=ICE_EDGE, rx=5)
    for col in range(grid.columns):
        for row in range(grid.rows):
            canvas.rect(
                ox + col * cell, oy + row * cell, cell, cell, fill=ICE_CELL, stroke=ICE_LINE
            )
    # Numbers as wide as "-10" need about 30 units: on a wide board, every
    # second (or third) column is numbered, so that they never run together.
    every = math.ceil(LABEL_ROOM / cell)
    for col in range(grid.columns):
        if (x0 + col) % every == 0:
            x = ox + col * cell + cell / 2
            canvas.text(x, oy + height + 18, str(x0 + col), size=TEXT, anchor="middle", fill=MUTED)
    every = math.ceil(TEXT * 1.2 / cell)
    for row in range(grid.rows):
        if (y1 - row) % every == 0:
            y = oy + row * cell + cell / 2 + TEXT / 3
            canvas.text(ox - 7, y, str(y1 - row), size=TEXT, anchor="end", fill=MUTED)
    _last_marks(canvas, grid)
    for (x, y), stack in sorted(grid.cells.items()):
        cx, cy = grid.centre(x, y)
        data = {"data-place": grid.place, "data-cell": f"{x},{y}"}
        _stack(canvas, cx, cy, cell, stack, data, faint=faint)
        # On small cells the badge would hide the stack; its nested pyramids
        # (each smaller than the one under it) still show how high it is.
        if grid.place == "palace" and len(stack) > 1 and cell >= BADGE_CELL:
            _height_badge(canvas, cx + cell / 2 - 10, cy - cell / 2 + 10, len(stack))


def _last_marks(canvas: Canvas, grid: _Grid) -> None:
    """What the last move changed: the stacks it grew, the stacks it took away."""
    for x, y in sorted(grid.grown):
        left, top, side, _height = grid.box(f"{x},{y}", 1)
        mark_box(
            canvas,
            left,
            top,
            side,
            side,
            "added",
            {"data-place": grid.place, "data-cell": f"{x},{y}"},
        )
    for (x, y), stack in grid.gone:
        cx, cy = grid.centre(x, y)
        open_ghost(canvas, {"data-place": grid.place, "data-cell": f"{x},{y}"})
        _stack(canvas, cx, cy, grid.cell, stack, {}, faint=False)
        canvas.close()


def _height_badge(canvas: Canvas, x: float, y: float, height: int) -> None:
    """A stack's height: the points it gives to its top's colour."""
    canvas.circle(x, y, 9, fill="#ffffff", stroke=INK, stroke_width=0.8)
    canvas.text(x, y + 4.6, str(height), size=TEXT, anchor="middle", bold=True)


def _stack(
    canvas: Canvas,
    cx: float,
    cy: float,
    cell: float,
    stack: list[str],
    data: dict[str, str],
    faint: bool,
) -> None:
    """A stack as nested pyramids seen from above, the largest outermost.

    `faint` draws black and white fainter: in the yard while the palace is
    built, they have left the game (the caller passes it for the yard only;
    they never reach the palace)."""
    for piece in sorted(stack, key=lambda p: -SIZE_ORDER[p[0]]):
        attrs: dict[str, str] = {**data, "data-pyramid": piece} if data else {}
        if faint and piece[1] in "kw":
            attrs["opacity"] = LEFT_GAME
        _pyramid(canvas, cx, cy, SCALE[piece[0]] * cell, piece, attrs)


def _pyramid(
    canvas: Canvas, cx: float, cy: float, side: float, piece: str, data: dict[str, str]
) -> None:
    """An Icehouse pyramid from above, with its pips (1 small, 2 medium, 3 large)
    along the foot of its front face."""
    colour = PYRAMID_COLOURS[piece[1]]
    pyramid(canvas, cx, cy, side, colour, data)
    pips = SIZE_ORDER[piece[0]]
    dot = shade(colour, -0.55) if piece[1] in "wy" else shade(colour, 0.7)
    r = max(side * 0.045, 1.1)
    y = cy + side * 0.36
    gap = side * 0.13
    canvas.open({"class": "pips", "opacity": data.get("opacity")})
    for k in range(pips):
        canvas.circle(cx + (k - (pips - 1) / 2) * gap, y, r, fill=dot)
    canvas.close()


def _middle(canvas: Canvas, view: JSON, building: Building[Any] | None, top: float) -> None:
    """The viewer's hand, then the pyramids waiting to be built (while they are)."""
    seat = _viewer(view)
    if seat is not None:
        top = _hand(canvas, view, seat, building, top)
    if view["phase"] == "build" and view.get("builder") is not None:
        _tray(canvas, view, building, top)


def _hand(
    canvas: Canvas, view: JSON, seat: int, building: Building[Any] | None, top: float
) -> float:
    hand: list[str] = view["hands"][seat]
    colour = view["colours"][seat]
    you_are = _("you are {colour}").format(colour=_(COLOUR_WORDS[colour]))
    _heading(canvas, top + 18, _("Your hand"), you_are)
    row = top + 30
    if not hand:
        canvas.text(PAD, row + SLOT / 2 + 5, _("empty"), size=15, fill=MUTED)
    # While the palace is built the move takes the yard's pyramids, never the hand's,
    # though the hand may hold one alike: only the tray's copy is the target then.
    choosing = building if view["phase"] != "build" else None
    _slots(canvas, _kinds(hand), {"data-place": "hand", "data-seat": str(seat)}, choosing, row)
    row += SLOT + 10
    passing = _choice(building, "pass")
    if passing is not None:
        _button(canvas, passing, _("Pass"), row)
        row += BUTTON_H + 10
    return row + 6


def _tray(canvas: Canvas, view: JSON, building: Building[Any] | None, top: float) -> None:
    kinds = _kinds(_to_build(view))
    left = view["build_max"] - len(view.get("plan", []))
    more = _("from the yard; {count} more to place").format(count=max(left, 0))
    _heading(canvas, top + 18, _("To build"), more)
    row = top + 30
    if not kinds:
        canvas.text(PAD, row + SLOT / 2 + 5, _("all placed"), size=15, fill=MUTED)
    for start in range(0, max(len(kinds), 1), 6):
        _slots(canvas, kinds[start : start + 6], {"data-place": "to-build"}, building, row)
        row += SLOT + SLOT_GAP
    auto = _choice(building, "auto")
    if auto is not None:
        _button(canvas, auto, _("Let the referee build"), row + 2)


def _slots(
    canvas: Canvas,
    kinds: list[tuple[str, int]],
    where: dict[str, str],
    building: Building[Any] | None,
    top: float,
) -> None:
    """A row of pyramids, one slot a kind (its count when more than one): a target
    where choosing it is a step of the move being built."""
    pending = _pending_pyramid(building)
    for k, (piece, count) in enumerate(kinds):
        x = PAD + k * (SLOT + SLOT_GAP)
        choice = _choice(building, piece)
        if choice is not None:
            canvas.target(choice)
            ring_box(canvas, x, top, SLOT, SLOT)
        else:
            canvas.rect(x, top, SLOT, SLOT, fill="#ffffff", stroke=LINE, rx=6)
        data = {**where, "data-pyramid": piece, "data-count": str(count)}
        _pyramid(canvas, x + SLOT / 2, top + SLOT / 2, SCALE[piece[0]] * 50, piece, data)
        if count > 1:
            # How many of the kind: a tag on the slot's corner, clear of the pyramid.
            canvas.rect(x + SLOT - 22, top - 8, 28, 19, fill="#ffffff", stroke=INK, rx=9.5)
            canvas.text(
                x + SLOT - 8,
                top + 6,
                f"\N{MULTIPLICATION SIGN}{count}",
                size=TEXT,
                anchor="middle",
                bold=True,
            )
        if choice is not None:
            canvas.close()
        if piece == pending:
            chosen_box(canvas, x - 2, top - 2, SLOT + 4, SLOT + 4)


def _pending_pyramid(building: Building[Any] | None) -> str | None:
    """The pyramid chosen last, still waiting for its cell."""
    if building is None or len(building.steps) % 2 == 0 or building.steps[0] in ("pass", "auto"):
        return None
    return building.steps[-1]


def _button(canvas: Canvas, choice: Choice, label: str, top: float) -> None:
    canvas.target(choice)
    ring_box(canvas, PAD, top, WIDTH - 2 * PAD, BUTTON_H)
    canvas.text(WIDTH / 2, top + BUTTON_H / 2 + 6, label, size=17, anchor="middle", bold=True)
    canvas.close()


def _grid_targets(
    canvas: Canvas, yard: _Grid, palace: _Grid, view: JSON, building: Building[Any]
) -> None:
    """The cells that may be chosen (drawn last, on top), and the plan's cells so far."""
    grid = palace if view["phase"] == "build" else yard
    for step in view.get("plan", []):
        left, top, side, _height = palace.box(step.split("@")[1], 2)
        chosen_box(canvas, left, top, side, side)
    for choice in building.choices:
        if "," not in choice.step:
            continue
        left, top, side, _height = grid.box(choice.step, 3)
        target_box(canvas, left, top, side, side, choice)


def _seats(canvas: Canvas, view: JSON, names: list[str], top: float) -> None:
    totals = _points(view)
    _heading(canvas, top - 12, _("Players"), _("points"))
    for seat, colour in enumerate(view["colours"]):
        _seat(canvas, view, names[seat], seat, top + seat * (SEAT_H + 8), totals.get(colour, 0))
    bottom = top + len(view["colours"]) * (SEAT_H + 8) + 16
    pool = view["pool"]
    canvas.text(
        PAD,
        bottom,
        _("Pool: {small} small, {medium} medium, {large} large").format(
            small=pool["S"], medium=pool["M"], large=pool["L"]
        ),
        size=TEXT,
        fill=MUTED,
    )
    canvas.text(
        PAD,
        bottom + 20,
        _("Out of the game: {count}. Cells are x,y; y goes up.").format(count=view["out_of_game"]),
        size=TEXT,
        fill=MUTED,
    )


def _seat(canvas: Canvas, view: JSON, name: str, seat: int, y: float, points: int) -> None:
    colour = view["colours"][seat]
    acting = seat == view.get("turn", view.get("builder"))
    canvas.rect(
        PAD,
        y,
        WIDTH - 2 * PAD,
        SEAT_H,
        fill="#ffffff" if acting else "#f6f4ef",
        stroke=PYRAMID_COLOURS[colour] if acting else LINE,
        stroke_width=2.5 if acting else 1,
        rx=8,
    )
    pyramid(canvas, PAD + 24, y + 24, 28, PYRAMID_COLOURS[colour], {"class": "seat-colour"})
    # The name has the top line up to the points.
    room = WIDTH - PAD - 12 - text_width(str(points), 22, True) - 8 - (PAD + 48)
    canvas.text(PAD + 48, y + 22, name_label(name, 15, room), size=15, bold=True)
    tags = [_(COLOUR_WORDS[colour])]
    if seat == view["marker"]:
        tags.append(_("holds the marker"))
    if seat == view.get("last_placer"):
        tags.append(_("placed last"))
    if seat in view.get("resigned", []):
        tags.append(_("resigned"))
    canvas.text(PAD + 48, y + 40, ", ".join(tags), size=TEXT, fill=MUTED)
    hand = view["hands"][seat]
    if isinstance(hand, list):
        canvas.text(PAD + 48, y + 57, _("Hand: shown above"), size=TEXT, fill=MUTED)
    else:
        canvas.open({"class": "hidden-hand", "data-seat": seat})
        canvas.text(PAD + 48, y + 57, _hidden_hand(hand), size=TEXT)
        canvas.close()
    canvas.text(WIDTH - PAD - 12, y + 30, str(points), size=22, anchor="end", bold=True)


def _hidden_hand(hand: dict[str, int]) -> str:
    return _("Hand: {small} small, {medium} medium, {large} large").format(
        small=hand["S"], medium=hand["M"], large=hand["L"]
    )


def _grid_text(grid: dict[str, list[str]]) -> list[str]:
    cells = _cells(grid)
    if not cells:
        return ["  " + _("empty")]
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
    lines = [*prose(_("Ice Palace: {status}").format(status=_status(view, names))), ""]
    lines.extend(prose(_("A pyramid is size (S/M/L) + colour; stacks read bottom to top.")))
    lines.append("")
    lines.append(_("Yard:"))
    lines.extend(_grid_text(view["yard"]))
    lines.append("")
    lines.append(_("Palace:"))
    lines.extend(_grid_text(view["palace"]))
    lines.append("")
    totals = _points(view)
    for seat, colour in enumerate(view["colours"]):
        who = column(seat_name(names, seat), 18)
        hand = view["hands"][seat]
        held = (
            " ".join(hand)
            if isinstance(hand, list)
            else _("S{small} M{medium} L{large} (hidden)").format(
                small=hand["S"], medium=hand["M"], large=hand["L"]
            )
        )
        marker = "*" if seat == view["marker"] else " "
        points = totals.get(colour, 0)
        lines.append(
            _("{marker}{seat} {who} {colour} {points} pts  hand: {held}").format(
                marker=marker,
                seat=seat + 1,
                who=who,
                colour=colour,
                points=f"{points:>3}",
                held=held,
            )
        )
    lines.append(_("* holds the marker"))
    pool = view["pool"]
    lines.append(
        _("Pool: S {small}, M {medium}, L {large}.").format(
            small=pool["S"], medium=pool["M"], large=pool["L"]
        )
    )
    lines.append(_("Out of the game: {count}.").format(count=view["out_of_game"]))
    return board_text(lines)
