"""The jobs the queue's tasks name, as use cases of the service.

A worker registers each on its Celery app under its task name
(`workers.tasks`); in the embedded default the queue runs them in the
process that enqueues them, and delivery on its own threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from referee.queue import (
    BOT,
    BOT_SWEEP,
    DEADLINES,
    DECIDE,
    DELIVER,
    DIGESTS,
    NOOP,
    RATINGS,
    SEEKS,
    SIGN_IN,
    SWEEP,
    TRIM,
)
from referee.service.bots import play_bots, sweep_bots
from referee.service.deadlines import sweep_deadlines
from referee.service.deciding import decide, sweep_pending
from referee.service.delivering import deliver
from referee.service.digests import sweep_digests
from referee.service.rating import rate_finished
from referee.service.seek_telling import sweep_seek_news
from referee.service.seeks import expire_seeks
from referee.service.signing_in import request_sign_in
from referee.service.standing_seeks import top_up
from referee.service.talk_mailing import sweep_message_mail
from referee.service.trimming import trim

if TYPE_CHECKING:
    from referee.service import Referee

Job = Callable[..., Any]


def _decide(referee: Referee, submission_id: str) -> None:
    decide(referee, submission_id)


def _deadlines(referee: Referee, at: str | None = None) -> dict[str, list[str]]:
    """Reminders and timeouts due at `at` (ISO 8601; default: now)."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    swept = sweep_deadlines(referee, moment)
    return {"reminded": swept.reminded, "timed_out": swept.timed_out}


def _digests(referee: Referee, at: str | None = None) -> int:
    """The digests due in the hour of `at` (ISO 8601; default: now), the daily mails of
    new open games due then, and the mails of messages seats have not seen for an hour;
    how many of them all were written."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    written = sweep_digests(referee, moment) + sweep_seek_news(referee, moment)
    return written + sweep_message_mail(referee, moment)


def _seeks(referee: Referee, at: str | None = None) -> dict[str, list[str]]:
    """Open games whose time ran out at `at` (ISO 8601; default: now) expire, then
    standing seeks are topped up: the ids of those expired and of those posted."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    expired = expire_seeks(referee, moment)
    return {"expired": expired, "posted": top_up(referee, moment)}


def _trim(referee: Referee, at: str | None = None) -> dict[str, int]:
    """What is older than REFEREE_KEEP_DAYS at `at` (ISO 8601; default: now) is dropped:
    how many games' cached states, deliveries and notices."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    return asdict(trim(referee, moment))


def _noop(_referee: Referee, *_args: object) -> None:
    """Does nothing: the benchmark's floor enqueues it."""


JOBS: dict[str, Job] = {
    DECIDE: _decide,
    SWEEP: sweep_pending,
    DEADLINES: _deadlines,
    DIGESTS: _digests,
    SEEKS: _seeks,
    RATINGS: rate_finished,
    TRIM: _trim,
    NOOP: _noop,
    DELIVER: deliver,
    SIGN_IN: request_sign_in,
    BOT: play_bots,
    BOT_SWEEP: sweep_bots,
}
