"""Mails per seat over a whole game of each game: notices due to a seat at one moment go
out as one mail, and a turn answered on the seat's open page is not mailed.

The games are played to their end by random moves, mail delivered after
each move (`bench/mail_counts.py`, whose figures docs/mail.md keeps).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlmodel import col, select

from bench.mail_counts import SEATS, kinds_of, mails_by_seat, play
from referee.delivery.mail import ANSWERED_ON_PAGE, PAGE_OPEN
from referee.service import Referee, game_states, page_presence
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.replies import Reply, take_reply
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.store import keys
from referee.store.reads import rules_of
from referee.store.tables import Delivery, DeliveryStatus, Game, Outbox, OutboxKind, Submission
from tests.live.test_games_http import solve

HOLD = timedelta(seconds=61)
# Whole games, their mail built and sent: a file of minutes on a loaded machine.
pytestmark = pytest.mark.long


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Each test counts one game's mail: a database and a mail folder of its own."""
    return fresh_referee


def _sent_moments(referee: Referee, seat: int) -> set[str]:
    """The moments of the notices to `seat` whose mail went out."""
    with referee.db.reading() as session:
        rows = session.exec(
            select(Outbox.created_at)
            .join(Delivery, col(Delivery.notice_id) == col(Outbox.id))
            .where(
                Outbox.seat == seat,
                Delivery.channel == "mail",
                Delivery.status == DeliveryStatus.SENT,
            )
        ).all()
    return set(rows)


def _check_threads(mails: list[EmailMessage]) -> None:
    """One thread: every later mail refers to the first one's Message-ID."""
    root = str(mails[0]["Message-ID"])
    for mail in mails[1:]:
        assert root in str(mail["References"]).split(), mail["References"]


@pytest.mark.parametrize("name", sorted(SEATS))
def test_a_whole_game_mails_each_seat_once_per_moment(referee: Referee, name: str) -> None:
    played = play(referee, name)
    assert played.moves > 0
    assert set(played.mails) == set(range(SEATS[name]))
    for seat, mails in played.mails.items():
        # Notices due to the seat at one moment went out as one mail.
        assert len(mails) == len(_sent_moments(referee, seat)), name
        kinds = [kinds_of(mail) for mail in mails]
        assert kinds[0][0] == "invitation" and kinds[-1][-1] == "game_over"
        _check_threads(mails)
    if name == "maniki":
        # A card's end and the next card are one mail; a card a seat answered wrongly
        # leaves the others' question standing, so no new turn mail for them: each seat
        # hears once a card, and the welcome comes with the first.
        for mails in played.mails.values():
            told = [kinds_of(mail) for mail in mails]
            assert told[0] == ["invitation", "your_turn"]
            assert all(each == ["round_over", "your_turn"] for each in told[1:-1]), told
        rounds = _rounds(referee)
        assert all(len(mails) == rounds + 1 for mails in played.mails.values()), (
            played.counts(),
            rounds,
        )


def _rounds(referee: Referee) -> int:
    """The cards decided in the (only) game, over a whole game."""
    with referee.db.reading() as session:
        game = session.exec(select(Game)).one()
        return rules_of(game).rounds_decided(game_states.state_at(session, game, game.version))


def test_a_turn_answered_on_the_open_page_is_not_mailed(referee: Referee) -> None:
    played = play(referee, "maniki", on_page=True)
    mine = [kinds_of(mail) for mail in played.mails[0]]
    # The welcome (with the first card: the page was not open yet) and the end.
    assert mine == [["invitation", "your_turn"], ["game_over"]], mine
    assert all(len(mails) > 2 for seat, mails in played.mails.items() if seat)
    with referee.db.reading() as session:
        reasons = session.exec(
            select(Delivery.error)
            .join(Outbox, col(Delivery.notice_id) == col(Outbox.id))
            .where(Outbox.seat == 0, Delivery.status == DeliveryStatus.SKIPPED)
        ).all()
    # Each turn it answered is kept with why it was not mailed.
    assert reasons and set(reasons) == {ANSWERED_ON_PAGE}


