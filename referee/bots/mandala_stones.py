"""Mandala Stones' bots: what a seat cannot see, and what a good board looks like.

A seat sees every stone's colour, but a stack's pattern only on its top;
it sees its own objective cards and only how many the others hold. A
sample keeps everything shown and deals the rest at random: each hidden
stone of a colour gets a pattern from what that colour has left unseen
(12 of each colour and pattern, less those on view), the stones set aside
are what is left over, and the others' cards come from the deck less the
seat's own.

A position is judged by each seat's likely final score: its points, what
its towers are worth still (less as the mandala nears the end), the best
colour it could score now, and its best objective card that holds on its
board (more as the end nears). A search weighs in each position only the
few moves after which the mover's own estimate looks best.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

from referee.bots.knowledge import Knowledge, Seen
from referee.engine import JSON
from referee.games import mandala_stones as ms
from referee.games.mandala_stones import Card, Pick, ScoreColour, ScoreTops, State
from referee.rng import Rng

Towers = tuple[tuple[int, ...], ...]

# Points a tower's top scores on spaces 2-4 by the tower's height (index).
_HEIGHT_POINTS = {2: (0, 4, 2, 1, 1), 3: (0, 1, 3, 4, 1), 4: (0, 1, 2, 4, 6)}
# How much of its worth a tower on the board counts for before it is scored,
# and what each of its stones counts for besides.
_TOWER_SHARE = 0.45
_STONE_WORTH = 0.6
# A score lead that counts for halfway between level and a win.
_LEAD_SCALE = 8.0
# Positions whose candidates are remembered, at most.
_MEMO_SIZE = 20_000


@dataclasses.dataclass(frozen=True, slots=True)
class _Deal:
    """What one `Seen` fixes, worked out once for all its samples."""

    known: State  # the state with the hidden stones as shown (pattern guessed)
    # Per colour: (stack, depth) of each stone whose pattern is hidden, and the
    # patterns left unseen for that colour (as many or more: the rest set aside).
    hidden: tuple[tuple[tuple[int, int], ...], ...]
    patterns: tuple[tuple[int, ...], ...]
    unseen_cards: tuple[Card, ...]
    counts: tuple[int, ...]  # the cards to deal each seat; -1 for the seat's own, shown


class MandalaStonesKnowledge(Knowledge[State, ms.Move]):
    game = ms.GAME
    iterations_per_second: ClassVar[float] = 600.0
    greedy_samples: ClassVar[int] = 3
    rollout_moves: ClassVar[int | None] = 0
    # How many moves a search weighs in a position: the best by `_estimate`.
    search_moves: ClassVar[int] = 5

    def __init__(self) -> None:
        # The last view dealt from, and what it fixes: a search samples the same
        # view thousands of times. Only a cache: samples depend on the view alone.
        self._last: tuple[Seen, _Deal] | None = None
        # Each position's candidates, by what decides them: a pure function's memo.
        self._ranked: dict[object, tuple[ms.Move, ...]] = {}

    # -- sampling --------------------------------------------------------------

    def sample(self, seen: Seen, rng: Rng) -> State:
        deal = self._deal(seen)
        stacks = [list(stack) for stack in deal.known.stacks]
        for places, left in zip(deal.hidden, deal.patterns, strict=True):
            if places:
                patterns = rng.shuffled(left)
                for (stack, depth), pattern in zip(places, patterns, strict=False):
                    stacks[stack][depth] = (stacks[stack][depth] & ~1) | pattern
        cards = rng.shuffled(deal.unseen_cards)
        objectives = []
        for seat, count in enumerate(deal.counts):
            if count < 0:
                objectives.append(deal.known.objectives[seat])
            else:
                objectives.append(tuple(cards[:count]))
                cards = cards[count:]
        return dataclasses.replace(
            deal.known,
            stacks=tuple(tuple(stack) for stack in stacks),
            objectives=tuple(objectives),
        )

    def _deal(self, seen: Seen) -> _Deal:
        if self._last is not None and self._last[0] is seen:
            return self._last[1]
        deal = _deal_of(seen)
        self._last = (seen, deal)
        return deal

    # -- search ----------------------------------------------------------------

    def candidates(self, state: State, seat: int) -> Sequence[ms.Move]:
        """The `search_moves` moves after which `seat`'s likely final score looks best.

        Worked out once per position as `seat` sees it (its towers, points and
        cards, the stacks' tops, the artists, the mandala and the turn order):
        the same wherever a search meets it.
        """
        key = (
            state.setup,
            state.end_triggered,
            state.first_player,
            state.resigned,
            seat,
            state.boards[seat],
            state.scores[seat],
            len(state.mandala),
            state.objectives[seat],
            tuple(stack[-1] if stack else -1 for stack in state.stacks),
            state.artists,
        )
        moves = self._ranked.get(key)
        if moves is None:
            if len(self._ranked) >= _MEMO_SIZE:
                self._ranked.clear()
            weighed = [
                (-_estimate_after(state, seat, move, tower), order, move)
                for order, (move, tower) in enumerate(_worth_weighing(state, seat))
            ]
            weighed.sort(key=lambda entry: entry[:2])
            moves = tuple(move for _score, _order, move in weighed[: self.search_moves])
            self._ranked[key] = moves
        return moves

    def value(self, state: State, seat: int) -> float:
        result = self.game.result(state)
        if result is not None:
            return 1.0 / len(result.winners) if seat in result.winners else 0.0
        estimates = [
            _estimate(state, other) if other not in state.resigned else -1e9
            for other in range(len(state.scores))
        ]
        best_other = max(e for other, e in enumerate(estimates) if other != seat)
        lead = estimates[seat] - best_other
        return 0.5 + 0.45 * lead / (abs(lead) + _LEAD_SCALE)


def _worth_weighing(state: State, seat: int) -> list[tuple[ms.Move, tuple[int, ...]]]:
    """Every colour; tops one tower at a time, two, or all (their order changes
    nothing); each pick only onto the two spaces its tower fits best. Each move
    comes with the tower it builds (none but a pick's)."""
    moves: list[tuple[ms.Move, tuple[int, ...]]] = []
    picks: dict[tuple[int, int, str], list[Pick]] = {}
    towers = state.boards[seat]
    built = [space for space in range(1, ms.SPACES + 1) if towers[space - 1]]
    for move in ms.GAME.legal_moves(state, seat):
        if isinstance(move, Pick):
            picks.setdefault((move.artist, move.circle, move.first), []).append(move)
        elif isinstance(move, ScoreColour):
            moves.append((move, ()))
    for options in picks.values():
        tower = _picked(state, options[0])
        if len(options) > 2:
            fits = sorted(
                ((_fit(towers, move.space, tower), -move.space), move) for move in options
            )
            options = [move for _fit_key, move in fits[-2:]]
        moves.extend((move, tower) for move in options)
    for first in built:
        moves.append((ScoreTops((first,)), ()))
        moves.extend((ScoreTops((first, second)), ()) for second in built if second > first)
    if len(built) > 2:
        moves.append((ScoreTops(tuple(built)), ()))
    return moves


def _estimate_after(state: State, seat: int, move: ms.Move, tower: tuple[int, ...]) -> float:
    """`_estimate` of `seat` after its `move`: a pick's worked out on its board
    alone (it changes nothing else that counts), a scoring's played."""
    if isinstance(move, Pick):
        towers = state.boards[seat]
        placed = (*towers[: move.space - 1], tower, *towers[move.space :])
        return _estimate_of(
            placed,
            state.objectives[seat],
            state.scores[seat],
            len(state.mandala),
            state.setup.end_space,
        )
    return _estimate(ms.GAME.play(state, seat, move), seat)


def _deal_of(seen: Seen) -> _Deal:
    """What the view fixes, built once, and what is left to deal each sample."""
    view = seen.view
    options = seen.options
    board = options["mandala_board"]
    bonuses = [0] * board["spaces"]
    for key, points in board["bonuses"].items():
        bonuses[int(key) - 1] = points
    deck = [] if options["objectives"] == "off" else options["objectives"]
    objectives, counts, shown_cards = _objectives_seen(view, deck)
    stacks, hidden, unseen = _stones_seen(view)
    patterns = tuple(
        tuple(pattern for pattern in (0, 1) for _ in range(unseen[colour * 2 + pattern]))
        for colour in range(4)
    )
    known = ms.GAME.state_from_json(
        {
            "setup": {
                "spaces": board["spaces"],
                "bonuses": bonuses,
                "end_space": board["hands"][str(seen.players)],
            },
            "stacks": stacks,
            "artists": [view["artists"][f"A{n}"] for n in range(1, ms.ARTISTS + 1)],
            "boards": view["boards"],
            "scores": view["scores"],
            "mandala": view["mandala"],
            "set_aside": view["set_aside"],
            "objectives": objectives,
            "first_player": view["first_player"],
            "current": view["first_player"] if view["to_move"] is None else view["to_move"],
            "end_triggered": view["end_triggered"],
            "resigned": view["resigned"],
            "objective_points": view["objective_points"],
        }
    )
    unseen_cards = tuple(
        ms.objective_card(data) for data in deck if data["card"] not in shown_cards
    )
    return _Deal(
        known,
        tuple(tuple(places) for places in hidden),
        patterns,
        unseen_cards,
        tuple(counts),
    )


def _objectives_seen(view: JSON, deck: list[JSON]) -> tuple[list[list[JSON]], list[int], set[int]]:
    """Each seat's objective cards as the view shows them (the seat's own), or how
    many it holds (-1 where shown); and the numbers of the cards on view."""
    by_number = {data["card"]: data for data in deck}
    objectives: list[list[JSON]] = []
    counts: list[int] = []
    shown_cards: set[int] = set()
    for cards in view["objectives"]:
        if isinstance(cards, list):
            shown_cards.update(cards)
            objectives.append([_card_json(ms.objective_card(by_number[n])) for n in cards])
            counts.append(-1)
        else:
            objectives.append([])
            counts.append(cards)
    return objectives, counts, shown_cards


def _stones_seen(view: JSON) -> tuple[list[list[str]], list[list[tuple[int, int]]], list[int]]:
    """The stacks with each hidden pattern written as the first one, the places
    of the hidden stones by colour, and how many of each stone are unseen."""
    unseen = [12] * 8
    hidden: list[list[tuple[int, int]]] = [[], [], [], []]
    stacks: list[list[str]] = []
    for index, stack in enumerate(view["stacks"]):
        names = []
        for depth, stone in enumerate(stack):
            if stone["pattern"] is None:
                names.append(stone["colour"] + ms.PATTERNS[0])
                hidden[ms.COLOURS.index(stone["colour"])].append((index, depth))
            else:
                name = stone["colour"] + stone["pattern"]
                names.append(name)
                unseen[ms.stone_value(name)] -= 1
        stacks.append(names)
    on_view = [name for towers in view["boards"] for tower in towers for name in tower]
    for name in (*on_view, *view["mandala"]):
        unseen[ms.stone_value(name)] -= 1
    return stacks, hidden, unseen


def _card_json(card: Card) -> JSON:
    return {"card": card.number, "points": card.points, "kind": card.kind, "args": list(card.args)}


# -- judging a board -------------------------------------------------------------


def _picked(state: State, move: Pick) -> tuple[int, ...]:
    """The tower a pick builds: the collectable tops, clockwise from `first`."""
    found = ms.collectable(state.stacks, state.artists, move.artist, move.circle)
    first = ms.DIRECTIONS.index(move.first)
    around = ms.CIRCLE_STACKS[move.circle - 1]
    order = sorted(found, key=lambda d: (d - first) % 4)
    return tuple(state.stacks[around[d]][-1] for d in order)


def _space_points(towers: Towers, space: int, tower: tuple[int, ...]) -> int:
    """What `tower` on `space` scores when its top colour is scored."""
    if not tower:
        return 0
    if space == 1:
        return len({len(t) for t in towers})
    if space == ms.SPACES:
        return 1 + len({stone >> 1 for stone in tower})
    return _HEIGHT_POINTS[space][min(len(tower), 4)]


def _fit(towers: Towers, space: int, tower: tuple[int, ...]) -> float:
    """How well `tower` would sit on the empty `space`: its worth there, and a top
    colour that others on the board share."""
    placed = list(towers)
    placed[space - 1] = tower
    worth = _space_points(tuple(placed), space, tower)
    top = tower[-1] >> 1
    sharing = sum(1 for t in towers if t and t[-1] >> 1 == top)
    return worth + 1.5 * min(sharing, 2) + 0.3 * len(tower)


def _estimate(state: State, seat: int) -> float:
    """`seat`'s likely final score: its points, its towers' worth, its objective."""
    if state.objective_points is not None:
        return state.scores[seat]  # over: the objectives are counted in
    return _estimate_of(
        state.boards[seat],
        state.objectives[seat],
        state.scores[seat],
        len(state.mandala),
        state.setup.end_space,
    )


def _estimate_of(
    towers: Towers, cards: tuple[Card, ...], score: int, placed: int, end_space: int
) -> float:
    """`_estimate` of a board with `placed` stones on the mandala."""
    key = (towers, cards)
    board = _BOARDS.get(key)
    if board is None:
        if len(_BOARDS) >= _MEMO_SIZE:
            _BOARDS.clear()
        board = _BOARDS[key] = _board_worth(towers, cards)
    worth, best_colour, held = board
    progress = min(1.0, placed / max(1, end_space))
    return score + (1.0 - progress) * worth + 0.5 * best_colour + (0.4 + 0.6 * progress) * held


# Each board's `_board_worth` (with its holder's cards): a pure function's memo.
_BOARDS: dict[tuple[Towers, tuple[Card, ...]], tuple[float, int, int]] = {}


def _board_worth(towers: Towers, cards: tuple[Card, ...]) -> tuple[float, int, int]:
    """What a board is worth before the end, what its best colour scores now, and
    the points of its best card that holds."""
    by_colour = [0, 0, 0, 0]
    tops = [0, 0, 0, 0]
    stones = 0
    worth = 0
    for space in range(1, ms.SPACES + 1):
        tower = towers[space - 1]
        if tower:
            points = _space_points(towers, space, tower)
            colour = tower[-1] >> 1
            tops[colour] += 1
            by_colour[colour] += points
            stones += len(tower)
            worth += points
    best_colour = max(
        (points for points, count in zip(by_colour, tops, strict=True) if count >= 2), default=0
    )
    held = max((card.points for card in cards if ms.objective_holds(card, towers)), default=0)
    return _TOWER_SHARE * worth + _STONE_WORTH * stones, best_colour, held


KNOWLEDGE = MandalaStonesKnowledge()
