"""One client's connections and event streams cannot lock others out of `referee serve`.

Against a real `referee serve` on SQLite. The stranger's sockets come
from 127.0.0.2 and the honest client's from 127.0.0.1: two addresses of
the loopback (on Linux every 127.x.y.z is one), so the server sees two
peers. The stranger speaks raw HTTP over sockets, the honest client is
any HTTP client.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import requests

from tests.stacks import Client, Service, base_env, start_server
from tests.tiers import starts_servers

STRANGER = "127.0.0.2"
SHARE = 16
STREAMS_EACH = 6
IDLE_TIMEOUT = 1
# Bounds on waits, so that a broken server fails a test instead of hanging it.
PATIENCE = 15.0


def _serve(tmp_path_factory: pytest.TempPathFactory, name: str, **env: str) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp(name)
    database = f"sqlite:///{tmp / 'referee.sqlite3'}"
    chosen = base_env(DATABASE_URL=database, **env)
    url, server = start_server(chosen, tmp)
    yield Service(url, database, chosen, tmp, server)
    server.stop()


@pytest.fixture(scope="module")
@starts_servers
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Small shares, and the default idle timeout: only the shares keep the door open."""
    yield from _serve(
        tmp_path_factory,
        "connections-shared",
        REFEREE_CLIENT_CONNECTIONS=str(SHARE),
        REFEREE_EVENTS_PER_CLIENT=str(STREAMS_EACH),
    )


@pytest.fixture(scope="module")
@starts_servers
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A one-second idle timeout, far below the streams' keepalive interval (15 s)."""
    yield from _serve(
        tmp_path_factory, "connections-impatient", REFEREE_IDLE_TIMEOUT=str(IDLE_TIMEOUT)
    )


def connect(url: str, source: str = STRANGER) -> socket.socket:
    """A TCP connection to the server at `url` from the loopback address `source`."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect((where.hostname, where.port))
    return sock


def send(url: str, data: bytes) -> socket.socket:
    """A connection from the stranger that has sent `data`, or tried to: the server
    may have closed it already."""
    sock = connect(url)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(data)
    return sock


def follow(url: str, game_id: str) -> socket.socket:
    return send(url, f"GET /v1/games/{game_id}/events HTTP/1.1\r\nHost: referee\r\n\r\n".encode())


def half_a_request(url: str) -> socket.socket:
    return send(url, b"POST /v1/games HTTP/1.1\r\nHost: referee\r\nContent-Le")


def read_head(sock: socket.socket) -> tuple[int, dict[str, str], bytes] | None:
    """The answer's status, headers and what came after them; None if the server closed."""
    sock.settimeout(PATIENCE)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
    except ConnectionResetError:
        return None
    head, _, rest = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status.split()[1]), {k.lower(): v for k, v in headers.items()}, rest


def read_body(sock: socket.socket, headers: dict[str, str], rest: bytes) -> bytes:
    body = rest
    while len(body) < int(headers["content-length"]):
        body += sock.recv(4096)
    return body


