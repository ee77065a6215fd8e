"""Table talk's use cases: who may write and read a game's messages, what a message may
hold, the hourly limit, what each seat has seen, mutes and private notes."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import time_machine

from referee.service import Referee, refusals
from referee.service.creating import NewGame, Player, create_game
from referee.service.submitting import SeatToken
from referee.service.table_talk import (
    PER_HOUR,
    mark_seen,
    messages,
    note,
    post_message,
    set_mute,
    set_note,
    unread,
    unseen_messages,
)


@pytest.fixture
def games(fresh_referee: Referee) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
    """Two games of three seats and two: each game's id and its seats' tokens."""
    made = create_game(
        fresh_referee,
        NewGame("subdivision", [Player("Ann"), Player("Bob\u202e"), Player("Cy")], {}),
    )
    other = create_game(fresh_referee, NewGame("subdivision", [Player("Dee"), Player("Eve")], {}))
    return made.game.id, made.tokens, other.game.id, other.tokens


def test_a_seat_writes_and_every_seat_reads_in_order(fresh_referee: Referee, games) -> None:
    game_id, tokens, _other, _ = games
    first = post_message(fresh_referee, game_id, SeatToken(tokens[0]), "  hello  ", via="api")
    second = post_message(fresh_referee, game_id, 1, "hi Ann", via="mail")
    assert (first.seq, first.seat, first.name, first.text) == (1, 0, "Ann", "hello")
    # The name as every place shows it: the bidi override is not shown.
    assert (second.seq, second.name) == (2, "Bob")
    for token in tokens:
        read = messages(fresh_referee, game_id, SeatToken(token))
        assert [(m.seq, m.text) for m in read] == [(1, "hello"), (2, "hi Ann")]
    assert [m.seq for m in messages(fresh_referee, game_id, 2, after=1)] == [2]


def test_anyone_but_a_seat_of_the_game_is_refused(fresh_referee: Referee, games) -> None:
    game_id, tokens, other_id, other_tokens = games
    post_message(fresh_referee, game_id, 0, "secret plan", via="api")
    for stranger in (SeatToken(None), SeatToken(other_tokens[0]), SeatToken("x" * 40)):
        with pytest.raises(refusals.NotASeat):
            messages(fresh_referee, game_id, stranger)
        with pytest.raises(refusals.NotASeat):
            post_message(fresh_referee, game_id, stranger, "let me in", via="api")
        with pytest.raises(refusals.NotASeat):
            note(fresh_referee, game_id, stranger)
    # A seat token names its seat in its own game only.
    with pytest.raises(refusals.NotASeat):
        messages(fresh_referee, other_id, SeatToken(tokens[0]))
    with pytest.raises(refusals.NotASeat):
        post_message(fresh_referee, game_id, 3, "no such seat", via="mail")
    with pytest.raises(refusals.NotFound):
        messages(fresh_referee, "0" * 32, 0)
    assert messages(fresh_referee, other_id, 0) == []


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("a\u202eb", "ab"),
        ("line one  \r\n\r\n\r\n\r\nline two\t!", "line one\n\nline two !"),
        ("<b>bold</b> https://x.test", "<b>bold</b> https://x.test"),
        ("\u200bhi\u2066", "hi"),
        ("x" * 1000, "x" * 1000),
        ("  " + "y" * 1000 + "\n\n", "y" * 1000),
    ],
)
def test_text_is_kept_as_shown(fresh_referee: Referee, games, sent: str, kept: str) -> None:
    game_id, _tokens, _other, _ = games
    assert post_message(fresh_referee, game_id, 0, sent, via="api").text == kept


@pytest.mark.parametrize("sent", ["", "   \n\t", "\u200b\u2800\u3164", "z" * 1001])
def test_empty_or_long_text_is_refused(fresh_referee: Referee, games, sent: str) -> None:
    game_id, _tokens, _other, _ = games
    with pytest.raises(refusals.BadMessage):
        post_message(fresh_referee, game_id, 0, sent, via="api")
    assert messages(fresh_referee, game_id, 0) == []


def test_thirty_an_hour_per_seat(fresh_referee: Referee, games, now: datetime) -> None:
    game_id, _tokens, _other, _ = games
    with time_machine.travel(now, tick=False) as moving:
        for n in range(PER_HOUR):
            post_message(fresh_referee, game_id, 0, f"m{n}", via="api")
            moving.shift(timedelta(seconds=60))
        with pytest.raises(refusals.TooManyMessages) as refused:
            post_message(fresh_referee, game_id, 0, "one more", via="api")
        # The first of the hour was written 30 minutes ago: free again in 30.
        assert refused.value.retry_after == 30 * 60
        # Another seat writes on.
        post_message(fresh_referee, game_id, 1, "mine", via="api")
        moving.shift(timedelta(minutes=30, seconds=1))
        post_message(fresh_referee, game_id, 0, "again", via="api")
        with pytest.raises(refusals.TooManyMessages) as refused:
            post_message(fresh_referee, game_id, 0, "and again", via="api")
        assert refused.value.retry_after == 59


def test_unseen_are_others_after_the_last_seen(fresh_referee: Referee, games) -> None:
    game_id, _tokens, _other, _ = games
    for seat, text in ((0, "a"), (1, "b"), (2, "c"), (1, "d")):
        post_message(fresh_referee, game_id, seat, text, via="api")
    assert [m.text for m in unseen_messages(fresh_referee, game_id, 0)] == ["b", "c", "d"]
    mark_seen(fresh_referee, game_id, 0, 3)
    assert [m.text for m in unseen_messages(fresh_referee, game_id, 0)] == ["d"]
    # Never backwards, never past the latest.
    mark_seen(fresh_referee, game_id, 0, 1)
    assert [m.text for m in unseen_messages(fresh_referee, game_id, 0)] == ["d"]
    mark_seen(fresh_referee, game_id, 0, 99)
    assert unseen_messages(fresh_referee, game_id, 0) == []
    post_message(fresh_referee, game_id, 2, "e", via="api")
    assert [m.seq for m in unseen_messages(fresh_referee, game_id, 0)] == [5]
    counts = unread(fresh_referee, [(game_id, 0), (game_id, 1), (game_id, 2)])
    assert {key: (row.count, row.last_seq) for key, row in counts.items()} == {
        (game_id, 0): (1, 5),
        (game_id, 1): (3, 5),
        (game_id, 2): (3, 4),
    }


def test_a_mute_hides_a_seat_from_the_muter_alone(fresh_referee: Referee, games) -> None:
    game_id, tokens, _other, _ = games
    assert set_mute(fresh_referee, game_id, SeatToken(tokens[0]), 1, on=True) == (1,)
    assert set_mute(fresh_referee, game_id, SeatToken(tokens[0]), 1, on=True) == (1,)
    post_message(fresh_referee, game_id, 1, "noise", via="api")
    post_message(fresh_referee, game_id, 2, "signal", via="api")
    assert [m.text for m in messages(fresh_referee, game_id, 0)] == ["signal"]
    assert [m.text for m in unseen_messages(fresh_referee, game_id, 0)] == ["signal"]
    assert [m.text for m in messages(fresh_referee, game_id, 2)] == ["noise", "signal"]
    assert unread(fresh_referee, [(game_id, 0)])[(game_id, 0)].count == 1
    for refused in (0, 3, -1):
        with pytest.raises(refusals.BadRequest):
            set_mute(fresh_referee, game_id, SeatToken(tokens[0]), refused, on=True)
    assert set_mute(fresh_referee, game_id, SeatToken(tokens[0]), 1, on=False) == ()
    assert [m.text for m in messages(fresh_referee, game_id, 0)] == ["noise", "signal"]


def test_a_note_is_its_seats_alone(fresh_referee: Referee, games) -> None:
    game_id, tokens, _other, other_tokens = games
    assert note(fresh_referee, game_id, SeatToken(tokens[0])).text == ""
    kept = set_note(fresh_referee, game_id, SeatToken(tokens[0]), " Bob bluffs\u202e ")
    assert kept.text == "Bob bluffs" and kept.updated_at is not None
    assert note(fresh_referee, game_id, SeatToken(tokens[0])).text == "Bob bluffs"
    assert note(fresh_referee, game_id, SeatToken(tokens[1])).text == ""
    assert set_note(fresh_referee, game_id, SeatToken(tokens[0]), "later").text == "later"
    with pytest.raises(refusals.BadMessage):
        set_note(fresh_referee, game_id, SeatToken(tokens[0]), "n" * 4001)
    with pytest.raises(refusals.NotASeat):
        set_note(fresh_referee, game_id, SeatToken(other_tokens[0]), "mine now")
    assert set_note(fresh_referee, game_id, SeatToken(tokens[0]), "  ").updated_at is None
