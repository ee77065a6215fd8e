"""Ice Palace's bots: hidden hands, a bag, and builds planned with the solver.

What a seat sees: its own hand, the yard, the palace, how many pyramids of
each size every other hand and the pool hold, and how many have left the
game. What it does not: the other hands, the pool's content and order, and
which pyramids left the game (black and white from the yards, leftovers of
builds, resigned hands: the view keeps only their number). So a deal takes,
size by size, every pyramid the seat cannot see (the game's whole set less
its hand, the yard and the palace) and deals them at random to the other
hands and the pool, as many as the view shows; the rest are the ones that
left. The deal infers nothing from the past (a seat that passed may hold
nothing playable, black and white mostly leave with the yards): the view
does not keep that history, and every dealing it allows is drawn alike.

Which moves are weighed: in the yard, one placement per kind of effect
(a pyramid onto a given top, or a pyramid founding next to a given set of
tops; other cells of the same kind are much alike) and the pass. The
builder's moves are whole plans, too many to list: the solver's plan and
maximal plans the solver's greedy builder finds founding on cells drawn at
random (from a fixed seed, so the same position always gives the same
plans), the few best for the builder's lead kept, and the best of them
bettered by climbing (two pyramids of a size trade places, a pyramid
covers another stack, while every step stays legal).

How good a position looks: the score lead once the yard is built by the
plan that the referee's own search (`build auto`) starts from (`quick_plan`,
by the game's rules version: the whole search at every node of the tree
would cost the bot most of its time), with a little more for the seat that
builds (the best plan for it may beat that one) and a share for the
pyramids of its own colour each seat still holds. Nearly every coloured
pyramid of a yard is built, most of them founding a stack, a point to
their colour: a game is won mostly by putting one's own colour into the
yard and keeping the others' out. The search judges the positions its
tree reaches with that, without random playouts: a playout would play
the searching seat's own later moves at random too, and so place the
other colours' pyramids it means to keep in hand.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from referee.bots.knowledge import Knowledge, Seen
from referee.engine import JSON
from referee.games import ice_palace, ice_palace_solver
from referee.games.ice_palace import (
    BLACK,
    BUILD,
    GAME,
    GAME_V1,
    GAME_V2,
    NOBODY,
    SIZES,
    STASH_PER_SIZE,
    WHITE,
    Board,
    Build,
    IcePalace,
    Move,
    Place,
    State,
)
from referee.rng import QuickRng, Rng

# How many plans of a build a search weighs, at most (the solver's among them).
PLANS = 4
# How many random maximal plans are drawn to choose those from.
PLAN_DRAWS = 10
# How many times the best plan is swept for a better one, at most.
IMPROVING_SWEEPS = 3
# What building is worth to the builder, beyond the referee's plan: the
# best plan for it leads by 0.6 of a point more on average (0.4 to 0.75 by
# colour, measured over 240 builds of random games).
BUILDER_SHARE = 0.6
# What a pyramid of its own colour in a seat's hand is worth to it, against
# a point for one placed: it may be placed later, or stay stuck in the hand.
HAND_SHARE = 0.5
# How many hands and yards `_yard_moves` remembers before it starts afresh.
YARD_MOVES_KEPT = 4096
# The lead that counts half as much as a win: rounds add a few points
# each, so a point or two must show in a search's averages.
LEAD_SCALE = 5.0

Cell = tuple[int, int]
# The last view dealt from, and what its deals share (`_view_parts`).
_LAST_VIEW: list[tuple[Seen, tuple[State, tuple[tuple[str, ...], ...]]] | None] = [None]
# The yard moves found for a hand and a yard (`_yard_moves`).
_YARD_MOVES: dict[tuple[tuple[str, ...], Board], tuple[Move, ...]] = {}
_RANK = {size: rank for rank, size in enumerate(SIZES)}


class IcePalaceKnowledge(Knowledge[State, Move]):
    game = GAME
    # Measured on the 2-core development machine under load (load average
    # about 5), 3 players against `random`, at a 2 s budget (1200
    # iterations): a strong move's CPU time 0.88 s at the median, 1.12 s
    # at the 90th percentile and 1.59 s at the most over 92 moves. The
    # slowest come late in a round, where the tree reaches many builds.
    # Three times the rate won no more of 30 games, so it stays.
    iterations_per_second: ClassVar[float] = 600.0
    greedy_samples: ClassVar[int] = 3
    # No playout: a random one would also play the searching seat's own
    # later moves at random, placing the other colours' pyramids it means to
    # keep. The tree's leaves are judged by `value` instead.
    rollout_moves: ClassVar[int | None] = 0

    def sample(self, seen: Seen, rng: Rng) -> State:
        fixed, unseen = _view_parts(seen, self.game)
        seat = seen.seat
        hands: list[list[str]] = [[] for _ in fixed.hands]
        pools: list[str] = []
        for index, size in enumerate(SIZES):
            pieces = list(unseen[index])
            rng.shuffle(pieces)
            taken = 0
            for owner, hand in enumerate(seen.view["hands"]):
                if owner != seat:
                    count = hand[size]
                    hands[owner].extend(size + colour for colour in pieces[taken : taken + count])
                    taken += count
            pools.append("".join(pieces[taken : taken + seen.view["pool"][size]]))
        return replace(
            fixed,
            hands=tuple(
                fixed.hands[owner] if owner == seat else tuple(sorted(hand, key=_hand_order))
                for owner, hand in enumerate(hands)
            ),
            pool=(pools[0], pools[1], pools[2]),
        )

    def candidates(self, state: State, seat: int) -> Sequence[Move]:
        if state.phase == BUILD:
            plans = _plans(self.game, state.palace, state.yard, state.colours, seat, state.resigned)
            return [Build(plan) for plan in plans]
        return _yard_moves(state, seat)

    def value(self, state: State, seat: int) -> float:
        result = GAME.result(state)
        if result is not None:
            return 1.0 / len(result.winners) if seat in result.winners else 0.0
        return _lead_value(_expected_scores(self.game, state), seat)

    def rewards(self, state: State, players: int) -> tuple[float, ...]:
        # As `value` for every seat, the scores worked out once.
        result = GAME.result(state)
        if result is not None:
            share = 1.0 / len(result.winners)
            return tuple(share if seat in result.winners else 0.0 for seat in range(players))
        scores = _expected_scores(self.game, state)
        return tuple(_lead_value(scores, seat) for seat in range(players))


def _expected_scores(game: IcePalace, state: State) -> list[float]:
    """The palace's scores once the yard is built as the referee's plan
    would build it (`build auto`, and much like a random maximal plan: the
    colours in the same order), a little more for the seat that builds (or
    would, were the round to end now), which may choose a plan better for
    it, and a share for each pyramid of its own colour a seat still holds
    (it may yet place it)."""
    colours = state.colours
    if state.phase == BUILD:
        scores = [float(score) for score in _scores_after(state.palace, state.build_plan, colours)]
    else:
        built = _built_scores(
            game, state.palace, state.yard, colours, state.last_placer, state.resigned
        )
        scores = [float(score) for score in built]
    builder = state.turn if state.phase == BUILD else state.last_placer
    if builder != NOBODY and state.yard:
        scores[builder] += BUILDER_SHARE
    for seat, hand in enumerate(state.hands):
        colour = colours[seat]
        scores[seat] += HAND_SHARE * sum(pyramid[1] == colour for pyramid in hand)
    return scores


@functools.lru_cache(maxsize=4096)
def _built_scores(
    game: IcePalace,
    palace: Board,
    yard: Board,
    colours: str,
    builder: int,
    resigned: tuple[int, ...],
) -> tuple[int, ...]:
    """Each seat's score once `builder` builds `yard` on `palace` by `quick_plan`."""
    if not yard or builder == NOBODY:
        return _scores_after(palace, (), colours)
    plan = game.quick_plan(palace, yard, colours, builder, resigned)
    return _scores_after(palace, _as_places(plan), colours)


