"""Verifying a game: does its hash chain hold, and does replaying its log give the stored state?

A check reads and replays the whole log, so it costs more the longer the
game (10,000 moves: about 0.4 s); `GET /v1/games/{id}/verify` would let
anyone spend that as often as they like. A version's log never changes, so
the outcome is worked out once per version and kept (`referee.store.verdicts`);
asked again, it is read instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.record import Record, chain_problems
from referee.replay import ReplayError, replay
from referee.service.game_states import state_at
from referee.store import verdicts
from referee.store.reads import rules_of
from referee.store.records import full_record
from referee.store.tables import Game

if TYPE_CHECKING:
    from sqlmodel import Session

    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Checked:
    chain_valid: bool
    replay_matches: bool
    # Each problem in words (they may name the seed's effects: show them once the game is over).
    problems: list[str]


def verify_game(referee: Referee, game: Game) -> Checked:
    """The outcome of checking `game`'s log at its version: kept, or worked out and kept."""
    with referee.db.reading() as session:
        kept = verdicts.kept(session, game)
        if kept is not None:
            return Checked(kept.chain_valid, kept.replay_matches, list(kept.problems))
        full = full_record(session, game)
        stored = state_at(session, game, game.version)
    checked = _work_out(game, full, stored)
    verdicts.keep(referee.db, game, checked.chain_valid, checked.replay_matches, checked.problems)
    return checked


def check_afresh(session: Session, game: Game) -> Checked:
    """The outcome of checking `game`'s log, worked out now (never a kept outcome: after a
    copy or a restore, the log itself is what is checked)."""
    return _work_out(game, full_record(session, game), state_at(session, game, game.version))


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
