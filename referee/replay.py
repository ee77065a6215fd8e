"""Fold a move log into states, and check game records.

The log is the source of truth: the state after move N is whatever
replaying the first N logged moves from the seed gives. Everything here is
pure; reading and writing files is the command line's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee import games
from referee.engine import JSON, BadOptions, IllegalMove
from referee.games import AnyGame
from referee.record import SEALED_NOTATION, Record, chain_problems, is_sealed
from referee.rng import Rng, commitment

__all__ = ["SEALED_NOTATION", "ReplayError", "envelope", "replay", "unrevealed", "verify"]


class ReplayError(Exception):
    """A record that cannot be replayed; `line` is its file line (0: the header)."""

    def __init__(self, line: int, message: str, code: str = "bad_record") -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message
        self.code = code


def new_state(game: AnyGame, seed: str, players: int, options: JSON) -> Any:
    """The state before any move (forced moves, if any, come next in the log)."""
    return game.start(players, options, Rng(seed))


def envelope(game: AnyGame, state: Any, version: int, seat: int | None) -> JSON:
    """The state envelope of docs/api.md, as `seat` (None: a spectator) may see it."""
    result = game.result(state)
    return {
        "game": game.name,
        "version": version,
        "status": "active" if result is None else "over",
        "to_act": sorted(game.actors(state)),
        "result": None if result is None else result.to_json(),
        "state": game.view(state, seat),
    }


@dataclass(frozen=True, slots=True)
class Replayed:
    """A replayed record: `states[n]` is the state after `n` moves."""

    game: AnyGame
    options: JSON
    states: tuple[Any, ...]

    @property
    def final(self) -> Any:
        return self.states[-1]


def game_of(record: Record) -> tuple[AnyGame, JSON]:
    """The record's game and validated options; `ReplayError` on line 1 otherwise."""
    header = record.header
    try:
        game = games.get(header.game)
    except KeyError as error:
        raise ReplayError(1, str(error.args[0]), "unknown_game") from None
    # A record is replayed under the rules it was played under, never newer ones.
    try:
        game = games.get(header.game, header.rules_version)
    except KeyError as error:
        raise ReplayError(1, str(error.args[0]), "unsupported_rules_version") from None
    try:
        options = game.load_options(header.options, len(header.players))
    except BadOptions as error:
        raise ReplayError(1, f"bad options: {error.errors}", "bad_options") from None
    return game, options


def replay(record: Record, upto: int | None = None) -> Replayed:
    """Replay the record's first `upto` moves (all by default)."""
    game, options = game_of(record)
    seed = record.header.seed
    if seed is None:
        raise ReplayError(
            1, "the record has no seed: it is revealed once the game is over", "no_seed"
        )
    if commitment(seed) != record.header.seed_commitment:
        raise ReplayError(1, "the seed does not match its commitment", "bad_seed")
    entries = record.entries if upto is None else record.entries[:upto]
    if upto is not None and not 0 <= upto <= len(record.entries):
        raise ReplayError(0, f"the record holds {len(record.entries)} moves, not {upto}")
    state = new_state(game, seed, len(record.header.players), options)
    states = [state]
    for entry in entries:
        line = record.line_of(entry.seq)
        if entry.move == SEALED_NOTATION:
            raise ReplayError(line, "this move is sealed until its round is decided", "sealed_move")
        try:
            move = game.parse(entry.move)
            state = game.play(state, entry.seat, move)
        except IllegalMove as error:
            raise ReplayError(
                line, f"{entry.move!r} by seat {entry.seat}: {error.reason}", error.code
            ) from None
        states.append(state)
    return Replayed(game, options, tuple(states))


def unrevealed(record: Record) -> list[str]:
    """What a record of a running game does not show yet (empty once it is over)."""
    hidden = []
    if record.header.seed is None:
        hidden.append("the seed (revealed once the game is over)")
    sealed = [entry.seq for entry in record.entries if is_sealed(entry)]
    if sealed:
        moves = f"move {sealed[0]}" if len(sealed) == 1 else f"moves {sealed[0]}-{sealed[-1]}"
        hidden.append(f"{moves} (sealed until their round is decided)")
    return hidden


def verify(record: Record) -> list[str]:
    """Everything wrong with a record: chain, seed and replay (empty: it holds).

    A record of a game still running has no seed yet, and may end in sealed
    moves: its chain is checked, and when it holds `ReplayError("no_seed")`
    says what the replay waits for (`unrevealed`).
    """
    problems = chain_problems(record)
    hidden = unrevealed(record)
    if hidden:
        if problems:
            return problems
        raise ReplayError(1, "not yet revealed: " + "; ".join(hidden), "no_seed")
    try:
        replay(record)
    except ReplayError as error:
        if error.code == "no_seed" and not problems:
            raise
        problems.append(str(error))
    return problems
