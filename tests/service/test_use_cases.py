"""The use cases, called as the entry points call them: no HTTP, no SMTP, one SQLite file.

Each source of moves (REST, a game page, a mail reply, a timeout) goes
through `submit_move`/`record_move` and is decided by `decide`; what is
refused is refused with the same class and words whichever path met it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import select

from referee import games
from referee.engine import Resign
from referee.service import Referee, game_states, refusals
from referee.service.creating import NewGame, Player, create_game
from referee.service.deadlines import sweep_deadlines
from referee.service.deciding import decide
from referee.service.replies import DUPLICATE, SCREENED, Reply, screen_reply, take_reply
from referee.service.submitting import KnownSeat, SeatToken, SubmitMove, record_move, submit_move
from referee.service.webhooks import WebhookRefused, set_webhook
from referee.store import keys
from referee.store.tables import Game, Outbox, OutboxKind, Source, Submission

RULES = games.get("subdivision")


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Each test here has a database of its own: it counts what one game wrote."""
    return fresh_referee


def _new(referee: Referee, *emails: str | None, deadline: str | None = None) -> tuple[str, Any]:
    players = [Player(name, email) for name, email in zip(("Ann", "Bob"), emails, strict=True)]
    command = NewGame("subdivision", players, {}, deadline=deadline)
    created = create_game(referee, command)
    return created.game.id, created.tokens


def _game(referee: Referee, game_id: str) -> Game:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


def _a_move(referee: Referee, game_id: str, seat: int) -> str:
    """The notation of a legal move of `seat` now."""
    with referee.db.reading() as session:
        game = _game(referee, game_id)
        state = game_states.state_at(session, game, game.version)
    return RULES.notate(RULES.legal_moves(state, seat)[0])


def _mover(referee: Referee, game_id: str) -> int:
    return _game(referee, game_id).to_act[0]


def _ready(referee: Referee) -> tuple[str, Any, int, str]:
    """A new game of two seats no mail reaches: its id, its tokens, the seat to move and
    a legal move of that seat."""
    game_id, tokens = _new(referee, None, None)
    seat = _mover(referee, game_id)
    return game_id, tokens, seat, _a_move(referee, game_id, seat)


def test_a_move_is_recorded_decided_and_logged(referee: Referee) -> None:
    game_id, tokens, seat, move = _ready(referee)
    submission = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move), wait=1)
    assert (submission.status, submission.seq) == ("accepted", 1)
    assert _game(referee, game_id).version == 1


def test_what_cannot_be_played_now_is_refused_at_once_with_the_deciders_words(
    referee: Referee,
) -> None:
    game_id, tokens, seat, move = _ready(referee)
    other = 1 - seat
    with pytest.raises(refusals.NotYourTurn) as at_once:
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[other]), move))
    assert (at_once.value.code, at_once.value.reason) == ("not_your_turn", "it is not your turn")
    # Stale: at once when the expected version is not the game's ...
    stale = SubmitMove(game_id, SeatToken(tokens[seat]), move, expected_version=7)
    with pytest.raises(refusals.StaleVersion) as refused_now:
        submit_move(referee, stale)
    # ... and when decided, for a move recorded while the game still was at it.
    with referee.db.transaction() as session:
        waiting, _fresh = record_move(
            session, SubmitMove(game_id, SeatToken(tokens[seat]), move, expected_version=0)
        )
    submit_move(referee, SubmitMove(game_id, KnownSeat(seat), move), wait=1)
    decided = decide(referee, waiting.id)
    assert decided is not None and decided.status == "rejected"
    later = refusals.StaleVersion.expected(1, 0)
    assert (decided.code, decided.reason) == (later.code, later.reason)
    assert refused_now.value.reason == refusals.StaleVersion.expected(0, 7).reason


class _Broker:
    """A broker that keeps what it is sent: the submissions are left to a worker."""

    eager = False

    def __init__(self) -> None:
        self.to_decide: list[str] = []

    def enqueue_decisions(self, submission_ids: list[str]) -> None:
        self.to_decide += submission_ids


# What reading a move takes of the rules: its JSON form or its notation, no position.
_READING_A_MOVE = {"parse", "move_from_json", "move_to_json"}


