"""The building blocks every board picture is drawn with.

`Canvas` writes SVG elements as text, escaping every attribute and every
piece of text, so a player's name can never break the markup. Numbers are
written rounded to two decimals: the same view always gives the same bytes.
The shared drawings (a pyramid seen from above, a seat's label) live here so
that the games' pictures look like one family.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from html import escape as _html_escape

from referee.engine import Choice
from referee.names import bot_of, with_bot
from referee.render.common import FSI, PDI

Attrs = Mapping[str, str | int | float | None]

FONT = "Noto Sans, DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
INK = "#2b2b2b"
MUTED = "#6b6b6b"
PAPER = "#fbf8f1"
LINE = "#c9c2b4"

# Seat colours where a game has none of its own (pawns, labels, Subdivision).
SEAT_COLOURS = ("#d7263d", "#1b6fd6", "#f2b705", "#2a9d4b", "#8e44ad", "#f07b16")
# Pyramid colours of the games that name them by letter.
PYRAMID_COLOURS = {
    "r": "#d7263d",
    "y": "#f2c12e",
    "g": "#2a9d4b",
    "b": "#1b6fd6",
    "p": "#8e44ad",
    "o": "#f07b16",
    "k": "#2b2b2b",
    "w": "#f1f1ee",
}


# Characters XML 1.0 forbids even when escaped: a name holding one must not break the file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str, quote: bool = True) -> str:
    """`text` safe inside an SVG element or attribute."""
    return _html_escape(_NOT_XML.sub("", text), quote=quote)


# Advance widths of the printable ASCII characters (" " to "~") in thousandths of
# an em, in DejaVu Sans, the widest of the fonts FONT names that a browser is
# likely to hold (measured in Chromium): a label measured with them fits in
# Noto Sans, Verdana, Arial or Helvetica too.
_REGULAR = (
    318,
    401,
    460,
    838,
    636,
    950,
    780,
    275,
    390,
    390,
    500,
    838,
    318,
    361,
    318,
    337,
    636,
    636,
    636,
    636,
    636,
    636,
    636,
    636,
    636,
    636,
    337,
    337,
    838,
    838,
    838,
    531,
    1000,
    684,
    686,
    698,
    770,
    632,
    575,
    775,
    752,
    295,
    295,
    656,
    557,
    863,
    748,
    787,
    603,
    787,
    695,
    635,
    611,
    732,
    684,
    989,
    685,
    611,
    685,
    390,
    337,
    390,
    838,
    500,
    500,
    613,
    635,
    532,
    635,
    567,
    352,
    635,
    634,
    278,
    278,
    579,
    278,
    974,
    634,
    550,
    635,
    635,
    384,
    521,
    392,
    634,
    592,
    818,
    592,
    592,
    525,
    636,
    337,
    636,
    838,
)
_BOLD = (
    348,
    456,
    521,
    838,
    696,
    1002,
    872,
    306,
    457,
    457,
    523,
    838,
    380,
    415,
    380,
    365,
    696,
    696,
    696,
    696,
    696,
    696,
    696,
    696,
    696,
    696,
    400,
    400,
    838,
    838,
    838,
    580,
    1000,
    774,
    762,
    734,
    830,
    683,
    683,
    821,
    837,
    372,
    372,
    775,
    637,
    995,
    837,
    850,
    733,
    850,
    770,
    720,
    682,
    812,
    774,
    1103,
    771,
    724,
    725,
    457,
    365,
    457,
    838,
    500,
    500,
    675,
    716,
    593,
    716,
    678,
    435,
    716,
    712,
    343,
    343,
    665,
    343,
    1042,
    712,
    687,
    716,
    716,
    493,
    595,
    478,
    712,
    652,
    924,
    645,
    652,
    582,
    712,
    365,
    712,
    838,
)
# Any other character: a wide one (East Asian) takes a whole em, a mark none.
_OTHER = 800
_ELLIPSIS = "\u2026"
# Letters French writes that are wider than their base letter, or have none
# (DejaVu Sans, regular and bold, rounded up); spaces that do not break.
_WIDER = {
    "\u0153": (1068, 1150),  # oe
    "\u0152": (1069, 1190),  # OE
    "\u00e6": (995, 1080),  # ae
    "\u00c6": (975, 1100),  # AE
    "\u00ab": (557, 673),  # guillemets
    "\u00bb": (557, 673),
    "\u00a0": (318, 348),  # no-break space
    "\u202f": (318, 348),  # narrow no-break space
}


def _advance(char: str, bold: bool) -> int:
    code = ord(char)
    if 32 <= code < 127:
        return (_BOLD if bold else _REGULAR)[code - 32]
    if char in _WIDER:
        return _WIDER[char][bold]
    if unicodedata.combining(char) or unicodedata.category(char) == "Cf":
        return 0
    # An accented Latin letter (é, À, ç) is as wide as its letter without the accent.
    base = unicodedata.normalize("NFD", char)[0]
    if base != char and 32 <= ord(base) < 127:
        return (_BOLD if bold else _REGULAR)[ord(base) - 32]
    return 1000 if unicodedata.east_asian_width(char) in ("W", "F") else _OTHER


def text_width(text: str, size: float, bold: bool = False) -> float:
    """How wide `text` is drawn at `size` (at most: measured in the widest font)."""
    return sum(_advance(char, bold) for char in text) * size / 1000


def fit(text: str, size: float, width: float, bold: bool = False) -> str:
    """`text` as it fits in `width` at `size`: whole, or cut with an ellipsis. A name
    isolated by `seat_name` (FSI...PDI) is cut inside its isolate, which stays closed."""
    if text_width(text, size, bold) <= width:
        return text
    isolated = len(text) > 2 and text[0] == FSI and text[-1] == PDI
    inner = text[1:-1] if isolated else text
    room = width - text_width(_ELLIPSIS, size, bold)
    kept, used = [], 0.0
    for char in inner:
        used += _advance(char, bold) * size / 1000
        if used > room:
            break
        kept.append(char)
    cut = "".join(kept).rstrip() + _ELLIPSIS
    return f"{FSI}{cut}{PDI}" if isolated else cut


def wrap(text: str, size: float, width: float, bold: bool = False) -> list[str]:
    """`text` in lines that fit `width`, broken after a phrase (`, ` or `; `) where one
    fits, so that "1 pass since" stays together; a phrase too long alone is broken
    between words, and a word too long alone is cut."""
    lines: list[str] = []
    for phrase in re.split(r"(?<=[,;]) ", text):
        if lines and text_width(f"{lines[-1]} {phrase}", size, bold) <= width:
            lines[-1] += " " + phrase
        elif text_width(phrase, size, bold) <= width:
            lines.append(phrase)
        else:
            for word in phrase.split(" "):
                if lines and text_width(f"{lines[-1]} {word}", size, bold) <= width:
                    lines[-1] += " " + word
                else:
                    lines.append(fit(word, size, width, bold))
    return lines


def name_label(name: str, size: float, width: float, bold: bool = True) -> str:
    """A player's name as a label in `width`: whole, with its bot level (`Ann (bot,
    strong)`) where it fits; else `Bot 2 (strong)` for a name that says bot already, and
    `Ann (bot)` for another: the name is cut before the mark that it is a bot's is."""
    isolated = len(name) > 2 and name[0] == FSI and name[-1] == PDI
    plain, level = bot_of(name[1:-1] if isolated else name)
    shown = f"{FSI}{plain}{PDI}" if isolated else plain
    if level is None:
        return fit(shown, size, width, bold)
    whole = with_bot(shown, level)
    if text_width(whole, size, bold) <= width:
        return whole
    says_bot = plain.lower().startswith("bot")
    mark = f" ({level})" if says_bot else " (bot)"
    if text_width(shown + mark, size, bold) <= width:
        return shown + mark
    if says_bot:
        return fit(shown, size, width, bold)
    return fit(shown, size, width - text_width(mark, size, bold), bold) + mark


def number(value: float) -> str:
    """A coordinate as short, stable text (`12`, `12.5`, `-0.33`)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _attributes(attrs: Attrs) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        text = number(value) if isinstance(value, float) else str(value)
        parts.append(f' {key}="{escape(text, quote=True)}"')
    return "".join(parts)


def shade(colour: str, amount: float) -> str:
    """`colour` (`#rrggbb`) mixed towards white (amount > 0) or black (< 0)."""
    channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    mixed = [round(c + (target - c) * abs(amount)) for c in channels]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def spiral(count: int, start: float, spacing: float, turn_gap: float) -> list[tuple[float, float]]:
    """`count` points (radius, angle) on an Archimedean spiral, from the inside out.

    The first is at radius `start`, angle 0; each next one is `spacing` further
    along the curve, and each turn lies `turn_gap` outside the one before.
    """
    growth = turn_gap / (2 * math.pi)
    points: list[tuple[float, float]] = []
    angle, travelled, next_point = 0.0, 0.0, 0.0
    while len(points) < count:
        radius = start + growth * angle
        if travelled >= next_point:
            points.append((radius, angle))
            next_point += spacing
        # Small steps along the curve measure its length closely enough.
        step = 0.01
        travelled += step * math.hypot(radius, growth)
        angle += step
    return points


