"""What a mail reply's own text holds: the move (or command) to play, and the words to pass
on to the other seats as a message.

The mail-in server hands over the player's own paragraphs (`mailin.reading`:
quotes, attributions, the `-- ` signature and the mail program's wrapping
already gone). Here each line is one of three things:

- a move: the whole line is one move or command (`referee.reply_text.line_read`);
- an attempt at one: a line written in the notation's shape that does not read
  as a move (`2c2c`, `take fifty`, `pase`): every word of it is notation-like
  (it holds a digit, is a word of some game's notation, or a run of MaNiKi
  orders), or it is one word a letter or two away from a notation word, or it
  is a short line beginning or ending with a move ("I play 2c2");
- words to people: any other line.

What is left at the end of the text after what phones and mail programs add
on their own ("Sent from my iPhone", "Envoyé de mon iPhone", "iPhoneから送信",
"Get Outlook for Android") is neither. Then: one move (written once or more)
is played and every line of words is passed on; two different moves, or a move
beside an attempt at another, are refused, as is an attempt with no move; a
reply of words alone is passed on. A refused reply never passes anything on:
what the player meant is unsure, and the answer tells them why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from referee.engine import JSON
from referee.games import AnyGame
from referee.reply_text import (
    COMMANDS,
    Command,
    Move,
    Read,
    cleaned,
    line_read,
    mentioned_move,
    read_reply,
    two_moves,
)

# Numbers written out, in the languages replies are read in: "take thirteen" is a move
# attempt ("Take care" is not).
NUMBER_WORDS = frozenset(
    {
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "zéro",
        "un",
        "deux",
        "trois",
        "quatre",
        "cinq",
        "sept",
        "huit",
        "neuf",
        "dix",
        "onze",
        "douze",
        "treize",
        "quatorze",
        "quinze",
        "seize",
        "trente",
        "quarante",
        "cinquante",
        "soixante",
        "null",
        "eins",
        "zwei",
        "drei",
        "vier",
        "fünf",
        "sechs",
        "sieben",
        "acht",
        "neun",
        "zehn",
        "elf",
        "zwölf",
        "dreizehn",
        "vierzehn",
        "fünfzehn",
        "sechzehn",
        "siebzehn",
        "achtzehn",
        "neunzehn",
        "zwanzig",
        "dreißig",
        "vierzig",
        "fünfzig",
        "sechzig",
        "siebzig",
    }
)
# The words of the games' notations (and the commands): a line made of them, and of
# words holding digits, is a move attempt, not a sentence.
NOTATION_WORDS = frozenset(
    {
        *COMMANDS,
        "resign",
        "pass",
        # The French words for them (`referee.reply_text.FRENCH_WORDS`).
        *("accepte", "accepter", "j'accepte", "aide", "plateau", "revanche"),
        *("abandon", "abandonne", "j'abandonne", "passe"),
        "take",
        "t",
        "build",
        "auto",
        "pick",
        "score",
        "tops",
        "top",
        "to",
        "first",
        "on",
        *("north", "east", "south", "west", "n", "e", "s", "w"),
        *("yellow", "blue", "red", "pink", "violet", "y", "b", "r", "p", "v"),
        *NUMBER_WORDS,
    }
)
_ORDERS = ("ki", "lo", "ni", "ma", "so")
# The notation words that are a move alone.
_MOVE_WORDS = frozenset({"resign", "pass", "abandon", "abandonne", "j'abandonne", "passe"})
# A line longer than this in words is a sentence, whatever it begins or ends with.
_SHORT_LINE = 6
_MOST_NOTATION_WORDS = 8
_WORD_EDGES = ".,;:!?()[]{}<>\"'`"
# What a phone or a mail program puts below the player's words, in the languages
# mail is read in here: never the player's own words.
_DEVICE = re.compile(
    r"^(?:"
    r"sent (?:from|with|via|using) .{1,60}|get outlook for .{1,30}|"
    r"envoy[ée] (?:de|depuis|à partir de) .{1,60}|obtenir outlook pour .{1,30}|"
    r"(?:von|gesendet von|gesendet mit) .{1,60}(?:gesendet)?|outlook für .{1,30} beziehen|"
    r".{1,40}から送信"
    r")$",
    re.IGNORECASE,
)
# The device lines recognised by the pattern above all name a device or program.
_DEVICE_WORDS = re.compile(
    r"iphone|ipad|android|galaxy|samsung|pixel|huawei|xiaomi|outlook|mail|gmail|yahoo|"
    r"proton|blackberry|mobile|handy|smartphone|phone|tablet|ios|windows|docomo|"
    r"ソフトバンク|携帯|スマートフォン",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Parts:
    """What a reply holds: `read` is its move or command, why it was refused (`Unread`), or
    None when it holds words alone; `words` is what to pass on ("" for nothing)."""

    read: Read | None
    words: str


def split_reply(
    rules: AnyGame, options: JSON, paragraphs: Sequence[Sequence[str]], subject: str = ""
) -> Parts:
    """The move and the words of a reply's own paragraphs (`mailin.reading.own_paragraphs`)."""
    kept = _without_device_lines(paragraphs)
    if not kept:
        # Nothing of the player's in the body: the subject may hold the move, as before.
        return Parts(read_reply(rules, options, [], subject), "")
    moves: dict[str, tuple[str, Command | Move]] = {}
    attempts: list[str] = []
    words: list[list[str]] = []
    for paragraph in kept:
        said: list[str] = []
        for line in paragraph:
            found = line_read(rules, options, line)
            if found is not None:
                moves.setdefault(_key(found), (line, found))
            elif _attempt(rules, options, line):
                attempts.append(line)
            else:
                said.append(line)
        if said:
            words.append(said)
    text = "\n\n".join("\n".join(lines) for lines in words)
    if len(moves) > 1:
        (one, _), (other, _) = list(moves.values())[:2]
        return Parts(two_moves(one, other), "")
    if moves and attempts:
        ((written, _),) = moves.values()
        other = mentioned_move(rules, options, attempts[0]) or attempts[0]
        return Parts(two_moves(written, other), "")
    if moves:
        ((_written, read),) = moves.values()
        return Parts(read, text)
    if attempts:
        return Parts(read_reply(rules, options, [[attempts[0]]]), "")
    if text:
        return Parts(None, text)
    return Parts(read_reply(rules, options, [], subject), "")


