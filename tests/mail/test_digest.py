"""The digest over real SMTP, PostgreSQL and a Celery worker: the test moves the clock.

Players switched to a digest get no mail per turn; the digest the worker
writes at a simulated hour (the `referee.digests` task, sent through the
broker with that moment) lists exactly the games where it is the player's
turn, each with its play-now link, in a thread of its own; a player with
no turn gets nothing; the same hour swept again sends nothing more;
reminders still come under a digest, and not once turned off; a muted
game leaves the digest.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import requests
from celery import Celery

from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from referee.store import keys
from tests.clock import on_server_clock, real_now
from tests.mail.players import kinds, text_of, told, wait_mail
from tests.mailboxes import MailService
from tests.servers import hex_id, redis_url
from tests.stacks import Client

ANN, CY, EVE = (f"digest-{name}@players.test" for name in ("ann", "cy", "eve"))
# Hours away from the real one (the servers' clock, tests/clock.py), which the worker's own
# sweeps meet meanwhile, on a day years after it.
HOUR = (real_now().hour + 6) % 24
LATER = (HOUR + 6) % 24
YEAR = real_now().year + 5


def at_hour(hour: int) -> datetime:
    return datetime(YEAR, 5, 6, hour, 5, tzinfo=UTC)


def send(env: MailService, task: str, at: datetime, times: int = 1) -> None:
    app = Celery(broker=redis_url())
    for _ in range(times):
        app.send_task(task, args=[at.isoformat()], queue=env.service.env["REFEREE_QUEUE"])


def create(env: MailService, players: list[dict[str, str]], deadline: bool = True) -> Any:
    body: dict[str, Any] = {"game": "subdivision", "players": players}
    if deadline:
        body["deadline"] = "72h"
    answer = Client(env.service.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def bob_and(address: str) -> list[dict[str, str]]:
    """Bob, with no address (his token comes back), at seat 0, to act first."""
    return [{"name": "Bob"}, {"name": address.split("@")[0], "email": address}]


def first_with(address: str) -> list[dict[str, str]]:
    return [{"name": address.split("@")[0], "email": address}, {"name": "Dee"}]


def signed_in(env: MailService, address: str, settings: dict[str, Any]) -> requests.Session:
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(referee, address)
    finally:
        referee.close()
    browser = requests.Session()
    browser.cookies.set("player", cookie)
    answer = browser.put(f"{env.service.url}/v1/me/settings", json=settings, timeout=30)
    assert answer.status_code == 200, answer.text
    return browser


def deliveries(env: MailService, address: str, wanted: str) -> list[tuple[str, str, str | None]]:
    """(game, status, error) of the mail deliveries of kind `wanted` to `address`'s seats."""
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute(
            f"SELECT {hex_id('o.game_id')}, d.status, d.error FROM outbox o"
            " JOIN seat s ON s.game_id = o.game_id AND s.seat = o.seat"
            " JOIN delivery d ON d.notice_id = o.id AND d.channel = 'mail'"
            " WHERE lower(s.email) = %s AND o.kind = %s ORDER BY o.id",
            (address, wanted),
        ).fetchall()
    return [(str(a), str(b), c) for a, b, c in found]


DONE = ("sent", "skipped", "failed")