def test_submitting_does_no_rules_work_the_worker_decides(
    referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, tokens, seat, move = _ready(referee)

    def never(name: str) -> Any:
        def called(*_args: Any, **_kwargs: Any) -> Any:
            raise AssertionError(f"the rules' {name} was called in the API's path")

        return called

    # Every function of the rules but reading a move fails the test if called.
    rules = type(RULES)
    for name in dir(rules):
        called = not name.startswith("__") and callable(getattr(rules, name))
        if called and name not in _READING_A_MOVE:
            monkeypatch.setattr(rules, name, never(name))
    broker = _Broker()
    monkeypatch.setattr(referee, "queue", broker)
    submitted = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move))
    # Out of turn, a bad token, a bad notation: refused at once, still without the rules.
    with pytest.raises(refusals.NotYourTurn):
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[1 - seat]), move))
    with pytest.raises(refusals.Unauthorized):
        submit_move(referee, SubmitMove(game_id, SeatToken("not a token"), move))
    with pytest.raises(refusals.BadNotation):
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), "no such move"))
    assert submitted.status == "pending"
    assert broker.to_decide == [submitted.id]
    monkeypatch.undo()
    # The worker reads the move and plays it, once.
    decided = decide(referee, submitted.id)
    assert decided is not None and (decided.status, decided.seq) == ("accepted", 1)


def test_a_request_that_waits_listens_before_its_move_is_recorded(
    referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, tokens, seat, move = _ready(referee)
    listened: list[tuple[str, bool]] = []

    class Announcing(_Broker):
        """A worker so quick that its decision is announced as the move is committed."""

        @contextmanager
        def decided_signal(self, submission_id: str) -> Iterator[Any]:
            with referee.db.reading() as session:
                listened.append((submission_id, session.get(Submission, submission_id) is None))
            yield lambda _seconds: {"status": "accepted", "seq": 1}

    monkeypatch.setattr(referee, "queue", Announcing())
    submitted = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move), wait=5)
    # It listened on the id its move was then recorded by, before that move existed: an
    # announcement made the moment the move was committed is heard.
    assert listened == [(submitted.id, True)]
    assert (submitted.status, submitted.seq) == ("accepted", 1)


def test_refusals_of_reading_a_move_and_of_a_token(referee: Referee) -> None:
    game_id, tokens = _new(referee, None, None)
    with pytest.raises(refusals.BadNotation):
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[0]), "no such move"))
    with pytest.raises(refusals.BadMove):
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[0]), {"type": "bogus"}))
    with pytest.raises(refusals.Unauthorized):
        submit_move(referee, SubmitMove(game_id, SeatToken("not a token"), "resign"))
    with pytest.raises(refusals.NotFound):
        submit_move(referee, SubmitMove("0" * 32, SeatToken(tokens[0]), "resign"))


def test_a_retry_gets_the_first_submission_and_another_request_is_refused(
    referee: Referee,
) -> None:
    game_id, tokens, seat, move = _ready(referee)
    command = SubmitMove(game_id, SeatToken(tokens[seat]), move, idempotency_key="k1")
    first = submit_move(referee, command)
    again = submit_move(referee, command)
    assert again.id == first.id
    with pytest.raises(refusals.IdempotencyConflict):
        submit_move(referee, replace(command, move={"type": "resign"}))
    assert _game(referee, game_id).version == 1


def test_a_game_that_is_over_refuses_every_move(referee: Referee) -> None:
    game_id, tokens = _new(referee, None, None)
    resigned = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[0]), "resign"), wait=1)
    assert resigned.status == "accepted"
    assert _game(referee, game_id).status == "over"
    with pytest.raises(refusals.GameOver):
        submit_move(referee, SubmitMove(game_id, SeatToken(tokens[1]), "resign"))


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (NewGame("chess", [Player("a"), Player("b")], {}), refusals.UnknownGame),
        (NewGame("subdivision", [Player("a")], {}), refusals.BadPlayers),
        (NewGame("subdivision", [Player("a"), Player("b")], {"nope": 1}), refusals.BadOptions),
        (NewGame("subdivision", [Player("a"), Player("b")], {}, "forever"), refusals.BadRequest),
    ],
)
def test_creating_refuses_what_the_rules_do_not_take(
    referee: Referee, command: NewGame, kind: type[refusals.Refusal]
) -> None:
    with pytest.raises(kind):
        create_game(referee, command)


def _reply(referee: Referee, game_id: str, seat: int, lines: list[str], **more: Any) -> Reply:
    """A reply whose own text is one paragraph of `lines`."""
    token = keys.reply_token(referee.secret(), game_id, seat, _game(referee, game_id).version)
    given: dict[str, Any] = {
        "token": token,
        "message_key": f"key-{lines}-{more}",
        "message_id": "<reply@players.test>",
        "sender": "ann@players.test" if seat == 0 else "bob@players.test",
        "paragraphs": [lines],
    }
    return Reply(**(given | more))


