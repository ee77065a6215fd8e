"""Seats' messages, what each seat has seen of them, mutes and private notes: rows only.

`message` is append-only, numbered from 1 in each game; nothing here reads
or writes a move, a state or a record.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.columns import HexId
from referee.store.tables import (
    Game,
    MessageMute,
    MessageSeen,
    Seat,
    SeatNote,
    TableMessage,
    core_table,
)

_MESSAGE = core_table(TableMessage)
_SEEN = core_table(MessageSeen)
_MUTE = core_table(MessageMute)


def last_seq(session: Session, game_id: str) -> int:
    """The number of the game's latest message (0: none yet)."""
    found = session.exec(
        select(sa.func.max(TableMessage.seq)).where(TableMessage.game_id == game_id)
    ).one()
    return int(found or 0)


def last_seqs(session: Session, game_ids: Collection[str]) -> dict[str, int]:
    """The number of each game's latest message, for the games of `game_ids` that have one."""
    if not game_ids:
        return {}
    query = (
        select(TableMessage.game_id, sa.func.max(TableMessage.seq))
        .where(col(TableMessage.game_id).in_(sorted(game_ids)))
        .group_by(col(TableMessage.game_id))
    )
    return {game_id: int(seq) for game_id, seq in session.exec(query)}


def locked_game(session: Session, game_id: str) -> Game | None:
    """The game under its lock (as deciding takes it), so that its messages are numbered
    one at a time."""
    return session.exec(select(Game).where(Game.id == game_id).with_for_update()).first()


def append(
    session: Session, game_id: str, seat: int, text: str, via: str, stamp: str
) -> TableMessage:
    """Add a message after the game's latest, with the game locked (`locked_game`)."""
    row = TableMessage(
        game_id=game_id,
        seq=last_seq(session, game_id) + 1,
        seat=seat,
        text=text,
        via=via,
        created_at=stamp,
    )
    session.add(row)
    session.flush()
    return row


def sent_since(session: Session, game_id: str, seat: int, since: str) -> list[str]:
    """When the seat wrote each of its messages of the game after `since`, oldest first."""
    query = (
        select(TableMessage.created_at)
        .where(
            TableMessage.game_id == game_id,
            TableMessage.seat == seat,
            col(TableMessage.created_at) > since,
        )
        .order_by(col(TableMessage.created_at))
    )
    return list(session.exec(query))


def listed(
    session: Session,
    game_id: str,
    *,
    after: int = 0,
    hidden_seats: Collection[int] = (),
    limit: int | None = None,
) -> list[TableMessage]:
    """The game's messages after number `after`, oldest first, but those of `hidden_seats`."""
    query = select(TableMessage).where(
        TableMessage.game_id == game_id, col(TableMessage.seq) > after
    )
    if hidden_seats:
        query = query.where(col(TableMessage.seat).not_in(sorted(hidden_seats)))
    query = query.order_by(col(TableMessage.seq))
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query))


def latest(
    session: Session, game_id: str, most: int, *, hidden_seats: Collection[int] = ()
) -> list[TableMessage]:
    """The game's `most` latest messages but those of `hidden_seats`, oldest first."""
    query = select(TableMessage).where(TableMessage.game_id == game_id)
    if hidden_seats:
        query = query.where(col(TableMessage.seat).not_in(sorted(hidden_seats)))
    query = query.order_by(col(TableMessage.seq).desc()).limit(most)
    return list(reversed(session.exec(query).all()))


def seen_seq(session: Session, game_id: str, seat: int) -> int:
    """The last message the seat has seen (0: none)."""
    found = session.get(MessageSeen, (game_id, seat))
    return 0 if found is None else found.seen_seq


def see(session: Session, game_id: str, seat: int, seq: int) -> None:
    """The seat has seen the messages up to `seq`: never moved backwards. Two writers
    adding the seat's first row at once make the later commit fail; it tries again."""
    found = session.get(MessageSeen, (game_id, seat))
    if found is None:
        session.add(MessageSeen(game_id=game_id, seat=seat, seen_seq=seq))
    elif seq > found.seen_seq:
        found.seen_seq = seq
        session.add(found)
    session.flush()


def muted(session: Session, game_id: str, seat: int) -> tuple[int, ...]:
    """The seats whose messages `seat` hides from itself, in seat order."""
    query = select(MessageMute.muted_seat).where(
        MessageMute.game_id == game_id, MessageMute.seat == seat
    )
    return tuple(sorted(session.exec(query)))


def mutes_of(session: Session, game_id: str) -> dict[int, frozenset[int]]:
    """Every seat's muted seats in the game (seats that mute no one are left out)."""
    query = select(MessageMute.seat, MessageMute.muted_seat).where(MessageMute.game_id == game_id)
    found: dict[int, set[int]] = {}
    for seat, muted_seat in session.exec(query):
        found.setdefault(seat, set()).add(muted_seat)
    return {seat: frozenset(seats) for seat, seats in found.items()}


def mute(session: Session, game_id: str, seat: int, muted_seat: int, stamp: str) -> None:
    """`seat` hides `muted_seat`'s messages; again changes nothing."""
    if session.get(MessageMute, (game_id, seat, muted_seat)) is None:
        session.add(
            MessageMute(game_id=game_id, seat=seat, muted_seat=muted_seat, created_at=stamp)
        )
        session.flush()


def unmute(session: Session, game_id: str, seat: int, muted_seat: int) -> None:
    """`seat` shows `muted_seat`'s messages again."""
    found = session.get(MessageMute, (game_id, seat, muted_seat))
    if found is not None:
        session.delete(found)
        session.flush()


def note(session: Session, game_id: str, seat: int) -> SeatNote | None:
    return session.get(SeatNote, (game_id, seat))


