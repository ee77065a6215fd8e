"""What the text of a mail reply means: one move, a command, or why neither; and whether
its sender is the seat's address.

The mail-in server hands over the player's own paragraphs (`mailin.reading`);
the game's notation decides which line is a move. Each line is read alone,
forgiving what leaves no doubt: spaces of any width, quotes around the move,
a full stop or `!` after it, an emoji, an `ok` before it. The move is read in
the first paragraph, or in the second when the first is a line that holds no
move at all (a greeting: "Hello Referee,"). Lines are never joined into a
move here (only the mail program's own wrapping is undone, by the reader),
and a paragraph that holds two different moves is refused, saying which two:
besides the lines that are a move, a line that only begins or ends with one
("sorry, I meant take 50") counts. A line that is no move is refused with
the notation's reason, its text quoted once as written (and, when it holds
one move, a hint to write that alone). A reply whose text is empty is read
from its subject.

Replies are read in English and in French in every game, whatever its
language: the commands and the moves that are words (`passe` for `pass`,
`abandon` or « j'abandonne » for `resign`, `revanche`, `aide`, `plateau`,
`accepte`) mean what their English words mean, so a French reply is judged
exactly as the English one (the same move, the same log). Why a reply holds
no move is said in the language spoken here (`referee.i18n`: the seat's).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from referee.engine import JSON, IllegalMove, Resign
from referee.games import AnyGame
from referee.games.reasons import reason_words
from referee.i18n import _

COMMANDS = ("accept", "help", "board", "rematch")
# The French words a reply may hold for a command or a move that is a word, as the
# English ones they mean (apostrophes written straight).
FRENCH_WORDS = {
    "accepte": "accept",
    "accepter": "accept",
    "j'accepte": "accept",
    "aide": "help",
    "plateau": "board",
    "revanche": "rematch",
    "abandon": "resign",
    "abandonne": "resign",
    "j'abandonne": "resign",
    "passe": "pass",
    "je passe": "pass",
}
# Longer than any move of any game, in words: a window this long is never tried.
_MAX_WINDOW = 40
_SHOWN = 80
_LEADING = re.compile(
    r"^(?:ok(?:ay)?|o\.k\.|d'accord|my move(?: is)?|mon coup(?: est)?)\s*[,:.!\-\u2013\u2014]?\s+",
    re.I,
)
# Spaces of other widths, and characters that are not seen, as mail programs and phones add them.
_SPACES = re.compile(r"[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\t]")
_INVISIBLE = re.compile(r"[\u200b-\u200d\u2060\ufeff\ufe0e\ufe0f]")
_QUOTES = "\"'`\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a\u300c\u300d"
# Emoji, their skin tones and keycaps: a 👍 after a move says nothing about the move.
_SYMBOLS = frozenset({"So", "Sk", "Me", "Mn"})


@dataclass(frozen=True, slots=True)
class Command:
    """`accept`, `help`, `board` or `rematch`."""

    word: str


@dataclass(frozen=True, slots=True)
class Move:
    """A move in the game's notation, as JSON."""

    move: JSON


@dataclass(frozen=True, slots=True)
class Unread:
    """No move: what is wrong, in words for the player (their text quoted once, as written)."""

    problem: str


Read = Command | Move | Unread


@dataclass(frozen=True, slots=True)
class _Seen:
    key: str
    written: str
    read: Command | Move


def read_reply(
    rules: AnyGame, options: JSON, paragraphs: Sequence[Sequence[str]], subject: str = ""
) -> Read:
    """The one move or command the reply's own text holds, or why it holds none."""
    if not paragraphs:
        titled = _line(rules, options, subject) if subject else None
        return titled.read if titled is not None else Unread(_("no move was found in your reply"))
    lines = paragraphs[0]
    whole, mentioned = _seen_in(rules, options, lines)
    if not whole and not mentioned and len(lines) == 1 and len(paragraphs) > 1:
        lines = paragraphs[1]
        whole, mentioned = _seen_in(rules, options, lines)
    seen = {**whole, **{key: found for key, found in mentioned.items() if key not in whole}}
    if whole and len(seen) > 1:
        one, other = list(seen.values())[:2]
        return two_moves(one.written, other.written)
    if whole:
        return next(iter(whole.values())).read
    problem = _("%(line)s is not a move: %(reason)s") % {
        "line": _quoted(lines[0]),
        "reason": _refusal(rules, options, lines[0]),
    }
    if len(mentioned) == 1:
        (mention,) = mentioned.values()
        hint = _quoted(mention.written)
        problem += _("; if you mean %(move)s, reply with it alone on the first line") % {
            "move": hint
        }
    return Unread(problem)