def _new(referee: Referee, name: str, seats: int) -> tuple[str, tuple[str, ...]]:
    players = [Player(f"P{seat}", f"p{seat}@players.test") for seat in range(seats)]
    created = create_game(referee, NewGame(name, players, {}, trusted=True, seed="held"))
    deliver_due(referee, "mail")
    return created.game.id, created.tokens


def _to_act(referee: Referee, game_id: str) -> int:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None and len(game.to_act) == 1
        return int(game.to_act[0])


def _move(referee: Referee, game_id: str, tokens: tuple[str, ...]) -> None:
    """A legal move of the one seat to act."""
    seat = _to_act(referee, game_id)
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        rules = rules_of(game)
        state = game_states.state_at(session, game, game.version)
    move = rules.move_to_json(rules.legal_moves(state, seat)[0])
    done = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move), wait=5)
    assert done.status == "accepted", done


def _statuses(referee: Referee, seat: int, kind: str) -> list[tuple[str, str | None]]:
    with referee.db.reading() as session:
        rows = session.exec(
            select(Delivery.status, Delivery.error)
            .join(Outbox, col(Delivery.notice_id) == col(Outbox.id))
            .where(Outbox.seat == seat, Outbox.kind == kind, Delivery.channel == "mail")
            .order_by(col(Outbox.id))
        ).all()
    return [(status, error) for status, error in rows]


def test_a_held_turn_mail_goes_once_the_hold_passed_unanswered(referee: Referee) -> None:
    game_id, tokens = _new(referee, "subdivision", 2)
    folder = Path(referee.settings.mail_dir)
    waiting = 1 - _to_act(referee, game_id)
    before = len(mails_by_seat(folder)[waiting])
    page_presence.seen(referee, game_id, waiting)
    _move(referee, game_id, tokens)
    assert _to_act(referee, game_id) == waiting
    deliver_due(referee, "mail")
    # The seat whose page is open is not mailed at once: its turn mail waits.
    assert _statuses(referee, waiting, OutboxKind.YOUR_TURN) == [
        (DeliveryStatus.PENDING, PAGE_OPEN)
    ]
    assert len(mails_by_seat(folder)[waiting]) == before
    # Unanswered when the hold has passed: nothing lost, it goes.
    deliver_due(referee, "mail", datetime.now(UTC) + HOLD)
    assert _statuses(referee, waiting, OutboxKind.YOUR_TURN) == [(DeliveryStatus.SENT, None)]
    assert len(mails_by_seat(folder)[waiting]) == before + 1


def test_a_reply_to_a_merged_mail_is_judged_at_its_last_notice(referee: Referee) -> None:
    """The welcome and the first card are one mail: its Message-ID is the welcome's, it
    names both notices, and its reply address is the card's, so a reply to it is played."""
    game_id, _tokens = _new(referee, "maniki", 2)
    mail = mails_by_seat(Path(referee.settings.mail_dir))[0][0]
    assert kinds_of(mail) == ["invitation", "your_turn"]
    with referee.db.reading() as session:
        told = session.exec(select(Outbox.id).where(Outbox.seat == 0).order_by(col(Outbox.id)))
        first, card = told.all()[:2]
        game = session.get(Game, game_id)
        assert game is not None
        state = game_states.state_at(session, game, game.version)
    assert str(mail["Message-ID"]).startswith(f"<referee.{first}.")
    assert str(mail["X-Referee-Notices"]) == f"{first} {card}"
    token = str(mail["Reply-To"]).split("+", 1)[1].split("@", 1)[0]
    assert token == keys.reply_token(referee.secret(), game_id, 0, game.version)
    rules = rules_of(game)
    view = rules.view(state, 0)
    sequence = " ".join(solve(view["position"], view["target"]))
    reply = Reply(
        token=token,
        message_key="merged-reply",
        message_id="<merged-reply@players.test>",
        sender="p0@players.test",
        paragraphs=[[sequence]],
    )
    assert take_reply(referee, reply).outcome == "submitted"
    with referee.db.reading() as session:
        submission = session.exec(select(Submission)).one()
    assert submission.status == "accepted", submission.reason
