"""The rematch of a finished game: which seats accepted, and the claim on the new game."""

from __future__ import annotations

from sqlmodel import Session, select

from referee.store.tables import Game, RematchAcceptance, RematchClaim


def accepted(session: Session, game_id: str) -> tuple[int, ...]:
    """The seats that accepted a rematch of the game, in seat order."""
    query = select(RematchAcceptance.seat).where(RematchAcceptance.game_id == game_id)
    return tuple(sorted(session.exec(query)))


def rematch_id(session: Session, game_id: str) -> str | None:
    """The id claimed for the game's rematch, if every seat accepted one."""
    claim = session.get(RematchClaim, game_id)
    return None if claim is None else claim.rematch_id


def locked(session: Session, game_id: str) -> Game | None:
    """The game under its lock, so that the seats' acceptances are counted one at a time."""
    return session.exec(select(Game).where(Game.id == game_id).with_for_update()).first()


def accept(session: Session, game_id: str, seat: int, stamp: str) -> None:
    """Record that `seat` accepts; accepting again changes nothing."""
    if session.get(RematchAcceptance, (game_id, seat)) is None:
        session.add(RematchAcceptance(game_id=game_id, seat=seat, accepted_at=stamp))
        session.flush()


def claim(session: Session, game_id: str, new_id: str, stamp: str) -> None:
    """Name the rematch's id, under the game's lock (`locked`) and only once."""
    session.add(RematchClaim(game_id=game_id, rematch_id=new_id, claimed_at=stamp))
    session.flush()


def unclaim(session: Session, game_id: str) -> None:
    """Drop a claim whose game could not be made, so that the next acceptance tries again."""
    found = session.get(RematchClaim, game_id)
    if found is not None:
        session.delete(found)
