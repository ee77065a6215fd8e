"""The games a deadline sweep works on: the running games with a deadline, and one under its lock.

When a game's turn runs out, and what follows, is the service's
(`referee.service.turn_clock`, applied by `referee.service.deadlines`).
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from referee.store.tables import Game, GameStatus


def with_deadlines(session: Session) -> list[Game]:
    """The running games that have a deadline."""
    query = select(Game).where(
        Game.status == GameStatus.ACTIVE, col(Game.deadline_seconds).is_not(None)
    )
    return list(session.exec(query))


def locked(session: Session, game_id: str, version: int) -> Game | None:
    """The game under its lock, if it is still at `version` and running."""
    game = session.exec(
        select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    ).first()
    if game is None or game.version != version or game.status != GameStatus.ACTIVE:
        return None
    return game