def _scores_after(palace: Board, plan: Sequence[Place], colours: str) -> tuple[int, ...]:
    """Each seat's score once `plan` is built on `palace`."""
    stacks = {(x, y): stack for x, y, stack in palace}
    for step in plan:
        cell = (step.x, step.y)
        stacks[cell] = (*stacks.get(cell, ()), step.pyramid)
    scores = [0] * len(colours)
    for stack in stacks.values():
        scores[colours.index(stack[-1][1])] += len(stack)
    return tuple(scores)


def _lead_value(scores: list[float], seat: int) -> float:
    """`seat`'s lead over the best other seat, squashed into (0, 1) as
    `Knowledge.value` does (on a scale of its own)."""
    lead = scores[seat] - max(score for other, score in enumerate(scores) if other != seat)
    return 0.5 + 0.45 * lead / (abs(lead) + LEAD_SCALE)


def _view_parts(seen: Seen, game: IcePalace) -> tuple[State, tuple[tuple[str, ...], ...]]:
    """What every deal for `seen` shares: the state with the other hands and
    the pool empty, and per size the colours of the pyramids to deal.
    Remembered for the last view asked about: a search deals anew from the
    same view at each of its iterations."""
    last = _LAST_VIEW[0]
    if last is not None and last[0] is seen:
        return last[1]
    parts = _view_parts_of(seen, game)
    _LAST_VIEW[0] = (seen, parts)
    return parts


