"""Real servers on loopback for the webhook tests, and the referee stacks they run against.

`SlowServer` takes a connection, reads the request, then sends one header
byte every few seconds for as long as the client stays: a per-read timeout
never fires against it. `Receiver` answers every POST with a chosen status
(a redirect pointing elsewhere, an error, or 204 keeping what it got).
`Listener` is a bare TCP socket that only counts who connected.
"""

from __future__ import annotations

import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.mailboxes import DOMAIN, Mailbox
from tests.servers import free_port, redis_url
from tests.stacks import (
    QUIET_WORKER,
    REFEREE,
    TEST_API_KEY,
    Client,
    Process,
    Service,
    base_env,
    start_server,
)


class SlowServer:
    """Trickles one byte every `every` seconds to each connection until the client leaves."""

    def __init__(self, every: float = 2.0) -> None:
        self.every = every
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.socket.getsockname()[1])
        self.lock = threading.Lock()
        self.accepted: list[float] = []
        self.left: list[float] = []
        self.open = 0
        self.held = threading.Event()
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def holding(self) -> bool:
        with self.lock:
            return self.open > 0

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with self.lock:
                self.accepted.append(time.time())
                self.open += 1
            threading.Thread(target=self.trickle, args=(connection,), daemon=True).start()

    def trickle(self, connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)
            self.held.set()
            while not self.stop.is_set():
                readable, _, _ = select.select([connection], [], [], self.every)
                try:
                    if readable and not connection.recv(65536):
                        break  # the client gave up
                    connection.sendall(b"H")
                except OSError:
                    break
        with self.lock:
            self.open -= 1
            self.left.append(time.time())

    def close(self) -> None:
        self.stop.set()
        self.socket.close()


class Receiver:
    """Answers each POST with `status` (a 3xx points at `location`); keeps the 2xx ones."""

    def __init__(self, status: int = 204, location: str = "") -> None:
        self.status = status
        self.location = location
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.answered = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.answered += 1
                if 200 <= receiver.status < 300:
                    receiver.received.append((dict(self.headers), body))
                self.send_response(receiver.status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()


class Listener:
    """A TCP port on 127.0.0.1 that nobody should reach: `reached()` says if anyone did."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.socket.setblocking(False)
        self.port = int(self.socket.getsockname()[1])

    def reached(self) -> bool:
        # The kernel completes a handshake without accept(): anything queued is a visit.
        try:
            connection, _ = self.socket.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.socket.close()


@dataclass
class Stack:
    service: Service
    mailbox: Mailbox
    client: Client

    def game(self, emails: bool = False) -> tuple[str, list[str], list[str]]:
        """A Subdivision game for two: its id, tokens and (with `emails`) the seats' mail."""
        tag = uuid.uuid4().hex[:6]
        addresses = [f"{tag}{side}@players.test" for side in "ab"] if emails else []
        players = [
            {"name": f"p{n}", **({"email": addresses[n]} if emails else {})} for n in range(2)
        ]
        answer = self.client.post("/v1/games", {"game": "subdivision", "players": players})
        assert answer.status_code == 201, answer.text
        created = answer.json()
        return created["id"], [seat["token"] for seat in created["seats"]], addresses

    def play_one(self, game_id: str, token: str) -> None:
        legal = self.client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
        answer = self.client.move(game_id, token, {"move": legal[0]["move"]}, wait=30)
        assert answer.status_code == 201, answer.text

    def hook(self, game_id: str, token: str, url: str) -> Any:
        return self.client.http.put(
            f"{self.client.url}/v1/games/{game_id}/webhook",
            json={"url": url},
            headers=self.client.auth(token),
            timeout=60,
        )

    def health(self, game_id: str, token: str) -> dict[str, Any]:
        answer = self.client.get(f"/v1/games/{game_id}/webhook", token)
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found


def settings_env(database: str, smtp_port: int, **extra: str) -> dict[str, str]:
    return base_env(
        DATABASE_URL=database,
        REFEREE_SWEEP_EVERY="1",
        REFEREE_SWEEP_AFTER="2",
        SMTP_URL=f"smtp://127.0.0.1:{smtp_port}",
        REFEREE_MAIL_DOMAIN=DOMAIN,
        REFEREE_SECRET=uuid.uuid4().hex,
        REFEREE_MAIL_BACKOFF="2",
        REFEREE_MAIL_BACKOFF_MAX="3",
        REFEREE_MAIL_LEASE="60",
        REFEREE_WEBHOOK_DEADLINE="15",
        REFEREE_WEBHOOK_MAX_FAILURES="3",
        # The tests' client is trusted: its games mail seats and show every token.
        REFEREE_API_KEY=TEST_API_KEY,
        **extra,
    )


@contextmanager
def embedded_stack(tmp: Path, **extra: str) -> Iterator[Stack]:
    """`referee serve` alone (SQLite, tasks in-process, its own delivery threads)."""
    mailbox = Mailbox(free_port())
    mailbox.start()
    env = settings_env(f"sqlite:///{tmp / 'referee.sqlite3'}", mailbox.port, **extra)
    url, server = start_server(env, tmp)
    service = Service(url, env["DATABASE_URL"], env, tmp, server)
    try:
        yield Stack(service, mailbox, Client(url))
    finally:
        service.stop()
        mailbox.stop()


@contextmanager
def worker_stack(
    database: str, tmp: Path, deliver_env: dict[str, str] | None = None, **extra: str
) -> Iterator[Stack]:
    """`referee serve`, a worker that decides and a worker that delivers (two processes),
    on PostgreSQL and Redis; `deliver_env` overrides settings of the delivering one."""
    mailbox = Mailbox(free_port())
    mailbox.start()
    env = settings_env(
        database,
        mailbox.port,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"sec-{uuid.uuid4().hex[:8]}",
        **extra,
    )
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    for role, worker_env in (("decide", env), ("deliver", {**env, **(deliver_env or {})})):
        name = f"{role}-{uuid.uuid4().hex[:6]}@%h"
        args = [REFEREE, "worker", "--role", role, "--concurrency", "2", "-l", "INFO", "-n", name]
        log = tmp / f"{role}.log"
        service.workers.append(Process([*args, *QUIET_WORKER], worker_env, log).start())
    for worker in service.workers:
        worker.wait_ready()
    try:
        yield Stack(service, mailbox, Client(url))
    finally:
        service.stop()
        mailbox.stop()


def wait_until(check: Any, seconds: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds} s for {what or check}")
        time.sleep(0.1)
