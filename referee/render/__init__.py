"""Pictures of a game: SVG for pages, PNG for mail, a text board for any mail client.

Every drawing starts from a *view* (`game.view(state, seat)`), never from a
state, so a picture can never show more than its viewer may see. Each game
has a module here named like the game, with `svg(view, names, before)` and
`text(view, names)`; `names` are the players' names by seat (None: `Player
1`, `Player 2`, ...; pictures count players from 1, as people do, while the
API's seats count from 0). Like the rules, this layer is pure: the same view
always gives the same bytes.

While a player builds a move on the board, `building` (`Game.build`) gives
the view to draw (the move so far shown on it) and the choices to draw as
targets: buttons inside the picture (`Canvas.target`) carrying the step a
click takes.

`before` is the same viewer's view one move earlier (None: nothing to
mark). A picture marks what changed between the two with `class="last"`
and `data-last` (`added`, `moved`, `removed`, `changed`): what the last
move did and what it took away. Both are the viewer's own views, so the
marks can show nothing the viewer could not see already.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

import fontpkg_noto_sans
import resvg_py

from referee import games as registry
from referee.engine import JSON, Building

Picture = Callable[[JSON, Sequence[str] | None, JSON | None, Building[Any] | None], str]
Drawing = Callable[[JSON, Sequence[str] | None], str]

# PNG text is drawn with a font that ships as a Python package, never with
# the machine's fonts: a mail picture then looks the same everywhere (a
# machine without the SVG's fonts would silently drop all text), and not
# scanning the system fonts saves about 100 ms a picture.
_PNG_FONTS = [str(fontpkg_noto_sans.ROOT / "files" / "NotoSans[wdth,wght].ttf")]


def _load(game_name: str) -> tuple[Picture, Drawing]:
    module = import_module(f"{__name__}.{game_name}")
    return module.svg, module.text


# Found by name from the games registry, so that a game registered there is
# drawn without a second list here; a game without its module fails at import.
_DRAWINGS: dict[str, tuple[Picture, Drawing]] = {name: _load(name) for name in registry.names()}


def games() -> list[str]:
    """The games that have pictures."""
    return sorted(_DRAWINGS)


def _drawings(game_name: str) -> tuple[Picture, Drawing]:
    try:
        return _DRAWINGS[game_name]
    except KeyError:
        raise KeyError(
            f"no picture for game {game_name!r}; games with pictures: {', '.join(games())}"
        ) from None


def render_svg(
    game_name: str,
    view: JSON,
    names: Sequence[str] | None = None,
    before: JSON | None = None,
    building: Building[Any] | None = None,
) -> str:
    """The board of `view` as an SVG document, marking what changed since `before`.

    With `building`, its view is drawn instead, with its choices as targets;
    once steps are taken, the marks of the last move give way to the preview.
    """
    if building is None:
        return _drawings(game_name)[0](view, names, before, None)
    shown_before = before if not building.steps else None
    return _drawings(game_name)[0](building.view, names, shown_before, building)


def render_text(game_name: str, view: JSON, names: Sequence[str] | None = None) -> str:
    """The board of `view` as monospace text, at most 72 columns wide."""
    return _drawings(game_name)[1](view, names)


def render_png(
    game_name: str,
    view: JSON,
    names: Sequence[str] | None = None,
    zoom: float = 1.0,
    before: JSON | None = None,
) -> bytes:
    """The board of `view` as a PNG image, for mail, drawn by resvg in Noto Sans,
    marking what changed since `before` as the SVG does.

    `zoom` scales the picture (the drawing's cost falls with its area).
    """
    picture = render_svg(game_name, view, names, before)
    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=picture,
            zoom=zoom,
            skip_system_fonts=True,
            font_files=_PNG_FONTS,
            font_family=fontpkg_noto_sans.FAMILY,
            sans_serif_family=fontpkg_noto_sans.FAMILY,
        )
    )
