"""A vacation freezes a deadline across a sweep, on the real stack: PostgreSQL, the
worker's Celery task sent through Redis with the moment to sweep at, and SMTP.

The clock is moved (the sweep's `at`), never slept through: sweeps during the
vacation, even past the deadline the turn had before it, neither remind nor
time out the seat away; after its return the turn has the time it had left,
with the reminder at 80% and the timeout at its end. A second game, whose
players stay at home, shows when each sweep has run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import requests
from celery import Celery

from referee.i18n import clock
from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.mail.players import kinds, text_of, told
from tests.mailboxes import MailService
from tests.servers import redis_url
from tests.stacks import Client


def sweep(env: MailService, at: datetime) -> None:
    app = Celery(broker=redis_url())
    for _ in range(2):
        app.send_task(
            "referee.deadlines", args=[at.isoformat()], queue=env.service.env["REFEREE_QUEUE"]
        )


def eventually(check: Callable[[], bool], seconds: float = 120) -> None:
    """Wait for what a sweep does (a loaded machine may take a while), failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the sweep did not do it"
        time.sleep(0.1)


def count(env: MailService, game_id: str, what: str) -> int:
    """The game's timeouts (`timeout`) or reminders written (`reminder`)."""
    query = {
        "timeout": "SELECT count(*) FROM submission WHERE game_id = %s AND source = 'timeout'",
        "reminder": "SELECT count(*) FROM outbox WHERE game_id = %s AND kind = 'reminder'",
    }[what]
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute(query, (game_id,)).fetchone()
    assert found is not None
    return int(found[0])


def summary(env: MailService, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = Client(env.service.url).get(f"/v1/games/{game_id}").json()
    return found


def signed_in(env: MailService, address: str) -> requests.Session:
    """A browser signed in as `address` (its session opened as the sign-in link would)."""
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(referee, address)
    finally:
        referee.close()
    browser = requests.Session()
    browser.cookies.set("player", cookie)
    return browser


def create(env: MailService, tag: str) -> str:
    body = {
        "game": "subdivision",
        "players": [{"name": f"V{i}", "email": f"{tag}-{i}@players.test"} for i in range(2)],
        "deadline": "72h",
    }
    created = Client(env.service.url).post("/v1/games", body)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["id"]
    return game_id


def test_a_vacation_freezes_a_deadline_across_a_sweep(
    mail_service: MailService, server_now: datetime
) -> None:
    env = mail_service
    # Beside the game, one whose players stay at home: what the sweeps do to it shows
    # that they ran, and what they leave undone in the other is left undone on purpose.
    game_id, control = create(env, "vacation"), create(env, "home")
    before = summary(env, game_id)
    seat = before["to_act"][0]
    due_before = datetime.fromisoformat(before["deadlines"]["due_at"])
    away = f"vacation-{seat}@players.test"

    until = server_now + timedelta(days=5)
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
    sweep(env, due_before - timedelta(hours=10))
    eventually(lambda: count(env, control, "reminder") == 1)
    sweep(env, due_before + timedelta(minutes=1))
    eventually(lambda: count(env, control, "timeout") == 1)
    assert (count(env, game_id, "reminder"), count(env, game_id, "timeout")) == (0, 0)

    # Back: the reminder at 80% of the time it had, naming the turn's new end (awaited
    # before the clock moves on, or it would go out in one mail with the timeout's)...
    sweep(env, due - timedelta(hours=10))
    eventually(lambda: count(env, game_id, "reminder") == 1)
    eventually(lambda: "reminder" in told(env.mailbox.to(away)))
    (reminder,) = [mail for mail in env.mailbox.to(away) if "reminder" in kinds(mail)]
    # The turn's end in the player's zone (UTC: none chosen), its time of day named.
    assert " ".join(clock(due).split()) in " ".join(text_of(reminder.mail).split())
    # ... no timeout before its end...
    sweep(env, due - timedelta(minutes=1))
    eventually(lambda: count(env, control, "timeout") == 2)
    assert count(env, game_id, "timeout") == 0
    # ... and the timeout at its end.
    sweep(env, due + timedelta(minutes=1))
    eventually(lambda: count(env, game_id, "timeout") == 1)
