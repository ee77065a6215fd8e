"""The benchmark's floor: the least a move could cost, to measure the real path against.

`bench/service.py` compares submitting moves with this on the same server:
one row inserted in one transaction, and one no-op task enqueued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from referee.queue import NOOP
from referee.store import delivery

if TYPE_CHECKING:
    from referee.service import Referee


def floor_row(referee: Referee, game_id: str) -> int:
    """Insert one outbox row for the benchmark and enqueue a no-op; returns the row's id."""
    with referee.db.transaction() as session:
        row_id = delivery.bench_row(session, game_id)
    referee.queue.enqueue(NOOP, row_id)
    return row_id
