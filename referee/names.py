"""Players' names: what a new game's name may hold, and how any name is shown.

A name is typed by whoever creates a game, and every page, mail and
picture of the game shows it to the others. So a new name may hold no
character that changes the direction of the text around it (bidi
controls) or that is itself invisible (Unicode's format characters,
category Cf), and must show something. Names stored before this rule are
shown through `shown`, which drops what is refused now, so that every
place a name appears shows the same text.

The zero-width joiner and non-joiner are format characters that some
scripts need inside a word (Persian names such as Hosseinzadeh, emoji
sequences): they are taken between two visible characters only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from referee.i18n import _

# Characters drawn as nothing although their category says letter or symbol.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_JOINERS = frozenset("\u200c\u200d")
_BIDI_CLASSES = frozenset(("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"))
# Left-to-right, right-to-left and Arabic letter marks.
_BIDI_MARKS = frozenset("\u200e\u200f\u061c")
# Line breaks of any kind: a name is one line.
_BREAKING = frozenset(("Cc", "Zl", "Zp", "Cs"))
# What `plain` keeps besides letters, digits and marks: nothing a mail
# program could read as a link or an address (no dots, slashes, colons, @).
_PLAIN_PUNCTUATION = frozenset(" -'_")
PLAIN_LENGTH = 32


def _visible(char: str) -> bool:
    """Drawn as something of its own: a letter, digit, punctuation or symbol."""
    return unicodedata.category(char)[0] in "LNPS" and char not in _FILLERS


def _bidi(char: str) -> bool:
    """An embedding, override or isolate, or a directional mark."""
    return unicodedata.bidirectional(char) in _BIDI_CLASSES or char in _BIDI_MARKS


def _joining(name: str, at: int) -> bool:
    """A joiner between two visible characters (the marks on a character count as it)."""
    if name[at] not in _JOINERS or at + 1 == len(name):
        return False
    left = at - 1
    while left >= 0 and unicodedata.category(name[left])[0] == "M":
        left -= 1
    return left >= 0 and _visible(name[left]) and _visible(name[at + 1])


def _format(name: str, at: int) -> bool:
    """A format character that has no place here (a joiner between letters has)."""
    return unicodedata.category(name[at]) == "Cf" and not _joining(name, at)


def hidden(text: str, at: int) -> bool:
    """Whether the character at `at` is one that no place shows: it turns the text
    around it (a bidi control), or is invisible out of place (a format character but
    a joiner between letters, or a filler drawn as nothing)."""
    char = text[at]
    return _bidi(char) or _format(text, at) or char in _FILLERS


def _described(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"


def refusal(name: str) -> str | None:
    """Why `name` may not name a player of a new game, or None when it may, in the
    language spoken here (a page's, or what a REST request's `Accept-Language` asks)."""
    for at, char in enumerate(name):
        if _bidi(char):
            return _("a name may not hold {char}: it changes the direction of text").format(
                char=_described(char)
            )
        if _format(name, at):
            return _("a name may not hold {char}: it is an invisible character").format(
                char=_described(char)
            )
    if not any(_visible(char) for char in name):
        return _("a name must show something: it holds only spaces or invisible characters")
    return None


def shown(name: str) -> str:
    """`name` as every page, mail and picture shows it: one line, without what
    `refusal` refuses today (names stored before the rule may hold it).
    Empty when nothing visible is left; the caller says `Seat N` then."""
    if name.isascii() and name.isprintable():
        # Most names: no break, bidi or format character, and all but the space
        # visible; a page of a player's games shows hundreds.
        return " ".join(name.split())
    kept = []
    for at, char in enumerate(name):
        if unicodedata.category(char) in _BREAKING:
            kept.append(" ")
        elif not _bidi(char) and not _format(name, at):
            kept.append(char)
    text = " ".join("".join(kept).split())
    return text if any(_visible(char) for char in text) else ""


def plain(name: str) -> str:
    """`name` as mail quotes a stranger's words: letters, digits, marks, spaces,
    `-`, `'` and `_` only, at most `PLAIN_LENGTH` characters. No mail program
    shows the result as a link, a domain or an address. Empty when nothing is left."""
    kept = "".join(
        char if char in _PLAIN_PUNCTUATION or unicodedata.category(char)[0] in "LNM" else " "
        for char in shown(name)
        if char not in _FILLERS
    )
    text = " ".join(kept.split())[:PLAIN_LENGTH].strip()
    return text if any(_visible(char) for char in text) else ""


def _ranges(allowed: range, keep: Callable[[str], bool]) -> str:
    """The characters of `allowed` that `keep` keeps, as ECMA-262 class ranges."""
    found: list[tuple[int, int]] = []
    for code in allowed:
        if keep(chr(code)):
            if found and found[-1][1] == code - 1:
                found[-1] = (found[-1][0], code)
            else:
                found.append((code, code))
    return "".join(
        f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}" for low, high in found
    )


def _anywhere(char: str) -> bool:
    return unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp")


# Scripts whose letters the published form names as visible: a part of what
# is taken, short enough to publish (the server takes every script).
_FORM_SCRIPTS = (
    range(0x21, 0x7F),
    range(0xA1, 0x250),
    range(0x370, 0x530),
    range(0x5D0, 0x5EB),
    range(0x620, 0x64B),
    range(0x3041, 0x3100),
    range(0x4E00, 0xA000),
    range(0xAC00, 0xD7A4),
)

# The names the OpenAPI document shows (ECMA-262, read alike by JavaScript
# with or without the `u` flag and by Python): characters of the Basic
# Multilingual Plane, at least one of them a visible letter or sign of a
# common script. A part of what is taken: the server also takes other
# scripts and characters beyond U+FFFF such as emoji.
NAME_FORM = (
    f"^[{_ranges(range(0x20, 0x10000), _anywhere)}]*"
    f"[{''.join(_ranges(script, _visible) for script in _FORM_SCRIPTS)}]"
    f"[{_ranges(range(0x20, 0x10000), _anywhere)}]*$"
)


def with_bot(name: str, level: str | None) -> str:
    """A seat's name as pages and mails show it: `Name (bot, strong)` for a bot's seat."""
    return name if level is None else f"{name} (bot, {level})"


_WITH_BOT = re.compile(r"(.+) \(bot, ([a-z]+)\)")


def bot_of(shown: str) -> tuple[str, str | None]:
    """A name as `with_bot` gives it, split again: the name and the bot's level (None:
    a person), for a picture that says the two apart where it has room."""
    found = _WITH_BOT.fullmatch(shown)
    return (shown, None) if found is None else (found[1], found[2])


# A player's public name (`PUT /v1/me/profile`): what strangers see of it.
PUBLIC_SHORTEST = 3
PUBLIC_LONGEST = 24


def public_refusal(name: str) -> str | None:
    """Why `name` may not be a player's public name, or None when it may: 3 to 24
    characters, letters, digits and marks of any script, spaces and `- ' _`, at
    least one letter or digit, one space at most between words and none around."""
    if not PUBLIC_SHORTEST <= len(name) <= PUBLIC_LONGEST:
        return _("a public name has {shortest} to {longest} characters").format(
            shortest=PUBLIC_SHORTEST, longest=PUBLIC_LONGEST
        )
    for char in name:
        if not _public_char(char):
            return _(
                "a public name may not hold {char}: only letters, digits, spaces and - ' _"
            ).format(char=_described(char))
    if " ".join(name.split()) != name:
        return _("a public name has no space at its ends and one at most between words")
    if not any(unicodedata.category(char)[0] in "LN" for char in name):
        return _("a public name holds one letter or digit at least")
    return None


def public_key(name: str) -> str:
    """`name` as public names are compared: without case or width (NFKC, casefold),
    so that `Zoé`, `ZOÉ` and a full-width `Zoé` are one name."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _public_char(char: str) -> bool:
    return char in _PLAIN_PUNCTUATION or (
        unicodedata.category(char)[0] in "LNM" and char not in _FILLERS
    )


# The public names the OpenAPI document shows (ECMA-262, as `NAME_FORM`): the
# characters `public_refusal` takes, of the Basic Multilingual Plane. The rule
# also asks for a letter or digit and single spaces between words only.
PUBLIC_NAME_FORM = (
    f"^[{_ranges(range(0x20, 0x10000), _public_char)}]{{{PUBLIC_SHORTEST},{PUBLIC_LONGEST}}}$"
)
