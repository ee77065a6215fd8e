"""The kept outcomes of checking a game's log (table `verification`), one per game and version.

A version's log never changes, so its check's outcome is kept and read
instead of worked out again (`referee.service.verification`). It is a
cache like the snapshots: dropping its rows changes no answer, only what
the next check costs. Only the latest version checked is kept for each game.
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from referee.store.clock import now
from referee.store.db import Database
from referee.store.tables import Game, Verification


def kept(session: Session, game: Game) -> Verification | None:
    """The outcome kept for the game at its version, if any."""
    return session.get(Verification, (game.id, game.version))


def keep(
    db: Database, game: Game, chain_valid: bool, replay_matches: bool, problems: list[str]
) -> None:
    """Keep the outcome for the game at its version, dropping those of earlier versions."""
    try:
        with db.transaction() as session:
            if session.get(Verification, (game.id, game.version)) is not None:
                return  # another request checked this version meanwhile
            session.execute(
                delete(Verification).where(
                    col(Verification.game_id) == game.id,
                    col(Verification.version) < game.version,
                )
            )
            session.add(
                Verification(
                    game_id=game.id,
                    version=game.version,
                    chain_valid=chain_valid,
                    replay_matches=replay_matches,
                    problems=problems,
                    checked_at=now(),
                )
            )
    except IntegrityError:
        pass  # the same row, written by a request that got there first
