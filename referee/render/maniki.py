"""MaNiKi as a picture and as a text board, drawn from a view.

The picture is narrow and tall, for a phone: the animals stacked on the
red and the blue podium as they stand now, the card to reach under them
drawn the same way, the orders as tiles (buttons while the seat builds a
sequence), then each seat's cards and the last card's outcome. It is 420
units wide, so its smallest text (13 units) reads at 11 CSS px on a board
358 px wide.

While a sequence is built, the animals stand where the orders so far take
them (the preview); whether they match the card is for the seat to see,
the referee never says it before the round is decided. The marks of
the last move tell what it decided: after a round, the animals the winning
sequence moved, where they were, the winner's line, the new card and how
the last one went; within a round, the line of the seat that answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine import JSON, Building, Choice
from referee.games.maniki import EFFECTS, ORDERS, PASS_NOTATION, shown_name
from referee.i18n import N_, _, ngettext
from referee.render.common import board_text, column, person_name, seat_name
from referee.render.svg import (
    INK,
    LINE,
    MUTED,
    SEAT_COLOURS,
    Canvas,
    chosen_box,
    fit,
    mark_box,
    marked,
    name_label,
    ring_box,
    shade,
    text_width,
)

ANIMALS = {"B": N_("Bear"), "E": N_("Elephant"), "L": N_("Lion")}
ANIMAL_COLOURS = {"B": "#f5f2ea", "E": "#9aa4ad", "L": "#e2a72e"}
STOOLS = ((N_("red"), "#c0392b"), (N_("blue"), "#2e5fb8"))
# What each order does, on two short lines of its tile.
EFFECT_LINES = {
    "KI": (N_("top of blue"), N_("jumps onto red")),
    "LO": (N_("top of red"), N_("jumps onto blue")),
    "NI": (N_("the two tops"), N_("swap places")),
    "MA": (N_("bottom of red"), N_("climbs to its top")),
    "SO": (N_("bottom of blue"), N_("climbs to its top")),
    PASS_NOTATION: (N_("give up on"), N_("this card")),
}

WIDTH = 420.0
MARGIN = 20.0
SMALL = 13.0  # the smallest text: 11 CSS px at 358 px wide
TILE_W, TILE_H, TILE_GAP = 185.0, 56.0, 10.0
ROW = 28.0
SCENE = 204.0  # the height of the scene of the animals now
CARD = 172.0  # the height of the card to reach
NO_CARD = 44.0  # the height of the note once no card is left
HEAD = 68.0  # the title and the status above the scene
LAST = 50.0  # the two lines on the last card
GROUND = "#f1ebdf"
CARD_FACE = "#fffdf8"


def _stools(arrangement: str) -> tuple[str, str]:
    red, blue = arrangement.split("/")
    return red.strip("-"), blue.strip("-")


def _over(view: JSON) -> bool:
    return view["target"] is None or not view["in_round"]


def _status(view: JSON) -> str:
    if _over(view):
        return _("Game over")
    rule = (
        _("Sealed: the shortest right sequence wins")
        if view["mode"] == "sealed"
        else _("Race: the first right sequence wins")
    )
    swap = shown_name("NI", _names(view))
    return _("{rule} · no {swap}").format(rule=rule, swap=swap) if view["expert"] else rule


def _names(view: JSON) -> str:
    return str(view.get("names", "maniki"))


def _shown(sequence: str | None, view: JSON) -> str | None:
    """A sequence of the view (MaNiKi names) as this game's players name the orders."""
    if sequence is None:
        return None
    return " ".join(shown_name(order, _names(view)) for order in sequence.split())


def _orders(view: JSON) -> list[str]:
    return [order for order in ORDERS if not (view["expert"] and order == "NI")]


# -- the animals on their podiums ------------------------------------------------


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