class Canvas:
    """An SVG picture under construction: add elements, then `finish`.

    A picture with targets (`target`) is a group of buttons for assistive
    technology, not an image (whose parts would be hidden from it).
    """

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width = width
        self.height = height
        self._targets = False
        self._parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg"{_attributes(self._size_attrs())}'
            f' font-family="{escape(FONT, quote=True)}">',
            f"<title>{escape(title, quote=False)}</title>",
        ]
        self.rect(0, 0, width, height, fill=PAPER)

    def _size_attrs(self) -> Attrs:
        w, h = number(self.width), number(self.height)
        return {"viewBox": f"0 0 {w} {h}", "width": w, "height": h, "role": "img"}

    def element(self, name: str, attrs: Attrs, content: str | None = None) -> None:
        if content is None:
            self._parts.append(f"<{name}{_attributes(attrs)}/>")
        else:
            self._parts.append(
                f"<{name}{_attributes(attrs)}>{escape(content, quote=False)}</{name}>"
            )

    def open(self, attrs: Attrs) -> None:
        """Start a group; `close` ends it."""
        self._parts.append(f"<g{_attributes(attrs)}>")

    def close(self) -> None:
        self._parts.append("</g>")

    def rect(
        self,
        x: float,
        y: float,
        width: float,
        height: float,
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1.0,
        rx: float = 0.0,
        **extra: str | int | float | None,
    ) -> None:
        attrs: dict[str, str | int | float | None] = {
            "x": float(x),
            "y": float(y),
            "width": float(width),
            "height": float(height),
            "rx": float(rx) if rx else None,
            "fill": fill,
            "stroke": stroke,
            "stroke-width": float(stroke_width) if stroke else None,
        }
        attrs.update(extra)
        self.element("rect", attrs)

    def circle(
        self,
        cx: float,
        cy: float,
        r: float,
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1.0,
        **extra: str | int | float | None,
    ) -> None:
        attrs: dict[str, str | int | float | None] = {
            "cx": float(cx),
            "cy": float(cy),
            "r": float(r),
            "fill": fill,
            "stroke": stroke,
            "stroke-width": float(stroke_width) if stroke else None,
        }
        attrs.update(extra)
        self.element("circle", attrs)

    def line(
        self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1.0
    ) -> None:
        self.element(
            "line",
            {
                "x1": float(x1),
                "y1": float(y1),
                "x2": float(x2),
                "y2": float(y2),
                "stroke": stroke,
                "stroke-width": float(width),
            },
        )

    def polygon(
        self,
        points: Sequence[tuple[float, float]],
        fill: str,
        stroke: str | None = None,
        stroke_width: float = 1.0,
        **extra: str | int | float | None,
    ) -> None:
        attrs: dict[str, str | int | float | None] = {
            "points": " ".join(f"{number(x)},{number(y)}" for x, y in points),
            "fill": fill,
            "stroke": stroke,
            "stroke-width": float(stroke_width) if stroke else None,
            "stroke-linejoin": "round" if stroke else None,
        }
        attrs.update(extra)
        self.element("polygon", attrs)

    def path(self, d: str, fill: str, stroke: str | None = None, stroke_width: float = 1.0) -> None:
        self.element(
            "path",
            {
                "d": d,
                "fill": fill,
                "stroke": stroke,
                "stroke-width": float(stroke_width) if stroke else None,
                "stroke-linecap": "round" if stroke else None,
            },
        )

    def text(
        self,
        x: float,
        y: float,
        content: str,
        size: float = 14.0,
        anchor: str = "start",
        fill: str = INK,
        bold: bool = False,
        **extra: str | int | float | None,
    ) -> None:
        attrs: dict[str, str | int | float | None] = {
            "x": float(x),
            "y": float(y),
            "font-size": float(size),
            "text-anchor": None if anchor == "start" else anchor,
            "font-weight": "bold" if bold else None,
            "fill": fill,
        }
        attrs.update(extra)
        self.element("text", attrs, content)

    def target(self, choice: Choice, data: Attrs | None = None) -> None:
        """Start a clickable target of a move being built; `close` ends it.

        An SVG button (`role`, `tabindex`, `aria-label`) carrying the step
        the page sends back: it works by mouse, touch, keyboard and screen
        reader, and tests find it by its name. Draw a `target_ring` or
        another shape inside it to show where it is.
        """
        self._targets = True
        self.open(
            {
                "class": "target",
                "role": "button",
                "tabindex": "0",
                "aria-label": choice.label,
                "data-step": choice.step,
                **(data or {}),
            }
        )

    def finish(self) -> str:
        if self._targets:
            self._parts[0] = self._parts[0].replace(' role="img"', ' role="group"', 1)
        return "\n".join([*self._parts, "</svg>"]) + "\n"


