"""What the pictures and the text boards of every game share: names and widths."""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Sequence

from referee.i18n import _
from referee.names import bot_of
from referee.names import shown as names_shown

# A text board fits any mail client's plain-text view.
TEXT_WIDTH = 72
# First strong isolate and pop directional isolate: what lies between them is laid
# out on its own, in its own direction, and moves nothing around it.
FSI = "\u2068"
PDI = "\u2069"


def seat_name(names: Sequence[str] | None, seat: int) -> str:
    """The seat's player name, or `Player N` (counted from 1: seat 0 is Player 1).

    The name is shown as everywhere else (`names.shown`): one line, without
    control, invisible or direction-changing characters. One of other than
    ASCII characters is isolated (FSI...PDI): a right-to-left name is written
    right to left, and cannot carry the words after it (`to move`, a score)
    into its own direction. `clip` and `column` keep the isolate whole.
    """
    name = names_shown(names[seat]) if names is not None and seat < len(names) else ""
    if not name:
        return _("Player {number}").format(number=seat + 1)
    return name if name.isascii() else f"{FSI}{name}{PDI}"


def person_name(names: Sequence[str] | None, seat: int) -> str:
    """`seat_name` without a bot's level (`Bot 2`, not `Bot 2 (bot, strong)`): for a
    status line, where the seat's card beside it says the rest."""
    name = names_shown(names[seat]) if names is not None and seat < len(names) else ""
    return seat_name([bot_of(name)[0]], 0) if name else seat_name(None, seat)


def _width(char: str) -> int:
    """Columns a character takes in a monospace font (East Asian wide ones take 2;
    marks and format characters, the isolates among them, none)."""
    if unicodedata.combining(char) or unicodedata.category(char) == "Cf":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def clip(text: str, width: int) -> str:
    """`text` cut to `width` columns, an ellipsis marking the cut; an isolated name
    (`seat_name`) is cut inside its isolate, which stays closed."""
    if sum(_width(c) for c in text) <= width:
        return text
    if len(text) > 2 and text[0] == FSI and text[-1] == PDI:
        return f"{FSI}{clip(text[1:-1], width)}{PDI}"
    kept, used = [], 0
    for char in text:
        if used + _width(char) > width - 1:
            break
        kept.append(char)
        used += _width(char)
    return "".join(kept) + "…"


def column(text: str, width: int) -> str:
    """`text` clipped and padded to exactly `width` columns, for a table."""
    text = clip(text, width)
    return text + " " * (width - sum(_width(c) for c in text))


def prose(text: str) -> list[str]:
    """A sentence of a text board as lines within `TEXT_WIDTH`, broken between words
    rather than cut (a translation may run longer than the English)."""
    return textwrap.wrap(text, TEXT_WIDTH, break_on_hyphens=False) or [""]


def board_text(lines: Sequence[str]) -> str:
    """The lines of a text board, none wider than `TEXT_WIDTH`, trailing spaces cut."""
    return "\n".join(clip(line.rstrip(), TEXT_WIDTH) for line in lines) + "\n"
