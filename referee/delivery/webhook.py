"""The webhook channel: seats with an active webhook, each notice POSTed as signed JSON.

Posts go from a few threads, one seat's in order, each bounded by
`REFEREE_WEBHOOK_DEADLINE` in all (`referee.webhooks`): a slow receiver
holds one thread for at most that long. A failure puts the seat into
backoff (its due deliveries are not claimed before `webhook_retry_at`) and
after `REFEREE_WEBHOOK_MAX_FAILURES` in a row switches the webhook off,
which skips the seat's waiting deliveries (`referee.store.seat_hooks`).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from referee.delivery.channel import Build, Outcome, Sent, Skipped, backoff
from referee.settings import Settings
from referee.store import keys, seat_hooks
from referee.store.db import Database
from referee.store.delivery import Claimed
from referee.store.tables import TOLD_TO_PLAYER
from referee.webhooks import post as post_checked

_log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Referee-Signature"
TIMESTAMP_HEADER = "X-Referee-Timestamp"


def sign(key: str, timestamp: str, body: bytes) -> str:
    """`sha256=` and the hex HMAC-SHA256 of `timestamp.body`, keyed by the webhook secret."""
    digest = hmac.new(key.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def post(settings: Settings, url: str, key: str, delivery: str, body: bytes) -> None:
    """POST one notification within `REFEREE_WEBHOOK_DEADLINE` in all; anything but a
    2xx answer raises (and is retried), a redirect included. The URL's address is
    checked again here (`referee.webhooks`): a name may resolve differently now."""
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "referee-webhook/1",
        "X-Referee-Delivery": delivery,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(key, timestamp, body),
    }
    post_checked(
        url,
        body,
        headers,
        allow_private=settings.webhook_allow_private,
        seconds=settings.webhook_deadline,
    )


class WebhookSender:
    """Posts one pass's notices; holds no connection, so threads share it."""

    def __init__(self, db: Database, settings: Settings, secret: bytes) -> None:
        self.db = db
        self.settings = settings
        self.secret = secret

    def send(self, jobs: Sequence[Claimed], build: Build, moment: datetime) -> list[Outcome]:
        # Never merged: one notice, one post.
        return [self._post(job, build) for job in jobs]

    def _post(self, job: Claimed, build: Build) -> Outcome:
        with self.db.reading() as session:
            health = seat_hooks.health(session, job.game_id, job.seat)
        if not health.active or health.url is None:
            # Dropped or switched off since the notice was written.
            return Skipped("the webhook was removed or switched off")
        key = keys.webhook_secret(self.secret, job.game_id, job.seat, health.generation)
        content = build([job])
        post(self.settings, health.url, key, content.message_id, content.json())
        return Sent(lambda: self.healthy(job))

    def healthy(self, job: Claimed) -> None:
        with self.db.transaction() as session:
            seat_hooks.succeeded(session.connection(), job.game_id, job.seat)

    def failed(self, job: Claimed, error: str, moment: datetime) -> float | None:
        """Count the failure against the seat; its backoff is the delivery's too."""
        chosen = self.settings
        with self.db.transaction() as session:
            failures = seat_hooks.health(session, job.game_id, job.seat).failures
            wait = backoff(chosen, failures + 1)
            off = seat_hooks.failed(
                session, job.game_id, job.seat, error, moment, wait, chosen.webhook_max_failures
            )
        _log.warning(
            "webhook of game %s seat %s failed (%s); %s",
            job.game_id,
            job.seat,
            error,
            "switched off" if off else f"again in {wait:.1f}s",
        )
        return None if off else wait

    def close(self) -> None:
        pass


class Webhook:
    """Seats with a webhook that is switched on, one seat's notices in order."""

    name = seat_hooks.CHANNEL
    threads = 8
    merges = False

    def reaches(self, seat: sa.Table) -> sa.ColumnElement[bool]:
        return seat.c.webhook_url.is_not(None) & seat.c.webhook_off_at.is_(None)

    def carries(self, kind: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        # A seat's webhook hears of its own game, not of its player's other games
        # (the digest) nor its sign-in links.
        return kind.not_in([told.value for told in TOLD_TO_PLAYER])

    def ready(self, seat: sa.Table, at: str) -> sa.ColumnElement[bool]:
        # Not while the seat waits out its backoff.
        return seat.c.webhook_retry_at.is_(None) | (seat.c.webhook_retry_at <= at)

    def sender(self, db: Database, settings: Settings, secret: bytes) -> WebhookSender:
        return WebhookSender(db, settings, secret)


WEBHOOK = Webhook()
