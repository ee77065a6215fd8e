"""Ratings as the store holds them, read: a player's skill per game, its history, and a
game's players by skill (the rows `Rating` and `RatingChange`; the rating job writes them).

A game's players are ordered by `mu` (the shown rating grows with it), ties by their
name's key (`Address.name_key`), so that a page's cursor names a player by what anyone
may see of it, never by its address. Both reads walk the indexes on `rating(game, mu)`
and `rating_change(address, game, seq)`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import and_, or_
from sqlmodel import Session, col, func, select

from referee.store.tables import Address, Rating, RatingChange


def of_player(session: Session, address: str) -> list[Rating]:
    """The player's skill at every game it was rated in, by game."""
    query = select(Rating).where(Rating.address == address).order_by(col(Rating.game))
    return list(session.exec(query))


def of_players(session: Session, addresses: Collection[str], game: str) -> dict[str, Rating]:
    """The skills at `game` of those of `addresses` that were rated in it."""
    if not addresses:
        return {}
    query = select(Rating).where(col(Rating.address).in_(sorted(addresses)), Rating.game == game)
    return {rating.address: rating for rating in session.exec(query)}


@dataclass(frozen=True, slots=True)
class Moved:
    """A player's skill after one change: when, and the figures it was left with."""

    at: str
    mu: float
    sigma: float


def history(session: Session, address: str, game: str, most: int) -> list[Moved]:
    """The player's last `most` changes at `game`, oldest first (the figures a chart
    draws alone, not whole rows: a page reads hundreds)."""
    query = (
        select(RatingChange.at, RatingChange.mu_after, RatingChange.sigma_after)
        .where(RatingChange.address == address, RatingChange.game == game)
        .order_by(col(RatingChange.seq).desc())
        .limit(most)
    )
    return [Moved(*row) for row in reversed(session.exec(query).all())]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A player's row of a game's list: its skill, its public name and that name's key."""

    rating: Rating
    name: str
    key: str


def ranked(
    session: Session, game: str, after: tuple[float, str] | None, limit: int
) -> list[Ranked]:
    """The players rated at `game` with a public name, highest `mu` first, ties by name
    key; those after `after` (the `mu` and name key of the last row of the page before)."""
    query = (
        select(Rating, Address.public_name, Address.name_key)
        .join(Address, col(Address.address) == col(Rating.address))
        .where(Rating.game == game, col(Address.name_key).is_not(None))
    )
    if after is not None:
        mu, key = after
        query = query.where(
            or_(col(Rating.mu) < mu, and_(col(Rating.mu) == mu, col(Address.name_key) > key))
        )
    query = query.order_by(col(Rating.mu).desc(), col(Address.name_key)).limit(limit)
    return [
        Ranked(rating, name or "", key or "")
        for rating, name, key in session.exec(query)
        if name is not None and key is not None
    ]


def above(session: Session, game: str, mu: float, key: str) -> tuple[int, int]:
    """Of `game`'s players, how many have a higher `mu`, and how many have this `mu`
    and come before the name key `key` (a page starting there follows them)."""
    higher = select(func.count()).where(Rating.game == game, col(Rating.mu) > mu)
    tied = (
        select(func.count())
        .select_from(Rating)
        .join(Address, col(Address.address) == col(Rating.address))
        .where(Rating.game == game, col(Rating.mu) == mu, col(Address.name_key) < key)
    )
    return session.exec(higher).one(), session.exec(tied).one()
