"""A webhook's health and secret, seen by its seat: redirects are failures, repeated
failures switch it off (visible on GET, mail unaffected), its secret can be rotated,
and DELETE answers without it. On the embedded default, receivers on loopback."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator

import pytest

from tests.security.webhook_servers import Receiver, Stack, embedded_stack, wait_until
from tests.tiers import starts_servers

MAX_FAILURES = 3  # REFEREE_WEBHOOK_MAX_FAILURES of the stack


@pytest.fixture(scope="module")
@starts_servers
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with embedded_stack(
        tmp_path_factory.mktemp("health"), REFEREE_WEBHOOK_ALLOW_PRIVATE="1"
    ) as found:
        yield found


def test_a_redirect_is_not_followed(stack: Stack) -> None:
    elsewhere = Receiver()
    redirecting = Receiver(302, location=elsewhere.url)
    try:
        game_id, tokens, _ = stack.game()
        assert stack.hook(game_id, tokens[1], redirecting.url).status_code == 200
        stack.play_one(game_id, tokens[0])
        wait_until(lambda: stack.health(game_id, tokens[1])["failures"] >= 1, 60, "a failure")
        health = stack.health(game_id, tokens[1])
        assert "redirects are not followed" in health["last_error"], health
        assert redirecting.answered >= 1 and elsewhere.answered == 0
    finally:
        redirecting.close()
        elsewhere.close()


def test_repeated_failures_switch_the_webhook_off_and_mail_still_goes(stack: Stack) -> None:
    failing = Receiver(500)
    try:
        game_id, tokens, addresses = stack.game(emails=True)
        assert stack.hook(game_id, tokens[1], failing.url).status_code == 200
        stack.play_one(game_id, tokens[0])
        # The seat's mail does not wait for its webhook.
        kinds = {m.mail["X-Referee-Kind"] for m in stack.mailbox.wait_for(addresses[1], 2)}
        assert "your_turn" in kinds
        wait_until(lambda: not stack.health(game_id, tokens[1])["active"], 120, "the switch-off")
        health = stack.health(game_id, tokens[1])
        assert health["failures"] == MAX_FAILURES == health["max_failures"], health
        assert health["switched_off_at"] and "500" in health["last_error"], health
        assert failing.answered == MAX_FAILURES
        # Setting it again switches it on with a clean slate.
        again = stack.hook(game_id, tokens[1], failing.url).json()
        assert again["active"] and again["failures"] == 0 and again["switched_off_at"] is None
    finally:
        failing.close()


def test_the_secret_rotates_and_delete_does_not_show_it(stack: Stack) -> None:
    receiver = Receiver()
    try:
        game_id, tokens, _ = stack.game()
        first = stack.hook(game_id, tokens[1], receiver.url).json()["secret"]
        rotated = stack.client.post(f"/v1/games/{game_id}/webhook/secret", None, tokens[1])
        assert rotated.status_code == 200, rotated.text
        second = rotated.json()["secret"]
        assert second != first
        # Another seat's token rotates its own secret, not this one.
        other = stack.client.post(f"/v1/games/{game_id}/webhook/secret", None, tokens[0])
        assert other.json()["secret"] not in (first, second)
        stack.play_one(game_id, tokens[0])
        wait_until(lambda: receiver.received, 60, "a delivery")
        headers, body = receiver.received[0]
        stamp = headers["X-Referee-Timestamp"]

        def signed(key: str) -> str:
            mac = hmac.new(key.encode(), stamp.encode() + b"." + body, hashlib.sha256)
            return "sha256=" + mac.hexdigest()

        assert headers["X-Referee-Signature"] == signed(second) != signed(first)
        assert json.loads(body)["seat"] == 1
        dropped = stack.client.http.delete(
            f"{stack.client.url}/v1/games/{game_id}/webhook",
            headers=stack.client.auth(tokens[1]),
            timeout=60,
        )
        assert dropped.status_code == 200 and "secret" not in dropped.json(), dropped.text
        assert second not in dropped.text and dropped.json()["url"] is None
        assert "secret" not in stack.health(game_id, tokens[1])
    finally:
        receiver.close()