def settled(
    env: MailService, address: str, wanted: str, count: int, game_id: str | None = None
) -> list[Any]:
    """Wait until `count` deliveries of kind `wanted` to `address` (one in `game_id`, if
    given, among them) are done; them."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = deliveries(env, address, wanted)
        if (
            len(found) >= count
            and all(status in DONE for _, status, _ in found)
            and (game_id is None or any(game == game_id for game, _, _ in found))
        ):
            return found
        time.sleep(0.1)
    raise AssertionError(deliveries(env, address, wanted))


def listed(text: str) -> list[str]:
    """The game ids of the play-now links a digest lists, in order."""
    return re.findall(r"Play now: \S+/g/([0-9a-f]{32})/play/\S+", text)


def test_the_digest_replaces_turn_mail_and_lists_exactly_my_turns(
    mail_service: MailService,
) -> None:
    env = mail_service
    # Games that make the three known, where it is not their turn.
    waiting = create(env, bob_and(ANN), deadline=False)
    create(env, bob_and(CY), deadline=False)
    # The first mails wait for the delivery worker to start (slow on a busy machine).
    env.mailbox.wait_for(ANN, 1, seconds=180)
    env.mailbox.wait_for(CY, 1, seconds=60)
    ann = signed_in(env, ANN, {"turn_mail": "digest", "digest_hours": [HOUR, LATER]})
    signed_in(env, CY, {"turn_mail": "digest", "digest_hours": [HOUR]})

    mine = [create(env, first_with(ANN))["id"] for _ in range(3)]
    bob_first = create(env, bob_and(ANN))
    bob = bob_first["seats"][0]["token"]
    legal = Client(env.service.url).get(f"/v1/games/{bob_first['id']}/legal-moves", bob).json()
    moved = Client(env.service.url).move(
        bob_first["id"], bob, {"notation": legal["moves"][0]["notation"]}
    )
    assert moved.status_code == 201, moved.text
    mine.append(bob_first["id"])

    # No mail per turn: each turn's delivery is skipped, saying why.
    turns = settled(env, ANN, "your_turn", 4)
    assert {game for game, _, _ in turns} == set(mine)
    assert {(status, error) for _, status, error in turns} == {
        ("skipped", "the player is told of turns by its digest")
    }

    send(env, "referee.digests", at_hour(HOUR))
    digest = wait_mail(env, ANN, "digest")
    text = text_of(digest.mail)
    assert str(digest.mail["Subject"]) == "Your turn in 4 games"
    assert sorted(listed(text)) == sorted(mine) and waiting["id"] not in text
    for game_id in mine:
        seat = 1 if game_id == bob_first["id"] else 0
        token = keys.play_token(env.service.env["REFEREE_SECRET"].encode(), game_id, seat)
        assert f"/g/{game_id}/play/{token}" in text
    # Its own thread, marked automatic, with one-click unsubscribe.
    assert digest.mail["In-Reply-To"] is None and digest.mail["References"] is None
    assert digest.mail["Auto-Submitted"] == "auto-generated"
    assert str(digest.mail["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"

    # The same hour again, twice more: nothing more. Cy, with no turn, got nothing.
    send(env, "referee.digests", at_hour(HOUR).replace(minute=40), times=2)
    time.sleep(2)
    assert told(env.mailbox.to(ANN)).count("digest") == 1
    assert told(env.mailbox.to(CY)) == ["invitation"]
    assert "your_turn" not in told(env.mailbox.to(ANN))

    # A muted game leaves the next digest.
    assert ann.put(f"{env.service.url}/v1/me/games/{mine[1]}/mute", timeout=30).status_code == 204
    before = len(env.mailbox.to(ANN))
    send(env, "referee.digests", at_hour(LATER))
    later = wait_mail(env, ANN, "digest", after=before)
    assert sorted(listed(text_of(later.mail))) == sorted(set(mine) - {mine[1]})


def test_reminders_come_under_a_digest_and_not_once_turned_off(
    mail_service: MailService,
) -> None:
    env = mail_service
    games = [create(env, first_with(address)) for address in (ANN, EVE)]
    env.mailbox.wait_for(EVE, 1, seconds=180)
    signed_in(env, EVE, {"turn_mail": "digest", "digest_hours": [HOUR], "reminders": False})
    due = max(
        datetime.fromisoformat(
            Client(env.service.url).get(f"/v1/games/{game['id']}").json()["deadlines"]["due_at"]
        )
        for game in games
    )
    send(env, "referee.deadlines", due - timedelta(hours=10))
    # Ann, who takes a digest (in the test above) with reminders on, is reminded.
    reminded = settled(env, ANN, "reminder", 1, games[0]["id"])
    assert (games[0]["id"], "sent", None) in reminded
    assert any(
        "reminder" in kinds(m) and m.mail["X-Referee-Game"] == games[0]["id"]
        for m in env.mailbox.to(ANN)
    )
    (skipped,) = settled(env, EVE, "reminder", 1)
    assert skipped == (games[1]["id"], "skipped", "the player turned deadline reminders off")
    assert "reminder" not in told(env.mailbox.to(EVE))