def _key(read: Command | Move) -> str:
    return f"command:{read.word}" if isinstance(read, Command) else f"move:{read.move!r}"


def _without_device_lines(paragraphs: Sequence[Sequence[str]]) -> list[list[str]]:
    """The paragraphs up to the first line a phone or mail program wrote on its own."""
    kept: list[list[str]] = []
    for paragraph in paragraphs:
        lines: list[str] = []
        for line in paragraph:
            if is_device_line(line):
                if lines:
                    kept.append(lines)
                return kept
            if line.strip():
                lines.append(line.strip())
        if lines:
            kept.append(lines)
    return kept


def is_device_line(line: str) -> bool:
    """Whether a line is what a phone or mail program signs a mail with."""
    text = cleaned(line)
    return len(text) <= 80 and bool(_DEVICE.match(text)) and bool(_DEVICE_WORDS.search(text))


def _attempt(rules: AnyGame, options: JSON, line: str) -> bool:
    """Whether a line that is no move was written as one (see the module's words)."""
    text = cleaned(line)
    tokens = [token.strip(_WORD_EDGES) for token in text.split()]
    tokens = [token for token in tokens if token]
    if not tokens:
        return False
    if len(tokens) <= _MOST_NOTATION_WORDS and all(_notation_like(token) for token in tokens):
        return True
    if len(tokens) == 1 and _near_notation_word(tokens[0].lower()):
        return True
    if len(tokens) > _SHORT_LINE:
        return False
    # A move a short line begins or ends with ("I resign."), unless it is one word without
    # a digit that is no notation word: a sentence may begin with a MaNiKi order ("So, what
    # now?").
    mentioned = mentioned_move(rules, options, text)
    if mentioned is None:
        return False
    word = cleaned(mentioned).lower().replace("\u2019", "'")
    return len(mentioned.split()) > 1 or _has_digit(mentioned) or word in _MOVE_WORDS


def _has_digit(text: str) -> bool:
    return any(character.isascii() and character.isdigit() for character in text)


_LEADING_NOTATION = re.compile(r"^[A-Za-z]{0,3}[0-9][A-Za-z0-9@,+\-]*")


def _notation_like(token: str) -> bool:
    lowered = token.lower().replace("\u2019", "'")
    if lowered in NOTATION_WORDS:
        return True
    if _has_digit(token):
        # A move in notation, or one with words of another script run on ("2c2です"),
        # not a sentence with a number inside ("明日10時に").
        return bool(_LEADING_NOTATION.match(token))
    pieces = [piece for piece in re.split(r"[-\u2013]", lowered) if piece]
    return bool(pieces) and all(_orders(piece) for piece in pieces)


def _orders(word: str) -> bool:
    """A run of MaNiKi orders (`ki`, `lo`, `ni`, `ma`, `so`) run together."""
    if len(word) % 2 or not word.isascii():
        return False
    return all(word[index : index + 2] in _ORDERS for index in range(0, len(word), 2))


def _near_notation_word(word: str) -> bool:
    """A word a typo away from a notation word: one letter for short words, two for long."""
    if not word.isalpha() or not word.isascii() or len(word) < 3:
        return False
    for known in NOTATION_WORDS:
        if len(known) < 4:
            continue
        allowed = 1 if len(known) < 6 else 2
        if abs(len(known) - len(word)) <= allowed and _distance(word, known) <= allowed:
            return True
    return False


def _distance(one: str, other: str) -> int:
    """Edit distance, a swap of two letters counted once (optimal string alignment)."""
    rows = [list(range(len(other) + 1))]
    for i, a in enumerate(one, 1):
        row = [i]
        for j, b in enumerate(other, 1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a != b))
            if i > 1 and j > 1 and a == other[j - 2] and one[i - 2] == b:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1]
