"""A mail reply's words as the service takes them: passed on beside a move or alone (and
answered then), never from a refused reply, never past the cap on answers, never twice."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from referee.service import Referee, table_talk
from referee.service.creating import NewGame, Player, create_game
from referee.service.replies import Reply, take_reply
from referee.store import keys
from referee.store.tables import Game, Inbound, Outbox, OutboxKind, Submission, TableMessage

ANN, BOB = "ann@players.test", "bob@players.test"


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def new_game(referee: Referee) -> str:
    command = NewGame("subdivision", [Player("Ann", ANN), Player("Bob", BOB)], {})
    return create_game(referee, command).game.id


def reply(referee: Referee, game_id: str, paragraphs: list[list[str]], key: str) -> Reply:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        version = game.version
    return Reply(
        token=keys.reply_token(referee.secret(), game_id, 0, version),
        message_key=key,
        message_id=f"<{key}@players.test>",
        sender=ANN,
        paragraphs=paragraphs,
    )


def rows(referee: Referee, model: Any, game_id: str) -> list[Any]:
    with referee.db.reading() as session:
        return list(session.exec(select(model).where(model.game_id == game_id)))


def test_a_move_and_words_play_the_move_and_pass_the_words_on(referee: Referee) -> None:
    game_id = new_game(referee)
    taken = take_reply(referee, reply(referee, game_id, [["2c2"], ["Good luck, Bob!"]], "a"))
    assert taken.outcome == "submitted, words passed on"
    (submission,) = rows(referee, Submission, game_id)
    assert submission.move == {"type": "place", "size": 2, "cell": "c2"}
    (message,) = rows(referee, TableMessage, game_id)
    assert (message.seat, message.text, message.via) == (0, "Good luck, Bob!", "mail")
    # Beside a move no answer tells of the words: the move's answer comes.
    assert not [row for row in rows(referee, Outbox, game_id) if row.kind == "passed_on"]
    assert [shown.text for shown in table_talk.unseen_messages(referee, game_id, 1)] == [
        "Good luck, Bob!"
    ]


def test_words_alone_are_passed_on_and_answered_with_the_turn(referee: Referee) -> None:
    game_id = new_game(referee)
    words = [["Hi Bob,"], ["I'll think about it tonight.", "Ann"]]
    assert take_reply(referee, reply(referee, game_id, words, "b")).outcome == "passed on"
    (message,) = rows(referee, TableMessage, game_id)
    assert message.text == "Hi Bob,\n\nI'll think about it tonight.\nAnn"
    (answer,) = [row for row in rows(referee, Outbox, game_id) if row.kind == "passed_on"]
    assert answer.seat == 0 and answer.payload["passed_on"] is True
    assert answer.payload["in_reply_to"] == "<b@players.test>"
    assert not rows(referee, Submission, game_id)


def test_a_refused_reply_passes_nothing_on(referee: Referee) -> None:
    game_id = new_game(referee)
    for key, paragraphs in (
        ("c", [["2c2c"], ["Sorry, typing on a train."]]),
        ("d", [["2c2", "3d3"], ["Which one?"]]),
        ("e", [["2c2"], ["or maybe 2d2"]]),
    ):
        assert take_reply(referee, reply(referee, game_id, paragraphs, key)).outcome == "refused"
    assert not rows(referee, TableMessage, game_id)
    assert not rows(referee, Submission, game_id)
    kinds = [row.kind for row in rows(referee, Outbox, game_id) if row.seat == 0]
    assert kinds.count(OutboxKind.REFUSED) == 3


def test_the_same_words_again_are_not_passed_on_and_too_long_are_answered(
    referee: Referee,
) -> None:
    game_id = new_game(referee)
    robot = [["Thank you for your mail. I am away until Monday."]]
    assert take_reply(referee, reply(referee, game_id, robot, "f")).outcome == "passed on"
    again = take_reply(referee, reply(referee, game_id, robot, "g"))
    assert again.outcome.startswith("not passed on (they are the same")
    assert len(rows(referee, TableMessage, game_id)) == 1
    long = take_reply(referee, reply(referee, game_id, [["word " * 300]], "h"))
    assert long.outcome.startswith("not passed on (a message holds at most 1000")
    answers = [row.payload for row in rows(referee, Outbox, game_id) if row.kind == "passed_on"]
    assert [found["passed_on"] for found in answers] == [True, False, False]
    assert "at most 1000 characters" in answers[-1]["reason"]


def test_past_the_cap_on_answers_words_are_not_passed_on(referee: Referee) -> None:
    game_id = new_game(referee)
    cap = referee.settings.mail_answers
    for number in range(cap + 3):
        said = [[f"Automatic note number {number}: I read mail on Mondays."]]
        taken = take_reply(referee, reply(referee, game_id, said, f"cap{number}"))
    assert taken.outcome == "not passed on (past the answer cap)"
    assert len(rows(referee, TableMessage, game_id)) == cap
    answers = [row for row in rows(referee, Outbox, game_id) if row.kind == "passed_on"]
    assert len(answers) == cap and answers[-1].payload.get("quiet_until")
    # What is kept of each reply fits its column (PostgreSQL refuses longer).
    assert all(len(row.outcome) <= 40 for row in rows(referee, Inbound, game_id))
