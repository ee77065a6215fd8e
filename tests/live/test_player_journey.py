"""A player's morning, against the production shape: gunicorn (deploy/gunicorn.conf.py),
a Celery worker, PostgreSQL, Redis, `referee mail-in` and the players' SMTP server.

Ann holds seats in three games, each made by a trusted client: one where
it is her turn, one where Bob's, one finished. She asks for a sign-in link
on the form in Chromium, opens the mailed link in a fresh browser and
presses "Sign in"; `/me` lists her turn, then the waiting game, then the
finished one. A turn mail's play-now link opens her seat in another fresh
browser. A `read` token sees her seat but cannot move; a `play` token is
refused at once once revoked. Switched to a digest, the worker's run at a
simulated hour mails her one digest listing exactly the game where it is
her turn.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from celery import Celery
from playwright.sync_api import Browser, BrowserContext, sync_playwright

from referee.queue import DIGESTS
from tests.clock import real_now
from tests.live.test_web_browser import FLAGS
from tests.mail.players import kinds, text_of
from tests.mailboxes import Mailbox, Received, mail_env, start_mail_in
from tests.servers import chromium, free_port, redis_url
from tests.stacks import REFEREE, Client, Process, Service
from tests.tiers import starts_servers

GUNICORN = str(Path(REFEREE).with_name("gunicorn"))
ROOT = Path(__file__).resolve().parent.parent.parent
ANN = "ann@journey.test"
SIGN_IN = re.compile(r"https?://[^\s\"<>]+(/me/sign-in/[A-Za-z0-9_-]+)")
PLAY_NOW = re.compile(r"https?://[^\s\"<>]+(/g/[0-9a-f]{32}/play/[A-Za-z0-9_=-]+)")


@dataclass
class Stack:
    service: Service
    mailbox: Mailbox

    @property
    def url(self) -> str:
        return self.service.url

    def mail(self, kind: str, seconds: float = 60) -> Received:
        """The latest mail telling a notice of `kind` to Ann, once one came."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [m for m in self.mailbox.to(ANN) if kind in kinds(m)]
            if found:
                return found[-1]
            time.sleep(0.1)
        raise AssertionError(f"no {kind} mail to {ANN}")


