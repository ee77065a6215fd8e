"""What a bot is given, and what it must know of a game beyond its rules.

A bot never holds the game's state: it is handed a `Seen`, the seat's view
and legal moves, exactly what that seat's player is shown. To search, it
imagines full states consistent with that view (`Knowledge.sample`): in an
open game the view fixes everything but the order of what is yet to be
drawn; where hands, objectives or a bag are hidden, each sample deals the
unseen pieces anew. Everything here is pure, like the rules beside it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from referee.engine import JSON, Game
from referee.rng import Rng

S = TypeVar("S")
M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Seen:
    """All a bot may know when asked for a move: its seat's view and choices.

    `legal` is `Game.legal_moves` of the seat (every legal move, or the
    pieces they are made of where the game says it lists only those).
    `bots` are the seats played by bots, which every player may see.
    """

    seat: int
    view: JSON
    legal: tuple[Any, ...]
    players: int
    options: JSON
    bots: frozenset[int] = frozenset()


class Knowledge(ABC, Generic[S, M]):
    """One game as its bots see it: how to imagine the hidden part of a
    position, which moves are worth weighing, and how good a position looks.

    `iterations_per_second` turns a think budget in seconds into a number of
    search iterations, so that a bot's move depends on the budget but never
    on the clock: the same view, seed and budget give the same move on any
    machine, and a record replays and verifies like any other. It is set
    from the `strong` bot's speed measured by `bench/bots.py`, low enough
    that a move stays within its budget.
    """

    game: Game[S, M]
    iterations_per_second: ClassVar[float]
    # How many samples `greedy` averages each move over: one where the view
    # shows everything that decides the next position.
    greedy_samples: ClassVar[int] = 1
    # Moves a search's playout makes before it stops and asks `value`;
    # None plays on to the end of the game.
    rollout_moves: ClassVar[int | None] = None

    def iterations(self, seen: Seen, seconds: float) -> int:
        """How many search iterations `strong` makes for `seen` in `seconds`:
        `iterations_per_second` of them by default. A game whose iterations
        cost much more where more is left to play (a playout runs to the end)
        scales the rate by what the view shows is left, so that every move,
        early or late and at any table size, stays within its budget."""
        return max(1, int(seconds * self.iterations_per_second))

    def rollout_over(self, start: S, state: S, made: int) -> bool:
        """Whether a search's playout from `start`, now at `state` after
        `made` moves, stops there and asks `value`: after `rollout_moves` by
        default. A game whose position is judged best at some point of its
        own (the end of a round) says so here."""
        return self.rollout_moves is not None and made >= self.rollout_moves

    @abstractmethod
    def sample(self, seen: Seen, rng: Rng) -> S:
        """A full state that `seen.seat` could be looking at: its view of the
        state equals `seen.view`, and the unseen pieces are dealt by `rng`."""

    def candidates(self, state: S, seat: int) -> Sequence[M]:
        """The moves a search weighs for `seat` in `state`: all legal ones by
        default. Games whose `legal_moves` lists only pieces say otherwise."""
        return self.game.legal_moves(state, seat)

    def value(self, state: S, seat: int) -> float:
        """How good `state` looks for `seat`, in [0, 1]: the result where the
        game is over, otherwise the score lead, squashed. `greedy` keeps the
        move that looks best one move ahead; a cut-off playout ends here."""
        result = self.game.result(state)
        if result is not None:
            return 1.0 / len(result.winners) if seat in result.winners else 0.0
        scores = self.game.scores(state)
        if not scores:
            return 0.5
        best_other = max(score for other, score in enumerate(scores) if other != seat)
        return squash(scores[seat] - best_other)

    def rewards(self, state: S, players: int) -> tuple[float, ...]:
        """Each seat's reward at the end of a playout, in [0, 1]: a share of
        the win where the game is over, `value` where the playout was cut."""
        result = self.game.result(state)
        if result is None:
            return tuple(self.value(state, seat) for seat in range(players))
        share = 1.0 / len(result.winners)
        return tuple(share if seat in result.winners else 0.0 for seat in range(players))


def squash(lead: float) -> float:
    """A score lead mapped into (0, 1), 0.5 for level: leads far apart stay
    ordered, and no lead counts as much as a win."""
    return 0.5 + 0.45 * lead / (abs(lead) + 5.0)
