"""Delivery over real SMTP: the players' server down for a while, a worker killed mid-send.

Afterwards every notice of the game is mailed, and each message (by its
Message-ID) reached the server exactly once.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.mail.players import told
from tests.mailboxes import MailService, mail_stack
from tests.stacks import Client
from tests.tiers import starts_servers


@pytest.fixture(scope="module")
@starts_servers
def mail_service(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MailService]:
    """A stack of this module's own: its tests stop and stall the mailbox and kill the worker."""
    with mail_stack(pg_database, tmp_path_factory) as found:
        yield found


def rows(env: MailService, game_id: str) -> list[tuple[int, str, int]]:
    """(notice, status, attempts) of each mail delivery of the game."""
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute(
            "SELECT o.id, d.status, d.attempts FROM outbox o"
            " JOIN delivery d ON d.notice_id = o.id AND d.channel = 'mail'"
            " WHERE o.game_id = %s ORDER BY o.id",
            (game_id,),
        ).fetchall()
    return [(int(a), str(b), int(c)) for a, b, c in found]


def new_game(env: MailService, tag: str) -> dict[str, object]:
    client = Client(env.service.url)
    body = {
        "game": "subdivision",
        "players": [{"name": f"P{i}", "email": f"{tag}{i}@players.test"} for i in range(3)],
    }
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, object] = answer.json()
    return created


def running(named: str) -> list[int]:
    """The processes whose command line holds `named`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if named.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue  # it ended while we looked
    return found


def all_sent_once(env: MailService, game_id: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(status == "sent" for _, status, _ in rows(env, game_id)):
            break
        time.sleep(0.1)
    assert all(status == "sent" for _, status, _ in rows(env, game_id)), rows(env, game_id)
    time.sleep(1)  # anything sent twice would arrive now
    mails = [m for m in env.mailbox.messages if str(m.mail["X-Referee-Game"]) == game_id]
    ids = Counter(str(m.mail["Message-ID"]) for m in mails)
    # Each notice told once: those due to a seat at once in one mail.
    assert len(told(mails)) == len(rows(env, game_id))
    assert set(ids.values()) == {1}, ids


def test_server_down_then_up_delivers_each_message_once(mail_service: MailService) -> None:
    env = mail_service
    env.mailbox.stop()
    try:
        created = new_game(env, "down")
        game_id = str(created["id"])
        token = created["seats"][0]["token"]  # type: ignore[index]
        client = Client(env.service.url)
        legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
        assert client.move(game_id, token, {"move": legal[0]["move"]}).status_code == 201
        # Generous: on a loaded machine (a second run beside this one) the worker's
        # retries come late; the loop ends as soon as they have come.
        deadline = time.monotonic() + 60
        while max(attempts for *_, attempts in rows(env, game_id)) < 3:
            assert time.monotonic() < deadline, rows(env, game_id)
            time.sleep(0.2)
        assert all(status != "sent" for _, status, _ in rows(env, game_id))
    finally:
        env.mailbox.start()
    all_sent_once(env, game_id)


def test_a_worker_killed_while_sending_loses_and_repeats_nothing(
    mail_service: MailService,
) -> None:
    env = mail_service
    env.mailbox.stall = 6
    env.mailbox.stalled.clear()
    created = new_game(env, "kill")
    game_id = str(created["id"])
    assert env.mailbox.stalled.wait(20), "the worker never reached DATA"
    killed = env.service.workers[0]
    killed.kill()
    # Its delivery child, stalled in DATA, dies with it rather than finishing the
    # mail after the lease has handed the row on (the mail would go twice).
    name = killed.args[killed.args.index("-n") + 1]
    deadline = time.monotonic() + 2
    while running(name) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(name), "a child of the killed worker lives on"
    env.mailbox.stall = 0
    assert any(status == "sending" for _, status, _ in rows(env, game_id))
    env.service.start_worker()
    all_sent_once(env, game_id, seconds=40)


@pytest.fixture(autouse=True)
def _mailbox_up(mail_service: MailService) -> None:
    if mail_service.mailbox.controller is None:
        mail_service.mailbox.start()
