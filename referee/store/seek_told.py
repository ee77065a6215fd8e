"""What open games tell their players, read from the seeks themselves, and new public seeks.

Nothing is kept apart for it: a seek's rows say who it invited (told when
it was posted), who sat at it when it started, was withdrawn or expired
(told then), and when each happened. A player's stream, its digest and
the mails read the same rows (`referee.service.seek_telling`), so they
never disagree about what there was to tell.

- `seek_invited`: a private seek invited the address, at the seek's posting.
- `seek_started`: a seek the address sat at started, once its game exists (a
  start whose game failed to be made puts the seek back open, and told
  nothing); at the game's making, or at the join of one who took a bot's seat later.
- `seek_withdrawn`: its creator withdrew a seek the address sat at (the
  creator is not told what it did itself).
- `seek_expired`: a seek the address sat at expired unstarted.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Session, col, select

from referee.store.tables import (
    Address,
    AddressState,
    Game,
    Seek,
    SeekInvite,
    SeekPlayer,
    SeekStatus,
    TurnMail,
    core_table,
)

_SEEK = core_table(Seek)
_PLAYER = core_table(SeekPlayer)
_INVITE = core_table(SeekInvite)
_GAME = core_table(Game)
_ADDRESS = core_table(Address)


class SeekNews(StrEnum):
    """What a seek tells one of its players."""

    INVITED = "seek_invited"
    STARTED = "seek_started"
    WITHDRAWN = "seek_withdrawn"
    EXPIRED = "seek_expired"


@dataclass(frozen=True, slots=True)
class Told:
    """The latest a seek told one address: what, when, and the seek's public fields."""

    address: str
    seek_id: str
    game: str
    kind: SeekNews
    at: str
    # The game it started (seek_started only).
    game_id: str | None
    by_address: str


def told(
    session: Session,
    addresses: Collection[str],
    *,
    since: str | None = None,
    seek_ids: Collection[str] | None = None,
    game_ids: Collection[str] | None = None,
) -> list[Told]:
    """What the seeks told each of `addresses` (already normal), the latest per seek:
    only what happened after `since` (a stamp) when given, and only of `seek_ids` or
    the seeks that started `game_ids` when either is given. Two statements."""
    if not addresses:
        return []
    wanted = sorted(addresses)
    latest: dict[tuple[str, str], Told] = {}
    invited = _invited(session, wanted, since, seek_ids, game_ids)
    for found in [*invited, *_seated(session, wanted, since, seek_ids, game_ids)]:
        if since is not None and found.at <= since:
            continue
        key = (found.address, found.seek_id)
        if key not in latest or latest[key].at <= found.at:
            latest[key] = found
    return list(latest.values())


def _narrowed(
    seek_ids: Collection[str] | None, game_ids: Collection[str] | None
) -> sa.ColumnElement[bool]:
    either = []
    if seek_ids is not None:
        either.append(_SEEK.c.id.in_(sorted(seek_ids)))
    if game_ids is not None:
        either.append(_SEEK.c.game_id.in_(sorted(game_ids)))
    return sa.or_(*either) if either else sa.true()


def _invited(
    session: Session,
    addresses: list[str],
    since: str | None,
    seek_ids: Collection[str] | None,
    game_ids: Collection[str] | None,
) -> list[Told]:
    if seek_ids is None and game_ids is not None:
        # An invitation is no game's start.
        return []
    query = (
        sa.select(
            _INVITE.c.address, _SEEK.c.id, _SEEK.c.game, _SEEK.c.created_at, _SEEK.c.by_address
        )
        .select_from(_INVITE.join(_SEEK, _SEEK.c.id == _INVITE.c.seek_id))
        .where(_INVITE.c.address.in_(addresses), _SEEK.c.private, _narrowed(seek_ids, None))
    )
    if since is not None:
        query = query.where(_SEEK.c.created_at > since)
    return [
        Told(address, seek_id, game, SeekNews.INVITED, at, None, by)
        for address, seek_id, game, at, by in session.connection().execute(query)
    ]


