"""The rematch of a finished game: which seats accepted, and the claim on the new game."""

from __future__ import annotations

from collections.abc import Collection

from sqlmodel import Session, col, select

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


def standing_keys(session: Session, game_ids: Collection[str]) -> dict[str, str]:
    """Where each game's rematch stands, as a short text that changes when a seat accepts
    or the rematch starts (its game made): `0,2` (seats 0 and 2 accepted), `0,1,2;<id>`
    (begun). Two statements however many games; a game nobody accepted is `""`."""
    wanted = list(game_ids)
    if not wanted:
        return {}
    seats: dict[str, list[int]] = {game_id: [] for game_id in wanted}
    rows = session.exec(
        select(RematchAcceptance.game_id, RematchAcceptance.seat).where(
            col(RematchAcceptance.game_id).in_(wanted)
        )
    ).all()
    for game_id, seat in rows:
        seats[game_id].append(seat)
    begun = dict(
        session.exec(
            select(RematchClaim.game_id, RematchClaim.rematch_id)
            .join(Game, col(Game.id) == col(RematchClaim.rematch_id))
            .where(col(RematchClaim.game_id).in_(wanted))
        ).all()
    )
    return {
        game_id: ",".join(str(seat) for seat in sorted(found))
        + (f";{begun[game_id]}" if game_id in begun else "")
        for game_id, found in seats.items()
    }
