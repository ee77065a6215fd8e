"""Checking a game's record: worked out once per version of the game, then kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from referee.store import verification
from referee.store.tables import Game

if TYPE_CHECKING:
    from referee.service import Referee


def verify_game(referee: Referee, game: Game) -> verification.Checked:
    """Does the chain hold, and does replaying the log give the stored state?"""
    return verification.check(referee.db, game)
