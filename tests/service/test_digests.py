"""The digest and what mail follows a player's settings, in process on SQLite.

The sweep is handed the moment, so the tests move the clock: the digest of
an hour lists exactly the games where it is the player's turn, once, and
the mail channel skips per-turn mail, reminders and game-over mail as the
player's settings say (`referee.delivery.wishes`). The same over real SMTP,
PostgreSQL and a Celery worker: tests/mail/test_digest.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import col, select

from referee.delivery import talk_lines, wishes
from referee.delivery.channel import Consent
from referee.delivery.mail import MailSender
from referee.service import Referee, refusals, table_talk
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.delivering import content
from referee.service.digests import digest_notices, sweep_digests
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.turn_clock import due_at
from referee.service.turn_mail import change_settings, mute_game, settings_of
from referee.store import delivery, keys
from referee.store.digest_rows import HeldSeat
from referee.store.mail_settings import DEFAULTS, TurnMailSettings
from referee.store.tables import (
    Delivery,
    DeliveryStatus,
    Game,
    Outbox,
    OutboxKind,
    Seat,
    TurnMail,
)

ANN = "ann@players.test"
SIGNED_IN = Player(ANN, frozenset({READ, PLAY, MANAGE}))
# An hour Ann chooses, and one she does not, on a day years after the suite's today.
YEAR = datetime.now(UTC).year + 5
HOUR = datetime(YEAR, 5, 6, 9, 12, tzinfo=UTC)
OTHER_HOUR = datetime(YEAR, 5, 6, 10, 3, tzinfo=UTC)


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def _game(referee: Referee, ann_seat: int, trusted: bool = True) -> str:
    """A trusted Subdivision game with Ann at `ann_seat` (seat 0 acts first)."""
    others = iter(["bob@players.test", "cy@players.test"])
    players = [
        Seated("Ann" if seat == ann_seat else f"P{seat}", ANN if seat == ann_seat else next(others))
        for seat in range(2)
    ]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=trusted))
    return created.game.id


def _digests(referee: Referee) -> list[Outbox]:
    with referee.db.reading() as session:
        return list(
            session.exec(
                select(Outbox).where(Outbox.kind == OutboxKind.DIGEST).order_by(col(Outbox.id))
            )
        )


def _to_digest(referee: Referee, hours: list[int] | None = None) -> None:
    change_settings(referee, SIGNED_IN, {"turn_mail": "digest", "digest_hours": hours or [9, 21]})


def _listed(row: Outbox) -> list[str]:
    return [entry["game"] for entry in row.payload["games"]]


def test_the_digest_of_an_hour_lists_exactly_the_games_where_it_is_my_turn(
    referee: Referee,
) -> None:
    mine = [_game(referee, 0) for _ in range(3)]
    theirs = _game(referee, 1)
    _to_digest(referee)

    assert sweep_digests(referee, OTHER_HOUR) == 0
    assert sweep_digests(referee, HOUR) == 1
    (row,) = _digests(referee)
    assert sorted(_listed(row)) == sorted(mine) and theirs not in _listed(row)
    # Carried by a seat of the first game it lists, which is one of Ann's.
    assert row.game_id == _listed(row)[0] and row.seat == 0
    # The same hour again, later in it: nothing more.
    assert sweep_digests(referee, HOUR.replace(minute=55)) == 0
    assert len(_digests(referee)) == 1


def test_no_turn_no_digest_and_the_hour_is_still_spent(referee: Referee) -> None:
    _game(referee, 1)
    _to_digest(referee)
    assert sweep_digests(referee, HOUR) == 0
    assert _digests(referee) == []


def test_a_muted_game_stays_out_of_the_digest(referee: Referee) -> None:
    kept, muted = _game(referee, 0), _game(referee, 0)
    _to_digest(referee)
    mute_game(referee, SIGNED_IN, muted, True)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    assert _listed(row) == [kept]


def test_the_default_hours_are_7_and_19(referee: Referee) -> None:
    _game(referee, 0)
    change_settings(referee, SIGNED_IN, {"turn_mail": "digest"})
    assert settings_of(referee, SIGNED_IN).settings.digest_hours == (7, 19)
    assert sweep_digests(referee, HOUR) == 0
    assert sweep_digests(referee, HOUR.replace(hour=19)) == 1


def test_players_who_take_each_turn_get_no_digest(referee: Referee) -> None:
    _game(referee, 0)
    assert sweep_digests(referee, HOUR.replace(hour=7)) == 0


def test_an_untrusted_game_the_address_never_accepted_is_not_listed(referee: Referee) -> None:
    trusted = _game(referee, 0)
    _game(referee, 0, trusted=False)
    _to_digest(referee)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    assert _listed(row) == [trusted]


def test_the_digest_mail_lists_each_game_with_its_play_now_link(referee: Referee) -> None:
    mine = [_game(referee, 0) for _ in range(2)]
    _to_digest(referee)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    assert row.id is not None
    built = content(referee, row.id)
    mail = built.mail(ANN, _consent(), None)
    assert mail["Subject"] == "Your turn in 2 games"
    assert mail["Auto-Submitted"] == "auto-generated"
    assert "List-Unsubscribe-Post" in mail and mail["References"] is None
    assert mail["X-Referee-Kind"] == "digest" and mail["Reply-To"] is None
    text = _text(mail)
    for game_id in mine:
        token = keys.play_token(referee.secret(), game_id, 0)
        assert f"/g/{game_id}/play/{token}" in text
        assert f"(game {game_id[:8]}), you and P1" in text
    assert "To act: you; no deadline." in text
    assert "The board: after 0 moves; score: Ann 0, P1 0." in text
    # Never a seat's secret: no seat link, no reply address.
    assert "/seat/" not in text and "play+" not in str(mail)


def test_the_digest_shows_unseen_messages_and_lists_other_games_holding_some(
    referee: Referee,
) -> None:
    mine, theirs, quiet = _game(referee, 0), _game(referee, 1), _game(referee, 1)
    table_talk.post_message(referee, mine, 1, "Your move, Ann <3", via="api")
    table_talk.post_message(referee, theirs, 1, "Hi P0, I'm thinking.", via="api")
    table_talk.post_message(referee, theirs, 0, "Take your time, Ann", via="api")
    _to_digest(referee)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    assert _listed(row) == [mine]
    assert row.payload["talk"] == [{"game": theirs, "seat": 1, "version": 0}]
    assert row.id is not None
    built = content(referee, row.id)
    mail = built.mail(ANN, _consent(), None)
    text = " ".join(_text(mail).split())
    assert "Messages you have not seen: P1 (" in text and "Your move, Ann <3" in text
    assert "Messages in your other games:" in text and f"(game {theirs[:8]})" in text
    # Her own message is not shown to her; the quiet game is not listed.
    assert "Take your time, Ann" in text and "I'm thinking" not in text
    assert quiet[:8] not in text
    html = mail.get_body(preferencelist=("html",))
    assert html is not None and "Your move, Ann &lt;3" in str(html.get_content())
    assert built.talk_seen == ((mine, 0, 1), (theirs, 1, 2))
    talk_lines.mark_seen(referee.db, built.talk_seen)
    assert table_talk.unseen_messages(referee, mine, 0) == []


def test_the_digest_names_a_bots_seat_as_pages_and_mails_do(referee: Referee) -> None:
    players = [Seated("Ann", ANN), Seated("Robo", bot="random")]
    game_id = create_game(referee, NewGame("subdivision", players, {}, trusted=True)).game.id
    _to_digest(referee)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    assert row.id is not None and _listed(row) == [game_id]
    text = " ".join(_text(content(referee, row.id).mail(ANN, _consent(), None)).split())
    assert "you and Robo (bot, random)" in text
    assert "score: Ann 0, Robo (bot, random) 0." in text


def test_a_digest_is_never_a_webhook_delivery(referee: Referee) -> None:
    game_id = _game(referee, 0)
    with referee.db.transaction() as session:
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
        seat.webhook_url = "https://hooks.example.org/ann"
        session.add(seat)
    _to_digest(referee)
    sweep_digests(referee, HOUR)
    (row,) = _digests(referee)
    with referee.db.reading() as session:
        channels = session.exec(select(Delivery.channel).where(Delivery.notice_id == row.id))
        assert list(channels) == ["mail"]


def test_digest_notices_order_by_deadline_and_skip_seats_not_to_act() -> None:
    def held(game: str, to_act: list[int], deadline: int | None, created: str) -> HeldSeat:
        return HeldSeat(ANN, game, 0, to_act, 3, "2031-05-06T08:00:00+00:00", deadline, created)

    seats = [
        held("old", [0], None, "2031-01-01"),
        held("late", [0], 7200, "2031-03-01"),
        held("soon", [0], 3600, "2031-04-01"),
        held("waiting", [1], 60, "2031-02-01"),
    ]
    notices = digest_notices(
        seats,
        {seat.game_id: due_at(seat) for seat in seats},
        "2031-05-06T09:00:00+00:00",
        "2031-05-06T09:00:01+00:00",
    )
    (notice,) = notices
    assert [entry["game"] for entry in notice["payload"]["games"]] == ["soon", "late", "old"]
    assert notice["game_id"] == "soon"
    assert notice["payload"]["games"][0]["due_at"].startswith("2031-05-06T09:00:00")


def test_digest_notices_list_other_games_with_unseen_messages() -> None:
    def held(game: str, to_act: list[int], created: str) -> HeldSeat:
        return HeldSeat(ANN, game, 0, to_act, 3, "2031-05-06T08:00:00+00:00", None, created)

    seats = [held("mine", [0], "2031-01-01"), held("talk", [1], "2031-02-01")]
    seats.append(held("quiet", [1], "2031-03-01"))
    hour, at = "2031-05-06T09:00:00+00:00", "2031-05-06T09:00:01+00:00"
    (notice,) = digest_notices(seats, {}, hour, at, talk={("talk", 0)})
    assert [entry["game"] for entry in notice["payload"]["games"]] == ["mine"]
    assert notice["payload"]["talk"] == [{"game": "talk", "seat": 0, "version": 3}]
    # Messages alone make a digest, carried by their game's seat.
    (alone,) = digest_notices(seats[1:], {}, hour, at, talk={("talk", 0)})
    assert alone["game_id"] == "talk" and alone["payload"]["games"] == []
    assert digest_notices(seats[1:], {}, hour, at) == []


# -- what mail follows the settings ------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "turn_mail", "reminders", "muted", "goes"),
    [
        (OutboxKind.YOUR_TURN, TurnMail.EACH, True, False, True),
        (OutboxKind.YOUR_TURN, TurnMail.DIGEST, True, False, False),
        (OutboxKind.YOUR_TURN, TurnMail.OFF, True, False, False),
        (OutboxKind.YOUR_TURN, TurnMail.EACH, True, True, False),
        (OutboxKind.ROUND_OVER, TurnMail.DIGEST, True, False, False),
        (OutboxKind.MESSAGES, TurnMail.EACH, True, False, True),
        (OutboxKind.MESSAGES, TurnMail.DIGEST, True, False, False),
        (OutboxKind.MESSAGES, TurnMail.EACH, True, True, False),
        (OutboxKind.PASSED_ON, TurnMail.OFF, False, True, True),
        (OutboxKind.REMINDER, TurnMail.DIGEST, True, False, True),
        (OutboxKind.REMINDER, TurnMail.OFF, True, False, True),
        (OutboxKind.REMINDER, TurnMail.EACH, False, False, False),
        (OutboxKind.REMINDER, TurnMail.EACH, True, True, False),
        (OutboxKind.GAME_OVER, TurnMail.DIGEST, False, False, True),
        (OutboxKind.GAME_OVER, TurnMail.OFF, True, False, False),
        (OutboxKind.GAME_OVER, TurnMail.EACH, True, True, False),
        (OutboxKind.INVITATION, TurnMail.OFF, False, True, True),
        (OutboxKind.ANSWER, TurnMail.OFF, False, True, True),
        (OutboxKind.HELP, TurnMail.OFF, False, True, True),
        (OutboxKind.BOARD, TurnMail.OFF, False, True, True),
        (OutboxKind.REFUSED, TurnMail.OFF, False, True, True),
        (OutboxKind.REMATCH, TurnMail.OFF, False, True, True),
        (OutboxKind.SIGN_IN, TurnMail.OFF, False, True, True),
        (OutboxKind.DIGEST, TurnMail.DIGEST, False, True, True),
        (OutboxKind.DIGEST, TurnMail.EACH, True, False, False),
    ],
)
def test_what_mail_follows_the_settings(
    kind: OutboxKind, turn_mail: TurnMail, reminders: bool, muted: bool, goes: bool
) -> None:
    chosen = TurnMailSettings(turn_mail, (7, 19), reminders)
    assert (wishes.withheld(kind, chosen, muted) is None) == goes


def test_the_mail_channel_skips_per_turn_mail_at_send_time(referee: Referee) -> None:
    """Settings changed after a turn mail was written still hold it back: asked at send time."""
    each = _game(referee, 0)
    _to_digest(referee)
    sender = MailSender(referee.db, referee.settings, referee.secret())
    statuses = _send_all(referee, sender, each)
    assert statuses[OutboxKind.YOUR_TURN] == (
        DeliveryStatus.SKIPPED,
        "the player is told of turns by its digest",
    )
    # The invitation (the game's first mail, with the personal link) still went.
    assert statuses[OutboxKind.INVITATION][0] == DeliveryStatus.SENT


def _send_all(referee: Referee, sender: MailSender, game_id: str) -> dict[str, Any]:
    """Send every mail delivery of the game with `sender`; (status, reason) by kind."""
    claim = delivery.claim(referee.db, "mail", lambda _seat, _at: sa.true(), datetime.now(UTC), 60)
    outcomes: dict[str, Any] = {}
    for job in claim.rows:
        if job.game_id != game_id:
            continue
        (outcome,) = sender.send(
            [job], lambda jobs: content(referee, jobs[0].notice_id), datetime.now(UTC)
        )
        reason = getattr(outcome, "reason", None)
        status = DeliveryStatus.SKIPPED if reason else DeliveryStatus.SENT
        outcomes.setdefault(job.kind, (status, reason))
    return outcomes


def _consent() -> Consent:
    return Consent(False, "accept-token", "stop-token")


def _text(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain",))
    assert part is not None
    found = part.get_content()
    assert isinstance(found, str)
    return found


# -- settings --------------------------------------------------------------------


def test_settings_start_at_the_defaults_and_change_in_part(referee: Referee) -> None:
    _game(referee, 0)
    told = settings_of(referee, SIGNED_IN)
    assert told.settings == DEFAULTS and told.muted == []
    changed = change_settings(referee, SIGNED_IN, {"reminders": False})
    assert changed.settings == TurnMailSettings(TurnMail.EACH, (7, 19), False)
    changed = change_settings(referee, SIGNED_IN, {"digest_hours": [23, 0]})
    assert changed.settings.digest_hours == (0, 23) and not changed.settings.reminders


@pytest.mark.parametrize(
    "changes",
    [
        {"turn_mail": "weekly"},
        {"turn_mail": 1},
        {"digest_hours": []},
        {"digest_hours": [24]},
        {"digest_hours": [-1]},
        {"digest_hours": [7, 7]},
        {"digest_hours": [True]},
        {"digest_hours": "7"},
        {"digest_hours": [*range(24), 0]},
        {"reminders": "yes"},
        {"colour": "blue"},
    ],
)
def test_bad_settings_are_refused(referee: Referee, changes: dict[str, Any]) -> None:
    _game(referee, 0)
    with pytest.raises(refusals.BadRequest):
        change_settings(referee, SIGNED_IN, changes)
    assert settings_of(referee, SIGNED_IN).settings == DEFAULTS


def test_a_token_reads_but_does_not_change_settings(referee: Referee) -> None:
    _game(referee, 0)
    token = Player(ANN, frozenset({READ, PLAY}))
    assert settings_of(referee, token).settings == DEFAULTS
    with pytest.raises(refusals.Forbidden):
        change_settings(referee, token, {"turn_mail": "off"})
    with pytest.raises(refusals.Forbidden):
        mute_game(referee, token, "0" * 32, True)


def test_only_a_game_i_hold_a_seat_in_can_be_muted(referee: Referee) -> None:
    mine = _game(referee, 0)
    with referee.db.reading() as session:
        other = session.exec(select(Game.id).where(Game.id != mine)).first()
    assert other is None
    for game_id in ("0" * 32, "not an id", "x" * 5000):
        with pytest.raises(refusals.NotFound):
            mute_game(referee, SIGNED_IN, game_id, True)
    assert mute_game(referee, SIGNED_IN, mine, True).muted == [mine]
    assert mute_game(referee, SIGNED_IN, mine, True).muted == [mine]
    assert mute_game(referee, SIGNED_IN, mine, False).muted == []
