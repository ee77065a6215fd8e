"""A relay that trickles its answer cannot make two workers send one mail.

The relay here speaks SMTP over TCP and takes the envelope at once, then
answers the message itself one byte a second: no read of the worker's ever
waits the per-read timeout, and the answer takes far longer than a
delivery's lease. Two real workers share the deliveries. The send's own
deadline (half the lease) cuts the exchange before the lease runs out, so
the other worker never claims the row while the first is still sending.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
import pytest

from tests.mailboxes import mail_env
from tests.servers import free_port
from tests.stacks import Client, Service, start_server
from tests.tiers import starts_servers

LEASE = 8.0
DEADLINE = LEASE / 2
# Far longer than the lease, one byte a second.
SLOW_ANSWER = b"250 2.0.0 Ok: queued as " + b"0123456789" * 4 + b"\r\n"


@dataclass
class Exchange:
    """One connection's message: when its data was in, and when the sender went away."""

    message_id: str
    received_at: float
    closed_at: float | None = None


@dataclass
class TricklingRelay:
    """An SMTP server taking every envelope at once and trickling its answer to DATA."""

    port: int = field(default_factory=free_port)
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> TricklingRelay:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            reader = conn.makefile("rb")
            conn.sendall(b"220 relay\r\n")
            while not self.stopping.is_set():
                line = reader.readline()
                if not line:
                    return
                verb = line[:4].upper()
                if verb == b"DATA":
                    conn.sendall(b"354 go on\r\n")
                    self._message(conn, reader)
                elif verb == b"QUIT":
                    conn.sendall(b"221 bye\r\n")
                    return
                else:
                    conn.sendall(b"250 ok\r\n")

    def _message(self, conn: socket.socket, reader: object) -> None:
        message_id = ""
        assert hasattr(reader, "readline")
        while (line := reader.readline()) not in (b".\r\n", b""):
            if line.lower().startswith(b"message-id:"):
                message_id = line.split(b":", 1)[1].strip().decode()
        exchange = Exchange(message_id, time.monotonic())
        with self.lock:
            self.exchanges.append(exchange)
        try:
            for byte in SLOW_ANSWER:
                conn.sendall(bytes([byte]))
                time.sleep(1)
                if _gone(conn):
                    break
        finally:
            exchange.closed_at = time.monotonic()


def _gone(conn: socket.socket) -> bool:
    """Whether the sender closed its side (a read finds the end, or a reset)."""
    conn.setblocking(False)
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        conn.setblocking(True)


@pytest.fixture(scope="module")
@starts_servers
def relay() -> Iterator[TricklingRelay]:
    found = TricklingRelay().start()
    yield found
    found.stop()


@pytest.fixture(scope="module")
@starts_servers
def stack(
    pg_database: str, relay: TricklingRelay, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    """`referee serve` and two workers, mailing through the trickling relay."""
    tmp = tmp_path_factory.mktemp("trickle")
    env = mail_env(pg_database, relay.port)
    env.update(
        REFEREE_MAIL_LEASE=f"{LEASE:g}",
        REFEREE_WEBHOOK_DEADLINE="3",
        # A failed send waits long: within this test, each mail is tried once.
        REFEREE_MAIL_BACKOFF="120",
        REFEREE_MAIL_BACKOFF_MAX="120",
        REFEREE_QUEUE=f"referee-trickle-{uuid.uuid4().hex[:8]}",
    )
    url, server = start_server(env, tmp)
    service = Service(url, pg_database, env, tmp, server)
    service.start_worker()
    service.start_worker()
    yield service
    service.stop()


def test_a_trickling_answer_is_cut_before_the_lease_and_sent_by_no_second_worker(
    stack: Service, relay: TricklingRelay
) -> None:
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": "ann.trickle@players.test"}, {"name": "Bob"}],
    }
    answer = Client(stack.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    game_id = answer.json()["id"]
    deadline = time.monotonic() + 60
    while not relay.exchanges:
        assert time.monotonic() < deadline, "no mail reached the relay"
        time.sleep(0.1)
    # Three leases: time enough for a second worker to claim a row held too long.
    time.sleep(3 * LEASE)
    with relay.lock:
        exchanges = list(relay.exchanges)
    # Every message once, each exchange cut by its sender within the deadline.
    ids = [exchange.message_id for exchange in exchanges]
    assert len(ids) == len(set(ids)), ids
    for exchange in exchanges:
        assert exchange.closed_at is not None, "a sender waited past three leases"
        assert exchange.closed_at - exchange.received_at < LEASE - 1, exchange
    with psycopg.connect(stack.database_url) as conn:
        found = conn.execute(
            "SELECT d.status, d.attempts, d.error FROM delivery d"
            " JOIN outbox o ON o.id = d.notice_id WHERE o.game_id = %s AND d.channel = 'mail'",
            (game_id,),
        ).fetchall()
    assert found and all(status == "pending" and tries == 1 for status, tries, _ in found), found
    assert all(f"more than {DEADLINE:g} s" in str(error) for _, _, error in found), found
