"""MaNiKi as a picture and as a text board, drawn from a view.

The animals stand on the red and the blue stool as they stand now; the
card to reach is drawn beside them the same way, smaller. Below: each
seat's cards and whether it may still answer this card, the previous
round, and the five orders, so a mail holds all a player needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building
from referee.render.common import board_text, clip, column, seat_name
from referee.render.svg import (
    INK,
    LINE,
    MUTED,
    PAPER,
    SEAT_COLOURS,
    Canvas,
    mark_box,
    marked,
    shade,
)

ANIMALS = {"B": "Bear", "E": "Elephant", "L": "Lion"}
ANIMAL_COLOURS = {"B": "#f5f2ea", "E": "#9aa4ad", "L": "#e2a72e"}
STOOLS = (("red", "#c8323c"), ("blue", "#2d62c4"))
ORDERS = (
    ("KI", "top of blue jumps onto red"),
    ("LO", "top of red jumps onto blue"),
    ("NI", "the two tops swap"),
    ("MA", "bottom of red climbs to its top"),
    ("SO", "bottom of blue climbs to its top"),
)
BLOCK_W, BLOCK_H = 140.0, 46.0
STOOL_GAP = 190.0  # between the centres of the two stools


def _stools(arrangement: str) -> tuple[str, str]:
    red, blue = arrangement.split("/")
    return red.strip("-"), blue.strip("-")


def _status(view: JSON) -> str:
    if view["target"] is None or not view["in_round"]:
        return "Game over"
    mode = "sealed answers" if view["mode"] == "sealed" else "first correct answer wins"
    expert = ", expert (no NI)" if view["expert"] else ""
    return f"Reach the card: {mode}{expert}"


def _face(canvas: Canvas, cx: float, cy: float, r: float, animal: str) -> None:
    """A small face that tells the animals apart even without the words."""
    body = ANIMAL_COLOURS[animal]
    edge = shade(body, -0.5)
    if animal == "L":
        canvas.circle(cx, cy, r * 1.3, fill="#b5651d")
    if animal == "B":
        for side in (-1, 1):
            canvas.circle(cx + side * r * 0.7, cy - r * 0.75, r * 0.38, fill=body, stroke=edge)
    if animal == "E":
        for side in (-1, 1):
            canvas.circle(cx + side * r * 0.95, cy - r * 0.1, r * 0.62, fill=body, stroke=edge)
    canvas.circle(cx, cy, r, fill=body, stroke=edge)
    if animal == "E":
        canvas.path(
            f"M {cx:.2f},{cy + r * 0.2:.2f} q {-r * 0.1:.2f},{r * 0.9:.2f} {r * 0.5:.2f},{r:.2f}",
            fill="none",
            stroke=edge,
            stroke_width=r * 0.28,
        )
    for side in (-1, 1):
        canvas.circle(cx + side * r * 0.35, cy - r * 0.15, r * 0.12, fill=INK)
    if animal != "E":
        canvas.circle(cx, cy + r * 0.3, r * 0.16, fill=INK)


def _scene(
    canvas: Canvas,
    x: float,
    floor: float,
    scale: float,
    arrangement: str,
    where: str,
    was: str | None = None,
) -> None:
    """The two stools with their animals; `x` is the red stool's centre.

    An animal that stands elsewhere than in the arrangement `was` is marked:
    the last move (the round's winning answer) moved it.
    """
    earlier = _stools(was) if was is not None else None
    for stool, ((name, colour), stack) in enumerate(zip(STOOLS, _stools(arrangement), strict=True)):
        cx = x if name == "red" else x + STOOL_GAP * scale
        leg = 46 * scale
        seat_w, seat_h = 150 * scale, 16 * scale
        top = floor - leg - seat_h
        for dx in (-0.38, 0.38):
            canvas.rect(cx + dx * seat_w - 4 * scale, top + seat_h, 8 * scale, leg, fill="#7a5a3a")
        canvas.rect(
            cx - seat_w / 2,
            top,
            seat_w,
            seat_h,
            fill=colour,
            stroke=shade(colour, -0.4),
            rx=6 * scale,
        )
        canvas.text(cx, floor + 18 * scale, name, size=14 * scale, anchor="middle", fill=MUTED)
        for level, animal in enumerate(stack):
            w, h = BLOCK_W * scale, BLOCK_H * scale
            y = top - (level + 1) * h
            if earlier is not None and earlier[stool][level : level + 1] != animal:
                mark_box(
                    canvas, cx - w / 2 - 4, y - 3, w + 8, h + 4, "moved", {"data-animal": animal}
                )
            canvas.open({"class": "animal", "data-animal": animal, "data-where": where})
            canvas.rect(
                cx - w / 2,
                y + 1,
                w,
                h - 2,
                fill=shade(ANIMAL_COLOURS[animal], 0.55),
                stroke=shade(ANIMAL_COLOURS[animal], -0.45),
                stroke_width=1.2,
                rx=10 * scale,
            )
            _face(canvas, cx - w / 2 + 24 * scale, y + h / 2, 13 * scale, animal)
            canvas.text(
                cx - w / 2 + 46 * scale,
                y + h / 2 + 5 * scale,
                ANIMALS[animal],
                size=15 * scale,
                bold=True,
            )
            canvas.close()


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    seats = len(view["cards_won"])
    table_top = 400.0
    height = table_top + 40 + seats * 26 + 60
    canvas = Canvas(880, height, f"MaNiKi: {_status(view)}")
    canvas.text(30, 36, "MaNiKi", size=24, bold=True)
    canvas.text(30, 60, _status(view), size=15, fill=MUTED)

    canvas.text(60, 110, f"Now: {view['position']}", size=15, bold=True)
    was = None if before is None or before["position"] == view["position"] else before["position"]
    if was is not None:
        canvas.open(marked("changed", {"data-position": was}))
        canvas.text(60, 132, f"was {was}", size=13, fill=MUTED)
        canvas.close()
    _scene(canvas, 130, 350, 1.0, view["position"], "now", was)

    card_x, card_y, card_w, card_h = 540.0, 84.0, 310.0, 290.0
    if view["target"] is None:
        canvas.rect(card_x, card_y, card_w, card_h, fill=PAPER, stroke=LINE, rx=14)
        canvas.text(card_x + card_w / 2, card_y + 150, "No card left", size=16, anchor="middle")
    else:
        canvas.rect(card_x + 6, card_y + 6, card_w, card_h, fill="#d9d0bd", rx=14)
        canvas.rect(
            card_x, card_y, card_w, card_h, fill="#fffdf8", stroke=INK, stroke_width=2, rx=14
        )
        canvas.text(card_x + 20, card_y + 32, f"Target: {view['target']}", size=15, bold=True)
        _scene(canvas, card_x + 84, card_y + card_h - 34, 0.75, view["target"], "target")
    canvas.text(
        card_x + card_w / 2,
        card_y + card_h + 26,
        f"{view['deck_left']} card{'s' if view['deck_left'] != 1 else ''} after this one",
        size=13,
        anchor="middle",
        fill=MUTED,
    )
    _table(canvas, view, names, table_top, before)
    _orders(canvas, view, table_top)
    return canvas.finish()


def _answer_state(view: JSON, seat: int) -> str:
    if seat in view.get("resigned", []):
        return "resigned"
    if view["target"] is None:
        return ""
    if seat in view.get("submitted", []):
        return "answered (sealed)"
    return "may answer" if seat in view["in_round"] else "out this round"


def _seat_changed(view: JSON, before: JSON, seat: int) -> bool:
    """Whether the last move changed the seat's line: a card won, an answer, a resignation."""
    return before["cards_won"][seat] != view["cards_won"][seat] or _answer_state(
        before, seat
    ) != _answer_state(view, seat)


def _table(
    canvas: Canvas, view: JSON, names: Sequence[str] | None, top: float, before: JSON | None
) -> None:
    canvas.text(30, top + 24, "Player", size=13, fill=MUTED)
    canvas.text(250, top + 24, "Cards", size=13, fill=MUTED, anchor="end")
    for seat, won in enumerate(view["cards_won"]):
        y = top + 50 + seat * 26
        if before is not None and _seat_changed(view, before, seat):
            mark_box(canvas, 24, y - 19, 486, 24, "changed", {"data-seat": seat}, rx=5)
        canvas.rect(30, y - 12, 10, 10, fill=SEAT_COLOURS[seat], rx=2)
        canvas.text(48, y - 2, clip(seat_name(names, seat), 20), size=14)
        canvas.text(250, y - 2, str(won), size=14, anchor="end", bold=True)
        state = _answer_state(view, seat)
        canvas.text(268, y - 2, state, size=12, fill=MUTED)
    last = view["last_round"]
    if last is not None:
        y = top + 50 + len(view["cards_won"]) * 26 + 10
        if before is not None and before["last_round"] != last:
            mark_box(canvas, 24, y - 15, 486, 21, "changed", {"data-round": last["card"]}, rx=5)
        canvas.text(30, y, _last_round(last, names), size=12, fill=MUTED)


def _last_round(last: JSON, names: Sequence[str] | None) -> str:
    shortest = f"shortest: {last['shortest']} orders"
    if last["winner"] is None:
        return f"Last card {last['card']}: nobody won it ({shortest})"
    winner = clip(seat_name(names, last["winner"]), 20)
    return f"Last card {last['card']}: {winner} won it with {last['sequence']} ({shortest})"


def _orders(canvas: Canvas, view: JSON, top: float) -> None:
    x = 540.0
    canvas.text(x, top + 24, "Orders", size=13, fill=MUTED)
    for k, (order, effect) in enumerate(_order_list(view)):
        y = top + 48 + k * 22
        canvas.text(x, y, order, size=14, bold=True)
        canvas.text(x + 34, y, effect, size=12)


def _order_list(view: JSON) -> list[tuple[str, str]]:
    return [(o, e) for o, e in ORDERS if not (view["expert"] and o == "NI")]


def _scene_text(arrangement: str) -> list[str]:
    red, blue = _stools(arrangement)
    rows = []
    for level in range(2, -1, -1):
        cells = [ANIMALS[stack[level]] if level < len(stack) else "" for stack in (red, blue)]
        rows.append(f"{cells[0]:<10}  {cells[1]:<10}")
    rows.append("=======     =======")
    rows.append("  red         blue ")
    return rows


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [f"MaNiKi: {_status(view)}", ""]
    now = _scene_text(view["position"])
    if view["target"] is None:
        lines.append(f"Now: {view['position']}    (no card left)")
        lines.extend(now)
    else:
        lines.append(f"{'Now: ' + view['position']:<24}    Target: {view['target']}")
        target = _scene_text(view["target"])
        lines.extend(f"{a:<24}    {b}" for a, b in zip(now, target, strict=True))
        lines.append("")
        lines.append(f"Cards after this one: {view['deck_left']}")
    lines.append("")
    for seat, won in enumerate(view["cards_won"]):
        who = column(seat_name(names, seat), 22)
        lines.append(f"{seat} {who} cards {won:>2}   {_answer_state(view, seat)}")
    if view["last_round"] is not None:
        lines.append("")
        lines.append(_last_round(view["last_round"], names))
    lines.append("")
    lines.append("Orders:")
    lines.extend(f"  {order}  {effect}" for order, effect in _order_list(view))
    return board_text(lines)
