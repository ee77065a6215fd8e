"""Whom the referee can tell anything: a seat some channel reaches (`referee.delivery.reachable`).

News for any other seat is not written. A seat that was given a mail
address but that no channel reaches now (its mail bounced too often and it
has no webhook) is unreachable: its turns still run out on the game's
deadline, and the other players are shown that it is unreachable.
"""

from __future__ import annotations

from sqlmodel import Session

from referee.delivery import reachable
from referee.store import decision_rows, unreached_seats
from referee.store.decision_rows import Reach


def reach(session: Session, game_id: str) -> Reach:
    """How many seats the game has, which of them news can reach, and which a bot plays."""
    return decision_rows.reach(session, game_id, reachable)


def unreachable_seats(session: Session, game_id: str) -> frozenset[int]:
    """The game's seats that have a mail address the referee no longer reaches."""
    return unreached_seats.unreachable_seats(session, game_id, reachable)
