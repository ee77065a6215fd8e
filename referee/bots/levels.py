"""The bot levels every game offers, written once over a game's `Knowledge`.

- `random`: any legal move, uniformly.
- `greedy`: the move whose position looks best one move ahead (`value`),
  averaged over imagined deals where the view hides some.
- `strong`: information-set Monte Carlo tree search. Each iteration deals
  a new state consistent with the view, walks one tree of the bot's own
  and others' moves (a move is weighed only among the iterations where it
  was legal), plays the rest at random and backs the outcome up. In an
  open game the deals differ only in what is yet to be drawn, so this is
  plain MCTS with chance; where hands or bags are hidden, no iteration can
  exploit what the seat does not know.

Each bot's move is a function of what it sees, its rng and its budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.bots.knowledge import Knowledge, Seen
from referee.engine import Game
from referee.rng import QuickRng, Rng

# UCB1's exploration constant for rewards in [0, 1].
EXPLORATION = 0.7


class Bot(Protocol):
    """A level of play: a move for what a seat sees, within a budget."""

    def waits(self, seen: Seen) -> bool:
        """Whether the bot holds its answer for now, though it may act: only
        in a race, so that people get the first go (MaNiKi)."""
        ...

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any: ...


class _Prompt:
    """Bots of turn games answer as soon as they are asked."""

    def waits(self, seen: Seen) -> bool:
        return False


def standard_levels(knowledge: Knowledge[Any, Any]) -> dict[str, Bot]:
    """`random`, `greedy` and `strong` for a game, weakest first."""
    return {
        "random": RandomBot(knowledge),
        "greedy": GreedyBot(knowledge),
        "strong": StrongBot(knowledge),
    }


@dataclass(frozen=True)
class RandomBot(_Prompt):
    """Any legal move: a deal's random move where the game lists only pieces."""

    knowledge: Knowledge[Any, Any]

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any:
        game = self.knowledge.game
        if game.lists_every_move:
            return rng.choice(seen.legal)
        return game.random_move(self.knowledge.sample(seen, rng), seen.seat, rng)


@dataclass(frozen=True)
class GreedyBot(_Prompt):
    """The move that looks best one move ahead; ties broken by the rng."""

    knowledge: Knowledge[Any, Any]

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any:
        knowledge = self.knowledge
        game = knowledge.game
        totals: dict[Hashable, float] = {}
        moves: dict[Hashable, Any] = {}
        for _ in range(knowledge.greedy_samples):
            state = knowledge.sample(seen, rng)
            for move in knowledge.candidates(state, seen.seat):
                after = game.play(state, seen.seat, move)
                totals[move] = totals.get(move, 0.0) + knowledge.value(after, seen.seat)
                moves.setdefault(move, move)
        best = max(totals.values())
        # In the order the moves were first met, so the tie-break is reproducible.
        return rng.choice([moves[key] for key, total in totals.items() if total == best])


@dataclass
class _Node:
    """A move of the tree: made by `seat`, with its statistics from `seat`'s side."""

    seat: int
    visits: int = 0
    reward: float = 0.0
    # How many times this move was legal when its parent was visited: a move
    # legal in few deals is not made to look unexplored in the others.
    available: int = 0
    children: dict[Hashable, _Node] = field(default_factory=dict)


@dataclass(frozen=True)
class StrongBot(_Prompt):
    """Information-set MCTS over deals consistent with the seat's view."""

    knowledge: Knowledge[Any, Any]

    def iterations(self, seen: Seen, seconds: float) -> int:
        return self.knowledge.iterations(seen, seconds)

    def choose(self, seen: Seen, rng: Rng, seconds: float) -> Any:
        quick = QuickRng(rng)
        root = _Node(seat=-1)
        for _ in range(self.iterations(seen, seconds)):
            state, path = self._descend(root, self.knowledge.sample(seen, quick), seen.seat, quick)
            rewards = self._playout(state, quick, seen.players)
            for visited in path:
                visited.visits += 1
                visited.reward += rewards[visited.seat]
        lists_every_move = self.knowledge.game.lists_every_move
        tried = [
            (child.visits, move)
            for move, child in root.children.items()
            if move in seen.legal or not lists_every_move
        ]
        most = max(visits for visits, _move in tried)
        return quick.choice([move for visits, move in tried if visits == most])

    def _descend(self, root: _Node, state: Any, bot_seat: int, rng: Rng) -> tuple[Any, list[_Node]]:
        """Down the tree from `root` while every move met has been tried, then
        one new move: the state reached and the moves taken."""
        knowledge = self.knowledge
        game = knowledge.game
        path: list[_Node] = []
        node = root
        while True:
            seat = _acting(game, state, rng, bot_seat if node is root else None)
            if seat is None:
                return state, path
            moves = knowledge.candidates(state, seat)
            untried = [move for move in moves if move not in node.children]
            for move in moves:
                child = node.children.get(move)
                if child is not None:
                    child.available += 1
            if untried:
                move = rng.choice(untried)
                node.children[move] = child = _Node(seat=seat, available=1)
                path.append(child)
                return _advance(game, game.play(state, seat, move)), path
            move = _select(node, moves)
            node = node.children[move]
            path.append(node)
            state = _advance(game, game.play(state, seat, move))

    def _playout(self, state: Any, rng: Rng, players: int) -> tuple[float, ...]:
        knowledge = self.knowledge
        game = knowledge.game
        # Looked up once: a search plays its playouts' moves by the million.
        actors_of, play_random, forces_moves = game.actors, game.play_random, game.forces_moves
        over = _rollout_over(knowledge)
        start = state
        made = 0
        while over is None or not over(start, state, made):
            actors = actors_of(state)
            if not actors:
                break
            if len(actors) == 1:
                (seat,) = actors
            else:
                seat = rng.choice(sorted(actors))
            _, state = play_random(state, seat, rng)
            if forces_moves:
                state = _advance(game, state)
            made += 1
        return knowledge.rewards(state, players)


def _rollout_over(knowledge: Knowledge[Any, Any]) -> Callable[[Any, Any, int], bool] | None:
    """`knowledge.rollout_over`, or None where it is the default with no
    `rollout_moves`: playouts that run to the end ask nothing a move."""
    if type(knowledge).rollout_over is Knowledge.rollout_over and knowledge.rollout_moves is None:
        return None
    return knowledge.rollout_over


def _acting(game: Game[Any, Any], state: Any, rng: Rng, bot_seat: int | None) -> int | None:
    """The seat whose move comes next (the bot's own at the root), None at the end."""
    if bot_seat is not None:
        return bot_seat
    actors = game.actors(state)
    if not actors:
        return None
    if len(actors) == 1:
        return next(iter(actors))
    return rng.choice(sorted(actors))


def _advance(game: Game[Any, Any], state: Any) -> Any:
    """The state after the moves the referee records by itself (`forced_move`)."""
    forced = game.forced_move(state)
    while forced is not None:
        seat, move = forced
        state = game.play(state, seat, move)
        forced = game.forced_move(state)
    return state


def _select(node: _Node, moves: Any) -> Hashable:
    """UCB1 among the tried moves legal now, counting the times each was available."""
    best_move: Hashable = None
    best_score = -math.inf
    for move in moves:
        child = node.children[move]
        score = child.reward / child.visits + EXPLORATION * math.sqrt(
            math.log(child.available) / child.visits
        )
        if score > best_score:
            best_move, best_score = move, score
    return best_move