def two_moves(one: str, other: str) -> Unread:
    """A reply refused for holding two different moves, each quoted as written."""
    return Unread(
        _(
            "it holds two different moves, %(one)s and %(other)s: reply with the one you "
            "mean, alone on the first line"
        )
        % {"one": _quoted(one), "other": _quoted(other)}
    )


def _seen_in(
    rules: AnyGame, options: JSON, lines: Sequence[str]
) -> tuple[dict[str, _Seen], dict[str, _Seen]]:
    """Each different move or command the lines hold, by its notation, in order: those that
    are a whole line, and the moves lines that are none begin or end with."""
    whole: dict[str, _Seen] = {}
    mentioned: dict[str, _Seen] = {}
    for line in lines:
        found = _line(rules, options, line)
        if found is not None:
            whole.setdefault(found.key, found)
            continue
        for mention in _mentions(rules, options, line):
            mentioned.setdefault(mention.key, mention)
    return whole, mentioned


def line_read(rules: AnyGame, options: JSON, line: str) -> Command | Move | None:
    """The line read as one move or command, or None when it is neither."""
    found = _line(rules, options, line)
    return None if found is None else found.read


def mentioned_move(rules: AnyGame, options: JSON, line: str) -> str | None:
    """The move, as written, that a line that is no move begins or ends with ("sorry, I
    meant take 50"), the longest; None when it holds none there."""
    found = next(_mentions(rules, options, line), None)
    return None if found is None else found.written


def cleaned(text: str) -> str:
    """The text without odd spaces, invisible characters, and the quotes, emoji and full
    stop around it: what is read of a line."""
    return _cleaned(text)


def _line(rules: AnyGame, options: JSON, line: str) -> _Seen | None:
    """The line read as one move or command, forgiving what leaves no doubt."""
    text = _cleaned(line)
    found = _exactly(rules, options, text, line)
    leading = _LEADING.match(text)
    if found is None and leading is not None:
        found = _exactly(rules, options, _cleaned(text[leading.end() :]), line)
    return found


def _mentions(rules: AnyGame, options: JSON, line: str) -> Iterator[_Seen]:
    """The moves a line that is not one begins or ends with, longest first (never a
    command: "thanks for the help" asks for nothing)."""
    words = line.split()
    for size in range(min(len(words), _MAX_WINDOW), 0, -1):
        for window in (words[:size], words[-size:]):
            written = " ".join(window)
            found = _exactly(rules, options, _cleaned(written), written)
            if found is not None and isinstance(found.read, Move):
                yield found


def english(text: str) -> str:
    """The English word a French command or move word means (`passe` → `pass`), else the
    text as it is."""
    return FRENCH_WORDS.get(text.lower().replace("\u2019", "'"), text)


def _exactly(rules: AnyGame, options: JSON, text: str, written: str) -> _Seen | None:
    text = english(text)
    lowered = text.lower()
    if lowered in COMMANDS:
        return _Seen(lowered, written, Command(lowered))
    try:
        move = Resign() if lowered == "resign" else rules.parse(text, options)
    except IllegalMove:
        return None
    return _Seen(rules.notate(move), written, Move(rules.move_to_json(move)))


def _cleaned(text: str) -> str:
    """The text without what surrounds a move but is none of it: odd spaces, invisible
    characters, quotes, emoji, and a full stop or `!` after it."""
    text = _INVISIBLE.sub("", _SPACES.sub(" ", text))
    start, end = 0, len(text)
    while start < end and _edge(text[start]):
        start += 1
    while end > start and (_edge(text[end - 1]) or text[end - 1] in ".!\u3002\uff01"):
        end -= 1
    return " ".join(text[start:end].split())


def _edge(character: str) -> bool:
    return (
        character.isspace() or character in _QUOTES or unicodedata.category(character) in _SYMBOLS
    )


def _refusal(rules: AnyGame, options: JSON, line: str) -> str:
    try:
        rules.parse(_cleaned(line), options)
    except IllegalMove as refused:
        return reason_words(refused.reason)
    return _("it is not a move of this game")


def _quoted(text: str) -> str:
    """The player's text in quotes, as written; cut when long."""
    shown = text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "\u2026"
    return _('"%(text)s"') % {"text": shown}


def same_address(sender: str, seat_address: str) -> bool:
    """Whether a From address is the seat's: case ignored, and a `+tag` ignored
    where the seat's own address has none (`ann+games@x` is `ann@x`)."""
    sender, seat_address = sender.strip().lower(), seat_address.strip().lower()
    if not sender or "@" not in sender or not seat_address:
        return False
    local, _at, domain = sender.rpartition("@")
    if "+" not in seat_address.rpartition("@")[0]:
        local = local.split("+", 1)[0]
    return f"{local}@{domain}" == seat_address