def _animal(canvas: Canvas, x: float, y: float, scale: float, animal: str, where: str) -> None:
    """One animal as a tile standing at (x, y), its top left corner."""
    w, h = 150 * scale, 42 * scale
    colour = ANIMAL_COLOURS[animal]
    canvas.open({"class": "animal", "data-animal": animal, "data-where": where})
    canvas.rect(
        x,
        y + 1,
        w,
        h - 2,
        fill=shade(colour, 0.55),
        stroke=shade(colour, -0.45),
        stroke_width=1.2,
        rx=10 * scale,
    )
    _face(canvas, x + 22 * scale, y + h / 2, 12 * scale, animal)
    size = max(SMALL, 15 * scale)
    canvas.text(x + 46 * scale, y + h / 2 + size * 0.36, _(ANIMALS[animal]), size=size, bold=True)
    canvas.close()


def _podium(canvas: Canvas, cx: float, top: float, scale: float, name: str, colour: str) -> None:
    """A circus podium, its name on its front."""
    w, h = 160 * scale, 30 * scale
    canvas.rect(cx - w / 2, top, w, h, fill=colour, stroke=shade(colour, -0.35), rx=6 * scale)
    canvas.rect(cx - w / 2 + 3, top + 3, w - 6, 5 * scale, fill=shade(colour, 0.3), rx=2)
    size = max(SMALL, 15 * scale)
    canvas.text(cx, top + h / 2 + size * 0.4, name, size=size, anchor="middle", fill="#ffffff")


def _scene(
    canvas: Canvas,
    centre: float,
    floor: float,
    scale: float,
    arrangement: str,
    where: str,
    was: str | None = None,
) -> None:
    """The two podiums with their animals, centred on `centre`, standing on `floor`.

    An animal that stood elsewhere in the arrangement `was` is marked: the
    round's winning sequence moved it.
    """
    earlier = _stools(was) if was is not None else None
    top = floor - 30 * scale
    w, h = 150 * scale, 42 * scale
    for stool, ((name, colour), stack) in enumerate(zip(STOOLS, _stools(arrangement), strict=True)):
        cx = centre + (stool - 0.5) * 198 * scale
        _podium(canvas, cx, top, scale, _(name), colour)
        for level, animal in enumerate(stack):
            y = top - (level + 1) * h
            if earlier is not None and earlier[stool][level : level + 1] != animal:
                mark_box(
                    canvas, cx - w / 2 - 4, y - 2, w + 8, h + 4, "moved", {"data-animal": animal}
                )
            _animal(canvas, cx - w / 2, y, scale, animal, where)


def _now(
    canvas: Canvas, view: JSON, top: float, before: JSON | None, building: Building[Any] | None
) -> None:
    """The animals as they stand now, or where the orders built so far take them."""
    canvas.rect(MARGIN - 8, top, WIDTH - 2 * MARGIN + 16, SCENE, fill=GROUND, rx=14)
    position = view["position"]
    steps = building.steps if building is not None else ()
    heading = ngettext(
        "After {count} order: {position}", "After {count} orders: {position}", len(steps)
    ).format(count=len(steps), position=position)
    previewing = _previewed(building)
    canvas.text(
        MARGIN,
        top + 24,
        heading if previewing else _("Now: {position}").format(position=position),
        size=15,
        bold=True,
    )
    was = None if before is None or before["position"] == position else before["position"]
    if previewing:
        shown = _shown(" ".join(steps), view) or ""
        canvas.text(WIDTH - MARGIN, top + 24, _tail(shown, 26), size=SMALL, anchor="end")
    elif was is not None:
        canvas.open(marked("changed", {"data-position": was}))
        canvas.text(WIDTH - MARGIN, top + 24, f"was {was}", size=SMALL, anchor="end", fill=MUTED)
        canvas.close()
    _scene(canvas, WIDTH / 2, top + SCENE - 8, 1.0, position, "now", was)


def _tail(sequence: str, width: int) -> str:
    """The end of a long sequence, its start cut off."""
    return sequence if len(sequence) <= width else "…" + sequence[-(width - 1) :]