def closed(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (it has nothing else to say on it)."""
    sock.settimeout(0)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def left_open(socks: list[socket.socket], seconds: float) -> list[socket.socket]:
    """Those of `socks` the server has not closed after waiting up to `seconds` for it."""
    waiting = set(socks)
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        while waiting and time.monotonic() < deadline:
            for key, _ in selector.select(deadline - time.monotonic()):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if closed(sock):
                    waiting.discard(sock)
                    selector.unregister(sock)
    return [sock for sock in socks if sock in waiting]


def timed(action: str, started: float) -> None:
    assert time.monotonic() - started < 2.0, f"{action} took more than 2 s"


def play_a_game(client: Client) -> None:
    """Create a game and have a move decided, each within 2 s, as the issue asks."""
    started = time.monotonic()
    created = client.create("subdivision", 2)
    timed("creating a game", started)
    game_id, token = created["id"], created["seats"][0]["token"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
    started = time.monotonic()
    answer = client.move(game_id, token, {"move": legal[0]["move"]}, wait=5)
    assert answer.status_code == 201, answer.text
    assert answer.json()["submission"]["status"] == "accepted", answer.text
    timed("a move decided", started)


def test_one_clients_streams_and_half_requests_leave_others_served(shared: Service) -> None:
    honest = Client(shared.url)
    game_id = honest.create("subdivision", 2)["id"]
    held: list[socket.socket] = []
    try:
        streams = [follow(shared.url, game_id) for _ in range(150)]
        held += streams
        answers = [read_head(sock) for sock in streams]
        # Its share of connections was taken; the ones past it were told so, not reset.
        assert None not in answers
        statuses = sorted(answer[0] for answer in answers if answer is not None)
        assert statuses == [200] * STREAMS_EACH + [429] * (150 - STREAMS_EACH)
        following = []
        codes: list[str] = []
        for sock, answer in zip(streams, answers, strict=True):
            assert answer is not None
            _status, headers, rest = answer
            assert headers["x-content-type-options"] == "nosniff"
            if answer[0] == 200:
                following.append(sock)
                continue
            assert headers["content-type"] == "application/problem+json"
            assert int(headers["retry-after"]) > 0
            codes.append(json.loads(read_body(sock, headers, rest))["code"])
        assert sorted(codes) == sorted(
            ["too_many_streams"] * (SHARE - STREAMS_EACH) + ["too_many_requests"] * (150 - SHARE)
        )

        halves = [half_a_request(shared.url) for _ in range(300)]
        held += halves
        assert left_open(halves, PATIENCE) == []

        # Meanwhile another client is served at once.
        started = time.monotonic()
        assert requests.get(shared.url + "/v1/rules", timeout=PATIENCE).status_code == 200
        timed("GET /v1/rules", started)
        play_a_game(honest)
        # The stranger's streams go on: they were bounded, not cut.
        assert len(left_open(following, 0.5)) == STREAMS_EACH
    finally:
        for sock in held:
            sock.close()
    # Its connections closed, the stranger has its share back.
    deadline = time.monotonic() + PATIENCE
    while True:
        again = send(shared.url, b"GET /v1/rules HTTP/1.1\r\nHost: referee\r\n\r\n")
        answer = read_head(again)
        again.close()
        if answer is not None and answer[0] == 200:
            break
        assert time.monotonic() < deadline, "the stranger's share was never given back"
        time.sleep(0.2)


def test_silent_connections_are_closed_and_streams_are_not(impatient: Service) -> None:
    honest = Client(impatient.url)
    created = honest.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    stream = follow(impatient.url, game_id)
    halves = [half_a_request(impatient.url) for _ in range(5)]
    idle = connect(impatient.url)
    try:
        answer = read_head(stream)
        assert answer is not None and answer[0] == 200
        # Half a request, or nothing at all: closed soon after the idle timeout.
        assert left_open([*halves, idle], PATIENCE) == []
        # The stream has said nothing since its first event (the keepalive comes
        # every 15 s), for longer than the idle timeout: it is still open, and
        # hears the next move.
        assert not closed(stream)
        legal = honest.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
        moved = honest.move(game_id, token, {"move": legal[0]["move"]})
        assert moved.status_code == 201, moved.text
        stream.settimeout(PATIENCE)
        heard = answer[2]
        while b"id: 1\n" not in heard:
            chunk = stream.recv(4096)
            assert chunk, "the stream was closed"
            heard += chunk
    finally:
        for sock in (stream, idle, *halves):
            sock.close()


def test_clients_past_the_share_are_told_when_to_come_back_never_reset(shared: Service) -> None:
    # More readers on one address than its share, each a new connection per request
    # (as a script with no connection pool): none is reset, each refused one is a
    # 429 that says when to come back, and most requests are served.
    readers, each = SHARE + 4, 40
    outcomes: Counter[str] = Counter()

    def read() -> None:
        for _ in range(each):
            try:
                answer = requests.get(
                    shared.url + "/v1/rules", headers={"Connection": "close"}, timeout=PATIENCE
                )
            except requests.ConnectionError:
                outcomes["reset"] += 1
                continue
            if answer.status_code == 429:
                assert int(answer.headers["Retry-After"]) > 0
                assert answer.json()["code"] == "too_many_requests"
            outcomes[str(answer.status_code)] += 1

    with ThreadPoolExecutor(readers) as pool:
        for done in [pool.submit(read) for _ in range(readers)]:
            done.result()
    assert outcomes["reset"] == 0, outcomes
    assert outcomes["200"] + outcomes["429"] == readers * each, outcomes
    assert outcomes["200"] > outcomes["429"], outcomes


def test_waitresss_own_answers_are_nosniff(shared: Service) -> None:
    # A request waitress refuses before the app sees it: a length that is no number.
    sock = connect(shared.url, "127.0.0.1")
    try:
        sock.sendall(b"POST /v1/games HTTP/1.1\r\nHost: referee\r\nContent-Length: x\r\n\r\n")
        answer = read_head(sock)
    finally:
        sock.close()
    assert answer is not None and answer[0] == 400
    assert answer[1]["x-content-type-options"] == "nosniff"
