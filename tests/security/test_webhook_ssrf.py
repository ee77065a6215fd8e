"""Webhooks reach only the public internet: refused when set, and again at each send.

A real listener on 127.0.0.1 stands for the services a stranger would like
the referee to call; after every attempt it must have had no connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.webhook_servers import Listener, Stack, embedded_stack, wait_until, worker_stack
from tests.tiers import starts_servers

TRICKS = [
    "http://127.0.0.1:{port}/hook",
    "http://0x7f000001:{port}/hook",
    "http://2130706433:{port}/hook",
    "http://127.1:{port}/hook",
    "http://0177.0.0.1:{port}/hook",
    "http://localhost:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://[::ffff:7f00:1]:{port}/hook",
    "http://[::1]:{port}/hook",
    "http://0.0.0.0:{port}/hook",
    "https://127.0.0.1:{port}/hook",
]


@pytest.fixture
@starts_servers
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


@pytest.fixture(scope="module")
@starts_servers
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with embedded_stack(tmp_path_factory.mktemp("ssrf")) as found:
        yield found


@pytest.mark.parametrize("trick", TRICKS)
def test_put_refuses_every_spelling_of_loopback(
    stack: Stack, listener: Listener, trick: str
) -> None:
    game_id, tokens, _ = stack.game()
    answer = stack.hook(game_id, tokens[0], trick.format(port=listener.port))
    assert answer.status_code == 422, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "webhook_forbidden_address"
    assert stack.health(game_id, tokens[0])["url"] is None
    assert not listener.reached()


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://user:secret@example.com/hook", "webhook_credentials"),
        ("ftp://example.com/hook", "webhook_bad_url"),
        ("javascript:alert(1)", "webhook_bad_url"),
        ("http://nothing-here.invalid/hook", "webhook_unresolvable"),
    ],
)
def test_put_refuses_other_bad_urls_with_a_clear_code(stack: Stack, url: str, code: str) -> None:
    game_id, tokens, _ = stack.game()
    answer = stack.hook(game_id, tokens[0], url)
    assert answer.status_code == 422 and answer.json()["code"] == code, answer.text


def test_each_send_checks_the_address_again(
    pg_database: str, tmp_path: Path, listener: Listener
) -> None:
    """The API takes a loopback URL (it allows private targets here), the delivering
    worker does not: the check at send time alone keeps the listener unreached."""
    with worker_stack(
        pg_database,
        tmp_path,
        deliver_env={"REFEREE_WEBHOOK_ALLOW_PRIVATE": "0"},
        REFEREE_WEBHOOK_ALLOW_PRIVATE="1",
    ) as stack:
        game_id, tokens, _ = stack.game()
        url = f"http://0x7f000001:{listener.port}/hook"
        assert stack.hook(game_id, tokens[1], url).status_code == 200
        stack.play_one(game_id, tokens[0])
        wait_until(
            lambda: stack.health(game_id, tokens[1])["failures"] >= 1, 60, "a refused delivery"
        )
        health = stack.health(game_id, tokens[1])
        assert "loopback" in health["last_error"], health
        assert not listener.reached()


STRANGERS = {
    "no such game, no token": ("0" * 32, None, 404, "not_found"),
    "no such game, a seat's token": ("0" * 32, "seat", 404, "not_found"),
    "no token": ("game", None, 401, "unauthorized"),
    "not a bearer header": ("game", "Basic abc", 401, "unauthorized"),
    "another game's token": ("game", "other", 401, "unauthorized"),
}


@pytest.mark.parametrize("who", STRANGERS)
@pytest.mark.parametrize("url", ["http://nothing-here.invalid/hook", "http://127.0.0.1:9/hook"])
def test_put_looks_at_the_url_only_for_a_seat_of_the_game(stack: Stack, who: str, url: str) -> None:
    """Who asks comes first: a stranger's URL is never looked up (no DNS, no 422 saying how
    its host resolves), whatever host it names."""
    game_id, tokens, _ = stack.game()
    _, other_tokens, _ = stack.game()
    asked, given, status, code = STRANGERS[who]
    header = {"seat": f"Bearer {tokens[0]}", "other": f"Bearer {other_tokens[0]}"}.get(
        given or "", given
    )
    answer = stack.client.http.put(
        f"{stack.client.url}/v1/games/{game_id if asked == 'game' else asked}/webhook",
        json={"url": url},
        headers={} if header is None else {"Authorization": header},
        timeout=60,
    )
    assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert stack.health(game_id, tokens[0])["url"] is None
