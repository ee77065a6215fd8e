"""A player's rating at one game over time, drawn as SVG for its profile page.

One dot per rated game (its rating after that game, with a tooltip saying it),
joined by a line, over a light band of the rating plus and minus its
deviation; the rating axis has a few round marks, the time axis the first
and last dates. Drawn with presentation attributes only (no `style`, no
script), so that the pages' content security policy shows it as it is, and
it scales to the width of its box (`viewBox`, no fixed size).

Pure: the caller gives each point's place in time as a number (seconds, say)
and the dates to write under the axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from referee.render.svg import FONT, INK, LINE, MUTED, escape, number

# Narrow, with large type: on a phone the chart is drawn some 330 pixels wide.
WIDTH, HEIGHT = 480.0, 210.0
LEFT, RIGHT, TOP, BOTTOM = 48.0, 10.0, 12.0, 30.0
LINE_COLOUR = "#1b6fd6"
PROVISIONAL_COLOUR = "#8fb3e6"
# Marks on the rating axis fall on multiples of one of these.
_STEPS = (25, 50, 100, 200, 250, 500, 1000)


@dataclass(frozen=True, slots=True)
class Point:
    """The rating after one game: when (`at`, any number that grows with time)."""

    at: float
    rating: int
    deviation: int
    provisional: bool
    # What the dot's tooltip says (its date, say).
    label: str


def _step(span: float) -> int:
    """A round step giving three to six marks over `span` points of rating."""
    return next((step for step in _STEPS if span / step <= 5), _STEPS[-1])


def rating_chart(points: Sequence[Point], title: str, first: str, last: str) -> str:
    """The chart of `points` (oldest first), titled `title`, `first` and `last` written
    under the ends of the time axis."""
    low = min(p.rating - p.deviation for p in points) if points else 1400
    high = max(p.rating + p.deviation for p in points) if points else 1600
    step = _step(max(high - low, 1))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    high = max(high, low + step)
    starts = min((p.at for p in points), default=0.0)
    span = max((p.at for p in points), default=0.0) - starts
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(index: int, at: float) -> float:
        if len(points) == 1:
            return LEFT + inner_w / 2
        # Evenly spread when every point has one time, else along time.
        share = (at - starts) / span if span > 0 else index / (len(points) - 1)
        return LEFT + inner_w * share

    def y(rating: float) -> float:
        return TOP + inner_h * (high - rating) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {number(WIDTH)} '
        f'{number(HEIGHT)}" role="img" class="rating-chart" '
        f'font-family="{escape(FONT)}" font-size="14">',
        f"<title>{escape(title, quote=False)}</title>",
    ]
    for mark in range(low, high + 1, step):
        at_y = number(y(mark))
        parts.append(
            f'<line x1="{number(LEFT)}" x2="{number(WIDTH - RIGHT)}" y1="{at_y}" y2="{at_y}" '
            f'stroke="{LINE}" stroke-width="1"/>'
            f'<text x="{number(LEFT - 6)}" y="{at_y}" text-anchor="end" '
            f'dominant-baseline="middle" fill="{MUTED}">{mark}</text>'
        )
    base = number(HEIGHT - BOTTOM + 20)
    parts.append(
        f'<text x="{number(LEFT)}" y="{base}" fill="{MUTED}">{escape(first, quote=False)}</text>'
        f'<text x="{number(WIDTH - RIGHT)}" y="{base}" text-anchor="end" fill="{MUTED}">'
        f"{escape(last, quote=False)}</text>"
    )
    places = [(x(n, p.at), p) for n, p in enumerate(points)]
    if len(places) > 1:
        upper = [f"{number(px)},{number(y(p.rating + p.deviation))}" for px, p in places]
        lower = [f"{number(px)},{number(y(p.rating - p.deviation))}" for px, p in places]
        band = " ".join(upper + lower[::-1])
        parts.append(f'<polygon points="{band}" fill="{LINE_COLOUR}" fill-opacity="0.12"/>')
        line = " ".join(f"{number(px)},{number(y(p.rating))}" for px, p in places)
        parts.append(
            f'<polyline points="{line}" fill="none" stroke="{LINE_COLOUR}" stroke-width="2" '
            'stroke-linejoin="round"/>'
        )
    for px, p in places:
        colour = PROVISIONAL_COLOUR if p.provisional else LINE_COLOUR
        said = f"{p.rating} ± {p.deviation}, {p.label}"
        parts.append(
            f'<circle cx="{number(px)}" cy="{number(y(p.rating))}" r="3.5" fill="{colour}" '
            f'stroke="{INK}" stroke-width="0.5"><title>{escape(said, quote=False)}</title>'
            "</circle>"
        )
    parts.append("</svg>")
    return "".join(parts)
