"""Pictures of a game: SVG for pages, PNG for mail, a text board for any mail client.

Every drawing starts from a *view* (`game.view(state, seat)`), never from a
state, so a picture can never show more than its viewer may see. Each game
has a module here with `svg(view, names)` and `text(view, names)`; `names`
are the players' names by seat (None: `Seat 0`, `Seat 1`, ...). Like the
rules, this layer is pure: the same view always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import resvg_py

from referee.engine import JSON
from referee.render import ice_palace, mandala, mandala_stones, maniki, subdivision

Drawing = Callable[[JSON, Sequence[str] | None], str]

_DRAWINGS: dict[str, tuple[Drawing, Drawing]] = {
    "ice_palace": (ice_palace.svg, ice_palace.text),
    "mandala": (mandala.svg, mandala.text),
    "mandala_stones": (mandala_stones.svg, mandala_stones.text),
    "maniki": (maniki.svg, maniki.text),
    "subdivision": (subdivision.svg, subdivision.text),
}


def games() -> list[str]:
    """The games that have pictures."""
    return sorted(_DRAWINGS)


def _drawings(game_name: str) -> tuple[Drawing, Drawing]:
    try:
        return _DRAWINGS[game_name]
    except KeyError:
        raise KeyError(
            f"no picture for game {game_name!r}; games with pictures: {', '.join(games())}"
        ) from None


def render_svg(game_name: str, view: JSON, names: Sequence[str] | None = None) -> str:
    """The board of `view` as an SVG document."""
    return _drawings(game_name)[0](view, names)


def render_text(game_name: str, view: JSON, names: Sequence[str] | None = None) -> str:
    """The board of `view` as monospace text, at most 72 columns wide."""
    return _drawings(game_name)[1](view, names)


def render_png(game_name: str, view: JSON, names: Sequence[str] | None = None) -> bytes:
    """The board of `view` as a PNG image, for mail.

    resvg draws it; its text uses the first font of the picture's font
    list that the machine has (DejaVu Sans where nothing else is).
    """
    return bytes(resvg_py.svg_to_bytes(svg_string=render_svg(game_name, view, names)))
