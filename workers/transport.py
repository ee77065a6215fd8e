"""Where messages go: an SMTP server (`SMTP_URL`), `.eml` files, and webhooks.

Webhooks are posted by `referee.webhooks`, which checks where a URL leads.

`SMTP_URL` is `smtp://[user:password@]host[:port]` (`smtps://` for TLS from
the start, `smtp+starttls://` to upgrade); without it every message is
written as a `.eml` file to `REFEREE_MAIL_DIR` (default `./mail-out`),
which is the embedded default. Files are named by Message-ID, so writing a
message again replaces it instead of making a second one.
"""

from __future__ import annotations

import hashlib
import hmac
import smtplib
import time
from abc import ABC, abstractmethod
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

from referee import settings, webhooks

TIMEOUT = 20.0


class Transport(ABC):
    """Sends mail; may keep one SMTP connection across several messages."""

    @abstractmethod
    def send(self, mail: EmailMessage) -> None:
        """Hand one message over for delivery; raises when it was not taken."""

    def close(self) -> None:  # noqa: B027 (most transports hold no connection)
        """Let go of any connection."""


class FileTransport(Transport):
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def send(self, mail: EmailMessage) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(str(mail["Message-ID"]).encode()).hexdigest()[:32] + ".eml"
        partial = self.folder / (name + ".part")
        partial.write_bytes(bytes(mail))
        partial.replace(self.folder / name)


class SmtpTransport(Transport):
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "smtps"
        self.starttls = parts.scheme == "smtp+starttls"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (465 if self.tls else 25)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.connection: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        if self.connection is None:
            kind = smtplib.SMTP_SSL if self.tls else smtplib.SMTP
            connection = kind(self.host, self.port, timeout=TIMEOUT)
            if self.starttls:
                connection.starttls()
            if self.user is not None:
                connection.login(self.user, self.password or "")
            self.connection = connection
        return self.connection

    def send(self, mail: EmailMessage) -> None:
        try:
            refused = self._connect().send_message(mail)
        except (smtplib.SMTPException, OSError):
            self.close()
            raise
        if refused:
            raise smtplib.SMTPRecipientsRefused(refused)

    def close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.quit()
            except (smtplib.SMTPException, OSError):
                self.connection.close()
            self.connection = None


def transport() -> Transport:
    chosen = settings.active()
    if chosen.smtp_url:
        return SmtpTransport(chosen.smtp_url)
    return FileTransport(Path(chosen.mail_dir))


SIGNATURE_HEADER = "X-Referee-Signature"
TIMESTAMP_HEADER = "X-Referee-Timestamp"


def sign(key: str, timestamp: str, body: bytes) -> str:
    """`sha256=` and the hex HMAC-SHA256 of `timestamp.body`, keyed by the webhook secret."""
    digest = hmac.new(key.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def post_webhook(url: str, key: str, delivery: str, body: bytes) -> None:
    """POST one notification within `REFEREE_WEBHOOK_DEADLINE` in all; anything but a
    2xx answer raises (and is retried), a redirect included. The URL's address is
    checked again here (`referee.webhooks`): a name may resolve differently now."""
    chosen = settings.active()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "referee-webhook/1",
        "X-Referee-Delivery": delivery,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(key, timestamp, body),
    }
    webhooks.post(
        url,
        body,
        headers,
        allow_private=chosen.webhook_allow_private,
        seconds=chosen.webhook_deadline,
    )