def _view_parts_of(seen: Seen, game: IcePalace) -> tuple[State, tuple[tuple[str, ...], ...]]:
    view = seen.view
    colours = "".join(view["colours"])
    seat = seen.seat
    building = view["phase"] == BUILD and view["turn"] is not None
    yard = _board_json(view["yard"])
    palace = _board_json(view["palace"])
    plan: list[JSON] = []
    if building:
        plan = [
            {"pyramid": step.pyramid, "x": step.x, "y": step.y}
            for step in _solver_plan(seen, yard, palace, game)
        ]
    fixed = GAME.state_from_json(
        {
            "colours": colours,
            "hands": [
                list(hand) if owner == seat else [] for owner, hand in enumerate(view["hands"])
            ],
            "pool": ["", "", ""],
            "yard": yard,
            "palace": palace,
            "marker": view["marker"],
            "turn": NOBODY if view["turn"] is None else view["turn"],
            "phase": view["phase"],
            "passes": view["passes"],
            "last_placer": NOBODY if view["last_placer"] is None else view["last_placer"],
            "build_max": view["build_max"] if building else 0,
            "build_plan": plan,
            "out_of_game": view["out_of_game"],
            "resigned": view["resigned"],
        }
    )
    return fixed, tuple(tuple(pieces) for pieces in _unseen(colours, view, seat))


def _hand_order(pyramid: str) -> tuple[int, int]:
    return SIZES.index(pyramid[0]), ice_palace.ALL_COLOURS.index(pyramid[1])


def _board_json(board: dict[str, list[str]]) -> list[list[Any]]:
    """A view's `{"x,y": stack}` as the state's JSON board, sorted by cell."""
    cells = []
    for key, stack in board.items():
        x, y = key.split(",")
        cells.append([int(x), int(y), list(stack)])
    return sorted(cells, key=lambda cell: (cell[0], cell[1]))


def _unseen(colours: str, view: JSON, seat: int) -> list[list[str]]:
    """Per size, the colours of the pyramids `seat` cannot see, in a fixed order."""
    left = [{colour: STASH_PER_SIZE for colour in colours + BLACK + WHITE} for _size in SIZES]
    shown = [*view["hands"][seat]]
    for board in (view["yard"], view["palace"]):
        for stack in board.values():
            shown.extend(stack)
    for pyramid in shown:
        left[SIZES.index(pyramid[0])][pyramid[1]] -= 1
    return [
        [colour for colour, count in sorted(counts.items()) for _ in range(count)]
        for counts in left
    ]


def _solver_plan(
    seen: Seen, yard: list[list[Any]], palace: list[list[Any]], game: IcePalace
) -> tuple[Place, ...]:
    """The plan the referee keeps for this build: the builder is offered it;
    any other seat finds it by working the same public position out again."""
    for move in seen.legal:
        if isinstance(move, Build) and not move.auto:
            return move.steps
    view = seen.view
    plan = game.referee_plan(
        _board(palace), _board(yard), "".join(view["colours"]), view["turn"], view["resigned"]
    )
    return _as_places(plan)


def _board(cells: list[list[Any]]) -> Board:
    """A state's JSON board as the state holds it."""
    return tuple((x, y, tuple(stack)) for x, y, stack in cells)


def _buildable(yard: Any) -> list[tuple[int, str]]:
    return [
        (SIZES.index(p[0]) + 1, p[1])
        for _x, _y, stack in yard
        for p in stack
        if p[1] not in (BLACK, WHITE)
    ]


def _as_places(plan: ice_palace_solver.Plan) -> tuple[Place, ...]:
    return tuple(Place(SIZES[size - 1] + colour, x, y) for size, colour, x, y in plan.steps)


