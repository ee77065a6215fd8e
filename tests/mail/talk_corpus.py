"""The corpus of replies in tests/mail/talk_corpus: real mail programs' bytes, each with
what it must become (a move played, words passed on, or refused)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "talk_corpus"


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    raw: bytes
    # The move it plays (notation), None for none; the words passed on ("" for none).
    move: str | None
    words: str
    refused: bool

    def addressed(self, sender: str, reply_to: str) -> bytes:
        """Its bytes, from `sender` to `reply_to` (the only bytes the corpus leaves open)."""
        return self.raw.replace(b"@@FROM@@", sender.encode()).replace(b"@@TO@@", reply_to.encode())


def cases() -> list[Case]:
    expected = json.loads((FOLDER / "expected.json").read_text(encoding="utf-8"))
    return [
        Case(name, (FOLDER / name).read_bytes(), found["move"], found["words"], found["refused"])
        for name, found in sorted(expected.items())
    ]