def pyramid(
    canvas: Canvas,
    cx: float,
    cy: float,
    side: float,
    colour: str,
    data: Attrs,
) -> None:
    """A pyramid seen from above: four faces lit from the top left.

    The group carries `class="pyramid"` and `data`, so that a picture's
    pyramids can be found and counted.
    """
    h = side / 2
    corners = [(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)]
    apex = (cx, cy)
    edge = shade(colour, -0.45)
    canvas.open({"class": "pyramid", **data})
    for (a, b), light in zip(
        zip(corners, [*corners[1:], corners[0]], strict=True), (0.35, 0.0, -0.25, 0.15), strict=True
    ):
        canvas.polygon([a, b, apex], fill=shade(colour, light))
    canvas.polygon(corners, fill="none", stroke=edge, stroke_width=max(side / 40, 0.8))
    canvas.line(corners[0][0], corners[0][1], corners[2][0], corners[2][1], edge, side / 60)
    canvas.line(corners[1][0], corners[1][1], corners[3][0], corners[3][1], edge, side / 60)
    canvas.close()


def seat_token(canvas: Canvas, cx: float, cy: float, r: float, seat: int, data: Attrs) -> None:
    """A round token in the seat's colour with its player's number, counted from 1 as people
    count (the API's seats count from 0): pawns and labels."""
    colour = SEAT_COLOURS[seat % len(SEAT_COLOURS)]
    canvas.open(data)
    canvas.circle(cx, cy, r, fill="#ffffff", stroke=colour, stroke_width=r / 3)
    canvas.text(cx, cy + r * 0.42, str(seat + 1), size=r * 1.2, anchor="middle", bold=True)
    canvas.close()


