"""Building a move on the board, one click at a time: what may be chosen next.

A read: nothing is stored. Each click sends every step taken so far, so a
half-built move lives only in the player's page and the referee never
keeps anything for it; the rules (`Game.build`) say which steps are legal
from the game's present, and the move made is sent like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session

from referee.engine import Building, IllegalMove
from referee.i18n import _
from referee.service import game_states, refusals
from referee.store import reads
from referee.store.tables import Game

# The longest move built by clicks: a 32-order MaNiKi sequence, a whole palace.
MAX_STEPS = 64
MAX_STEP_LENGTH = 24


def build_move(db: Session, game: Game, seat: int | None, steps: Sequence[str]) -> Building[Any]:
    """The move `seat` builds in `game` by taking `steps`; refused like a move.

    Refused when the seat may not move now (not a seat, not its turn, the
    game over) and for a step that is not among the choices (`bad_step`).
    """
    if len(steps) > MAX_STEPS or any(len(step) > MAX_STEP_LENGTH for step in steps):
        raise refusals.BadRequest(
            _("a move is built in at most {steps} steps of {length} characters").format(
                steps=MAX_STEPS, length=MAX_STEP_LENGTH
            )
        )
    if seat is None:
        raise refusals.Unauthorized(_("only a seat of this game can build a move on its board"))
    if game.status != "active":
        raise refusals.GameOver()
    rules = reads.rules_of(game)
    try:
        return rules.build(game_states.state_at(db, game, game.version), seat, steps)
    except IllegalMove as refused:
        raise refusals.from_rules(refused) from None
