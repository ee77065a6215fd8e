"""Real SMTP for the mail tests: a mailbox server (aiosmtpd) the referee sends to,
and the referee's own `referee mail-in` listener the players reply to.

`mail_stack` is the stack of tests/stacks.py (`referee serve`, a worker)
with its worker sending over SMTP to the mailbox, and `mail-in` beside it.
"""

from __future__ import annotations

import asyncio
import smtplib
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.servers import free_port, redis_url
from tests.stacks import (
    ALL_ROLES,
    REFEREE,
    TEST_API_KEY,
    Process,
    Service,
    base_env,
    start_server,
)

DOMAIN = "referee.test"


@dataclass
class Received:
    raw: bytes
    mail: EmailMessage
    rcpt: list[str]
    # The envelope sender (MAIL FROM), where reports of its delivery go back.
    sender: str = ""


class Mailbox:
    """The players' mail server: keeps every message it accepts, can be down or slow."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.messages: list[Received] = []
        self.lock = threading.Lock()
        self.stall = 0.0
        self.stalled = threading.Event()
        self.controller: Controller | None = None
        self.started = False

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.stall:
            self.stalled.set()
            await asyncio.sleep(self.stall)
            # The client went away while we stalled: no 250 was given, so the
            # message is not ours to deliver.
            if server.transport is None or server.transport.is_closing():
                return "421 4.4.2 connection lost"
        raw = envelope.original_content or b""
        mail = BytesParser(policy=policy.default).parsebytes(raw)
        assert isinstance(mail, EmailMessage)
        with self.lock:
            sender = envelope.mail_from or ""
            self.messages.append(Received(raw, mail, list(envelope.rcpt_tos), sender))
        return "250 2.0.0 OK"

    def start(self) -> None:
        """Start it; on another port if its own was taken before the first start
        (started again after a stop, it comes back on the same port)."""
        for attempt in range(1 if self.started else 5):
            if attempt:
                self.port = free_port()
            self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
            try:
                self.controller.start()
            except OSError:
                self.controller = None
                continue
            self.started = True
            return
        raise AssertionError(f"the mailbox could not listen on 127.0.0.1:{self.port}")

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def to(self, address: str) -> list[Received]:
        # Mail domains are compared without case: the referee keeps them lower-cased.
        wanted = address.lower()
        with self.lock:
            return [m for m in self.messages if wanted in (r.lower() for r in m.rcpt)]

    def wait_for(self, address: str, count: int, seconds: float = 30) -> list[Received]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = self.to(address)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"{address}: {len(self.to(address))} mails, expected {count}")


@dataclass
class MailService:
    service: Service
    mailbox: Mailbox
    inbound_port: int
    inbound: Process
    players: list[str] = field(default_factory=list)

    def reply(self, to: str, message: EmailMessage | bytes, sender: str) -> None:
        """Send a reply to the referee's listener, as the player's mail program would."""
        with smtplib.SMTP("127.0.0.1", self.inbound_port, timeout=30) as client:
            if isinstance(message, EmailMessage):
                client.send_message(message, from_addr=sender, to_addrs=[to])
            else:
                client.sendmail(sender, [to], message)


def wait_port(port: int, proc: Process, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=2) as client:
                client.noop()
                return
        except OSError:
            if proc.proc is not None and proc.proc.poll() is not None:
                break
            time.sleep(0.1)
    raise AssertionError("the listener did not start:\n" + proc.output())


def start_mail_in(env: dict[str, str], log: Path) -> tuple[int, Process]:
    """`referee mail-in` on a free port; on another if the port was taken before it bound."""
    for _ in range(5):
        port = free_port()
        inbound = Process([REFEREE, "mail-in", "--port", str(port)], env, log).start()
        try:
            wait_port(port, inbound)
        except AssertionError:
            if "address already in use" in inbound.output().lower():
                continue
            raise
        return port, inbound
    raise AssertionError("mail-in found no free port:\n" + inbound.output())


def mail_env(database: str, smtp_port: int, **extra: str) -> dict[str, str]:
    return base_env(
        DATABASE_URL=database,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"referee-mail-{uuid.uuid4().hex[:8]}",
        REFEREE_SWEEP_EVERY="1",
        REFEREE_SWEEP_AFTER="2",
        SMTP_URL=f"smtp://127.0.0.1:{smtp_port}",
        REFEREE_MAIL_DOMAIN=DOMAIN,
        REFEREE_SECRET=uuid.uuid4().hex,
        REFEREE_MAIL_BACKOFF="0.3",
        REFEREE_MAIL_BACKOFF_MAX="1.5",
        REFEREE_MAIL_LEASE="4",
        # Below the lease, which a webhook post must not outlast.
        REFEREE_WEBHOOK_DEADLINE="3",
        REFEREE_MAIL_MAX_BYTES="2000000",
        # These tests are about playing by mail: their games come from a trusted client.
        REFEREE_API_KEY=TEST_API_KEY,
        **extra,
    )


@contextmanager
def mail_stack(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory, **extra: str
) -> Iterator[MailService]:
    """The stack of `mail_service`, with `extra` settings (e.g. for webhooks on loopback)."""
    tmp = tmp_path_factory.mktemp("mail")
    mailbox = Mailbox(free_port())
    mailbox.start()
    env = mail_env(pg_database, mailbox.port, **extra)
    url, server = start_server(env, tmp)
    service = Service(url, pg_database, env, tmp, server)
    # The worker starts while mail-in does: both take seconds on a loaded machine.
    worker = service.start_worker(wait=False)
    port, inbound = start_mail_in(env, tmp / "mail-in.log")
    worker.wait_ready(workers=ALL_ROLES)
    yield MailService(service, mailbox, port, inbound)
    service.stop(inbound)
    mailbox.stop()
