"""Player tokens and sessions over the real stack: `referee serve`, a worker on
PostgreSQL and Redis, the players' SMTP server and `referee mail-in`.

A `play` token reads what playing needs (the state, legal moves, events and
board of its player's games) and nothing else; a webhook set with a player
token stops when the token is revoked; signing out clears the seats the
player's play-now links gave the browser; a double click on "Mail me a
link" mails one link; sixty tokens made at once leave at most the cap.
"""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from referee.service import Referee
from referee.service.players import open_session
from referee.service.tokens import MAX_TOKENS
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.mail.players import text_of
from tests.mailboxes import MailService
from tests.security.webhook_servers import Receiver
from tests.shared_stacks import SharedStacks
from tests.stacks import Client
from tests.tiers import starts_servers

PLAY = re.compile(r"https?://[^/\s]+(/g/([0-9a-f]{32})/play/[A-Za-z0-9_-]+)")


@pytest.fixture(scope="module")
@starts_servers
def stack(shared_stacks: SharedStacks) -> MailService:
    # The webhook receiver here is on loopback, which webhooks may reach only so.
    return shared_stacks.mail_service(REFEREE_WEBHOOK_ALLOW_PRIVATE="1")


def session_of(stack: MailService, address: str) -> str:
    """A session cookie of `address`, as spending a mailed sign-in link opens one."""
    referee = Referee(Settings(database_url=stack.service.database_url, redis_url=None))
    try:
        with on_server_clock():
            return open_session(referee, address)
    finally:
        referee.close()


def browser(stack: MailService, cookie: str | None = None) -> requests.Session:
    """A browser of the stack's site, signed in with `cookie` if given, with a form token."""
    found = requests.Session()
    if cookie is not None:
        found.cookies.set("player", cookie)
    found.get(stack.service.url + "/me/sign-in", timeout=60)
    return found


def csrf(session: requests.Session) -> str:
    return str(session.cookies["csrf"])


