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


@pytest.mark.parametrize(
    ("game", "paragraphs", "move", "words"),
    [
        # A move anywhere in the own text is played; every other line is words, in order.
        (
            "mandala",
            [["Morning!"], ["take 12"], ["Cheers", "Ann"]],
            "take 12",
            "Morning!\n\nCheers\nAnn",
        ),
        ("maniki", [["KI MA"], ["So, what now?"]], "KI MA", "So, what now?"),
        ("maniki", [["ki-ma-so"], ["Tough card."]], "KI MA SO", "Tough card."),
        # The same move twice is one move.
        ("subdivision", [["2c2"], ["2c2"]], "2c2", ""),
        # Words alone, even with numbers, notation words or a move inside a long sentence.
        ("mandala", [["Take care, see you at 5pm!"]], None, "Take care, see you at 5pm!"),
        (
            "subdivision",
            [["Your 2b1 yesterday was a surprise to me, I spent an hour on it"]],
            None,
            "Your 2b1 yesterday was a surprise to me, I spent an hour on it",
        ),
        ("subdivision", [["Danke!"], ["Von meinem iPhone gesendet"]], None, "Danke!"),
        # What a phone adds below is never words, nor anything after it.
        ("subdivision", [["2e2"], ["Sent from my iPhone", "2d2"]], "2e2", ""),
    ],
)
def test_moves_and_words(
    game: str, paragraphs: list[list[str]], move: str | None, words: str
) -> None:
    rules = games.get(game)
    options = rules.load_options({}, 2)
    parts = split_reply(rules, options, paragraphs)
    if move is None:
        assert parts.read is None
    else:
        assert isinstance(parts.read, Move)
        assert rules.notate(rules.move_from_json(parts.read.move)) == move
    assert parts.words == words


@pytest.mark.parametrize(
    ("game", "paragraphs", "problem"),
    [
        ("mandala", [["take fifty"]], '"take fifty" is not a move'),
        ("mandala", [["tkae 5"]], '"tkae 5" is not a move'),
        ("subdivision", [["resing"], ["Sorry!"]], '"resing" is not a move'),
        ("subdivision", [["I play 2f2"]], '"I play 2f2" is not a move'),
        ("maniki", [["KI MA"], ["Niki"]], 'two different moves, "KI MA" and "Niki"'),
        (
            "mandala",
            [["take 3", "sorry, I meant take 5"]],
            'two different moves, "take 3" and "take 5"',
        ),
        ("subdivision", [["2c2"], ["Thanks!"], ["3d3"]], 'two different moves, "2c2" and "3d3"'),
        ("subdivision", [["3c4は"], ["よろしく"]], '"3c4は" is not a move'),
        ("subdivision", [["I resign."], ["Well played."]], '"I resign." is not a move'),
        ("maniki", [["OK I pass"]], '"OK I pass" is not a move'),
    ],
)
def test_move_attempts_are_refused_and_pass_nothing_on(
    game: str, paragraphs: list[list[str]], problem: str
) -> None:
    rules = games.get(game)
    parts = split_reply(rules, rules.load_options({}, 2), paragraphs)
    assert isinstance(parts.read, Unread) and problem in parts.read.problem
    assert parts.words == ""


def test_a_reply_with_nothing_of_its_own_is_read_from_its_subject() -> None:
    parts = split_reply(RULES, OPTIONS, [["Sent from my iPhone"]], subject="2c2")
    assert isinstance(parts.read, Move) and parts.words == ""
    assert isinstance(split_reply(RULES, OPTIONS, []).read, Unread)
