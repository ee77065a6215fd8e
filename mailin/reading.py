"""Reading a mail reply the way mail programs and people write them.

What a player wrote is found in the reply's first plain part that holds
any text, else its first HTML part read as text (blockquotes quoted); a
part with a file name is an attachment even when shown inline, and an
enclosed message is never read. `format=flowed` soft breaks are joined
again (RFC 3676): they are the mail program's own wrapping. Quoted lines,
the attribution above a quote in any of the languages `mail-parser-reply`
knows (`On ... wrote:`, `Am ... schrieb ...:`, Outlook's `From:`/`Sent:`
block), any line or two ending in `:` just above a quote, and everything
from a signature (`-- `) or a forwarded message on are not the player's.
What is left is handed on as paragraphs of lines (`own_paragraphs`): which
line is the move is for the game's notation to say
(`referee.reply_text`). In plain text that is not flowed, a
line broken where a mail program wraps (at 64 columns or more) is joined
with the next, so a long move the program wrapped is one line again;
short lines are the player's own and stay apart.

All of it is linear in the message: the text read is capped
(`MAX_READ_LINES` lines of `MAX_LINE` characters, quoted lines collapsed
to one marker) before the attribution patterns, which are not, see it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from email.message import EmailMessage, MIMEPart
from email.utils import getaddresses
from html import unescape

from mailparser_reply.constants import MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage as ReplyText

MAX_MOVE = 400
MAX_LINE = 1000
MAX_READ_LINES = 2000
# The HTML read: a reply's own words come long before this.
MAX_HTML = 1_000_000
MAX_PARAGRAPHS = 2
# Paragraphs read when the reply's words are passed on as a message (`referee.reply_words`).
MAX_WORD_PARAGRAPHS = 30
MAX_PARAGRAPH_LINES = 50
# A hard line break is a mail program's wrapping when the next word would not have fit
# in this many columns: programs wrap at 72 to 78, people rarely type lines this long.
WRAP_COLUMNS = 64
# Where a quoted or forwarded message begins in mail programs that do not quote with `>`
# (Outlook, Samsung), in English, French, German and Japanese.
_FORWARD = re.compile(
    r"^(?:-{2,}\s*(?:original message|forwarded message|message d'origine|message transf[ée]r[ée]|"
    r"urspr[üu]ngliche nachricht|original-nachricht|weitergeleitete nachricht|"
    r"元のメッセージ|転送されたメッセージ)|(?:差出人|送信者)\s*[:\uff1a])",
    re.IGNORECASE,
)
# Every language the library knows but its test fixture ("david").
_LANGUAGES = [name for name in MAIL_LANGUAGES if name != "david"]
_HEADERS: re.Pattern[str] = ReplyText(text="", languages=list(_LANGUAGES)).HEADER_REGEX
# A quote's marker stands in for a cut attribution, so what follows is read as quoted.
_CUT = "\n>\n"


_BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "pre", "blockquote"})
_UNSEEN = frozenset({"style", "script", "head", "title"})
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)")


class _HtmlLines:
    """Text lines of HTML being read, blockquotes quoted by `>` as a text mail would be.

    Each line is kept as its pieces and joined once at the end: adding to a string is quadratic.
    """

    def __init__(self) -> None:
        self.lines: list[list[str]] = [[]]
        self.depth = 0

    def text(self, data: str) -> None:
        for number, piece in enumerate(unescape(data).split("\n")):
            if number:
                self.lines.append([])
            if not self.lines[-1] and self.depth and piece.strip():
                self.lines[-1].append("> " * self.depth)
            self.lines[-1].append(piece)

    def tag(self, name: str, closing: bool) -> None:
        if name == "blockquote":
            self.depth = max(self.depth + (-1 if closing else 1), 0)
        if name in _BLOCKS:
            self.lines.append([])

    def joined(self) -> str:
        return "\n".join("".join(line).replace("\xa0", " ") for line in self.lines)


def html_text(html: str) -> str:
    """HTML as text lines, in one pass.

    Python's `html.parser` takes time quadratic in some broken HTML (and
    raises on some), so tags are found here with `str.find`, each search
    moving on past what it found or ending the reading: a comment or a tag
    that is never closed ends the text there.
    """
    html = html[:MAX_HTML]
    lowered = html.lower()
    read = _HtmlLines()
    position = 0
    while position < len(html):
        start = html.find("<", position)
        if start < 0:
            read.text(html[position:])
            break
        read.text(html[position:start])
        tag = _TAG.match(html, start)
        if tag is None and not html.startswith(("<!", "<?"), start):
            read.text("<")
            position = start + 1
            continue
        end = html.find("-->" if html.startswith("<!--", start) else ">", start + 1)
        if end < 0:
            break
        position = html.find(">", end) + 1
        if tag is None:
            continue
        name, closing = tag[2].lower(), tag[1] == "/"
        if name in _UNSEEN and not closing:
            # What it holds is not text: read on from its end tag.
            found = lowered.find(f"</{name}", position)
            position = len(html) if found < 0 else found
            continue
        read.tag(name, closing)
    return read.joined()


def unflow(text: str, delsp: bool) -> str:
    """`format=flowed` text with its soft line breaks joined (RFC 3676, 4.1-4.4).

    A line ending in a space continues on the next line of the same quote
    depth; `delsp=yes` drops that space. Space-stuffing is undone. The
    signature separator `-- ` is a hard line whatever its trailing space.
    """
    # Each output line as its pieces, joined once: adding to one growing string is quadratic.
    out: list[list[str]] = []
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
            out[-1].append(line)
        else:
            out.append([">" * depth + (" " if depth else "") + line])
        open_depth = depth if soft else None
    return "\n".join("".join(pieces) for pieces in out)


def _attachment(part: MIMEPart) -> bool:
    """An attachment: so marked, or carrying a file name (an inline `.txt` is a file too)."""
    return part.is_attachment() or part.get_filename() is not None


def _text_parts(message: MIMEPart) -> Iterator[MIMEPart]:
    """The text parts that may hold the reply, in order: never an attachment, nor a
    message enclosed in it (a forwarded mail is someone else's text)."""
    waiting: list[MIMEPart] = [message]
    while waiting:
        part = waiting.pop()
        if part is not message and _attachment(part):
            continue
        if part.get_content_maintype() == "text":
            yield part
        elif part.is_multipart() and part.get_content_maintype() == "multipart":
            waiting.extend(reversed(list(part.iter_parts())))


def _content(part: MIMEPart) -> str:
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        return ""
    return content if isinstance(content, str) else ""


def body_text(message: EmailMessage) -> tuple[str, bool]:
    """The reply's text, and whether its hard line breaks may be a mail program's wrapping.

    The first plain part that holds any text (flowed joined), else the first HTML part as
    text: some programs send an empty plain part beside the HTML that holds the words.
    """
    html: MIMEPart | None = None
    for part in _text_parts(message):
        subtype = part.get_content_subtype()
        if subtype == "html" and html is None:
            html = part
        if subtype != "plain":
            continue
        content = _content(part)
        if not content.strip():
            continue
        if str(part.get_param("format", "")).lower() == "flowed":
            return unflow(content, str(part.get_param("delsp", "")).lower() == "yes"), False
        return content, True
    if html is None:
        return "", False
    return html_text(_content(html)), False


def _bounded_lines(text: str) -> list[str]:
    """The text's lines, each cut to `MAX_LINE`, a run of quoted lines as one `>`, at most
    `MAX_READ_LINES` of them. What is quoted is never read, nor scanned for attributions."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if _quoted(line):
            if lines and lines[-1] == ">":
                continue
            line = ">"
        lines.append(line[:MAX_LINE])
        if len(lines) == MAX_READ_LINES:
            break
    return lines


def _without_attributions(text: str) -> str:
    """The text with every attribution the library recognises turned into a quote marker."""
    return _HEADERS.sub(lambda _found: _CUT, "\n".join(_bounded_lines(text)))


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
            following = next((row for row in lines[end + 1 : end + 50] if row.strip()), "")
            return end if _quoted(following) else None
    return None


def _ends_own_text(raw: str, started: bool) -> bool:
    """A signature, a forwarded message, Outlook's rule, or a quote after the player's text."""
    line = raw.strip()
    if started and _quoted(line):
        return True
    return raw.rstrip() == "--" or bool(_FORWARD.match(line)) or line.startswith("_____")


def own_paragraphs(
    text: str, hard_wrapped: bool = False, most: int = MAX_PARAGRAPHS
) -> list[list[str]]:
    """The first `most` paragraphs of the player's own text, as lines stripped of spaces.

    `hard_wrapped`: the text's line breaks may be a mail program's wrapping
    (plain text that is not flowed), so a line broken at the wrapping width
    is joined with the next. Empty when the reply holds nothing of the player's.
    Lines are cut at `MAX_MOVE` characters when only a move is looked for (the first
    paragraphs), at `MAX_LINE` when the words are read too.
    """
    width = _line_width(most)
    lines = _without_attributions(text).split("\n")
    found: list[list[str]] = []
    paragraph: list[str] = []
    number = 0
    while number < len(lines) and len(found) < most:
        line = lines[number].strip()
        if _ends_own_text(lines[number], started=bool(paragraph or found)):
            break
        attribution = None if paragraph or not line else _ends_above_quote(lines, number)
        number = number + 1 if attribution is None else attribution + 1
        if attribution is None and line and not _quoted(line):
            paragraph.append(line[:width].rstrip())
        elif paragraph:
            found.append(paragraph[:MAX_PARAGRAPH_LINES])
            paragraph = []
    if paragraph:
        found = [*found, paragraph[:MAX_PARAGRAPH_LINES]][:most]
    return [_unwrapped(lines, width) for lines in found] if hard_wrapped else found


def _line_width(most: int) -> int:
    """How much of a line is read: a move's length, or a message's when words are read."""
    return MAX_MOVE if most <= MAX_PARAGRAPHS else MAX_LINE


def reply_paragraphs(message: EmailMessage) -> list[list[str]]:
    """The player's own paragraphs of a whole reply: the move and the words to pass on."""
    text, hard_wrapped = body_text(message)
    return own_paragraphs(text, hard_wrapped, MAX_WORD_PARAGRAPHS)


def _unwrapped(lines: list[str], width: int) -> list[str]:
    """Lines with each one a mail program broke at its width joined with the next."""
    joined = [lines[0]]
    for before, line in itertools.pairwise(lines):
        if len(before) + 1 + len(line.split(" ", 1)[0]) > WRAP_COLUMNS:
            joined[-1] = f"{joined[-1]} {line}"[:width]
        else:
            joined.append(line)
    return joined


_REPLY_PREFIX = re.compile(
    r"^\s*(?:re|aw|sv|vs|antw|odp|r|rif|res|ynt|回复|答复|返信)\s*[:\uff1a]\s*", re.IGNORECASE
)


def subject_words(message: EmailMessage) -> str:
    """The subject without its `Re:` prefixes, in the few languages' forms mail programs write."""
    subject = " ".join(str(message.get("Subject", "")).split())[:MAX_MOVE]
    while (found := _REPLY_PREFIX.match(subject)) is not None:
        subject = subject[found.end() :]
    return subject


def sender_of(message: EmailMessage) -> str:
    found = getaddresses([str(message.get("From", ""))])
    return found[0][1].strip() if len(found) == 1 else ""


# The subjects autoresponders give their answers, in the languages of the common mail
# servers and programs (Outlook and Exchange, Gmail, Apple, Zimbra, webmail), matched at
# the start: a person's reply starts with its own `Re:` instead.
_VACATION_SUBJECT = re.compile(
    r"^\s*(?:"
    r"auto(?:matic|mated)?[ -]?(?:reply|response|answer)|out of (?:the )?office|vacation|"
    r"away from|absence|absent|autosvar|autoresponder|"
    r"automatische antwort|abwesenheit(?:snotiz)?|abwesend|"
    r"respuesta autom[aá]tica|fuera de la oficina|ausente|ausencia|"
    r"automatisch antwoord|afwezig|niet aanwezig|"
    r"r[ée]ponse automatique|"
    r"risposta automatica|fuori (?:sede|ufficio)|"
    r"automatiskt svar|fr[aå]nvaro|automatisk svar|frav[æe]r|"
    r"resposta autom[aá]tica|aus[eê]ncia|fora do escrit[oó]rio|"
    r"automatyczna odpowied[zź]|nieobecno[sś][cć]|poza biurem|"
    r"automaattinen vastaus|automatick[aá] odpov[eě][dď]|automatikus v[aá]lasz|"
    r"r[aă]spuns automat|otomatik (?:yan[\u0131i]t|cevap)|"
    r"автоматический ответ|автоответ|"
    r"自動応答|自動返信|不在|自动回复|自動回覆|자동 ?회신|자동 ?응답"
    r")(?:\s*[:\uff1a]|\s|$)",
    re.IGNORECASE,
)
# Header fields only autoresponders and servers' own messages carry. Not
# `X-Auto-Response-Suppress`: Outlook sets it on a person's mail too.
_MACHINE_FIELDS = (
    "X-Autoreply",
    "X-Autorespond",
    "X-Autogenerated",
    "X-AutoReply-From",
    "X-Mail-Autoreply",
    "X-FC-MachineGenerated",
    "X-MS-Exchange-Generated-Message-Source",
    "List-Id",
)
_MACHINE_PRECEDENCE = ("bulk", "junk", "list", "auto_reply")


def automatic(message: EmailMessage, envelope_sender: str) -> str | None:
    """Why a message is a machine's (RFC 3834 and common practice), or None for a person's.

    Such mail is dropped without an answer, so two robots never mail each other forever.
    """
    if not envelope_sender.strip() or envelope_sender.strip() == "<>":
        return "empty envelope sender"
    submitted = str(message.get("Auto-Submitted", "")).strip().lower()
    if submitted and submitted != "no":
        return f"Auto-Submitted: {submitted[:40]}"
    for name in ("Precedence", "X-Precedence"):
        precedence = str(message.get(name, "")).strip().lower()
        if precedence in _MACHINE_PRECEDENCE:
            return f"{name}: {precedence}"
    for name in _MACHINE_FIELDS:
        if message.get(name) is not None:
            return name
    if _VACATION_SUBJECT.match(str(message.get("Subject", ""))):
        return "a vacation notice"
    return None
