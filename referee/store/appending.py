"""Appending moves to a game's log: the hash-chained rows, the game's new fields, the notices.

Only the service's deciding and creating call this, each inside the
transaction that holds the game's lock, so a game's log has one writer at a
time and `(game_id, seq)` never collides. Which notices are written is the
service's policy; this module only writes the rows it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from referee.games import AnyGame
from referee.record import entry_hash
from referee.store.notices import Routes, insert_notices
from referee.store.reads import SNAPSHOT_EVERY, GameRow
from referee.store.tables import GameStatus, Move, OutboxKind, Snapshot, core_table

# A move to log: the seat, the move, and where it came from (its submission's
# source, or `forced` for a move the referee records by itself).
Logged = tuple[int, Any, str]

_INSERT_MOVES = sa.insert(core_table(Move))
_INSERT_SNAPSHOT = sa.insert(core_table(Snapshot))


@dataclass(frozen=True, slots=True)
class Appended:
    """What appending moves to a game's log writes: the rows, and the game's new fields."""

    game: dict[str, Any]
    moves: list[dict[str, Any]]
    # A snapshot row, every SNAPSHOT_EVERY moves.
    snapshot: dict[str, Any] | None


def log_entries(
    game: GameRow, rules: AnyGame, state: Any, logged: Sequence[Logged], stamp: str
) -> Appended:
    """The log entries for `logged` (already applied: `state` is the state after them)."""
    version = game.version
    prev = game.head_hash
    rows = []
    for seat, move, source in logged:
        version += 1
        notation = rules.notate(move)
        digest = entry_hash(prev, version, seat, notation, stamp)
        rows.append(
            {
                "game_id": game.id,
                "seq": version,
                "seat": seat,
                "notation": notation,
                "created_at": stamp,
                "hash": digest,
                "source": source,
            }
        )
        prev = digest
    result = rules.result(state)
    changes: dict[str, Any] = {
        "version": version,
        "head_hash": prev,
        "to_act": sorted(rules.actors(state)),
        "updated_at": stamp,
        "status": GameStatus.ACTIVE if result is None else GameStatus.OVER,
        "result": None if result is None else result.to_json(),
        "state": rules.state_to_json(state),
    }
    return Appended(
        game=changes,
        moves=rows,
        snapshot=(
            {"game_id": game.id, "version": version, "state": changes["state"]}
            if version // SNAPSHOT_EVERY > game.version // SNAPSHOT_EVERY
            else None
        ),
    )


def outbox_row(
    game_id: str, kind: OutboxKind, seat: int, payload: dict[str, Any], stamp: str
) -> dict[str, Any]:
    """An outbox row to insert, pending; the other columns get their defaults."""
    return {"game_id": game_id, "kind": kind, "seat": seat, "payload": payload, "created_at": stamp}


def write(
    connection: sa.Connection,
    appended: Appended | None,
    notices: Sequence[dict[str, Any]] = (),
    routes: Routes = (),
) -> None:
    """Insert the rows of `appended` and the notices with their deliveries on `routes`;
    not the game's own row."""
    if appended is not None and appended.moves:
        connection.execute(_INSERT_MOVES, appended.moves)
    if appended is not None and appended.snapshot is not None:
        connection.execute(_INSERT_SNAPSHOT, appended.snapshot)
    if notices:
        insert_notices(connection, notices, routes)
