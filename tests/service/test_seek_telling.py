"""What players are told of open games, in process on SQLite: which notices are written
for an invitation, a withdrawal, an expiry and the day's new seeks, by each player's
settings; what the digest lists; what the mail says; and what the player's stream says.
The same mails over real SMTP: tests/mail/test_seek_mail.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest
from sqlmodel import col, select

from referee.delivery import wishes
from referee.delivery.channel import Consent
from referee.service import Referee, profiles
from referee.service.consent import stop_address
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.delivering import content
from referee.service.digests import hour_of, sweep_digests
from referee.service.my_events import SEEK_KINDS, data_of, followed, key_of, mark_now, resumed
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.seek_telling import sweep_seek_news
from referee.service.seeks import (
    NewSeek,
    expire_seeks,
    join_seek,
    post_seek,
    start_seek,
    withdraw_seek,
)
from referee.service.turn_mail import change_settings
from referee.store.mail_settings import TurnMailSettings
from referee.store.tables import Address, Outbox, OutboxKind, TurnMail

NAMES = {
    "ann@x.test": "Ann",
    "bob@x.test": "Bob",
    "cy@x.test": "Cyd",
    "dee@x.test": "Dée",
    "eve@x.test": "Eve",
}


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


ANN, BOB, CY, DEE, EVE = (player(address) for address in NAMES)


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Five named players, each seated once by a trusted client: Ann and Bob have a mail
    per turn, Cyd a digest, Dée no turn mail, and Eve stopped the referee's mail."""
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    create_game(fresh_referee, NewGame("subdivision", seated[:2], {}, trusted=True))
    # Dée first: it is not Cyd's turn anywhere, so her digest has news of open games alone.
    create_game(fresh_referee, NewGame("subdivision", [seated[3], seated[2]], {}, trusted=True))
    create_game(fresh_referee, NewGame("subdivision", [seated[4], seated[0]], {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(fresh_referee, player(address), name)
    change_settings(fresh_referee, CY, {"turn_mail": "digest", "digest_hours": list(range(24))})
    change_settings(fresh_referee, DEE, {"turn_mail": "off"})
    with fresh_referee.db.reading() as session:
        eve = session.get(Address, EVE.address)
        assert eve is not None
        stop = eve.stop_token
    stop_address(fresh_referee, stop)
    return fresh_referee


def told(referee: Referee, *kinds: OutboxKind) -> list[Outbox]:
    with referee.db.reading() as session:
        query = select(Outbox).where(col(Outbox.kind).in_(kinds)).order_by(col(Outbox.id))
        return list(session.exec(query))


def address_of(referee: Referee, row: Outbox) -> str:
    from referee.store import reads

    with referee.db.reading() as session:
        email = reads.seats(session, row.game_id)[row.seat or 0].email
    assert email is not None
    return email.lower()


def mail_of(referee: Referee, row: Outbox) -> EmailMessage:
    assert row.id is not None
    return content(referee, row.id).mail("someone@x.test", Consent(False, "acc", "stop"), None)


def words(mail: EmailMessage) -> str:
    parts = [mail["Subject"]]
    for part in mail.walk():
        if part.get_content_type() in ("text/plain", "text/html"):
            parts.append(part.get_content())
    return "\n".join(parts)


def four(invite: tuple[str, ...] = ()) -> NewSeek:
    """A Mandala seek for two to five players: four never fill it."""
    return NewSeek("mandala", min_players=2, max_players=5, invite=invite)


def test_a_private_seeks_invitees_are_mailed_by_their_settings(referee: Referee) -> None:
    seek = post_seek(referee, ANN, four(invite=("Bob", "Cyd", "Dée", "Eve")))
    (row,) = told(referee, OutboxKind.SEEK_INVITED)
    # Bob takes a mail each time; Cyd's digest lists it, Dée asked for no mail, and
    # Eve's address may not be mailed at all.
    assert address_of(referee, row) == BOB.address and row.payload == {"seek": seek.id}
    mail = mail_of(referee, row)
    assert mail["Subject"] == "Ann invites you to an open game (Mandala)"
    assert mail["X-Referee-Kind"] == "seek_invited" and mail["Reply-To"] is None
    assert "List-Unsubscribe-Post" in mail and mail["References"] is None
    text = words(mail)
    assert "Mandala, 2 to 5 players, 1 seated, posted by Ann" in text
    assert f"/seeks/{seek.id}" in text
    assert "@x.test" not in text


def test_a_withdrawal_is_told_to_those_seated_but_the_creator(referee: Referee) -> None:
    seek = post_seek(referee, ANN, four())
    join_seek(referee, BOB, seek.id)
    join_seek(referee, CY, seek.id)
    join_seek(referee, DEE, seek.id)
    withdraw_seek(referee, ANN, seek.id)
    (row,) = told(referee, OutboxKind.SEEK_WITHDRAWN)
    assert address_of(referee, row) == BOB.address
    text = words(mail_of(referee, row))
    assert "Ann withdrew an open game you had joined" in text
    assert "Mandala, 2 to 5 players, 4 seated, posted by Ann (no longer open)" in text


def test_an_expiry_is_told_to_everyone_seated(referee: Referee) -> None:
    seek = post_seek(referee, ANN, four())
    join_seek(referee, BOB, seek.id)
    join_seek(referee, EVE, seek.id)
    later = datetime.now(UTC) + timedelta(days=referee.settings.seek_days, minutes=1)
    assert expire_seeks(referee, later) == [seek.id]
    rows = told(referee, OutboxKind.SEEK_EXPIRED)
    assert sorted(address_of(referee, row) for row in rows) == [ANN.address, BOB.address]
    assert "expired before enough players joined" in words(mail_of(referee, rows[0]))
    # Expired once: a second sweep tells nothing more.
    assert expire_seeks(referee, later) == []
    assert len(told(referee, OutboxKind.SEEK_EXPIRED)) == 2


def test_nobody_is_mailed_of_a_start_but_by_the_new_games_own_mail(referee: Referee) -> None:
    seek = post_seek(referee, ANN, four())
    join_seek(referee, BOB, seek.id)
    started = start_seek(referee, ANN, seek.id)
    assert started.game_id is not None
    invitations = [
        row for row in told(referee, OutboxKind.INVITATION) if row.game_id == started.game_id
    ]
    assert len(invitations) == 2
    assert not told(referee, *(kind for kind in OutboxKind if kind.startswith("seek_")))


def test_the_digest_lists_what_happened_to_my_open_games_once(referee: Referee) -> None:
    invited = post_seek(referee, ANN, four(invite=("Cyd",)))
    joined = post_seek(referee, BOB, four())
    join_seek(referee, CY, joined.id)
    withdraw_seek(referee, BOB, joined.id)
    # The next hour's digest: Cyd has no game where it is her turn, only this news.
    hour = hour_of(datetime.now(UTC)) + timedelta(hours=1)
    assert sweep_digests(referee, hour) == 1
    (digest,) = told(referee, OutboxKind.DIGEST)
    assert address_of(referee, digest) == CY.address
    assert digest.payload["games"] == []
    assert digest.payload["seeks"] == [
        {"seek": invited.id, "kind": "seek_invited"},
        {"seek": joined.id, "kind": "seek_withdrawn"},
    ]
    mail = mail_of(referee, digest)
    assert mail["Subject"] == "News of open games"
    text = words(mail)
    assert "posted by Ann: you are invited to this private open game." in text
    assert "posted by Bob (no longer open): withdrawn by the player who posted it." in text
    assert "@x.test" not in text
    # The next digest tells none of it again, and with nothing else to tell is not written.
    assert sweep_digests(referee, hour + timedelta(hours=1)) == 0


def test_new_public_seeks_come_in_one_mail_a_day(referee: Referee) -> None:
    change_settings(referee, BOB, {"seek_news": ["mandala"]})
    change_settings(referee, DEE, {"seek_news": ["mandala"]})
    profiles.block(referee, BOB, "Eve")
    first = post_seek(referee, ANN, four())
    post_seek(referee, BOB, four())
    post_seek(referee, EVE, four())
    post_seek(referee, ANN, NewSeek("subdivision"))
    post_seek(referee, CY, four(invite=("Ann",)))
    now = datetime.now(UTC)
    assert sweep_seek_news(referee, now) == 1
    (row,) = told(referee, OutboxKind.SEEK_NEWS)
    # Bob's alone (Dée takes no mail): Ann's public Mandala seek, not his own, not the
    # one of Eve whom he blocks, not another game's, not a private one.
    assert address_of(referee, row) == BOB.address and row.payload == {"seeks": [first.id]}
    mail = mail_of(referee, row)
    assert mail["Subject"] == "New open games of Mandala"
    text = words(mail)
    assert "Mandala, 2 to 5 players, 1 seated, posted by Ann" in text
    assert "posted by Eve" not in text and "@x.test" not in text
    # A new seek an hour later waits for the day to pass, and then comes alone.
    second = post_seek(referee, CY, four())
    assert sweep_seek_news(referee, now + timedelta(hours=1)) == 0
    assert sweep_seek_news(referee, now + timedelta(days=1, minutes=1)) == 1
    assert told(referee, OutboxKind.SEEK_NEWS)[-1].payload == {"seeks": [second.id]}
    assert sweep_seek_news(referee, now + timedelta(days=1, minutes=2)) == 0


def test_the_digest_lists_new_public_seeks_but_a_blocked_players(referee: Referee) -> None:
    change_settings(referee, CY, {"seek_news": ["mandala"]})
    profiles.block(referee, EVE, "Cyd")
    mine = post_seek(referee, ANN, four())
    post_seek(referee, EVE, four())
    post_seek(referee, CY, four())
    # A player with a digest is never sent the daily mail: the digest lists them.
    assert sweep_seek_news(referee, datetime.now(UTC) + timedelta(seconds=1)) == 0
    hour = hour_of(datetime.now(UTC)) + timedelta(hours=1)
    assert sweep_digests(referee, hour) == 1
    (digest,) = told(referee, OutboxKind.DIGEST)
    assert digest.payload["new_seeks"] == [mine.id]
    text = words(mail_of(referee, digest))
    assert "New open games of the games you asked to hear of" in text
    assert f"/seeks/{mine.id}" in text and "posted by Ann" in text


@pytest.mark.parametrize(
    ("turn_mail", "goes"), [(TurnMail.EACH, True), (TurnMail.DIGEST, False), (TurnMail.OFF, False)]
)
@pytest.mark.parametrize(
    "kind",
    [
        OutboxKind.SEEK_INVITED,
        OutboxKind.SEEK_WITHDRAWN,
        OutboxKind.SEEK_EXPIRED,
        OutboxKind.SEEK_NEWS,
    ],
)
def test_mail_of_open_games_goes_with_a_mail_per_turn_alone(
    kind: OutboxKind, turn_mail: TurnMail, goes: bool
) -> None:
    """Asked again at send time: a player who changed its settings meanwhile is not mailed."""
    chosen = TurnMailSettings(turn_mail, (7, 19), True)
    assert (wishes.withheld(kind, chosen, False) is None) == goes


def _events(referee: Referee, address: str) -> dict[str, dict[str, Any]]:
    found = followed(referee, [address]).get(address, {})
    return {key: data_of(item, "") for key, item in found.items() if key.startswith("seek:")}


def test_the_stream_tells_every_seated_player_and_every_invitee(referee: Referee) -> None:
    # Settings change the mail, not the stream: Dée, with no mail, hears all of it.
    private = post_seek(referee, ANN, four(invite=("Dée",)))
    assert _events(referee, DEE.address) == {
        f"seek:{private.id}": {
            "kind": "seek_invited",
            "seek_id": private.id,
            "game": "mandala",
            "game_id": None,
            "by": "Ann",
            "seated": ["Ann"],
        }
    }
    join_seek(referee, DEE, private.id)
    started = start_seek(referee, ANN, private.id)
    for address in (ANN.address, DEE.address):
        event = _events(referee, address)[f"seek:{private.id}"]
        assert event["kind"] == "seek_started" and event["game_id"] == started.game_id
        assert event["seated"] == ["Ann", "Dée"]
    withdrawn = post_seek(referee, BOB, four())
    join_seek(referee, EVE, withdrawn.id)
    withdraw_seek(referee, BOB, withdrawn.id)
    assert _events(referee, EVE.address)[f"seek:{withdrawn.id}"]["kind"] == "seek_withdrawn"
    # The creator is not told of what it did itself.
    assert f"seek:{withdrawn.id}" not in _events(referee, BOB.address)
    expiring = post_seek(referee, CY, four())
    mark = mark_now()
    expire_seeks(referee, datetime.now(UTC) + timedelta(days=referee.settings.seek_days + 1))
    assert _events(referee, CY.address)[f"seek:{expiring.id}"]["kind"] == "seek_expired"
    # A resume after a mark sends what the seeks told since (within the slack), and only
    # names: never an address.
    everything = followed(referee, [CY.address])[CY.address]
    resumed_kinds = {key_of(item): kind for item, kind in resumed(everything, mark)}
    assert resumed_kinds[f"seek:{expiring.id}"] == "seek_expired"
    assert set(SEEK_KINDS) == {"seek_invited", "seek_started", "seek_withdrawn", "seek_expired"}
    for address in NAMES:
        assert "@" not in str(_events(referee, address))


def test_announced_ids_find_the_seeks_they_name_and_the_seeks_games(referee: Referee) -> None:
    """What a stream's hub reads on an announcement: a seek by its id, and a started seek
    by its game's id (the new game is what `create_game` announces)."""
    seek = post_seek(referee, ANN, four(invite=("Bob",)))
    assert followed(referee, [BOB.address], heard={seek.id})[BOB.address].keys() == {
        f"seek:{seek.id}"
    }
    join_seek(referee, BOB, seek.id)
    started = start_seek(referee, ANN, seek.id)
    assert started.game_id is not None
    heard = followed(referee, [BOB.address], heard={started.game_id})[BOB.address]
    assert heard.keys() == {started.game_id, f"seek:{seek.id}"}
    assert data_of(heard[f"seek:{seek.id}"], "")["kind"] == "seek_started"
    assert followed(referee, [BOB.address], heard={"0" * 32}).get(BOB.address, {}) == {}