def _seated(
    session: Session,
    addresses: list[str],
    since: str | None,
    seek_ids: Collection[str] | None,
    game_ids: Collection[str] | None,
) -> list[Told]:
    started = sa.and_(_SEEK.c.status == SeekStatus.STARTED, _GAME.c.id.is_not(None))
    withdrawn = sa.and_(
        _SEEK.c.status == SeekStatus.WITHDRAWN, _SEEK.c.by_address != _PLAYER.c.address
    )
    query = (
        sa.select(
            _PLAYER.c.address,
            _SEEK.c.id,
            _SEEK.c.game,
            _SEEK.c.status,
            _SEEK.c.ended_at,
            _SEEK.c.by_address,
            _SEEK.c.game_id,
            _GAME.c.created_at,
            _PLAYER.c.joined_at,
        )
        .select_from(
            _PLAYER.join(_SEEK, _SEEK.c.id == _PLAYER.c.seek_id).outerjoin(
                _GAME, _GAME.c.id == _SEEK.c.game_id
            )
        )
        .where(
            _PLAYER.c.address.in_(addresses),
            sa.or_(started, withdrawn, _SEEK.c.status == SeekStatus.EXPIRED),
            _narrowed(seek_ids, game_ids),
        )
    )
    if since is not None:
        # Wider than what is kept (`at` is worked out below): any of its times after `since`.
        query = query.where(
            sa.or_(
                _GAME.c.created_at > since, _SEEK.c.ended_at > since, _PLAYER.c.joined_at > since
            )
        )
    found = []
    for (
        address,
        seek_id,
        game,
        status,
        ended,
        by,
        game_id,
        made,
        joined,
    ) in session.connection().execute(query):
        if status == SeekStatus.STARTED:
            found.append(
                Told(address, seek_id, game, SeekNews.STARTED, max(made, joined), game_id, by)
            )
        else:
            kind = SeekNews.WITHDRAWN if status == SeekStatus.WITHDRAWN else SeekNews.EXPIRED
            found.append(Told(address, seek_id, game, kind, ended or "", None, by))
    return found


def new_public(session: Session, games: Collection[str], after: str, until: str) -> list[Seek]:
    """The public seeks of `games` posted after `after` and by `until` (stamps) and still
    open, oldest first."""
    if not games:
        return []
    query = (
        select(Seek)
        .where(
            col(Seek.game).in_(sorted(games)),
            col(Seek.status) == SeekStatus.OPEN,
            col(Seek.private).is_(False),
            col(Seek.created_at) > after,
            col(Seek.created_at) <= until,
        )
        .order_by(col(Seek.created_at), col(Seek.id))
    )
    return list(session.exec(query))


def _wants_news(dialect: str) -> sa.ColumnElement[bool]:
    """Whether an address's `seek_news` (a JSON list, NULL for none) names some game."""
    chosen = _ADDRESS.c.seek_news
    if dialect == "postgresql":
        length: sa.ColumnElement[int] = sa.func.jsonb_array_length(sa.cast(chosen, JSONB))
    else:
        length = sa.func.json_array_length(chosen)
    return chosen.is_not(None) & (length > 0)


@dataclass(frozen=True, slots=True)
class Wanting:
    """A player that wants news of new public seeks, and of which games."""

    address: str
    games: tuple[str, ...]
    # When its last such news was written (None: never).
    last: str | None


def news_due(session: Session, cut: str) -> list[Wanting]:
    """The players told of turns one mail at a time that chose games to hear of and had no
    news of them after `cut`, leaving out those the referee may not mail at all."""
    dialect = session.get_bind().dialect.name
    query = (
        sa.select(_ADDRESS.c.address, _ADDRESS.c.seek_news, _ADDRESS.c.seek_news_at)
        .where(
            _ADDRESS.c.turn_mail == TurnMail.EACH,
            _wants_news(dialect),
            _ADDRESS.c.state != AddressState.STOPPED,
            _ADDRESS.c.bounced_at.is_(None),
            _ADDRESS.c.seek_news_at.is_(None) | (_ADDRESS.c.seek_news_at <= cut),
        )
        .order_by(_ADDRESS.c.address)
    )
    return [
        Wanting(address, tuple(games or ()), last)
        for address, games, last in session.connection().execute(query)
    ]


def claim_news(session: Session, address: str, cut: str, at: str) -> bool:
    """Mark news written for `address` at `at`, unless some was written after `cut`: of two
    sweeps racing, one writes it."""
    claimed = session.connection().execute(
        sa.update(_ADDRESS)
        .where(
            _ADDRESS.c.address == address,
            _ADDRESS.c.seek_news_at.is_(None) | (_ADDRESS.c.seek_news_at <= cut),
        )
        .values(seek_news_at=at)
    )
    return claimed.rowcount == 1


def chosen_games(connection: sa.Connection, addresses: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The games each of `addresses` wants news of (those that chose none are left out)."""
    if not addresses:
        return {}
    query = sa.select(_ADDRESS.c.address, _ADDRESS.c.seek_news).where(
        _ADDRESS.c.address.in_(list(addresses))
    )
    return {address: tuple(games) for address, games in connection.execute(query) if games}
