"""A reader leaving an event stream is how every stream ends: `referee serve` does not
log it as an error.

Against a real `referee serve` (waitress), with two streams a client: Chromium opens a
game page (which follows the game's stream) and navigates away; a raw socket opens the
API's stream and is reset mid-stream (SO_LINGER 0: an RST, as a client killed or a
network cut). The server finds both gone only when it writes to them (a move is
played, then a keepalive comment, every half second here), and once the client may
open two streams again (the two dead ones have closed, after waitress logged whatever
it logs of them), the server's output holds no line of a client disconnected, an
exception or a traceback.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Browser

from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service, base_env, start_server
from tests.tiers import starts_servers

playwright = pages.playwright
browser = pages.browser

API_KEY = {"X-API-Key": TEST_API_KEY}
STREAMS = 2
KEEPALIVE_SECONDS = 0.5


@pytest.fixture(scope="module")
@starts_servers
def stream_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("leaving")
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp / 'referee.sqlite3'}",
        REFEREE_SWEEP_EVERY="3600",
        REFEREE_API_KEY=TEST_API_KEY,
        REFEREE_EVENTS_PER_CLIENT=str(STREAMS),
        # A dead reader is found at the second write after it left (the first one is
        # buffered): the keepalive's comment comes soon.
        REFEREE_EVENTS_KEEPALIVE=str(KEEPALIVE_SECONDS),
    )
    url, server = start_server(env, tmp)
    service = Service(url, env["DATABASE_URL"], env, tmp, server)
    yield service
    service.stop()


def _log(service: Service) -> str:
    return (service.tmp / "server.log").read_text(encoding="utf-8", errors="replace")


def _wait_for(service: Service, line: str) -> None:
    for _ in range(200):
        if line in _log(service):
            return
        time.sleep(0.05)
    pytest.fail(f"the server never logged {line!r}")


def _both_places_free(service: Service, path: str) -> None:
    """Wait until this client may hold two streams again: the dead ones have closed.

    The streams opened to ask are left behind too when the answer is no: the
    server finds them gone at its second write after, so each try waits three
    keepalives, or the tries would keep the places taken themselves."""
    for _ in range(40):
        opened = [requests.get(service.url + path, stream=True, timeout=10) for _ in range(STREAMS)]
        statuses = [answer.status_code for answer in opened]
        for answer in opened:
            answer.close()
        if statuses == [200] * STREAMS:
            return
        time.sleep(3 * KEEPALIVE_SECONDS)
    pytest.fail("the streams left behind were never closed")


def test_leaving_an_event_stream_is_not_logged_as_an_error(
    stream_service: Service, browser: Browser, tmp_path: Path
) -> None:
    url = stream_service.url
    created = requests.post(
        url + "/v1/games",
        headers=API_KEY,
        json={"game": "mandala", "players": [{"name": "Ann"}, {"name": "Bob"}]},
        timeout=30,
    ).json()
    game_id = created["id"]

    # A browser leaves a page that follows the game.
    page = pages.new_page(browser)
    page.goto(f"{url}/g/{game_id}")
    _wait_for(stream_service, f"GET /g/{game_id}/events ")
    page.goto(url + "/")
    page.context.close()

    # A client resets its connection mid-stream.
    host, port = url.removeprefix("http://").split(":")
    raw = socket.create_connection((host, int(port)), timeout=10)
    raw.sendall(f"GET /v1/games/{game_id}/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    assert raw.recv(100).startswith(b"HTTP/1.1 200")
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    raw.close()

    # A move: the server writes to both streams and finds their readers gone.
    acting = requests.get(f"{url}/v1/games/{game_id}", timeout=10).json()["to_act"][0]
    token = created["seats"][acting]["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    legal = requests.get(f"{url}/v1/games/{game_id}/legal-moves", headers=bearer, timeout=10)
    moved = requests.post(
        f"{url}/v1/games/{game_id}/moves?wait=10",
        headers=bearer,
        json={"notation": legal.json()["moves"][0]["notation"]},
        timeout=30,
    )
    assert moved.status_code == 201, moved.text
    _both_places_free(stream_service, f"/v1/games/{game_id}/events")

    told = [
        line
        for line in _log(stream_service).splitlines()
        if any(word in line.lower() for word in ("disconnect", "exception", "traceback", "error"))
    ]
    assert told == []
