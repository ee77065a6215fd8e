"""A vacation freezes a deadline across a sweep, on the real stack: PostgreSQL, the
worker's Celery task sent through Redis with the moment to sweep at, and SMTP.

The clock is moved (the sweep's `at`), never slept through: sweeps during the
vacation, even past the deadline the turn had before it, neither remind nor
time out the seat away; after its return the turn has the time it had left,
with the reminder at 80% and the timeout at its end.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import requests
from celery import Celery

from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from tests.mail.players import kind, text_of, wait_mail
from tests.mailboxes import MailService
from tests.servers import redis_url
from tests.stacks import Client


def sweep(env: MailService, at: datetime) -> None:
    app = Celery(broker=redis_url())
    for _ in range(2):
        app.send_task(
            "referee.deadlines", args=[at.isoformat()], queue=env.service.env["REFEREE_QUEUE"]
        )


def settle() -> None:
    # A sweep that should do nothing leaves no sign to wait for: give it time to run.
    time.sleep(2)


def timeouts(env: MailService, game_id: str) -> list[int]:
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute(
            "SELECT seat FROM submission WHERE game_id = %s AND source = 'timeout'", (game_id,)
        ).fetchall()
    return [int(seat) for (seat,) in found]


def summary(env: MailService, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = Client(env.service.url).get(f"/v1/games/{game_id}").json()
    return found


def signed_in(env: MailService, address: str) -> requests.Session:
    """A browser signed in as `address` (its session opened as the sign-in link would)."""
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        cookie = open_session(referee, address)
    finally:
        referee.close()
    browser = requests.Session()
    browser.cookies.set("player", cookie)
    return browser


def test_a_vacation_freezes_a_deadline_across_a_sweep(mail_service: MailService) -> None:
    env = mail_service
    body = {
        "game": "subdivision",
        "players": [{"name": f"V{i}", "email": f"vacation-{i}@players.test"} for i in range(2)],
        "deadline": "72h",
    }
    created = Client(env.service.url).post("/v1/games", body)
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    before = summary(env, game_id)
    seat = before["to_act"][0]
    due_before = datetime.fromisoformat(before["deadlines"]["due_at"])
    away, other = f"vacation-{seat}@players.test", f"vacation-{1 - seat}@players.test"

    until = datetime.now(UTC) + timedelta(days=5)
    answer = signed_in(env, away).put(
        f"{env.service.url}/v1/me/vacation", json={"until": until.isoformat()}, timeout=60
    )
    assert answer.status_code == 200, answer.text
    leaves = datetime.fromisoformat(answer.json()["vacation"]["from"])
    frozen = summary(env, game_id)
    assert datetime.fromisoformat(frozen["seats"][seat]["away_until"]) == until
    due = datetime.fromisoformat(frozen["deadlines"]["due_at"])
    assert due - until == due_before - leaves

    # Sweeps while away, at the reminder and past the deadline the turn had: nothing.
    for moment in (due_before - timedelta(hours=10), due_before + timedelta(minutes=1)):
        sweep(env, moment)
    settle()
    assert timeouts(env, game_id) == []
    assert "reminder" not in [kind(mail) for mail in env.mailbox.to(away)]

    # Back: the reminder at 80% of the time it had, then the timeout at its end.
    sweep(env, due - timedelta(hours=10))
    reminder = wait_mail(env, away, "reminder")
    assert due.strftime("%Y-%m-%d %H:%M UTC") in text_of(reminder.mail)
    sweep(env, due - timedelta(minutes=1))
    settle()
    assert timeouts(env, game_id) == []
    sweep(env, due + timedelta(minutes=1))
    deadline = time.monotonic() + 30
    while not timeouts(env, game_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert timeouts(env, game_id) == [seat]
    # The other seat is told of its turn, written at the moment swept: after the vacation.
    turn = wait_mail(env, other, "your_turn", summary(env, game_id)["version"])
    assert "on vacation" not in text_of(turn.mail)