def test_a_mail_reply_is_submitted_through_the_same_path_and_answered(referee: Referee) -> None:
    game_id, _tokens = _new(referee, "ann@players.test", "bob@players.test")
    seat = _mover(referee, game_id)
    taken = take_reply(referee, _reply(referee, game_id, seat, [_a_move(referee, game_id, seat)]))
    assert taken.outcome == "submitted"
    with referee.db.reading() as session:
        submission = session.exec(select(Submission).filter_by(game_id=game_id)).one()
        answers = session.exec(
            select(Outbox).filter_by(game_id=game_id, kind=OutboxKind.ANSWER)
        ).all()
    assert (submission.source, submission.status) == (Source.MAIL, "accepted")
    assert [answer.seat for answer in answers] == [seat]
    # The same message again does nothing; machines are dropped without an answer.
    first = _reply(referee, game_id, 1 - seat, ["help"])
    assert screen_reply(referee, first).outcome == SCREENED
    assert take_reply(referee, first).outcome == "help"
    assert take_reply(referee, first).outcome == "duplicate"
    # Before its text is read, a copy already taken is known, and a stranger is refused.
    assert screen_reply(referee, first).outcome == DUPLICATE
    with pytest.raises(refusals.Unauthorized):
        screen_reply(referee, _reply(referee, game_id, 0, ["help"], sender="eve@else.test"))
    robot = _reply(referee, game_id, 0, ["help"], automatic="Precedence: bulk")
    assert take_reply(referee, robot).outcome.startswith("dropped")
    with pytest.raises(refusals.Unauthorized):
        take_reply(referee, _reply(referee, game_id, 0, ["help"], sender="eve@else.test"))
    with pytest.raises(refusals.NotFound):
        take_reply(referee, _reply(referee, game_id, 0, ["help"], token="forged"))


def test_a_mail_reply_out_of_turn_is_refused_in_the_deciders_words(referee: Referee) -> None:
    game_id, _tokens = _new(referee, "ann@players.test", "bob@players.test")
    seat = _mover(referee, game_id)
    move = _a_move(referee, game_id, seat)
    assert take_reply(referee, _reply(referee, game_id, 1 - seat, [move])).outcome == "submitted"
    with referee.db.reading() as session:
        submission = session.exec(select(Submission).filter_by(game_id=game_id)).one()
        answer = session.exec(select(Outbox).filter_by(kind=OutboxKind.ANSWER)).one()
    refused = refusals.NotYourTurn()
    assert (submission.code, submission.reason) == (refused.code, refused.reason)
    assert answer.payload == {"submission": submission.id}
    # Text written as a move that is none is answered at once, saying why.
    taken = take_reply(referee, _reply(referee, game_id, seat, ["9z9z"]))
    assert taken.outcome == "refused"


def test_a_timeout_plays_for_the_seat_through_the_same_path(referee: Referee) -> None:
    game_id, _tokens = _new(referee, None, None, deadline="1h")
    seat = _mover(referee, game_id)
    later = datetime.now(UTC) + timedelta(hours=2)
    swept = sweep_deadlines(referee, later)
    assert swept.timed_out == [game_id]
    with referee.db.reading() as session:
        submission = session.exec(select(Submission).filter_by(game_id=game_id)).one()
    assert (submission.source, submission.seat, submission.status) == (
        Source.TIMEOUT,
        seat,
        "accepted",
    )
    # Swept again at the same moment, nothing more happens.
    assert sweep_deadlines(referee, later).timed_out == []


def test_resign_is_a_move_like_any_other(referee: Referee) -> None:
    game_id, tokens = _new(referee, None, None)
    other = 1 - _mover(referee, game_id)
    submission = submit_move(
        referee, SubmitMove(game_id, SeatToken(tokens[other]), RULES.move_to_json(Resign())), wait=1
    )
    assert submission.status == "accepted"


def test_a_webhook_is_looked_up_only_for_a_seat_of_a_game(
    referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No such game, no token, another game's token: refused before any DNS lookup."""
    looked_up: list[str] = []

    def lookup(host: str, *_: Any, **__: Any) -> Any:
        looked_up.append(host)
        raise OSError("no lookups in this test")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    game_id, tokens = _new(referee, None, None)
    _, other_tokens = _new(referee, None, None)
    url = "https://hooks.example.org/hook"
    strangers = [
        ("0" * 32, SeatToken(tokens[0]), refusals.NotFound),
        ("not an id", SeatToken(None), refusals.NotFound),
        (game_id, SeatToken(None), refusals.Unauthorized),
        (game_id, SeatToken(other_tokens[0]), refusals.Unauthorized),
    ]
    for asked, caller, refusal in strangers:
        with pytest.raises(refusal):
            set_webhook(referee, asked, caller, url)
    assert looked_up == []
    with pytest.raises(WebhookRefused):
        set_webhook(referee, game_id, SeatToken(tokens[0]), url)
    assert looked_up == ["hooks.example.org"]
