"""Deadlines: the test moves the clock (the sweep's `at`), never sleeps through a turn.

The sweep runs as the worker's Celery task, sent through the real broker
with the time to act at; sending it twice, or racing two, applies a
reminder or a timeout once.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from celery import Celery

from tests.mail.players import text_of, told, wait_mail
from tests.mailboxes import MailService
from tests.servers import redis_url
from tests.stacks import Client


def sweep(env: MailService, at: datetime, times: int = 2) -> None:
    app = Celery(broker=redis_url())
    for _ in range(times):
        app.send_task(
            "referee.deadlines", args=[at.isoformat()], queue=env.service.env["REFEREE_QUEUE"]
        )


def create(env: MailService, game: str, policy: str, tag: str) -> dict[str, Any]:
    body = {
        "game": game,
        "players": [{"name": f"P{i}", "email": f"{tag}{i}@players.test"} for i in range(2)],
        "deadline": "72h",
        "on_timeout": policy,
    }
    answer = Client(env.service.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def log(env: MailService, game_id: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute(
            "SELECT seat, notation, source FROM move"
            " WHERE game_id = %s AND source <> 'forced' ORDER BY seq",
            (game_id,),
        ).fetchall()
    return [(int(a), str(b), str(c)) for a, b, c in found]


def summary(env: MailService, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = Client(env.service.url).get(f"/v1/games/{game_id}").json()
    return found


def settle() -> None:
    time.sleep(2)


@pytest.mark.parametrize(
    ("game", "policy", "expected"),
    [("maniki", "pass", "pass"), ("subdivision", "random", None), ("mandala", "forfeit", "resign")],
)
def test_each_policy_applies_once_and_reminds_once(
    mail_service: MailService, game: str, policy: str, expected: str | None
) -> None:
    env = mail_service
    created = create(env, game, policy, f"{policy}-")
    game_id = created["id"]
    deadlines = summary(env, game_id)["deadlines"]
    assert deadlines["seconds"] == 72 * 3600 and deadlines["on_timeout"] == policy
    due = datetime.fromisoformat(deadlines["due_at"])
    to_act = summary(env, game_id)["to_act"]

    sweep(env, due - timedelta(hours=20))  # 72% of the time: nothing yet
    settle()
    sweep(env, due - timedelta(hours=10))  # 86%: one reminder per seat to act
    for seat in to_act:
        reminder = wait_mail(env, f"{policy}-{seat}@players.test", "reminder")
        assert "still awaited" in text_of(reminder.mail)
    settle()
    for seat in (0, 1):
        mails = env.mailbox.to(f"{policy}-{seat}@players.test")
        assert told(mails).count("reminder") == (1 if seat in to_act else 0)
    assert log(env, game_id) == []

    sweep(env, due + timedelta(minutes=1), times=3)
    deadline = time.monotonic() + 20
    while not log(env, game_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    settle()
    played = log(env, game_id)
    assert [seat for seat, _, _ in played] == to_act[: len(played)] and played
    assert all(source == "timeout" for _, _, source in played)
    if expected is not None:
        assert all(notation == expected for _, notation, _ in played)
    # Each seat the referee played for is told so at once, by its own mail.
    for seat, notation, _ in played:
        answer = wait_mail(env, f"{policy}-{seat}@players.test", "answer")
        assert f'Time ran out, so the referee played "{notation}" for you' in text_of(answer.mail)
    if policy == "forfeit":
        assert summary(env, game_id)["status"] == "over"
        wait_mail(env, f"{policy}-1@players.test", "game_over")
    else:
        assert summary(env, game_id)["status"] == "active"
        version = summary(env, game_id)["version"]
        seat = summary(env, game_id)["to_act"][0]
        turn = wait_mail(env, f"{policy}-{seat}@players.test", "your_turn", version)
        assert "played by the referee: time ran out" in text_of(turn.mail)
    # The same moment again applies nothing more.
    sweep(env, due + timedelta(minutes=2))
    settle()
    assert log(env, game_id) == played