def seat_panel(
    canvas: Canvas, x: float, y: float, width: float, height: float, seat: int, moving: bool
) -> None:
    """A seat's card under a board: white with an edge in its colour while it is
    to move, a colour strip down its left side."""
    colour = SEAT_COLOURS[seat % len(SEAT_COLOURS)]
    canvas.rect(
        x,
        y,
        width,
        height,
        fill="#ffffff" if moving else "#f7f3ea",
        stroke=colour if moving else LINE,
        stroke_width=2.5 if moving else 1,
        rx=8,
    )
    canvas.rect(x, y, 8, height, fill=colour, rx=3)


# What the last move changed: a pale gold halo with an amber edge, a colour no
# piece is drawn in, so that a marked piece keeps its own colour.
HALO = "#fff0c2"
HIGHLIGHT = "#d98e04"


def marked(change: str, data: Attrs) -> dict[str, str | int | float | None]:
    """The attributes every mark carries: `class="last"` and what changed."""
    return {"class": "last", "data-last": change, **data}


def mark_box(
    canvas: Canvas,
    x: float,
    y: float,
    width: float,
    height: float,
    change: str,
    data: Attrs,
    rx: float = 6.0,
) -> None:
    """A halo around a box that the last move changed, drawn behind what fills it."""
    canvas.rect(
        x,
        y,
        width,
        height,
        fill=HALO,
        stroke=HIGHLIGHT,
        stroke_width=3,
        rx=rx,
        **marked(change, data),
    )