@functools.lru_cache(maxsize=1024)
def _plans(
    game: IcePalace,
    palace: Board,
    yard: Board,
    colours: str,
    builder: int,
    resigned: tuple[int, ...],
) -> tuple[tuple[Place, ...], ...]:
    """Distinct maximal plans for this build, the best for `builder`'s lead first.

    A function of the public position only (the random plans come from a
    fixed seed), remembered: a search meets the same build again and again.
    """
    tops = {(x, y): (SIZES.index(stack[-1][0]) + 1, stack[-1][1]) for x, y, stack in palace}
    pieces = _buildable(yard)
    best = game.referee_plan(palace, yard, colours, builder, resigned)
    if best.count == 0:
        return ((),)
    rng = QuickRng(Rng(f"ice_palace plans {len(palace)} {len(pieces)}"))
    found: dict[tuple[tuple[Cell, tuple[str, ...]], ...], tuple[float, int, tuple[Place, ...]]] = {}
    drawn = [_as_places(best)]
    for _ in range(PLAN_DRAWS):
        plan = ice_palace_solver.random_plan(tops, pieces, rng)
        if plan.count >= best.count:
            drawn.append(_as_places(plan))
    for order, steps in enumerate(drawn):
        stacks = {(x, y): stack for x, y, stack in palace}
        for step in steps:
            cell = (step.x, step.y)
            stacks[cell] = (*stacks.get(cell, ()), step.pyramid)
        key = tuple(sorted(stacks.items()))
        if key in found:
            continue
        scores = [0] * len(colours)
        for stack in stacks.values():
            scores[colours.index(stack[-1][1])] += len(stack)
        lead = scores[builder] - max(s for other, s in enumerate(scores) if other != builder)
        found[key] = (-lead, order, steps)
    ranked = sorted(found.values())
    plans = [steps for _lead, _order, steps in ranked[:PLANS]]
    better = _improved(palace, plans[0], colours, builder)
    if better not in plans:
        plans.insert(0, better)
    return tuple(plans[:PLANS])


def _lead_after(
    palace: Board,
    plan: Sequence[Place],
    colours: str,
    builder: int,
    base: tuple[dict[Cell, tuple[str, ...]], list[int]] | None = None,
) -> tuple[int, int] | None:
    """`builder`'s lead over the best other seat, and its score, once `plan`
    is built; None if the palace code refuses a step of it. `base` is
    `_palace_base(palace, colours)`, given where many plans are tried on
    one palace."""
    cells, scores = base if base is not None else _palace_base(palace, colours)
    return _lead_from(cells, {}, plan, scores, colours, builder)


def _lead_from(
    stacks: dict[Cell, tuple[str, ...]],
    touched: dict[Cell, tuple[str, ...] | None],
    plan: Sequence[Place],
    scores: list[int],
    colours: str,
    builder: int,
) -> tuple[int, int] | None:
    """`_lead_after` from part way through a plan: `stacks` as the steps
    made so far left them, `touched` the cells they changed as they were
    before, and `scores` the palace's before any step (none is changed)."""
    stacks = dict(stacks)
    touched = dict(touched)
    for step in plan:
        cell = (step.x, step.y)
        stack = stacks.get(cell)
        if cell not in touched:
            touched[cell] = stack
        if stack is not None:
            if _RANK[stack[-1][0]] <= _RANK[step.pyramid[0]]:
                return None
            stacks[cell] = (*stack, step.pyramid)
            continue
        if stacks:
            x, y = cell
            colour = step.pyramid[1]
            if not any(
                near in stacks and stacks[near][-1][1] == colour
                for near in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
            ):
                return None
        elif cell != (0, 0):
            return None
        stacks[cell] = (step.pyramid,)
    scores = list(scores)
    for cell, old in touched.items():
        if old is not None:
            scores[colours.index(old[-1][1])] -= len(old)
        new = stacks[cell]
        scores[colours.index(new[-1][1])] += len(new)
    own = scores[builder]
    return own - max(score for seat, score in enumerate(scores) if seat != builder), own


def _palace_base(palace: Board, colours: str) -> tuple[dict[Cell, tuple[str, ...]], list[int]]:
    """The palace's stacks by cell, and each seat's score from them."""
    cells = {(x, y): stack for x, y, stack in palace}
    scores = [0] * len(colours)
    for stack in cells.values():
        scores[colours.index(stack[-1][1])] += len(stack)
    return cells, scores


def _improved(
    palace: Board, plan: tuple[Place, ...], colours: str, builder: int
) -> tuple[Place, ...]:
    """`plan` bettered for `builder` by climbing: two pyramids of a size swap
    their places, or a pyramid covers another stack, while every step stays
    legal and the builder's lead (then score) grows. As many are placed."""
    steps = list(plan)
    base = _palace_base(palace, colours)
    best = _lead_after(palace, steps, colours, builder, base)
    if best is None:
        return plan
    cells = sorted({(x, y) for x, y, _stack in palace} | {(s.x, s.y) for s in steps})
    for _sweep in range(IMPROVING_SWEEPS):
        improved = False
        for i in range(len(steps)):
            # The palace before step i, the same in every try below: a try
            # whose step i does not fit there is refused without replaying it.
            before, changed = _palace_before(base[0], steps[:i])
            for attempt in _tries(before, steps, i, cells):
                score = _lead_from(before, changed, attempt[i:], base[1], colours, builder)
                if score is not None and score > best:
                    steps, best, improved = attempt, score, True
        if not improved:
            break
    return tuple(steps)


