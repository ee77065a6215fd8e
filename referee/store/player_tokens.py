"""Players' personal API tokens, kept by their SHA-256, listed without it, revocable."""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session, col, select, update

from referee.store.tables import Address, PlayerToken


def add(
    session: Session, address: str, name: str, scopes: list[str], token_hash: str, stamp: str
) -> PlayerToken:
    row = PlayerToken(
        address=address, name=name, scopes=scopes, token_hash=token_hash, created_at=stamp
    )
    session.add(row)
    session.flush()
    return row


def lock_owner(session: Session, address: str) -> None:
    """Hold the address's row until the transaction ends, so that tokens made at once
    are counted one after the other (SQLite's one writer does so anyway)."""
    session.exec(select(Address).where(col(Address.address) == address).with_for_update()).first()


def of_address(session: Session, address: str) -> Sequence[PlayerToken]:
    """The address's tokens still in force, oldest first."""
    query = (
        select(PlayerToken)
        .where(col(PlayerToken.address) == address, col(PlayerToken.revoked_at).is_(None))
        .order_by(col(PlayerToken.id))
    )
    return session.exec(query).all()


def by_hash(session: Session, token_hash: str) -> PlayerToken | None:
    """The token in force with this hash (read anew each time: a revoked token stops at once)."""
    query = select(PlayerToken).where(
        col(PlayerToken.token_hash) == token_hash, col(PlayerToken.revoked_at).is_(None)
    )
    return session.exec(query).first()


def revoke(session: Session, address: str, token_id: int, stamp: str) -> bool:
    """Revoke one of the address's tokens; False when it has no such token in force."""
    found = session.get(PlayerToken, token_id)
    if found is None or found.address != address or found.revoked_at is not None:
        return False
    found.revoked_at = stamp
    session.add(found)
    return True


def mark_used(session: Session, token_id: int, stamp: str, before: str) -> None:
    """Set the token's last use to `stamp` unless it was already set at or after `before`
    (racing processes then write it once)."""
    last = col(PlayerToken.last_used_at)
    session.execute(
        update(PlayerToken)
        .where(col(PlayerToken.id) == token_id, last.is_(None) | (last < before))
        .values(last_used_at=stamp)
    )