def _card_height(view: JSON) -> float:
    return CARD if view["target"] is not None else NO_CARD


def _card(canvas: Canvas, view: JSON, top: float, before: JSON | None) -> None:
    """The card to reach, drawn like the scene above, smaller."""
    x, w = MARGIN, WIDTH - 2 * MARGIN
    target = view["target"]
    if target is None:
        canvas.rect(x, top, w, NO_CARD, fill=GROUND, rx=12)
        canvas.text(WIDTH / 2, top + 28, "No card left", size=15, anchor="middle", fill=MUTED)
        return
    if before is not None and _decided(view, before):
        mark_box(canvas, x - 6, top - 6, w + 12, CARD + 12, "changed", {"data-target": target}, 16)
    canvas.rect(x + 4, top + 4, w, CARD, fill="#d9d0bd", rx=12)
    canvas.rect(x, top, w, CARD, fill=CARD_FACE, stroke=INK, stroke_width=1.5, rx=12)
    reach = _("Card to reach: {card}").format(card=target)
    canvas.text(x + 16, top + 26, reach, size=15, bold=True)
    left = view["deck_left"]
    note = ngettext("{count} card after it", "{count} cards after it", left).format(count=left)
    canvas.text(x + w - 16, top + 26, note, size=SMALL, anchor="end", fill=MUTED)
    _scene(canvas, WIDTH / 2, top + CARD - 12, 0.72, target, "target")


def _previewed(building: Building[Any] | None) -> bool:
    return building is not None and bool(building.steps) and building.steps != (PASS_NOTATION,)


# -- the orders: a reference, or the buttons of a sequence being built --------------


def _tile_steps(view: JSON, building: Building[Any] | None) -> list[str]:
    """The tiles: the orders, and Pass while the seat builds its answer."""
    return [*_orders(view), *([PASS_NOTATION] if building is not None else [])]


def _tiles_height(view: JSON, building: Building[Any] | None) -> float:
    rows = (len(_tile_steps(view, building)) + 1) // 2
    return 28 + rows * (TILE_H + TILE_GAP)