def set_note(session: Session, game_id: str, seat: int, text: str, stamp: str) -> None:
    """Keep the seat's note (an empty text deletes it)."""
    found = session.get(SeatNote, (game_id, seat))
    if not text:
        if found is not None:
            session.delete(found)
    elif found is None:
        session.add(SeatNote(game_id=game_id, seat=seat, text=text, updated_at=stamp))
    else:
        found.text = text
        found.updated_at = stamp
        session.add(found)
    session.flush()


@dataclass(frozen=True, slots=True)
class Unread:
    """A seat's messages it has not seen in one game (others', but for those it muted)."""

    game_id: str
    seat: int
    count: int
    last_seq: int


# The most (game, seat) pairs one statement names (SQLite takes 500 SELECTs in a UNION).
_PAIRS = 400


def unread(session: Session, seats: Collection[tuple[str, int]]) -> list[Unread]:
    """For each (game, seat) of `seats`, the others' messages after the seat's last seen
    and not muted by it, where there are any: one statement per `_PAIRS` pairs."""
    wanted = sorted(seats)
    found: list[Unread] = []
    for start in range(0, len(wanted), _PAIRS):
        found.extend(_unread(session, wanted[start : start + _PAIRS]))
    return found


def unseen_by(readers: sa.FromClause) -> tuple[sa.FromClause, sa.ColumnElement[bool]]:
    """Others' messages that each of `readers` (rows with a `game_id` and a `seat`) may
    read and has not seen: the join of the readers to them, and the condition that
    keeps those after its last seen and not of a seat it muted."""
    joined = (
        readers.join(
            _MESSAGE,
            sa.and_(_MESSAGE.c.game_id == readers.c.game_id, _MESSAGE.c.seat != readers.c.seat),
        )
        .outerjoin(
            _SEEN, sa.and_(_SEEN.c.game_id == readers.c.game_id, _SEEN.c.seat == readers.c.seat)
        )
        .outerjoin(
            _MUTE,
            sa.and_(
                _MUTE.c.game_id == readers.c.game_id,
                _MUTE.c.seat == readers.c.seat,
                _MUTE.c.muted_seat == _MESSAGE.c.seat,
            ),
        )
    )
    unseen = sa.and_(_MESSAGE.c.seq > sa.func.coalesce(_SEEN.c.seen_seq, 0), _MUTE.c.seat.is_(None))
    return joined, unseen


def _unread(session: Session, seats: list[tuple[str, int]]) -> list[Unread]:
    # The pairs as rows (SQLite names no columns of a VALUES list): one SELECT each.
    mine = sa.union_all(
        *(
            sa.select(sa.literal(game_id, HexId).label("game_id"), sa.literal(seat).label("seat"))
            for game_id, seat in seats
        )
    ).subquery("mine")
    joined, unseen = unseen_by(mine)
    query = (
        sa.select(mine.c.game_id, mine.c.seat, sa.func.count(), sa.func.max(_MESSAGE.c.seq))
        .select_from(joined)
        .where(unseen)
        .group_by(mine.c.game_id, mine.c.seat)
    )
    return [
        Unread(game_id, seat, count, last)
        for game_id, seat, count, last in session.connection().execute(query)
    ]


@dataclass(frozen=True, slots=True)
class Latest:
    """The latest message one seat of an address may read in one game (not of a seat it
    muted; its own count), with the game's name and the writer's seat name as stored."""

    address: str
    game_id: str
    game: str
    my_seat: int
    seq: int
    seat: int
    name: str
    text: str
    created_at: str


def latest_for(
    session: Session,
    addresses: Collection[str],
    *,
    game_ids: Collection[str] | None = None,
    since: str | None = None,
) -> list[Latest]:
    """For the seats the addresses (already normal) hold, the latest message each may read:
    of `game_ids` only when given, written after `since` (a stamp) only when given."""
    if not addresses:
        return []
    seat = core_table(Seat).alias("mine")
    writer = core_table(Seat).alias("writer")
    game = core_table(Game)
    owner = sa.func.lower(seat.c.email)
    latest = (
        sa.select(
            owner.label("address"),
            seat.c.game_id,
            seat.c.seat,
            sa.func.max(_MESSAGE.c.seq).label("seq"),
        )
        .select_from(
            seat.join(_MESSAGE, _MESSAGE.c.game_id == seat.c.game_id).outerjoin(
                _MUTE,
                sa.and_(
                    _MUTE.c.game_id == seat.c.game_id,
                    _MUTE.c.seat == seat.c.seat,
                    _MUTE.c.muted_seat == _MESSAGE.c.seat,
                ),
            )
        )
        .where(owner.in_(sorted(addresses)), seat.c.bot.is_(None), _MUTE.c.seat.is_(None))
        .group_by(owner, seat.c.game_id, seat.c.seat)
    )
    if game_ids is not None:
        latest = latest.where(seat.c.game_id.in_(sorted(game_ids)))
    if since is not None:
        latest = latest.where(_MESSAGE.c.created_at > since)
    found = latest.subquery("latest")
    query = sa.select(
        found.c.address,
        found.c.game_id,
        game.c.name,
        found.c.seat,
        _MESSAGE.c.seq,
        _MESSAGE.c.seat,
        writer.c.name,
        _MESSAGE.c.text,
        _MESSAGE.c.created_at,
    ).select_from(
        found.join(
            _MESSAGE, sa.and_(_MESSAGE.c.game_id == found.c.game_id, _MESSAGE.c.seq == found.c.seq)
        )
        .join(game, game.c.id == found.c.game_id)
        .join(
            writer, sa.and_(writer.c.game_id == found.c.game_id, writer.c.seat == _MESSAGE.c.seat)
        )
    )
    return [Latest(*row) for row in session.connection().execute(query)]
