"""Each reply of the corpus (tests/mail/talk_corpus) read as `referee mail-in` reads it:
the move it plays, the words it passes on exactly, or refused; never one for another."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from mailin import reading
from referee import games
from referee.reply_text import Move, Unread
from referee.reply_words import split_reply
from tests.mail.talk_corpus import Case, cases

RULES = games.get("subdivision")
OPTIONS = RULES.load_options({}, 2)


def test_the_corpus_is_large_and_mixed() -> None:
    found = cases()
    assert len(found) >= 40
    for client in ("gmail", "outlook", "apple", "thunderbird", "iphone", "samsung", "html-only"):
        assert any(case.name[3:].startswith(client) for case in found), client
    for language in ("-en-", "-fr-", "-de-", "-ja-"):
        assert sum(language in case.name for case in found) >= 6, language
    assert sum(case.refused for case in found) >= 8
    assert sum(bool(case.words) and case.move is None for case in found) >= 10
    assert sum(bool(case.words) and case.move is not None for case in found) >= 10


@pytest.mark.parametrize("case", cases(), ids=lambda case: case.name)
def test_each_reply_is_read_as_its_writer_meant(case: Case) -> None:
    raw = case.addressed("ann@players.test", "play+abc@referee.test")
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    parts = split_reply(RULES, OPTIONS, reading.reply_paragraphs(message))
    if case.refused:
        assert isinstance(parts.read, Unread) and parts.words == ""
        return
    if case.move is None:
        assert parts.read is None
    else:
        assert isinstance(parts.read, Move)
        assert RULES.notate(RULES.move_from_json(parts.read.move)) == case.move
    assert parts.words == case.words