def _palace_before(
    base: dict[Cell, tuple[str, ...]], steps: list[Place]
) -> tuple[dict[Cell, tuple[str, ...]], dict[Cell, tuple[str, ...] | None]]:
    """The palace's stacks after `steps`, and each changed cell's stack before them."""
    before = dict(base)
    changed: dict[Cell, tuple[str, ...] | None] = {}
    for step in steps:
        cell = (step.x, step.y)
        changed.setdefault(cell, before.get(cell))
        before[cell] = (*before.get(cell, ()), step.pyramid)
    return before, changed


def _tries(
    before: dict[Cell, tuple[str, ...]], steps: list[Place], i: int, cells: list[Cell]
) -> list[list[Place]]:
    """The plans one change from `steps` at step `i`: its pyramid swapped with a
    later one of its size, or moved to another cell, where it fits `before`."""
    tries: list[list[Place]] = []
    for j in range(i + 1, len(steps)):
        a, b = steps[i], steps[j]
        if (
            a.pyramid[0] == b.pyramid[0]
            and a.pyramid != b.pyramid
            and _fits(before, b.pyramid, (a.x, a.y))
        ):
            swapped = list(steps)
            swapped[i] = Place(b.pyramid, a.x, a.y)
            swapped[j] = Place(a.pyramid, b.x, b.y)
            tries.append(swapped)
    for cell in cells:
        if cell != (steps[i].x, steps[i].y) and _fits(before, steps[i].pyramid, cell):
            moved = list(steps)
            moved[i] = Place(steps[i].pyramid, *cell)
            tries.append(moved)
    return tries


def _fits(stacks: dict[Cell, tuple[str, ...]], pyramid: str, cell: Cell) -> bool:
    """Whether the palace code lets `pyramid` go on `cell` of `stacks`."""
    stack = stacks.get(cell)
    if stack is not None:
        return _RANK[stack[-1][0]] > _RANK[pyramid[0]]
    if not stacks:
        return cell == (0, 0)
    x, y = cell
    colour = pyramid[1]
    return any(
        near in stacks and stacks[near][-1][1] == colour
        for near in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
    )


def _yard_moves(state: State, seat: int) -> Sequence[Move]:
    """`_distinct_yard_moves`, remembered for the seat to act (its moves
    depend only on its hand and the yard): a search asks again for the same
    hand and yard each time it passes through a node of its tree."""
    if seat != state.turn:
        return _distinct_yard_moves(state, seat)
    key = (state.hands[seat], state.yard)
    moves = _YARD_MOVES.get(key)
    if moves is None:
        if len(_YARD_MOVES) >= YARD_MOVES_KEPT:
            _YARD_MOVES.clear()
        moves = _YARD_MOVES[key] = tuple(_distinct_yard_moves(state, seat))
    return moves


def _distinct_yard_moves(state: State, seat: int) -> list[Move]:
    """The legal yard moves, one placement per kind of effect: a pyramid on
    a given top (cover), or founding next to a given set of tops."""
    moves: list[Move] = []
    kinds: set[tuple[Any, ...]] = set()
    stacks = {(x, y): stack for x, y, stack in state.yard}
    for move in GAME.legal_moves(state, seat):
        if isinstance(move, Place):
            cell = (move.x, move.y)
            stack = stacks.get(cell)
            if stack is not None:
                kind: tuple[Any, ...] = (move.pyramid, "cover", stack[-1])
            else:
                x, y = cell
                near = sorted(
                    stacks[n][-1]
                    for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
                    if n in stacks
                )
                kind = (move.pyramid, "found", *near)
            if kind in kinds:
                continue
            kinds.add(kind)
        moves.append(move)
    return moves


class IcePalaceKnowledgeV2(IcePalaceKnowledge):
    """The bots of rules version 2's games, which play by that version's rules: a
    record of such a game keeps replaying its bots' moves (`referee verify --bots`)."""

    game = GAME_V2


class IcePalaceKnowledgeV1(IcePalaceKnowledge):
    """The bots of rules version 1's games, which judge builds by that version's plan:
    a record of such a game keeps replaying its bots' moves (`referee verify --bots`)."""

    game = GAME_V1


KNOWLEDGE = IcePalaceKnowledge()
KNOWLEDGE_V2 = IcePalaceKnowledgeV2()
KNOWLEDGE_V1 = IcePalaceKnowledgeV1()
