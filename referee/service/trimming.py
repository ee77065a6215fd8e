"""The trim sweep: what stays hot is today's work. Finished games keep their cached
states and submissions, and notices their delivery rows, for `REFEREE_KEEP_DAYS`;
then they go.

A cached state only saves time (`game_states.state_at` replays the log
without it); a decided submission of a finished game only answers a client
still asking about it (its move keeps its source, which the record tells);
and a delivery done with is only history. So dropping them changes no
answer about the game: a trimmed game's record, verification and replay are
what they were (`tests/service/test_trimming.py`). Moves, results, seeds
and the ratings' rows are never touched. Each run drops at
most `most` of each kind, so a first run on a large history spreads over
several sweeps instead of holding one long transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from referee.store import trims
from referee.store.clock import stamp

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Trimmed:
    games: int
    submissions: int
    deliveries: int
    notices: int


def trim(referee: Referee, moment: datetime, most: int = 500) -> Trimmed:
    """Drop what is older than `REFEREE_KEEP_DAYS` at `moment`, up to `most` of each."""
    before = stamp(moment - timedelta(days=referee.settings.keep_days))
    with referee.db.transaction() as session:
        games = trims.cached_finished(session, before, most)
        submissions = trims.drop_states(session, games)
        deliveries = trims.drop_done_deliveries(session, before, most)
        notices = trims.drop_bare_notices(session, before, most)
    return Trimmed(len(games), submissions, deliveries, notices)
