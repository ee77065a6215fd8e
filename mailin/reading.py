"""Reading a mail reply the way mail programs and people write them.

What a player wrote is found in the reply's plain part (or its HTML part
read as text, blockquotes quoted), with `format=flowed` soft breaks joined
again (RFC 3676). Quoted lines, the attribution above a quote in any of the
languages `mail-parser-reply` knows (`On ... wrote:`, `Am ... schrieb ...:`,
Outlook's `From:`/`Sent:` block), any line or two ending in `:` just above
a quote, and everything from a signature (`-- `) or a forwarded message on
are not the player's. The move is the first paragraph of what is left,
its lines joined by spaces, so a long move that the client wrapped at 72
columns is read whole; `candidates` also offers its first line alone for a
move followed by a greeting on the next line.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import getaddresses
from html.parser import HTMLParser

from mailparser_reply.constants import MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage as ReplyText

MAX_MOVE = 400
_FORWARD = re.compile(r"^-{2,}\s*(original message|forwarded message)", re.IGNORECASE)
# Every language the library knows but its test fixture ("david").
_LANGUAGES = [name for name in MAIL_LANGUAGES if name != "david"]
_HEADERS: re.Pattern[str] = ReplyText(text="", languages=list(_LANGUAGES)).HEADER_REGEX
# A quote's marker stands in for a cut attribution, so what follows is read as quoted.
_CUT = "\n>\n"


class _HtmlText(HTMLParser):
    """HTML to text lines, with blockquotes quoted by `>` as a text mail would be."""

    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "pre", "blockquote"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.depth = 0
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "head", "title"):
            self.skip += 1
        if tag in self.BLOCKS:
            self.lines.append("")
        if tag == "blockquote":
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "head", "title"):
            self.skip = max(self.skip - 1, 0)
        if tag == "blockquote":
            self.depth = max(self.depth - 1, 0)
        if tag in self.BLOCKS:
            self.lines.append("")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        for number, piece in enumerate(data.split("\n")):
            if number:
                self.lines.append("")
            if not self.lines[-1] and self.depth and piece.strip():
                self.lines[-1] = "> " * self.depth
            self.lines[-1] += piece


def html_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "\n".join(line.replace("\xa0", " ") for line in parser.lines)


def unflow(text: str, delsp: bool) -> str:
    """`format=flowed` text with its soft line breaks joined (RFC 3676, 4.1-4.4).

    A line ending in a space continues on the next line of the same quote
    depth; `delsp=yes` drops that space. Space-stuffing is undone. The
    signature separator `-- ` is a hard line whatever its trailing space.
    """
    out: list[str] = []
    open_depth: int | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        line = raw[depth:]
        if line.startswith(" "):
            line = line[1:]
        soft = line.endswith(" ") and line != "-- "
        if soft and delsp:
            line = line[:-1]
        if open_depth == depth and out:
            out[-1] += line
        else:
            out.append(">" * depth + (" " if depth else "") + line)
        open_depth = depth if soft else None
    return "\n".join(out)


def body_text(message: EmailMessage) -> str:
    """The reply's text: its plain part (flowed joined), else its HTML part as text."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        return ""
    if not isinstance(content, str):
        return ""
    if part.get_content_type() == "text/html":
        return html_text(content)
    if str(part.get_param("format", "")).lower() == "flowed":
        return unflow(content, str(part.get_param("delsp", "")).lower() == "yes")
    return content


def _without_attributions(text: str) -> str:
    """The text with every attribution the library recognises turned into a quote marker."""
    return _HEADERS.sub(lambda _found: _CUT, text.replace("\r\n", "\n"))


def _quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _ends_above_quote(lines: list[str], start: int) -> int | None:
    """Where a short paragraph at `start` ending in `:` ends, if a quote follows it.

    An attribution in a language the library does not know (or wrapped in
    a way it does not expect) still ends in a colon right above the quote.
    """
    for end in range(start, min(start + 3, len(lines))):
        line = lines[end].strip()
        if not line or _quoted(line):
            return None
        if line.endswith(":"):
            following = next((row for row in lines[end + 1 :] if row.strip()), "")
            return end if _quoted(following) else None
    return None


def candidates(text: str) -> list[str]:
    """What may be the move: the first paragraph of the player's own text, then its first line.

    Empty when the reply holds nothing of the player's.
    """
    lines = _without_attributions(text).split("\n")
    paragraph: list[str] = []
    number = 0
    while number < len(lines):
        raw = lines[number]
        line = raw.strip()
        if raw.rstrip() == "--" or _FORWARD.match(line) or line.startswith("_____"):
            break
        if not line or _quoted(line):
            if paragraph:
                break
            number += 1
            continue
        if not paragraph:
            end = _ends_above_quote(lines, number)
            if end is not None:
                number = end + 1
                continue
        paragraph.append(line)
        number += 1
    if not paragraph:
        return []
    whole = " ".join(paragraph)[:MAX_MOVE]
    first = paragraph[0][:MAX_MOVE]
    return [whole] if whole == first else [whole, first]


def sender_of(message: EmailMessage) -> str:
    found = getaddresses([str(message.get("From", ""))])
    return found[0][1].strip() if len(found) == 1 else ""


_VACATION_SUBJECT = re.compile(
    r"^(auto(matic)?[ -]?(reply|response|antwort)|out of (the )?office|abwesenheit|"
    r"absence|vacation|afwezig|r[ée]ponse automatique)",
    re.IGNORECASE,
)


def automatic(message: EmailMessage, envelope_sender: str) -> str | None:
    """Why a message is a machine's (RFC 3834 and common practice), or None for a person's.

    Such mail is dropped without an answer, so two robots never mail each other forever.
    """
    if not envelope_sender.strip() or envelope_sender.strip() == "<>":
        return "empty envelope sender"
    submitted = str(message.get("Auto-Submitted", "")).strip().lower()
    if submitted and submitted != "no":
        return f"Auto-Submitted: {submitted[:40]}"
    precedence = str(message.get("Precedence", "")).strip().lower()
    if precedence in ("bulk", "junk", "list", "auto_reply"):
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond", "List-Id"):
        if message.get(name) is not None:
            return name
    if _VACATION_SUBJECT.match(str(message.get("Subject", "")).strip()):
        return "a vacation notice"
    return None
