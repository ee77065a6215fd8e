"""Webhooks: each notification POSTed as signed JSON to the seat's URL, retried until taken."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.mailboxes import MailService
from tests.shared_stacks import SharedStacks
from tests.stacks import Client
from tests.tiers import starts_servers


@pytest.fixture(scope="module")
@starts_servers
def stack(shared_stacks: SharedStacks) -> MailService:
    # The receiving server here is on loopback, which webhooks may reach only so. Not named
    # `mail_service`, so that tests/tiers.py puts this file beside the others with settings
    # of their own (tests/mail/test_player_credentials.py has the same), not among those on
    # the default mail stack, which it would stop.
    return shared_stacks.mail_service(REFEREE_WEBHOOK_ALLOW_PRIVATE="1")


class Hook:
    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.refuse = 2
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if hook.refuse > 0:
                    hook.refuse -= 1
                    self.send_response(503)
                else:
                    hook.received.append((dict(self.headers), body))
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
@starts_servers
def hook() -> Iterator[Hook]:
    found = Hook()
    yield found
    found.server.shutdown()


def test_notifications_are_signed_and_retried(stack: MailService, hook: Hook) -> None:
    client = Client(stack.service.url)
    created = client.create("subdivision", 2)
    game_id, tokens = created["id"], [s["token"] for s in created["seats"]]
    registered = client.http.put(
        f"{client.url}/v1/games/{game_id}/webhook",
        json={"url": hook.url},
        headers=client.auth(tokens[1]),
        timeout=30,
    )
    assert registered.status_code == 200, registered.text
    secret = registered.json()["secret"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", tokens[0]).json()["moves"]
    assert client.move(game_id, tokens[0], {"move": legal[0]["move"]}).status_code == 201
    deadline = time.monotonic() + 30

    def turns() -> list[tuple[dict[str, str], bytes]]:
        return [(h, b) for h, b in hook.received if json.loads(b)["kind"] == "your_turn"]

    while not turns() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)
    # The invitation may go too (the hook was set before it was sent); each once.
    deliveries = [h["X-Referee-Delivery"] for h, _ in hook.received]
    assert len(deliveries) == len(set(deliveries)) and hook.refuse == 0
    assert len(turns()) == 1
    headers, body = turns()[0]
    stamp = headers["X-Referee-Timestamp"]
    wanted = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    assert headers["X-Referee-Signature"] == "sha256=" + wanted
    data = json.loads(body)
    assert data["kind"] == "your_turn" and data["seat"] == 1 and data["version"] == 1
    assert data["envelope"]["to_act"] == [1]
    assert tokens[0] not in body.decode() and tokens[1] not in body.decode()
