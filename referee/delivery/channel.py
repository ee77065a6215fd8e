"""What a delivery channel is: whom it can reach, and how it sends one notice.

A notice (an `outbox` row) gets a `delivery` row for every channel that
reaches its seat when it is written (`referee.store.notices`); each
channel's rows are claimed, sent, retried and given up on their own
(`referee.store.delivery`, driven by `referee.service.delivering`). A channel only
says who it reaches, when a due delivery may be claimed, and how one
notice goes out; the notice's content is built once, by the caller, and
each channel renders it its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from typing import Protocol

import sqlalchemy as sa

from referee.settings import Settings
from referee.store.db import Database
from referee.store.delivery import Claimed


@dataclass(frozen=True, slots=True)
class Consent:
    """What a seat's address said about the referee's mail, as a message needs it.

    `ask`: the address has not accepted, and this is its one invitation
    asking it to (nothing of the game but its name and size). `link`: the
    seat's personal link, in the first full mail that reaches the seat.
    """

    ask: bool
    accept_token: str
    stop_token: str
    link: str | None = None


class Content(Protocol):
    """A notice built once (`referee.delivery.compose.build`), as every channel renders it."""

    @property
    def message_id(self) -> str:
        """Stable for a notice: every attempt on every channel carries the same id."""

    @property
    def talk_seen(self) -> tuple[tuple[str, int, int], ...]:
        """The seats' messages its mail shows, as (game, seat, latest number): seen by
        those seats once the full mail went out (`referee.delivery.talk_lines`)."""

    def json(self) -> bytes:
        """The notice as JSON (what a webhook receives)."""

    def mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        """The notice as a mail to `address`; `thread_root` is the Message-ID its thread
        refers to (None: this mail starts the thread)."""


# Builds the content of notices when a channel needs it (once per notice): one
# notice's own, or several of one seat and game told as one message.
Build = Callable[[Sequence[Claimed]], Content]


@dataclass(frozen=True, slots=True)
class Sent:
    """The notice went out. `follow_up` records what follows from that (the seat's
    personal link went out, its webhook is healthy); it runs as the delivery is marked."""

    follow_up: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Skipped:
    """The notice had nowhere to go on this channel, and why: nothing more is tried."""

    reason: str


@dataclass(frozen=True, slots=True)
class Later:
    """Not now: the notice waits until `until` (no attempt counts), and why."""

    until: datetime
    reason: str


Outcome = Sent | Skipped | Later


class Sender(Protocol):
    """A channel's means of sending during one delivery pass (an SMTP connection, ...)."""

    def send(self, jobs: Sequence[Claimed], build: Build, moment: datetime) -> list[Outcome]:
        """Send notices to one seat, as one message where the channel merges them
        (one notice otherwise), at `moment`; an outcome per notice, in order. Raises
        when the message was not taken (each is tried again later)."""

    def failed(self, job: Claimed, error: str, moment: datetime) -> float | None:
        """After a failed send: seconds until the delivery is tried again, or None
        when the channel settled it itself (a webhook switched off)."""

    def close(self) -> None:
        """Let go of any connection."""


class Channel(Protocol):
    """One way a notice reaches a seat. Adding one is a module and a line in
    `referee.delivery.CHANNELS`: no new columns, no new task."""

    @property
    def name(self) -> str:
        """The name its `delivery` rows carry."""

    @property
    def threads(self) -> int:
        """Senders one pass runs at once. Above 1, a seat's deliveries go one at a time
        and in order, and after a failure the seat's others wait for the next pass."""

    @property
    def merges(self) -> bool:
        """Whether a seat's notices of one game waiting together go out as one message."""

    def reaches(self, seat: sa.Table) -> sa.ColumnElement[bool]:
        """Whom it can reach: a condition on a row of the `seat` table."""

    def carries(self, kind: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        """Which notices it carries at all: a condition on a notice's kind."""

    def ready(self, seat: sa.Table, at: str) -> sa.ColumnElement[bool]:
        """Whether a due delivery to `seat` may be claimed at `at` (a seat in backoff may not)."""

    def sender(self, db: Database, settings: Settings, secret: bytes) -> Sender:
        """What sends for one pass; closed at its end."""


def backoff(settings: Settings, attempts: int) -> float:
    """Seconds before trying again after `attempts` failures in a row: `REFEREE_MAIL_BACKOFF`,
    doubling, at most `REFEREE_MAIL_BACKOFF_MAX`."""
    doubled = settings.mail_backoff * 2 ** max(attempts - 1, 0)
    return float(min(doubled, settings.mail_backoff_max))