def _tiles(canvas: Canvas, view: JSON, top: float, building: Building[Any] | None) -> None:
    """The orders (and, while building, Pass) as tiles: buttons where offered."""
    canvas.text(MARGIN, top + 16, _("Orders"), size=14, bold=True, fill=MUTED)
    steps = _tile_steps(view, building)
    offered = {choice.step: choice for choice in building.choices} if building else {}
    first = top + 28
    for k, step in enumerate(steps):
        x = MARGIN + (k % 2) * (TILE_W + TILE_GAP)
        y = first + (k // 2) * (TILE_H + TILE_GAP)
        choice = offered.get(step)
        if choice is not None:
            _button(canvas, view, x, y, step, choice)
        elif building is not None and building.steps == (step,) == (PASS_NOTATION,):
            _tile(canvas, view, x, y, step)
            chosen_box(canvas, x, y, TILE_W, TILE_H)
        elif building is not None:
            # Not offered now: an order the animals cannot carry out, or Pass
            # once a sequence is begun.
            canvas.open({"opacity": "0.4"})
            _tile(canvas, view, x, y, step)
            canvas.close()
        else:
            _tile(canvas, view, x, y, step)


def _tile(canvas: Canvas, view: JSON, x: float, y: float, step: str) -> None:
    canvas.rect(x, y, TILE_W, TILE_H, fill="#ffffff", stroke=LINE, stroke_width=1.2, rx=8)
    _tile_words(canvas, view, x, y, step)


def _button(canvas: Canvas, view: JSON, x: float, y: float, step: str, choice: Choice) -> None:
    """A tile to click: everything drawn on it is inside the button."""
    canvas.target(choice)
    canvas.rect(x, y, TILE_W, TILE_H, fill="#ffffff", rx=8)
    ring_box(canvas, x, y, TILE_W, TILE_H, rx=8)
    _tile_words(canvas, view, x, y, step)
    canvas.close()


def _tile_words(canvas: Canvas, view: JSON, x: float, y: float, step: str) -> None:
    name = _("Pass") if step == PASS_NOTATION else shown_name(step, _names(view))
    size = 15 if step == PASS_NOTATION else 20
    canvas.text(x + 12, y + TILE_H / 2 + size * 0.36, name, size=size, bold=True)
    first, second = EFFECT_LINES[step]
    # The effect starts after the name, which a language may make longer ("Passer").
    words_x = max(x + 58, x + 12 + text_width(name, size, True) + 8)
    room = x + TILE_W - 6 - words_x
    canvas.text(words_x, y + 24, fit(_(first), SMALL, room), size=SMALL)
    canvas.text(words_x, y + 42, fit(_(second), SMALL, room), size=SMALL)


# -- the players and the last card ---------------------------------------------


def _answer_state(view: JSON, seat: int) -> str:
    if seat in view.get("resigned", []):
        return _("resigned")
    if _over(view):
        return ""
    if seat in view.get("submitted", []):
        return _("answered (sealed)")
    return _("may answer") if seat in view["in_round"] else _("out of this card")


def _decided(view: JSON, before: JSON) -> bool:
    """Whether the last move decided a card (won or not)."""
    return any(before[key] != view[key] for key in ("last_round", "target", "cards_won"))


def _marked_seats(view: JSON, before: JSON) -> set[int]:
    """The seats whose line the last move changed.

    When it decided a card: the winner and a seat that resigned; every seat
    being in again for the new card is not news. Within a round: the seat
    that answered, passed or resigned.
    """
    seats = range(len(view["cards_won"]))
    if _decided(view, before):
        return {
            seat
            for seat in seats
            if before["cards_won"][seat] != view["cards_won"][seat]
            or (seat in before["resigned"]) != (seat in view["resigned"])
        }
    return {seat for seat in seats if _answer_state(before, seat) != _answer_state(view, seat)}


def _table_height(view: JSON) -> float:
    return 24 + len(view["cards_won"]) * ROW + 8


def _table(
    canvas: Canvas, view: JSON, names: Sequence[str] | None, top: float, before: JSON | None
) -> None:
    """Each seat's cards and whether it may answer this card."""
    canvas.text(MARGIN, top + 16, _("Player"), size=SMALL, fill=MUTED)
    canvas.text(236, top + 16, _("Cards"), size=SMALL, fill=MUTED, anchor="end")
    if not _over(view):
        canvas.text(252, top + 16, _("This card"), size=SMALL, fill=MUTED)
    changed = set() if before is None else _marked_seats(view, before)
    for seat, won in enumerate(view["cards_won"]):
        y = top + 24 + seat * ROW
        if seat in changed:
            mark_box(
                canvas,
                MARGIN - 6,
                y + 1,
                WIDTH - 2 * MARGIN + 12,
                ROW - 2,
                "changed",
                {"data-seat": seat},
            )
        canvas.rect(MARGIN, y + 9, 11, 11, fill=SEAT_COLOURS[seat], rx=2)
        label = name_label(seat_name(names, seat), 14, 236 - 30 - MARGIN - 18, bold=False)
        canvas.text(MARGIN + 18, y + 19, label, size=14)
        canvas.text(236, y + 19, str(won), size=14, anchor="end", bold=True)
        canvas.text(252, y + 19, _answer_state(view, seat), size=SMALL, fill=MUTED)


def _last(
    canvas: Canvas, view: JSON, names: Sequence[str] | None, top: float, before: JSON | None
) -> None:
    """How the last card went, on two lines."""
    last = view["last_round"]
    if last is None:
        return
    if before is not None and before["last_round"] != last:
        mark_box(
            canvas,
            MARGIN - 6,
            top,
            WIDTH - 2 * MARGIN + 12,
            46,
            "changed",
            {"data-round": last["card"]},
        )
    first, second = _last_round(last, names, view)
    room = WIDTH - 2 * MARGIN
    canvas.text(MARGIN, top + 19, fit(first, SMALL, room, bold=True), size=SMALL, bold=True)
    canvas.text(MARGIN, top + 38, fit(second, SMALL, room), size=SMALL, fill=MUTED)


def _last_round(last: JSON, names: Sequence[str] | None, view: JSON) -> tuple[str, str]:
    count = last["shortest"]
    shortest = ngettext("shortest: {count} order", "shortest: {count} orders", count).format(
        count=count
    )
    if last["winner"] is None:
        return _("Last card {card}: nobody won it").format(card=last["card"]), shortest
    winner = person_name(names, last["winner"])
    return (
        _("Last card {card}: won by {name}").format(card=last["card"], name=winner),
        _("with {sequence} ({shortest})").format(
            sequence=_shown(last["sequence"], view), shortest=shortest
        ),
    )


def svg(
    view: JSON,
    names: Sequence[str] | None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    tiles = _tiles_height(view, building)
    table = _table_height(view)
    last = LAST if view["last_round"] is not None else 0.0
    card = _card_height(view)
    height = HEAD + SCENE + 14 + card + 16 + tiles + 8 + table + last + 12
    canvas = Canvas(WIDTH, height, _("MaNiKi: {status}").format(status=_status(view)))
    canvas.text(MARGIN, 34, "MaNiKi", size=22, bold=True)
    canvas.text(MARGIN, 56, _status(view), size=SMALL, fill=MUTED)
    y = HEAD
    _now(canvas, view, y, before, building)
    y += SCENE + 14
    _card(canvas, view, y, before)
    y += card + 16
    _tiles(canvas, view, y, building)
    y += tiles + 8
    _table(canvas, view, names, y, before)
    _last(canvas, view, names, y + table, before)
    return canvas.finish()


# -- the text board -------------------------------------------------------------


def _scene_text(arrangement: str) -> list[str]:
    red, blue = _stools(arrangement)
    rows = []
    for level in range(2, -1, -1):
        cells = [_(ANIMALS[stack[level]]) if level < len(stack) else "" for stack in (red, blue)]
        rows.append(f"{cells[0]:<10}  {cells[1]:<10}")
    rows.append("=======     =======")
    rows.append(f"{_(STOOLS[0][0]):^7}     {_(STOOLS[1][0]):^7}")
    return rows


def text(view: JSON, names: Sequence[str] | None) -> str:
    lines = [_("MaNiKi: {status}").format(status=_status(view)), ""]
    now = _scene_text(view["position"])
    shown_now = _("Now: {position}").format(position=view["position"])
    if view["target"] is None:
        lines.append(f"{shown_now}    " + _("(no card left)"))
        lines.extend(now)
    else:
        target_is = _("Target: {card}").format(card=view["target"])
        lines.append(f"{shown_now:<24}    {target_is}")
        target = _scene_text(view["target"])
        lines.extend(f"{a:<24}    {b}" for a, b in zip(now, target, strict=True))
        lines.append("")
        lines.append(_("Cards after this one: {count}").format(count=view["deck_left"]))
    lines.append("")
    for seat, won in enumerate(view["cards_won"]):
        who = column(seat_name(names, seat), 22)
        lines.append(
            _("{seat} {who} cards {count}   {state}").format(
                seat=seat + 1, who=who, count=f"{won:>2}", state=_answer_state(view, seat)
            )
        )
    if view["last_round"] is not None:
        lines.append("")
        lines.append(" ".join(_last_round(view["last_round"], names, view)))
    lines.append("")
    lines.append(_("Orders:"))
    lines.extend(
        f"  {shown_name(order, _names(view))}  {_(EFFECTS[order])}" for order in _orders(view)
    )
    return board_text(lines)
