"""A game's record (header and hash-chained log) as the store holds it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlmodel import Session

from referee.record import SEALED_NOTATION, Entry, Handover, Header, Record, chain_problems
from referee.store.handover_rows import done
from referee.store.reads import log, rules_of, seats
from referee.store.tables import Game, GameStatus, Move, Seat, TimeoutPolicy


def sealed_from(game: Game, head: Any) -> int:
    """The first sequence number shown as `sealed` now (beyond the log: none)."""
    return game.version - rules_of(game).hidden_tail(head) + 1


def public_record(session: Session, game: Game, head: Any) -> Record:
    """The record anyone may have: the seed only once the game is over, sealed moves hidden."""
    first_sealed = sealed_from(game, head)
    held = seats(session, game.id)
    header = Header(
        game=game.name,
        players=tuple(seat.name for seat in held),
        options=game.options,
        seed_commitment=game.seed_commitment,
        rules_version=game.rules_version,
        seed=game.seed if game.status == GameStatus.OVER else None,
        bots=_bots(held),
        bot_seconds=game.bot_seconds,
        bot_pace=game.bot_pace,
        handovers=_handovers(session, game),
        on_timeout=_policy(game),
    )
    entries = tuple(
        # A sealed move's source would tell whether its seat ran out of time.
        Entry(row.seq, row.seat, SEALED_NOTATION, row.created_at)
        if row.seq >= first_sealed
        else _entry(row, prev)
        for row, prev in _chained(game, log(session, game.id))
    )
    return Record(header, entries)


def full_record(session: Session, game: Game) -> Record:
    """The record with every move and the seed: for the server's own checks only."""
    held = seats(session, game.id)
    header = Header(
        game.name,
        tuple(seat.name for seat in held),
        game.options,
        game.seed_commitment,
        game.rules_version,
        game.seed,
        _bots(held),
        game.bot_seconds,
        game.bot_pace,
        _handovers(session, game),
        _policy(game),
    )
    rows = _chained(game, log(session, game.id))
    return Record(header, tuple(_entry(row, prev) for row, prev in rows))


def _policy(game: Game) -> str | None:
    """The game's timeout policy: `random` where it has deadlines and names none."""
    return game.on_timeout or (TimeoutPolicy.RANDOM if game.deadline_seconds else None)


def _entry(row: Move, prev_hash: str) -> Entry:
    """A logged move as a record's line, marked with where it came from: its
    submission's source, or `forced` for a move the referee recorded with none."""
    return Entry(row.seq, row.seat, row.notation, row.created_at, prev_hash, row.hash, row.source)


def _chained(game: Game, rows: Sequence[Move]) -> Iterator[tuple[Move, str]]:
    """Each move with the hash it follows: the move before's, or the seed's commitment."""
    prev = game.seed_commitment
    for row in rows:
        yield row, prev
        prev = row.hash


def _bots(held: list[Seat]) -> tuple[str | None, ...] | None:
    """Each seat's bot level, when some seat is a bot's (None: no bots, as older records)."""
    levels = tuple(seat.bot for seat in held)
    return levels if any(levels) else None


def _handovers(session: Session, game: Game) -> tuple[Handover, ...] | None:
    """The seats people took over from bots (None: none, as older records)."""
    found = tuple(
        Handover(row.seat, row.from_seq, row.bot)
        for row in done(session, game.id)
        if row.from_seq is not None
    )
    return found or None


def chain_problems_of(session: Session, game: Game) -> list[str]:
    """What is wrong with the game's hash chain; empty when it holds."""
    return chain_problems(full_record(session, game))
