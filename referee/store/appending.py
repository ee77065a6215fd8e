"""Appending moves to a game's log: the hash-chained rows, the game's new fields, the news.

Only deciding (`referee.store.deciding`) and creating a game call this, each
inside the transaction that holds the game's lock, so a game's log has one
writer at a time and `(game_id, seq)` never collides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from referee.games import AnyGame
from referee.record import entry_hash
from referee.replay import forced_moves
from referee.store.notices import insert_notices
from referee.store.reads import SNAPSHOT_EVERY, GameRow
from referee.store.tables import GameStatus, Move, OutboxKind, Snapshot, core_table

# A move to log: the seat, the move, and the submission it came from (None
# for a move the referee records by itself).
Logged = tuple[int, Any, str | None]

_INSERT_MOVES = sa.insert(core_table(Move))
_INSERT_SNAPSHOT = sa.insert(core_table(Snapshot))


def with_forced_moves(rules: AnyGame, state: Any, logged: list[Logged]) -> Any:
    """Log the moves the referee records by itself after `state`; returns the state after them."""
    for seat, move, after in forced_moves(rules, state):
        logged.append((seat, move, None))
        state = after
    return state


@dataclass(frozen=True, slots=True)
class Appended:
    """What appending moves to a game's log writes: the rows, and the game's new fields."""

    game: dict[str, Any]
    moves: list[dict[str, Any]]
    # A snapshot row, every SNAPSHOT_EVERY moves.
    snapshot: dict[str, Any] | None
    # Outbox rows, for seats with mail or a webhook only.
    news: list[dict[str, Any]]


def append_to_log(
    game: GameRow,
    rules: AnyGame,
    state: Any,
    logged: Sequence[Logged],
    stamp: str,
    *,
    rounds_before: int,
    seat_count: int,
    reachable: frozenset[int],
) -> Appended:
    """The log entries for `logged` (already applied: `state` is the state after them).

    `rounds_before` is `rules.rounds_decided` of the state before `logged`:
    a change that raises it ends a round, which every seat hears of.
    `reachable` are the seats with mail or a webhook.
    """
    version = game.version
    prev = game.head_hash
    rows = []
    for seat, move, submission_id in logged:
        version += 1
        notation = rules.notate(move)
        digest = entry_hash(prev, version, seat, notation, stamp)
        rows.append(
            {
                "game_id": game.id,
                "seq": version,
                "seat": seat,
                "move": rules.move_to_json(move),
                "notation": notation,
                "created_at": stamp,
                "prev_hash": prev,
                "hash": digest,
                "submission_id": submission_id,
            }
        )
        prev = digest
    result = rules.result(state)
    to_act = sorted(rules.actors(state))
    changes: dict[str, Any] = {
        "version": version,
        "head_hash": prev,
        "to_act": to_act,
        "updated_at": stamp,
        "status": GameStatus.ACTIVE if result is None else GameStatus.OVER,
        "result": None if result is None else result.to_json(),
        "state": rules.state_to_json(state),
    }
    news: list[tuple[OutboxKind, int, dict[str, Any]]]
    if result is not None:
        news = [
            (OutboxKind.GAME_OVER, seat, {"result": changes["result"], "seed": game.seed})
            for seat in range(len(result.scores))
        ]
    else:
        news = []
        if rules.rounds_decided(state) > rounds_before:
            # Once over, the game-over mail tells the round's end with the rest.
            news = [
                (OutboxKind.ROUND_OVER, seat, {"version": version}) for seat in range(seat_count)
            ]
        # Every seat that must act after a change hears of it, even one that
        # already could: a MaNiKi card won by another seat is a new card for all.
        news += [(OutboxKind.YOUR_TURN, seat, {"version": version}) for seat in to_act]
    return Appended(
        game=changes,
        moves=rows,
        snapshot=(
            {"game_id": game.id, "version": version, "state": changes["state"]}
            if version // SNAPSHOT_EVERY > game.version // SNAPSHOT_EVERY
            else None
        ),
        # News for a seat with neither mail nor a webhook would go nowhere:
        # it is not written at all.
        news=[
            outbox_row(game.id, kind, seat, payload, stamp)
            for kind, seat, payload in news
            if seat in reachable
        ],
    )


def outbox_row(
    game_id: str, kind: OutboxKind, seat: int, payload: dict[str, Any], stamp: str
) -> dict[str, Any]:
    """An outbox row to insert, pending; the other columns get their defaults."""
    return {"game_id": game_id, "kind": kind, "seat": seat, "payload": payload, "created_at": stamp}


def write(
    connection: sa.Connection, appended: Appended, answers: Sequence[dict[str, Any]] = ()
) -> None:
    """Insert the rows of `appended`, after outbox rows `answers`; not the game's own row."""
    if appended.moves:
        connection.execute(_INSERT_MOVES, appended.moves)
    if appended.snapshot is not None:
        connection.execute(_INSERT_SNAPSHOT, appended.snapshot)
    if answers or appended.news:
        insert_notices(connection, [*answers, *appended.news])
