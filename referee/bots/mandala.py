"""Mandala's bots: the whole position is on the table.

The path, the pawns, every collection and the eye are in every seat's
view, and nothing is left to draw, so the view is the state: a search here
is plain MCTS.
"""

from __future__ import annotations

from typing import ClassVar

from referee.bots.knowledge import Knowledge, Seen
from referee.games import mandala
from referee.rng import Rng


class MandalaKnowledge(Knowledge[mandala.State, mandala.Move]):
    game = mandala.GAME
    iterations_per_second: ClassVar[float] = 3000.0

    def sample(self, seen: Seen, rng: Rng) -> mandala.State:
        view = seen.view
        return mandala.GAME.state_from_json(
            {
                "path": view["path"],
                "pawns": view["pawns"],
                "collections": [_counted(counts) for counts in view["collections"]],
                "eye": _counted(view["eye"]),
                "scored": view["scored"],
                "scores": view["scores"],
                "first_player": view["first_player"],
                "to_move": view["to_move"],
                "resigned": view["resigned"],
            }
        )


def _counted(counts: dict[str, int]) -> list[int]:
    """A view's `{kind: count}` (kinds with none left out) as the state's tuple by kind."""
    return [counts.get(kind, 0) for kind in mandala.KINDS]


KNOWLEDGE = MandalaKnowledge()
