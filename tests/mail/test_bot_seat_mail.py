"""A seat handed to a bot, over the real stack: its own person's mail keeps the game's
subject (no "(bot, greedy)" there); the others are told the seat is the bot's.

`referee serve`, a worker on PostgreSQL and Redis, `referee mail-in` and the
players' SMTP server; the deadline sweep is sent to the worker with a clock
past each turn's deadline, as tests/mail/test_deadlines.py does.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from tests.mail.players import text_of, wait_mail
from tests.mail.test_deadlines import log, sweep
from tests.mailboxes import MailService
from tests.stacks import Client

ANN, BOB = "ann@botseat.test", "bob@botseat.test"


def test_a_seat_handed_to_a_bot_keeps_its_persons_subject(mail_service: MailService) -> None:
    client = Client(mail_service.service.url)
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}],
        "deadline": "72h",
        "on_timeout": "bot",
    }
    created = client.post("/v1/games", body)
    assert created.status_code == 201, created.text
    game_id, ann = created.json()["id"], created.json()["seats"][0]["token"]
    subject = wait_mail(mail_service, BOB, "invitation", 0).mail["Subject"]
    assert "(bot" not in str(subject)
    timeouts = 0
    deadline = time.monotonic() + 240
    while timeouts < 3:
        assert time.monotonic() < deadline, log(mail_service, game_id)
        legal = client.get(f"/v1/games/{game_id}/legal-moves", ann).json()["moves"]
        played = client.move(game_id, ann, {"move": legal[0]["move"]})
        assert played.status_code == 201, played.text
        # Bob never answers: his turn runs out.
        sweep(mail_service, datetime.now(UTC) + timedelta(hours=73))
        while [source for seat, _, source in log(mail_service, game_id) if seat == 1].count(
            "timeout"
        ) == timeouts:
            assert time.monotonic() < deadline, log(mail_service, game_id)
            time.sleep(0.2)
        timeouts += 1
    told_bob = wait_mail(mail_service, BOB, "bot_seat")
    told_ann = wait_mail(mail_service, ANN, "bot_seat")
    # Bob's own mail: the game's thread, under his own name, no "(bot, greedy)" in it.
    assert told_bob.mail["Subject"] == subject
    assert told_ann.mail["Subject"] == subject
    said_bob = " ".join(text_of(told_bob.mail).split())
    assert "you ran out of time 3 turns in a row" in said_bob
    assert said_bob.startswith("Hello Bob,")
    # The others are told whose seat the bot plays now.
    said_ann = " ".join(text_of(told_ann.mail).split())
    assert "Bob (bot, greedy) ran out of time 3 turns in a row" in said_ann