@pytest.fixture(scope="module")
@starts_servers
def stack(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("journey")
    mailbox = Mailbox(free_port())
    mailbox.start()
    port = free_port()
    env = mail_env(
        pg_database,
        mailbox.port,
        REFEREE_BIND=f"127.0.0.1:{port}",
        REFEREE_PUBLIC_URL=f"http://127.0.0.1:{port}",
        WEB_CONCURRENCY="2",
    )
    subprocess.run([REFEREE, "db", "upgrade"], env=env, check=True, capture_output=True)
    web = Process(
        [GUNICORN, "-c", str(ROOT / "deploy/gunicorn.conf.py"), "api.wsgi:app"],
        {**env, "PYTHONPATH": str(ROOT)},
        tmp / "web.log",
    ).start()
    service = Service(f"http://127.0.0.1:{port}", pg_database, env, tmp, web)
    _, inbound = start_mail_in(env, tmp / "mail-in.log")
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if requests.get(service.url + "/v1/rules", timeout=10).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, web.output()
            time.sleep(0.2)
        service.start_worker()
        yield Stack(service, mailbox)
    finally:
        service.stop(inbound)
        mailbox.stop()


@pytest.fixture(scope="module")
@starts_servers
def browser() -> Iterator[Browser]:
    with sync_playwright() as driver:
        executable = chromium(driver.chromium.executable_path)
        yield driver.chromium.launch(executable_path=executable, args=FLAGS, timeout=60_000)


def _fresh(browser: Browser) -> BrowserContext:
    context = browser.new_context()
    context.set_default_timeout(30_000)
    return context


def _three_games(stack: Stack) -> dict[str, str]:
    """Ann's games: her turn, Bob's turn, and one Bob resigned (Bobs have no address,
    so their tokens come back to the client)."""
    client = Client(stack.url)
    made = {}
    for label, ann_seat in (("turn", 0), ("wait", 1), ("over", 0)):
        players = [{"name": f"Bob-{label}"}]
        players.insert(ann_seat, {"name": "Ann", "email": ANN})
        body = {"game": "subdivision", "players": players, "deadline": "72h"}
        created = client.post("/v1/games", body).json()
        made[label] = created["id"]
        bob = next(seat["token"] for seat in created["seats"] if seat["seat"] != ann_seat)
        if label == "over":
            answer = client.http.post(
                f"{stack.url}/v1/games/{created['id']}/resign",
                params={"wait": 20},
                headers=Client.auth(bob),
                timeout=60,
            )
            assert answer.status_code == 201, answer.text
    return made


def test_a_player_signs_in_by_mail_and_finds_every_game(stack: Stack, browser: Browser) -> None:
    made = _three_games(stack)

    asking = _fresh(browser).new_page()
    asking.goto(stack.url + "/me/sign-in")
    asking.fill("input[name=email]", ANN)
    asking.click("#ask")
    asking.wait_for_load_state()
    found = SIGN_IN.search(text_of(stack.mail("sign_in").mail))
    assert found is not None

    signed = _fresh(browser)
    page = signed.new_page()
    page.goto(stack.url + found.group(1))
    page.click("#sign-in")
    page.wait_for_url(stack.url + "/me")
    shown = page.inner_text("main")
    # Her turn, then the game waiting for Bob, then the finished one.
    places = [shown.index(f"Bob-{label}") for label in ("turn", "wait", "over")]
    assert places == sorted(places), shown
    assert shown.index("Your turn") < places[0] < shown.index("Waiting") < places[1]
    assert shown.index("Finished") < places[2] and "you won" in shown.lower()
    # The browser that only asked is not signed in.
    assert "/me/sign-in" in asking.goto(stack.url + "/me").url  # type: ignore[union-attr]

    # The turn mail's play-now link opens her seat in a browser that never signed in.
    turn = next(
        m
        for m in stack.mailbox.to(ANN)
        if m.mail["X-Referee-Kind"] == "your_turn" and str(m.mail["X-Referee-Game"]) == made["turn"]
    )
    link = PLAY_NOW.search(text_of(turn.mail))
    assert link is not None
    seat_page = _fresh(browser).new_page()
    seat_page.goto(stack.url + link.group(1))
    seat_page.wait_for_url(f"{stack.url}/g/{made['turn']}")
    assert "You are" in seat_page.inner_text("main")
    assert link.group(1).rsplit("/", 1)[1] not in seat_page.content()

    _tokens_act_only_within_their_scopes(stack, signed, made["turn"])
    _the_digest_lists_exactly_her_turns(stack, signed, made)


def _tokens_act_only_within_their_scopes(
    stack: Stack, signed: BrowserContext, game_id: str
) -> None:
    """Tokens made by the signed-in browser (its session cookie), used by a plain client."""

    def make(scopes: list[str]) -> dict[str, str]:
        answer = signed.request.post(
            stack.url + "/v1/me/tokens", data={"name": "+".join(scopes), "scopes": scopes}
        )
        assert answer.status == 201, answer.text()
        made: dict[str, str] = answer.json()
        return made

    reader, player = make(["read"]), make(["play"])
    client = Client(stack.url)
    state = client.get(f"/v1/games/{game_id}/state", reader["token"])
    assert state.status_code == 200
    legal = client.get(f"/v1/games/{game_id}/legal-moves", reader["token"]).json()
    notation = legal["moves"][0]["notation"]
    refused = client.move(game_id, reader["token"], {"notation": notation})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    mine = client.get("/v1/me/games", reader["token"]).json()["games"]
    assert game_id in [row["id"] for row in mine]

    revoked = signed.request.delete(f"{stack.url}/v1/me/tokens/{player['id']}")
    assert revoked.status == 204
    late = client.move(game_id, player["token"], {"notation": notation})
    assert late.status_code == 401
    # Nothing was played by either token.
    assert client.get(f"/v1/games/{game_id}", reader["token"]).json()["version"] == 0


def _the_digest_lists_exactly_her_turns(
    stack: Stack, signed: BrowserContext, made: dict[str, str]
) -> None:
    """Switched to a digest at 07:00, the worker's digest run at a simulated 07:05 mails
    one digest listing the one game where it is her turn, with its play-now link."""
    answer = signed.request.put(
        stack.url + "/v1/me/settings", data={"turn_mail": "digest", "digest_hours": [7]}
    )
    assert answer.status == 200, answer.text()
    # A day years after the servers' today (tests/clock.py), at 07:05.
    moment = datetime(real_now().year + 5, 5, 6, 7, 5, tzinfo=UTC)
    Celery(broker=redis_url()).send_task(
        DIGESTS, args=[moment.isoformat()], queue=stack.service.env["REFEREE_QUEUE"]
    )
    digest = text_of(stack.mail("digest").mail)
    listed = re.findall(r"/g/([0-9a-f]{32})/play/", digest)
    assert listed == [made["turn"]], digest
