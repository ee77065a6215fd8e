"""The bounds a reply must keep to be read, measured on its raw bytes before any parsing.

Python's `email` parser spends time that grows faster than the message on
many MIME parts and recurses once per nested part (a deep enough nesting
raises `RecursionError`), so the number of parts, their nesting and the
number of lines are measured first, by one pass of regular expressions
over the bytes, and a message beyond them is refused unread. The
measure is an upper bound: a `boundary=` that is not in a header still
counts, so a message near the limits may be refused though it is simpler.
"""

from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesHeaderParser

# A reply is a few lines and perhaps a signature's images or a photo; these leave room for that.
MAX_PARTS = 100
MAX_DEPTH = 20
MAX_LINES = 250_000

# A delimiter line (`--boundary`, `--boundary--`), a `boundary=` parameter, or an enclosed message.
_MARKS = re.compile(
    rb"^--(?P<delimiter>[^\r\n]{1,200})\r?$"
    rb"|boundary\s*=\s*(?:\"(?P<quoted>[^\"\r\n]{1,200})\"|(?P<bare>[^\s;\"]{1,200}))"
    rb"|content-type:\s*(?P<enclosed>message/)",
    re.IGNORECASE | re.MULTILINE,
)
_END_OF_HEAD = re.compile(rb"\r?\n\r?\n")


def head_of(raw: bytes) -> EmailMessage:
    """The message's header fields alone, parsed without reading its body."""
    end = _END_OF_HEAD.search(raw)
    fields = raw if end is None else raw[: end.end()]
    head = BytesHeaderParser(policy=policy.default).parsebytes(fields)
    assert isinstance(head, EmailMessage)
    return head


def beyond_bounds(raw: bytes) -> str | None:
    """Why the message is too complex to read, in words for its sender, or None."""
    lines = raw.count(b"\n") + 1
    if lines > MAX_LINES:
        return f"it has more than {MAX_LINES} lines"
    open_boundaries: list[bytes] = []
    parts = deepest = enclosed = 0
    for mark in _MARKS.finditer(raw):
        if mark["enclosed"] is not None:
            enclosed += 1
        elif mark["delimiter"] is not None:
            parts += _delimit(open_boundaries, mark["delimiter"].rstrip())
        else:
            open_boundaries.append(mark["quoted"] or mark["bare"])
        deepest = max(deepest, len(open_boundaries) + enclosed)
        if parts > MAX_PARTS:
            return f"it has more than {MAX_PARTS} MIME parts"
        if deepest > MAX_DEPTH:
            return f"its MIME parts are nested more than {MAX_DEPTH} deep"
    return None


def _delimit(open_boundaries: list[bytes], line: bytes) -> int:
    """Take a delimiter line: 1 when it opens a part, 0 when it closes or is plain text.

    A delimiter of an outer multipart ends every part nested in it.
    """
    closing = line.endswith(b"--")
    name = line[:-2] if closing else line
    if name not in open_boundaries:
        return 0
    while open_boundaries[-1] != name:
        open_boundaries.pop()
    if closing:
        open_boundaries.pop()
        return 0
    return 1
