"""A game's state at any version: kept on its row, or rebuilt from a snapshot or its seed.

The store keeps the rows (`referee.store.reads`): the state at the head on
the game's row, a snapshot every `SNAPSHOT_EVERY` moves, the log. Both kept
states are caches that only save time: without them a state is replayed
from the seed, so every state can be rebuilt exactly from the log.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from referee.engine import Played
from referee.replay import new_state
from referee.store.reads import (
    GameRow,
    log,
    move_at,
    moves_through,
    nearest_snapshot,
    rules_of,
    seats,
)


def state_at(session: Session, game: GameRow, version: int) -> Any:
    """The state after `version` moves.

    At the head, the state kept on the game's row; elsewhere (or with that
    dropped) the nearest snapshot and the log after it, or without any
    snapshot a replay from the seed: both are caches that only save time.
    """
    rules = rules_of(game)
    if version == game.version and game.state is not None:
        return rules.state_from_json(game.state)
    snap = nearest_snapshot(session, game.id, version)
    if snap is None:
        state = new_state(rules, game.seed, len(seats(session, game.id)), game.options)
        start = 0
    else:
        state = rules.state_from_json(snap.state)
        start = snap.version
    if start < version:
        for row in moves_through(session, game.id, start, version):
            state = rules.play(state, row.seat, rules.parse(row.notation))
    return state


def state_and_previous(session: Session, game: GameRow, version: int) -> tuple[Any, Any | None]:
    """The state after `version` moves and the state a move earlier (None at 0).

    Pictures mark the last move by comparing the two. One replay serves both:
    to `version - 1`, then that one move more (at the head, the state kept
    on the row saves even that step).
    """
    if version == 0:
        return state_at(session, game, 0), None
    previous = state_at(session, game, version - 1)
    rules = rules_of(game)
    if version == game.version and game.state is not None:
        return rules.state_from_json(game.state), previous
    last = move_at(session, game.id, version)
    return rules.play(previous, last.seat, rules.parse(last.notation)), previous


def history(session: Session, game: GameRow) -> tuple[Any, list[Played[Any, Any]]]:
    """The state before the first move, and every logged move with the state after it.

    A whole replay from the seed, for what needs each move's consequence (a
    finished game's score breakdown), not only where the game stands.
    """
    rules = rules_of(game)
    start = new_state(rules, game.seed, len(seats(session, game.id)), game.options)
    played: list[Played[Any, Any]] = []
    state = start
    for row in log(session, game.id):
        move = rules.parse(row.notation)
        state = rules.play(state, row.seat, move)
        played.append(Played(row.seat, move, state))
    return start, played
