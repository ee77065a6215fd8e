"""Recording submissions: every move from every source enters the referee here.

Every source of moves goes through the service's `record_move`
(`referee.service.submitting`), which calls `record` to write one pending
submission with its source and the version its seat saw; nothing else
writes a submission.
"""

from __future__ import annotations

import hashlib

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from referee.engine import JSON
from referee.record import canonical_json
from referee.store.clock import now
from referee.store.creation import new_ordered_id
from referee.store.tables import PENDING_ROWS, Source, Submission, SubmissionStatus, core_table

_SUBMISSION = core_table(Submission)
# A retry with the same Idempotency-Key may race the first request: the
# unique key lets one row in and the other finds it, without an error that
# would roll back the rest of the caller's transaction.
# The id comes back only from a row that went in (the driver's rowcount does not tell).
_INSERT = {
    "postgresql": postgresql.insert(_SUBMISSION)
    .on_conflict_do_nothing()
    .returning(_SUBMISSION.c.id),
    "sqlite": sqlite.insert(_SUBMISSION).on_conflict_do_nothing().returning(_SUBMISSION.c.id),
}


def request_hash(move: JSON, expected_version: int | None) -> str:
    """What an idempotent retry must repeat exactly: the canonical move and expected version."""
    body = {"move": move, "expected_version": expected_version}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def record(
    session: Session,
    game_id: str,
    seat: int,
    move: JSON,
    *,
    source: Source,
    seen_version: int,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
    submission_id: str | None = None,
) -> tuple[Submission, bool]:
    """Record a pending submission (by `submission_id`, or a new id); `(earlier, False)`
    when its key was used already.

    The caller looks for an earlier submission with the key first (the
    service does, once); a retry that races in between finds the first one
    here. `move` is the move's JSON form, already parsed by the game's rules.
    `expected_version`, when given, must still be the game's version when
    the move is decided. The caller commits.
    """
    submission = Submission(
        id=submission_id or new_ordered_id(),
        game_id=game_id,
        seat=seat,
        move=move,
        expected_version=expected_version,
        seen_version=seen_version,
        idempotency_key=idempotency_key,
        request_hash=request_hash(move, expected_version),
        status=SubmissionStatus.PENDING,
        created_at=now(),
        source=source,
    )
    # A Core INSERT: the ORM's unit of work costs more than the statement here.
    connection = session.connection()
    inserted = connection.execute(_INSERT[connection.dialect.name], submission.model_dump())
    if inserted.first() is None:
        earlier = find_by_key(session, game_id, seat, idempotency_key or "")
        assert earlier is not None, "only an idempotency key can collide"
        return earlier, False
    return submission, True


def find_by_key(session: Session, game_id: str, seat: int, key: str) -> Submission | None:
    return session.exec(
        select(Submission).where(
            Submission.game_id == game_id,
            Submission.seat == seat,
            Submission.idempotency_key == key,
        )
    ).first()


def pending_before(session: Session, before: str, limit: int = 500) -> list[str]:
    """Submissions still pending that were made before `before` (for the sweep)."""
    return list(
        session.exec(
            select(Submission.id)
            .where(PENDING_ROWS, Submission.created_at < before)
            .order_by(col(Submission.created_at))
            .limit(limit)
        )
    )
