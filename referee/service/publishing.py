"""Publishing what a use case decided, once its transaction has committed, in one place.

Publishing before the commit could tell a waiting client of a move that a
rollback then took back; publishing in each caller wrote the same steps
four times. Each use case returns a `Published`, and `publish` sends it:
the decisions to whoever waits on them and to the games' followers, the
submissions still to decide and the games just finished (for their
ratings) to the queue, and a nudge to delivery when there is news to send.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from referee.queue import BOT, RATINGS
from referee.store.decision_rows import Decided
from referee.store.tables import Game

if TYPE_CHECKING:
    from referee.service import Referee

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class Published:
    """What a committed use case tells the rest of the referee."""

    # Decided submissions, each with its game.
    decided: list[tuple[Decided, str]] = field(default_factory=list)
    # Games that changed without a decision of a submission (a timeout, a new game).
    changed: list[str] = field(default_factory=list)
    # Submissions recorded and still to be decided.
    to_decide: list[str] = field(default_factory=list)
    # Whether notices were written that are due to be sent now.
    news: bool = False
    # Rematches every seat has accepted: the finished game and the id claimed
    # for the new one, which the use case starts once committed.
    rematches: list[tuple[Game, str]] = field(default_factory=list)
    # Games (and their versions) where a bot's seat is to act: each bot's move is
    # worked out on the bots' queue (`referee.service.bots`), never here.
    bots: list[tuple[str, int]] = field(default_factory=list)
    # Open games that told their players something (`referee.service.seek_telling`):
    # announced as a game's change is, so that the players' streams read them (a
    # seek's id, a uuid like a game's, names no game).
    seeks: list[str] = field(default_factory=list)
    # Games whose last move this committed: the ratings take them in on the worker
    # (`referee.service.rating`), never here.
    finished: list[str] = field(default_factory=list)


def publish(referee: Referee, what: Published) -> None:
    """Tell the waiting, the followers, the queue and delivery what `what` holds."""
    queue = referee.queue
    if what.decided:
        queue.announce_decided(
            [{**asdict(decided), "game_id": game_id} for decided, game_id in what.decided]
        )
    for game_id in [*what.changed, *what.seeks]:
        try:
            queue.announce_changed(game_id)
        except Exception:
            # Committed all the same: followers find the change at their next check.
            _log.exception("could not announce a change of %s", game_id)
    try:
        queue.enqueue_decisions(what.to_decide)
    except Exception:
        # The sweep enqueues them again once the broker is back.
        _log.exception("could not enqueue submissions %s", what.to_decide)
    for game_id, version in what.bots:
        try:
            queue.enqueue_apart(BOT, game_id, version, lane="bots")
        except Exception:
            # The bots' sweep enqueues it again once the broker is back.
            _log.exception("could not enqueue the bots of game %s", game_id)
    if what.finished:
        try:
            # One task takes in every finished game still to rate, in order.
            queue.enqueue_apart(RATINGS, lane="ratings")
        except Exception:
            # The ratings' sweep takes them in once the broker is back.
            _log.exception("could not enqueue the ratings of %s", what.finished)
    if what.news:
        # On the delivery queue, or the embedded default's delivery threads, never here.
        queue.deliver_soon()