def mark_round(canvas: Canvas, cx: float, cy: float, r: float, change: str, data: Attrs) -> None:
    """A round halo that the last move changed, drawn behind what fills it."""
    canvas.circle(cx, cy, r, fill=HALO, stroke=HIGHLIGHT, stroke_width=3, **marked(change, data))


def open_ghost(canvas: Canvas, data: Attrs) -> None:
    """Start drawing what the last move took away, faint; `close` ends it.

    Only what the viewer saw one move earlier is drawn so: a ghost tells
    where a piece went from, never anything new.
    """
    canvas.open({**marked("removed", data), "opacity": "0.4"})


def ghost_ring(canvas: Canvas, cx: float, cy: float, r: float) -> None:
    """The dashed ring around a ghost, so it reads as gone, not as faded."""
    canvas.element(
        "circle",
        {
            "cx": float(cx),
            "cy": float(cy),
            "r": float(r),
            "fill": "none",
            "stroke": HIGHLIGHT,
            "stroke-width": 2.0,
            "stroke-dasharray": "4 3",
        },
    )


# Targets of a move being built: a calm teal no piece is drawn in. Pages
# brighten a target under the pointer or the keyboard's focus (web.css).
TARGET = "#127a74"


def target_box(
    canvas: Canvas, x: float, y: float, width: float, height: float, choice: Choice, rx: float = 6
) -> None:
    """A rectangular target: a dashed ring over the place it stands for."""
    canvas.target(choice)
    ring_box(canvas, x, y, width, height, rx)
    canvas.close()


def ring_box(
    canvas: Canvas, x: float, y: float, width: float, height: float, rx: float = 6
) -> None:
    """The dashed ring of a target, for a target that draws more inside it."""
    canvas.rect(
        x,
        y,
        width,
        height,
        fill=TARGET,
        stroke=TARGET,
        stroke_width=2.5,
        rx=rx,
        **{"fill-opacity": "0.12", "stroke-dasharray": "6 4", "class": "ring"},
    )


def target_round(canvas: Canvas, cx: float, cy: float, r: float, choice: Choice) -> None:
    """A round target: a dashed ring over the place it stands for."""
    canvas.target(choice)
    canvas.circle(
        cx,
        cy,
        r,
        fill=TARGET,
        stroke=TARGET,
        stroke_width=2.5,
        **{"fill-opacity": "0.12", "stroke-dasharray": "6 4", "class": "ring"},
    )
    canvas.close()


def chosen_box(canvas: Canvas, x: float, y: float, width: float, height: float) -> None:
    """The place a step already taken chose: a solid ring, drawn over it."""
    canvas.rect(
        x, y, width, height, fill="none", stroke=TARGET, stroke_width=4, rx=6, **{"class": "chosen"}
    )