def game_of(stack: MailService, *emails: str) -> dict[str, Any]:
    """A trusted Subdivision game of these addresses and a seat without one, once mailed."""
    players = [{"name": f"P{n}", "email": email} for n, email in enumerate(emails)]
    body = {"game": "subdivision", "players": [*players, {"name": "Nobody"}]}
    answer = Client(stack.service.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    for email in emails:
        stack.mailbox.wait_for(email, 1, seconds=120)
    created: dict[str, Any] = answer.json()
    return created


def make_token(stack: MailService, cookie: str, scopes: list[str]) -> tuple[int, str]:
    made = requests.post(
        stack.service.url + "/v1/me/tokens",
        json={"name": "client", "scopes": scopes},
        cookies={"player": cookie},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    return int(made.json()["id"]), str(made.json()["token"])


def test_a_play_token_reads_the_games_it_plays_in_and_nothing_else(stack: MailService) -> None:
    ann = "ann.play@players.test"
    game = game_of(stack, ann)
    elsewhere = game_of(stack, "bob.play@players.test")
    _, token = make_token(stack, session_of(stack, ann), ["play"])
    client = Client(stack.service.url)
    game_id = game["id"]
    for path in ("state", "legal-moves", "board.svg", "moves", "log.jsonl"):
        answer = client.get(f"/v1/games/{game_id}/{path}", token)
        assert answer.status_code == 200, (path, answer.text)
    assert client.get(f"/v1/games/{game_id}/legal-moves", token).json()["seat"] == 0
    with requests.get(
        f"{stack.service.url}/v1/games/{game_id}/events",
        headers={"Authorization": f"Bearer {token}"},
        stream=True,
        timeout=60,
    ) as events:
        assert events.status_code == 200
        first = next(line for line in events.iter_lines() if line and not line.startswith(b":"))
        assert first.startswith(b"id: "), first
    # Not a game of Ann's, nor Ann's own lists: those need `read`.
    refused = client.get(f"/v1/games/{elsewhere['id']}/legal-moves", token)
    assert refused.status_code == 401, refused.text
    for path in ("/v1/me", "/v1/me/games"):
        answer = client.get(path, token)
        assert answer.status_code == 403 and "read" in answer.json()["detail"], answer.text
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]
    played = client.move(game_id, token, {"move": legal["move"]})
    assert played.status_code == 201 and played.json()["submission"]["seat"] == 0, played.text


def play_round(client: Client, game_id: str, seats: list[str]) -> None:
    """Each seat plays once, in turn: the turn is the first seat's again."""
    for token in seats:
        legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
        assert client.move(game_id, token, {"move": legal[0]["move"]}).status_code == 201


def test_a_webhook_set_with_a_player_token_stops_when_the_token_is_revoked(
    stack: MailService,
) -> None:
    ann = "ann.hook@players.test"
    cookie = session_of(stack, ann)
    game = game_of(stack, ann, "bob.hook@players.test")
    game_id, seats = game["id"], [seat["token"] for seat in game["seats"]]
    token_id, token = make_token(stack, cookie, ["read", "play"])
    client = Client(stack.service.url)
    receiver = Receiver()
    try:
        hooked = client.http.put(
            f"{client.url}/v1/games/{game_id}/webhook",
            json={"url": receiver.url},
            headers=client.auth(token),
            timeout=60,
        )
        assert hooked.status_code == 200, hooked.text
        play_round(client, game_id, seats)
        deadline = time.monotonic() + 60
        while not receiver.received:
            assert time.monotonic() < deadline, "the webhook was never posted to"
            time.sleep(0.1)

        revoked = requests.delete(
            f"{client.url}/v1/me/tokens/{token_id}", cookies={"player": cookie}, timeout=60
        )
        assert revoked.status_code == 204, revoked.text
        health = client.get(f"/v1/games/{game_id}/webhook", seats[0]).json()
        assert health["url"] is None and health["active"] is False, health
        posted = len(receiver.received)
        # Her turn again: Ann is told by mail, not by the webhook her revoked token set.
        mails = len(stack.mailbox.to(ann))
        play_round(client, game_id, seats)
        stack.mailbox.wait_for(ann, mails + 1, seconds=60)
        time.sleep(2)
        assert len(receiver.received) == posted
        # One set by the seat's own token is the seat's: no player token ends it.
        again = client.http.put(
            f"{client.url}/v1/games/{game_id}/webhook",
            json={"url": receiver.url},
            headers=client.auth(seats[0]),
            timeout=60,
        )
        assert again.status_code == 200, again.text
        other_id, _ = make_token(stack, cookie, ["read", "play"])
        revoked = requests.delete(
            f"{client.url}/v1/me/tokens/{other_id}", cookies={"player": cookie}, timeout=60
        )
        assert revoked.status_code == 204, revoked.text
        assert client.get(f"/v1/games/{game_id}/webhook", seats[0]).json()["active"] is True
    finally:
        receiver.close()


def test_signing_out_clears_the_seats_play_now_links_gave_the_browser(
    stack: MailService,
) -> None:
    ann = "ann.out@players.test"
    game = game_of(stack, ann)
    link = PLAY.search(text_of(stack.mailbox.to(ann)[0].mail))
    assert link is not None and link.group(2) == game["id"]
    signed_in = browser(stack, session_of(stack, ann))
    opened = signed_in.get(stack.service.url + link.group(1), timeout=60)
    assert opened.status_code == 200, opened.text
    page = f"{stack.service.url}/g/{game['id']}"
    assert signed_in.cookies.get("seat", path=f"/g/{game['id']}") is not None
    assert "You are <strong>" in signed_in.get(page, timeout=60).text

    out = signed_in.post(
        stack.service.url + "/me/sign-out",
        data={"csrf": csrf(signed_in)},
        allow_redirects=False,
        timeout=60,
    )
    assert out.status_code == 303, out.text
    cleared = [c for c in out.raw.headers.getlist("Set-Cookie") if c.startswith("seat=")]
    assert any(f"Path=/g/{game['id']}" in c for c in cleared), cleared
    assert any(c.startswith("player=;") for c in out.raw.headers.getlist("Set-Cookie"))
    assert signed_in.cookies.get("seat", path=f"/g/{game['id']}") is None
    assert "You are watching." in signed_in.get(page, timeout=60).text


def test_a_double_click_on_mail_me_a_link_mails_one_link(stack: MailService) -> None:
    ann = "ann.twice@players.test"
    game_of(stack, ann)
    clicking = browser(stack)
    start = threading.Barrier(2)

    def click() -> int:
        start.wait()
        answer = clicking.post(
            stack.service.url + "/me/sign-in",
            data={"csrf": csrf(clicking), "email": ann},
            timeout=60,
        )
        return answer.status_code

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(lambda _: click(), range(2))) == [200, 200]
    deadline = time.monotonic() + 60

    def sign_ins() -> list[Any]:
        return [m for m in stack.mailbox.to(ann) if m.mail["X-Referee-Kind"] == "sign_in"]

    while not sign_ins():
        assert time.monotonic() < deadline, "no sign-in mail"
        time.sleep(0.1)
    # Time for a second mail to come, had one been written.
    time.sleep(5)
    assert len(sign_ins()) == 1


def test_sixty_tokens_made_at_once_leave_at_most_the_cap(stack: MailService) -> None:
    cora = "cora.many@players.test"
    game_of(stack, cora)
    cookie = session_of(stack, cora)
    start = threading.Barrier(60)

    def make(n: int) -> int:
        start.wait()
        answer = requests.post(
            stack.service.url + "/v1/me/tokens",
            json={"name": f"t{n}", "scopes": ["read"]},
            cookies={"player": cookie},
            timeout=120,
        )
        return answer.status_code

    with ThreadPoolExecutor(60) as pool:
        statuses = list(pool.map(make, range(60)))
    assert statuses.count(201) == MAX_TOKENS, statuses
    assert set(statuses) == {201, 422}, statuses
    listed = requests.get(
        stack.service.url + "/v1/me/tokens", cookies={"player": cookie}, timeout=60
    ).json()["tokens"]
    assert len(listed) == MAX_TOKENS
