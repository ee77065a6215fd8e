"""Players' finished games summed up (`PlayerTotals`), and the rated games whose players'
totals do not hold them yet.

What a game adds to its players' totals is the service's
(`referee.service.tallying`); this module reads and writes the rows.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlmodel import Session, col, select

from referee.store.tables import UNTALLIED_ROWS, PlayerTotals, RatedGame


def of_address(session: Session, address: str) -> PlayerTotals | None:
    return session.get(PlayerTotals, address)


def of_addresses(session: Session, addresses: Collection[str]) -> dict[str, PlayerTotals]:
    if not addresses:
        return {}
    query = select(PlayerTotals).where(col(PlayerTotals.address).in_(sorted(addresses)))
    return {row.address: row for row in session.exec(query)}


def untallied(session: Session, limit: int) -> list[RatedGame]:
    """Up to `limit` rated games whose players' totals do not hold them, in the order
    they were taken in (on the partial index that holds them alone)."""
    query = select(RatedGame).where(UNTALLIED_ROWS).order_by(col(RatedGame.seq)).limit(limit)
    return list(session.exec(query))


def every_totals(session: Session) -> list[PlayerTotals]:
    return list(session.exec(select(PlayerTotals)))
