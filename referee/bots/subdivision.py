"""Subdivision's bots: the whole position is on the table.

Every pyramid, park and supply is in every seat's view, and nothing is
left to draw (random parks are drawn at the start and shown from then
on), so the view is the state and a search here is plain MCTS.

A position is judged by each seat's score with what threatens it taken
off: every small another seat may still put near one of its larges (on
an empty cell near it) would cost it up to a point more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from referee.bots.knowledge import Knowledge, Seen, squash
from referee.games import subdivision
from referee.rng import Rng

# How much of a threatened large's loss a position is charged: the other
# seats may have better things to do with their smalls.
THREAT = 0.3
# How much of a finished playout's reward is the win (the rest is the lead).
WIN_WEIGHT = 0.5
# A large's loss for `n` smalls near it (the rules': the first is free, 3 at most).
_PENALTY = tuple(min(max(n - 1, 0), 3) for n in range(9))


# A search iteration costs about `_FIXED + placements left` units: its
# playout runs to the end. `iterations_per_second` is the rate on the
# two-player board's first move (30 placements to go), scaled from there.
_FIXED = 4
_OPENING_LEFT = 30


class SubdivisionKnowledge(Knowledge[subdivision.State, subdivision.Move]):
    game = subdivision.GAME
    iterations_per_second: ClassVar[float] = 1600.0

    def iterations(self, seen: Seen, seconds: float) -> int:
        view = seen.view
        empty = view["size"] ** 2 - len(view["parks"]) - len(view["pieces"])
        left = min(sum(map(sum, view["stash"])), empty) + view["parks_to_place"]
        rate = self.iterations_per_second * (_FIXED + _OPENING_LEFT) / (_FIXED + left)
        return max(1, int(seconds * rate))

    def sample(self, seen: Seen, rng: Rng) -> subdivision.State:
        # The view is the state's JSON with the scores and the phase added,
        # both of which follow from the rest.
        return subdivision.GAME.state_from_json(seen.view)

    def value(self, state: subdivision.State, seat: int) -> float:
        game = self.game
        result = game.result(state)
        if result is not None:
            return 1.0 / len(result.winners) if seat in result.winners else 0.0
        outlook = _outlook(game.state_to_json(state), game.scores(state))
        return _lead(outlook, seat, game.resigned(state))

    def rewards(self, state: subdivision.State, players: int) -> tuple[float, ...]:
        """Half the share of the win, half the final lead squashed: with the
        few hundred playouts a small budget allows, by how much a playout
        ends won or lost tells moves apart sooner than who won alone."""
        result = self.game.result(state)
        if result is None:
            return super().rewards(state, players)
        scores = self.game.scores(state)
        resigned = self.game.resigned(state)
        share = 1.0 / len(result.winners)
        return tuple(
            (WIN_WEIGHT * share if seat in result.winners else 0.0)
            + (1.0 - WIN_WEIGHT) * _lead(scores, seat, resigned)
            for seat in range(players)
        )


def _lead(values: Sequence[float], seat: int, resigned: frozenset[int]) -> float:
    """`seat`'s lead over the best of the other seats still playing, squashed into (0, 1)."""
    others = [
        value for other, value in enumerate(values) if other != seat and other not in resigned
    ]
    if seat in resigned:
        return 0.0
    if not others:
        return 1.0
    return squash(values[seat] - max(others))


def _outlook(data: dict[str, Any], scores: tuple[int, ...]) -> list[float]:
    """Each seat's score less what the smalls still to come threaten its larges with."""
    near = _near(data["size"])
    pieces = data["pieces"]
    parks = set(data["parks"])
    smalls_left = [stash[0] for stash in data["stash"]]
    all_smalls_left = sum(smalls_left)
    outlook = [float(score) for score in scores]
    for cell, piece in pieces.items():
        if piece["size"] != subdivision.LARGE:
            continue
        owner = piece["seat"]
        smalls = free = 0
        for other in near[cell]:
            found = pieces.get(other)
            if found is None:
                free += other not in parks
            elif found["size"] == subdivision.SMALL:
                smalls += 1
        more = min(free, all_smalls_left - smalls_left[owner])
        if more:
            outlook[owner] -= THREAT * (_PENALTY[smalls + more] - _PENALTY[smalls])
    return outlook


_NEAR_BY_SIDE: dict[int, dict[str, tuple[str, ...]]] = {}


def _near(side: int) -> dict[str, tuple[str, ...]]:
    """Each cell's near cells (by a side or a corner) on a board of `side`."""
    near = _NEAR_BY_SIDE.get(side)
    if near is None:
        near = {
            _name(file, rank): tuple(
                _name(file + df, rank + dr)
                for dr in (-1, 0, 1)
                for df in (-1, 0, 1)
                if (df or dr) and 0 <= file + df < side and 0 <= rank + dr < side
            )
            for rank in range(side)
            for file in range(side)
        }
        _NEAR_BY_SIDE[side] = near
    return near


def _name(file: int, rank: int) -> str:
    return f"{chr(97 + file)}{rank + 1}"


KNOWLEDGE = SubdivisionKnowledge()
