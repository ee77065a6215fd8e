"""English words a French reader should never meet: what a page or a mail shows, read as
words, and any of `ENGLISH` found in it with the sentence around it.

The template check (tests/test_catalogues.py) sees only the templates' own text; a word
made in Python and handed to a template or a mail, untranslated, is seen only here, in
what the reader actually gets. What is not read as words is left out: scripts (but the
words a page hands its script as JSON are read), styles, comments, and notation and
machine text (`<code>`, `<kbd>`, `<pre>`, a legal move's button, a hash).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

# Common English words that are not also French words, so that one of them in a French
# page or mail is English leaking through. Chosen from the words of the site's and the
# mails' English text (sentences about games, moves, turns and time), then pruned of
# every word French shares: "score", "points", "an", "or", "page", "minutes", "plus",
# "on", "a", "as"... The games' titles ("Mandala Stones", "MaNiKi") and the brand
# ("Referee") hold none of these; notation commands (`pass`, `resign`) are read only in
# code, which is skipped.
ENGLISH = frozenset(
    {
        "the",
        "your",
        "you",
        "to",
        "of",
        "and",
        "is",
        "are",
        "this",
        "that",
        "with",
        "from",
        "game",
        "games",
        "move",
        "moves",
        "player",
        "players",
        "turn",
        "turns",
        "time",
        "not",
        "none",
        "open",
        "rules",
        "new",
        "by",
        "at",
        "for",
        "it",
        "its",
        "has",
        "have",
        "was",
        "will",
        "which",
        "who",
        "when",
        "where",
        "what",
        "here",
        "there",
        "be",
        "been",
        "all",
        "any",
        "each",
        "every",
        "more",
        "less",
        "than",
        "then",
        "out",
        "up",
        "down",
        "left",
        "right",
        "first",
        "last",
        "next",
        "back",
        "play",
        "played",
        "plays",
        "won",
        "lost",
        "draw",
        "wins",
        "board",
        "seat",
        "seats",
        "hand",
        "round",
        "rounds",
        "pass",
        "passed",
        "resign",
        "resigned",
        "waiting",
        "wait",
        "yes",
        "no",
        "if",
        "only",
        "must",
        "can",
        "should",
        "after",
        "before",
        "until",
        "link",
        "hours",
        "days",
        "ago",
    }
)

# Elements whose text is notation or machine data, never sentences.
_SKIPPED_TAGS = frozenset({"script", "style", "code", "kbd", "pre", "textarea"})
_SKIPPED_CLASSES = frozenset({"move", "piece", "hash", "text-board"})
# Attributes a reader reads (or hears).
_READ_ATTRIBUTES = ("title", "alt", "aria-label", "placeholder")
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
# A word: letters only; an apostrophe splits (French "l'heure", English "game's").
# A word: letters alone. A run of letters and digits (a game id such as 8be295c2, a
# hash, a cell such as c3) is data, not a word, however its letters fall.
_WORD = re.compile(r"[^\W_]+")
_LETTERS = re.compile(r"[^\W\d_]+")
# Notation in text: a Markdown code span (`pass`), and in plain-text mail the code in
# straight quotes ("pick A2 to 5") and a single word in « » (a command: « aide »).
_CODE_SPAN = re.compile(r"`[^`]*`")
_QUOTED = re.compile(r"\"[^\"]*\"|«\s?[^\s»]+\s?»")


class _Reader(HTMLParser):
    """The text of an HTML document as read, in the order read."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping: list[str] = []
        self._json = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("type") == "application/json":
            self._json = True
        if tag in _VOID:
            if not self._skipping and tag == "input" and found.get("type") in ("submit", "button"):
                self.parts.append(found.get("value") or "")
            self._attributes(found)
            return
        classes = set((found.get("class") or "").split())
        if self._skipping or tag in _SKIPPED_TAGS or classes & _SKIPPED_CLASSES:
            self._skipping.append(tag)
            return
        self._attributes(found)

    def _attributes(self, found: dict[str, str | None]) -> None:
        if not self._skipping:
            self.parts.extend(found.get(name) or "" for name in _READ_ATTRIBUTES)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._skipping:  # an element left open inside closes with it
            while self._skipping.pop() != tag:
                pass
        self._json = False

    def handle_data(self, data: str) -> None:
        if self._json:
            self.parts.extend(_strings(json.loads(data)))
        elif not self._skipping:
            self.parts.append(data)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for each in value.values() for text in _strings(each)]
    if isinstance(value, list):
        return [text for each in value for text in _strings(each)]
    return []


def html_text(html: str) -> str:
    """What a reader reads of an HTML page or mail."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return " ".join(" ".join(reader.parts).split())


def mail_text(text: str, code: str) -> str:
    """What a reader reads of a plain-text mail: without its indented lines (legal moves,
    links), its lines that are code in the HTML part (`code`: the board, the last
    moves), and single quoted words (commands)."""
    machine = {line.strip() for line in code.splitlines() if line.strip()}
    kept = [
        line
        for line in text.splitlines()
        if not line.startswith((" ", "\t")) and line.strip() not in machine
    ]
    return _QUOTED.sub(" ", " ".join(kept))


def code_of(html: str) -> str:
    """The text of an HTML mail's notation and boards (`<pre>`, `<code>`), line by line."""
    found = re.findall(r"<(pre|code)\b[^>]*>(.*?)</\1>", html, re.S)
    return "\n".join(re.sub(r"<[^>]+>", "", body) for _, body in found)


def english_in(text: str) -> list[tuple[str, str]]:
    """Each English word of `text`, with the words around it (about eight)."""
    words = [w for w in _WORD.findall(_CODE_SPAN.sub(" ", text)) if _LETTERS.fullmatch(w)]
    return [
        (word, " ".join(words[max(0, n - 4) : n + 5]))
        for n, word in enumerate(words)
        # A word in capitals is notation (a MaNiKi board's `BE/L`), never a sentence's.
        if word.lower() in ENGLISH and not word.isupper()
    ]


def findings(where: str, text: str) -> list[str]:
    """`where: …sentence…` for each English word in `text`."""
    return [f"{where}: «{word}» in …{window}…" for word, window in english_in(text)]
