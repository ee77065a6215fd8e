"""Checking a game's log (the chain, and a replay from the seed), once per version.

A check reads and replays the whole log, so it costs more the longer the
game (10,000 moves: about 0.4 s); `GET /v1/games/{id}/verify` would let
anyone spend that as often as they like. A version's log never changes, so
the outcome is kept in table `verification`, keyed by game and version,
and asked again it is read instead. It is a cache like the snapshots:
dropping its rows changes no answer, only what the next check costs. Only
the latest version checked is kept for each game.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from referee.record import Record, chain_problems
from referee.replay import ReplayError, replay
from referee.store.clock import now
from referee.store.db import Database
from referee.store.reads import rules_of, state_at
from referee.store.records import full_record
from referee.store.tables import Game, Verification


@dataclass(frozen=True, slots=True)
class Checked:
    chain_valid: bool
    replay_matches: bool
    # Each problem in words (they may name the seed's effects: show them once the game is over).
    problems: list[str]


def check(db: Database, game: Game) -> Checked:
    """The outcome of checking `game`'s log at its version: kept, or worked out and kept."""
    with db.reading() as session:
        kept = session.get(Verification, (game.id, game.version))
        if kept is not None:
            return Checked(kept.chain_valid, kept.replay_matches, list(kept.problems))
        full = full_record(session, game)
        stored = state_at(session, game, game.version)
    checked = _work_out(game, full, stored)
    _keep(db, game, checked)
    return checked


def _work_out(game: Game, full: Record, stored: object) -> Checked:
    rules = rules_of(game)
    chain = chain_problems(full)
    problems = list(chain)
    try:
        replayed = replay(full).final
        matches = rules.state_to_json(replayed) == rules.state_to_json(stored)
        if not matches:
            problems.append("replaying the log does not give the stored state")
    except ReplayError as error:
        matches = False
        problems.append(f"the log does not replay: {error}")
    return Checked(not chain, matches, problems)


def _keep(db: Database, game: Game, checked: Checked) -> None:
    try:
        with db.transaction() as session:
            if session.get(Verification, (game.id, game.version)) is not None:
                return  # another request checked this version meanwhile
            session.execute(
                delete(Verification).where(
                    col(Verification.game_id) == game.id,
                    col(Verification.version) < game.version,
                )
            )
            session.add(
                Verification(
                    game_id=game.id,
                    version=game.version,
                    chain_valid=checked.chain_valid,
                    replay_matches=checked.replay_matches,
                    problems=checked.problems,
                    checked_at=now(),
                )
            )
    except IntegrityError:
        pass  # the same row, written by a request that got there first
