"""What a message or a note between seats may hold, and how it is shown.

A seat's words reach the other seats on pages, in event streams and in
mail, so they are kept as every place shows them: plain text, lines broken
by `\\n` alone, without what the house never shows in a name (bidi
controls, stray format characters, fillers drawn as nothing, other control
characters), each line without trailing spaces, at most one empty line in
a row, and nothing blank around the whole. Whatever shows them escapes
them and never turns them into links or markup.
"""

from __future__ import annotations

import unicodedata

from referee.i18n import _
from referee.names import hidden

MESSAGE_LONGEST = 1000
NOTE_LONGEST = 4000
# The most a request may send, blanks included: the rest is refused unread.
SENT_LONGEST = 4000

# Line breaks of every kind, as one `\n`.
_BREAKS = ("\r\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c")


def shown(text: str) -> str:
    """`text` as every place shows it (empty when nothing visible is left)."""
    for breaking in _BREAKS:
        text = text.replace(breaking, "\n")
    kept = []
    for at, char in enumerate(text):
        category = unicodedata.category(char)
        if char == "\t":
            kept.append(" ")
        elif char == "\n" or not (category in ("Cc", "Cs") or hidden(text, at)):
            kept.append(char)
    lines = [line.rstrip() for line in "".join(kept).split("\n")]
    joined = "\n".join(lines)
    while "\n\n\n" in joined:
        joined = joined.replace("\n\n\n", "\n\n")
    joined = joined.strip()
    return joined if any(_visible(char) for char in joined) else ""


def _visible(char: str) -> bool:
    return unicodedata.category(char)[0] in "LNPS" and not hidden(char, 0)


def message_refusal(text: str) -> str | None:
    """Why `text` (already `shown`) may not be a message, or None when it may."""
    if not text:
        return _("a message must show something: it holds only spaces or invisible characters")
    if len(text) > MESSAGE_LONGEST:
        return _("a message holds at most %(most)d characters (%(here)d here)") % {
            "most": MESSAGE_LONGEST,
            "here": len(text),
        }
    return None


def note_refusal(text: str) -> str | None:
    """Why `text` (already `shown`) may not be a note, or None when it may (empty clears it)."""
    if len(text) > NOTE_LONGEST:
        return _("a note holds at most %(most)d characters (%(here)d here)") % {
            "most": NOTE_LONGEST,
            "here": len(text),
        }
    return None
