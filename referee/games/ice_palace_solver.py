"""The exact palace-building solver of Ice Palace: the most pyramids a builder can place.

The problem. A palace is a set of stacks on a square grid; only each stack's
top pyramid (size, colour) matters. The builder places yard pyramids one at
a time: **cover** a stack whose top is strictly larger (colours free), or
**found** a new stack on an empty cell orthogonally next to a stack whose
top has exactly the same colour; the first pyramid of an empty palace goes
to `0,0`. We want the largest number of yard pyramids placeable, and a plan
(an ordered list of placements) that reaches it.

How it is solved exactly, and fast:

1. *Covers need no geometry.* A cover onto a stack that has no empty
   neighbour (a *closed* stack) can never matter to a founding, so it can
   be moved to the end of any plan. So can a cover onto an *open* stack
   unless a later founding of the covering colour uses it: covering is
   then a *recolouring* that lets a new colour found next to it. Every
   plan thus reshapes into foundings and recolourings, then a final block
   of covers, whose best size is a formula: with `m` mediums and `s`
   smalls left over and `A` large tops and `B` medium tops in the palace,
   `min(m, A) + min(s, A + B)` (a medium put on a large still takes a
   small).

2. *An upper bound that is a game of its own.* Forget the grid: say a
   stack stays open forever once it is open now, and every new stack is
   open. In that relaxation founding is always good (it adds a top and
   removes nothing), so every pyramid of a colour that has an open top is
   founded at once; what is left are *locked* colours, which open only
   when one of their mediums or smalls covers an open top (an *unlock*;
   a medium of another colour may go under that small first). Only the
   counts of open and closed large and medium tops matter then, and the
   locked colours, so the best sequence of unlocks is a tiny memoised
   search (`_unlocks`). It bounds the real answer from above from any
   position. Two refinements keep it tight where walls matter:
   - colours that would found from tops they already have must each fill
     a different empty cell first; when two share their only cell, one
     of them counts as locked (`founder_sets`, a small matching);
   - empty cells walled in by stacks (holes) hold one pyramid each: a
     colour open only into holes founds at most that many (`hole_bound`,
     `_unlocks_holes`, computed only when the first bound is not met). A
     stack open into several holes reaches them all; past three holes,
     holes linked by such stacks are pooled. It tries the moves that place
     most first and knows that a colour left with larges only founds at
     most its holes' room, so that it stops as soon as it is sure.

3. *A plan in the real grid.* A greedy builder plays the relaxation's
   choices on the real palace: found everything it can (each on the cell
   that closes no stack, is open to the outside and keeps the most room),
   take the unlock the relaxation values most, repeat, then the final
   covers. When it reaches the bound, the bound is the answer (the common
   case by far).

4. *Exact search where they differ.* Walls can still make the bound too
   high. Then a depth-first search over real positions (foundings on each
   candidate cell and useful recolourings, the final block by the formula)
   asks "can `t` more be placed?" for `t` from the bound down to the
   greedy count. Positions are memoised by what was placed where (so
   orders that reach the same position are searched once; pyramids of one
   size and colour are counted, never told apart), and every position is
   cut by the bounds of step 2. The search is exponential in the worst
   case (a position whose bounds stay too high while many pyramids can go
   on many cells is slow to refute, and the hole-aware bound is itself a
   search), so it has a budget of work (`SEARCH_BUDGET`, counted, never
   timed), which counts every position searched and every step of the
   bounds computed for it: past it, it climbs from the greedy count with
   a second budget and the best plan found stands (`Plan.exact` false).
   `bench/ice_palace_solver.py` has the shapes that reach it.

Pyramids that can never be placed drop out on their own: a large of a
colour the relaxation can never open is never founded, and leftovers only
ever appear in the final covers.

Everything here is deterministic (no set of strings is iterated, ties are
broken by cell order, and nothing is remembered from one solve to the
next: the memos of the bounds belong to one solve, so its work, and so
where a budget ends, never depends on what was solved before):
`build auto` is replayed from the log by calling this solver again, so
the plan it returns for a position must never change within one rules
version.
"""

from __future__ import annotations

import contextlib
from bisect import insort
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar, cast

from referee.rng import Rng

SMALL, MEDIUM, LARGE = 1, 2, 3

Cell = tuple[int, int]
Piece = tuple[int, str]
"""A pyramid as (size, colour letter): size 1 small, 2 medium, 3 large."""
Step = tuple[int, str, int, int]
"""A placement: size, colour letter, x, y."""

# A cell is one int, x * _WIDE + y, so that neighbours are +-1 and +-_WIDE.
# A whole game holds at most 120 pyramids, far inside the half width.
_BITS = 16
_WIDE = 1 << _BITS
_HALF = _WIDE >> 1
# A cell back to x, y: with it moved up by half a width, x is what is above
# the low bits, y the rest.
_LOW = _WIDE - 1
_NEAR = (1, -1, _WIDE, -_WIDE)
# Each step of `_NEAR` with a step across it.
_NEAR_SIDES = ((1, _WIDE), (-1, _WIDE), (_WIDE, 1), (-_WIDE, 1))
_ORIGIN = 0
# A top (size, colour index) is one int: size * 8 + colour.
_SHIFT = 3
# The codes of a colour's smalls, mediums and larges are these or'ed with it.
_SMALLS, _MEDIUMS, _LARGES = SMALL << _SHIFT, MEDIUM << _SHIFT, LARGE << _SHIFT
_COLOUR_MASK = 7
_NO_NEED = 1 << 30
_NO_LIMIT = 1 << 62
# The most holes the hole-aware bound tells apart (`hole_bound`).
_SEPARATE_HOLES = 6
# The best a cell next to a stack can be: it closes no stack, is open to the
# outside and has three empty neighbours (the fourth is that stack).
_ROOMIEST = (0, 1, 3)


SEARCH_BUDGET = 30_000
"""How much work the exact search may do in one solve, per phase (see `solve`):
each position visited counts one more than the stacks of its palace, each
hole-aware bound as many more as there are stacks, and each call of
`_unlocks` or `_unlocks_holes` one (answered from its memo or not). A
count of work, never a time, so that every replay decides alike; a unit is
a few microseconds, so the two phases end well within a second."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The most pyramids that can be placed, and one order of placements reaching it.

    `exact` is False when the search ran out of budget: `count` is then the
    best found, not proven maximal."""

    count: int
    steps: tuple[Step, ...]
    exact: bool = True


class _OutOfWork(Exception):
    """The exact search used up its budget."""


def solve(
    tops: Mapping[Cell, Piece],
    pieces: Iterable[Piece],
    budget: int = SEARCH_BUDGET,
    order: Sequence[str] = (),
) -> Plan:
    """The exact maximum number of `pieces` placeable on a palace with these stack tops.

    `tops` maps each palace cell to the pyramid on top of its stack; `pieces`
    is the yard (a multiset; black and white already gone). Colours are
    compared exactly, so any letters work. The plan takes the colours in
    `order` first (the others after them, alphabetically): the count is
    the same whatever the order, where the search is exact, but which
    maximal plan it is, and so which colours top the stacks, is not.

    The exact search refutes counts from the bound down (the hole-aware
    bound of the palace first). Should it use up `budget` (see
    `SEARCH_BUDGET`) first, it climbs instead from the greedy count, with
    `budget` more, and the plan is the best it found (`exact=False`; it
    stays maximal if it reaches the first unrefuted count).
    """
    search, letters = _prepare(tops, pieces, None, budget, order)
    count, codes, exact = search.run()
    return _plan(count, codes, letters, exact)


def completes(
    tops: Mapping[Cell, Piece], pieces: Iterable[Piece], need: int, budget: int = SEARCH_BUDGET
) -> Plan | None:
    """A plan placing at least `need` of `pieces` on this palace, or None.

    Cheaper than `solve` when only one count matters (a plan being built on
    the board must still reach the maximum): the bound refutes, the greedy
    plan proves, and only between them the exact search asks for `need`
    alone. None also when that search uses up `budget`: a caller that must
    never be left without a way on keeps a plan it knows (`solve`'s).
    """
    if need <= 0:
        return Plan(0, ())
    search, letters = _prepare(tops, pieces, None, budget)
    codes = search.reach(need)
    return None if codes is None else _plan(len(codes), codes, letters, False)


def random_plan(
    tops: Mapping[Cell, Piece], pieces: Iterable[Piece], rng: Rng, order: Sequence[str] = ()
) -> Plan:
    """A plan by the greedy builder founding on cells drawn at random: no promise
    that it is maximal (compare with `solve`), but palaces grow as players grow
    them, not in the solver's straight lines. Colours in `order` first, as `solve`."""
    search, letters = _prepare(tops, pieces, rng, SEARCH_BUDGET, order)
    count, codes = search.greedy()
    return _plan(count, codes, letters, False)


def _prepare(
    tops: Mapping[Cell, Piece],
    pieces: Iterable[Piece],
    rng: Rng | None,
    budget: int = SEARCH_BUDGET,
    order: Sequence[str] = (),
) -> tuple[_Search, list[str]]:
    # By kind: a yard holds many pyramids of few kinds.
    kinds = Counter(pieces)
    found = {colour for _, colour in kinds} | {colour for _, colour in tops.values()}
    # A colour's code is its rank: the builder meets colours in that order.
    letters = sorted(found, key=lambda c: (order.index(c) if c in order else len(order), c))
    if len(letters) > _COLOUR_MASK + 1:
        raise ValueError("the solver handles at most 8 colours")
    index = {letter: i for i, letter in enumerate(letters)}
    # Sorted, so that the plan never depends on the order the caller built `tops` in.
    placed = sorted(tops.items())
    for (x, y), _ in placed:
        if not (-_HALF < x < _HALF and -_HALF < y < _HALF):
            _cell(x, y)  # refuses it
    cells = {x * _WIDE + y: (size << _SHIFT) | index[colour] for (x, y), (size, colour) in placed}
    counts = [0] * (4 << _SHIFT)
    for (size, colour), n in kinds.items():
        counts[(size << _SHIFT) | index[colour]] = n
    return _Search(cells, counts, rng, budget), letters


def _plan(count: int, codes: list[tuple[int, int]], letters: list[str], exact: bool) -> Plan:
    steps: list[Step] = []
    for code, cell in codes:
        here = cell + _HALF
        x, y = here >> _BITS, (here & _LOW) - _HALF
        steps.append((code >> _SHIFT, letters[code & _COLOUR_MASK], x, y))
    return Plan(count, tuple(steps), exact)


def _cell(x: int, y: int) -> int:
    if not (-_HALF < x < _HALF and -_HALF < y < _HALF):
        raise ValueError(f"cell {x},{y} is too far out")
    return x * _WIDE + y


def final_covers(smalls: int, mediums: int, large_tops: int, medium_tops: int) -> int:
    """How many leftover pyramids covers alone can place (larges cover nothing)."""
    return min(mediums, large_tops) + min(smalls, large_tops + medium_tops)


class _Meter:
    """The work of one solve, and the memos of its bounds.

    Every position searched and every call of `_unlocks` or
    `_unlocks_holes` (answered from the memo or not) counts. The memos live
    as long as the solve: with a memo shared between solves the work of one
    solve, and so where its budget ends, would depend on what was solved
    before it in the process."""

    def __init__(self) -> None:
        self.work = 0
        # Past this much work, `charge` raises `_OutOfWork`; no limit outside
        # the budgeted phases of `_Search.run`.
        self.limit = _NO_LIMIT
        # Each memoised bound's memo (`_memoised`), made when first asked for.
        self.memos: defaultdict[Callable[..., int], dict[Any, int]] = defaultdict(dict)

    def charge(self, work: int) -> None:
        self.work += work
        if self.work > self.limit:
            raise _OutOfWork


_Bound = TypeVar("_Bound", bound=Callable[..., int])


def _memoised(bound: _Bound) -> _Bound:
    """`bound(meter, *key)` answered from its memo in the solve's meter, keyed by
    every argument but the meter. Every call, answered from the memo or not, is
    one unit of work."""

    def memoised(meter: _Meter, *key: Any) -> int:
        meter.charge(1)
        memo = meter.memos[bound]
        known = memo.get(key)
        if known is None:
            known = memo[key] = bound(meter, *key)
        return known

    return cast(_Bound, memoised)


@_memoised
def _unlocks(
    meter: _Meter,
    open_l: int,
    open_m: int,
    closed_l: int,
    closed_m: int,
    locked: tuple[tuple[int, int, int], ...],
) -> int:
    """The relaxation's best count of placements among the locked colours.

    `locked` holds (smalls, mediums, larges) per colour that has no open top,
    sorted (colours are interchangeable here). Unlocking a colour covers an
    open top with one of its mediums (onto a large) or smalls (onto a
    medium when there is one: a large top is worth at least a medium one),
    then founds the rest of that colour; the covered top stays open.
    """
    smalls = mediums = larges = 0
    for s, m, la in locked:
        smalls += s
        mediums += m
        larges += la
    best = final_covers(smalls, mediums, open_l + closed_l, open_m + closed_m)
    everything = smalls + mediums + larges
    for i, (s, m, la) in enumerate(locked):
        total = s + m + la
        # One pyramid alone gains nothing from opening its colour: a final
        # cover places it as well, and may use a closed top.
        if total < 2 or best == everything:
            continue
        rest = locked[:i] + locked[i + 1 :]
        if m and open_l:
            gain = total + _unlocks(meter, open_l - 1 + la, open_m + m, closed_l, closed_m, rest)
            best = max(best, gain)
        if not s:
            continue
        if open_m:
            gain = total + _unlocks(meter, open_l + la, open_m - 1 + m, closed_l, closed_m, rest)
            best = max(best, gain)
        if open_l:
            gain = total + _unlocks(meter, open_l - 1 + la, open_m + m, closed_l, closed_m, rest)
            best = max(best, gain)
            # A medium of another locked colour can go under the small first.
            for j, (sj, mj, lj) in enumerate(rest):
                if mj:
                    less = (*rest[:j], (sj, mj - 1, lj), *rest[j + 1 :])
                    gain = (
                        total
                        + 1
                        + _unlocks(
                            meter,
                            open_l - 1 + la,
                            open_m + m,
                            closed_l,
                            closed_m,
                            tuple(sorted(less)),
                        )
                    )
                    best = max(best, gain)
    return best


Group = tuple[int, int, int, int]
"""A colour without an outside-open top: (holes, smalls, mediums, larges), where
`holes` has bit h set when the colour has a top open into hole h."""
Hole = tuple[int, int, int]
"""A hole (walled-in empty cells): (cells left, large tops, medium tops open into it)."""


@_memoised
def _unlocks_holes(
    meter: _Meter,
    open_l: int,
    open_m: int,
    closed: tuple[int, int],
    holes: tuple[Hole, ...],
    groups: tuple[Group, ...],
    links: tuple[int, ...],
) -> int:
    """`_unlocks` when some tops are open only into holes.

    Tops open to the outside and closed ones are counted as there. A
    colour with an outside-open top founds everything (as in `_unlocks`);
    a colour open only into some holes founds there, one pyramid a cell
    (its largest first: a large can only ever be founded, and a larger top
    takes more covers), and recolouring a top counted in hole h opens a
    colour into the holes of `links[h]` (a bit mask per hole).
    """
    closed_l, closed_m = closed
    smalls = sum(group[1] for group in groups)
    mediums = sum(group[2] for group in groups)
    large_tops = open_l + closed_l + sum(hole[1] for hole in holes)
    medium_tops = open_m + closed_m + sum(hole[2] for hole in holes)
    best = final_covers(smalls, mediums, large_tops, medium_tops)
    # The most that can be placed: a colour with only larges left covers
    # nothing, so it never opens anew and founds only into its holes' room.
    everything = smalls + mediums
    for mask, s, m, la in groups:
        if not s and not m:
            la = min(la, sum(hole[0] for h, hole in enumerate(holes) if mask >> h & 1))
        everything += la

    def go(o_l: int, o_m: int, changed: tuple[int, Hole] | None, rest: Iterable[Group]) -> int:
        after = holes
        if changed is not None:
            index, hole = changed
            after = (*holes[:index], hole, *holes[index + 1 :])
        kept = tuple(sorted(group for group in rest if sum(group[1:])))
        return _unlocks_holes(meter, o_l, o_m, closed, after, kept, links)

    # The moves that place most come first, so that a relaxation that places
    # everything (`best == everything`, the usual case) stops soonest; the
    # order changes no value.
    for move in _hole_moves(open_l, open_m, holes, groups, links):
        if best == everything:
            break
        placed, o_l, o_m, changed, rest = move
        best = max(best, placed + go(o_l, o_m, changed, rest))
    return best


_HoleMove = tuple[int, int, int, tuple[int, Hole] | None, tuple[Group, ...]]
"""A move of `_unlocks_holes`: pyramids placed, then the open large and medium
tops, the hole changed (its number and new state) and the colours after."""


def _hole_moves(
    open_l: int,
    open_m: int,
    holes: tuple[Hole, ...],
    groups: tuple[Group, ...],
    links: tuple[int, ...],
) -> Iterator[_HoleMove]:
    """The moves of `_unlocks_holes`: opening a colour to the outside, then opening
    one into a hole, then founding one pyramid into a hole."""
    yield from _outside_openings(open_l, open_m, groups)
    yield from _hole_openings(open_l, open_m, holes, groups, links)
    yield from _hole_foundings(open_l, open_m, holes, groups)


def _less_a_medium(rest: tuple[Group, ...]) -> list[tuple[Group, ...]]:
    """`rest` less a medium of one colour, to go under a small."""
    return [
        (*rest[:j], (mj, sj, nj - 1, lj), *rest[j + 1 :])
        for j, (mj, sj, nj, lj) in enumerate(rest)
        if nj
    ]


def _outside_openings(open_l: int, open_m: int, groups: tuple[Group, ...]) -> Iterator[_HoleMove]:
    """Open a colour to the outside, then found all of it there."""
    for i, (_, s, m, la) in enumerate(groups):
        total = s + m + la
        if total < 2:
            continue
        rest = groups[:i] + groups[i + 1 :]
        if m and open_l:
            yield total, open_l - 1 + la, open_m + m, None, rest
        if s and open_m:
            yield total, open_l + la, open_m - 1 + m, None, rest
        if s and open_l:
            yield total, open_l - 1 + la, open_m + m, None, rest
            for less in _less_a_medium(rest):
                yield total + 1, open_l - 1 + la, open_m + m, None, less


def _hole_openings(
    open_l: int,
    open_m: int,
    holes: tuple[Hole, ...],
    groups: tuple[Group, ...],
    links: tuple[int, ...],
) -> Iterator[_HoleMove]:
    """Open a colour into a hole, where its pyramids then found one by one."""
    for i, (mask, s, m, la) in enumerate(groups):
        if s + m + la < 2:
            continue
        rest = groups[:i] + groups[i + 1 :]
        for h, (room, hole_l, hole_m) in enumerate(holes):
            bit = links[h]
            new = bit & ~mask
            if not any(hole[0] for j, hole in enumerate(holes) if new >> j & 1):
                continue
            if m and hole_l:
                hole = (room, hole_l - 1, hole_m + 1)
                yield 1, open_l, open_m, (h, hole), (*rest, (mask | bit, s, m - 1, la))
            if s and hole_m:
                hole = (room, hole_l, hole_m - 1)
                yield 1, open_l, open_m, (h, hole), (*rest, (mask | bit, s - 1, m, la))
            if s and hole_l:
                hole = (room, hole_l - 1, hole_m)
                grown = (mask | bit, s - 1, m, la)
                yield 1, open_l, open_m, (h, hole), (*rest, grown)
                for less in _less_a_medium(rest):
                    yield 2, open_l, open_m, (h, hole), (*less, grown)


def _hole_foundings(
    open_l: int, open_m: int, holes: tuple[Hole, ...], groups: tuple[Group, ...]
) -> Iterator[_HoleMove]:
    """Found a colour's largest pyramid into a hole it reaches."""
    for i, (mask, s, m, la) in enumerate(groups):
        rest = groups[:i] + groups[i + 1 :]
        for h, (room, hole_l, hole_m) in enumerate(holes):
            if not mask >> h & 1 or not room:
                continue
            if la:
                grown, hole = (mask, s, m, la - 1), (room - 1, hole_l + 1, hole_m)
            elif m:
                grown, hole = (mask, s, m - 1, la), (room - 1, hole_l, hole_m + 1)
            else:
                grown, hole = (mask, s - 1, m, la), (room - 1, hole_l, hole_m)
            yield 1, open_l, open_m, (h, hole), (*rest, grown)


def _matchable(choices: list[set[int]]) -> bool:
    """Whether each set can be given a cell of its own (augmenting paths)."""
    owner: dict[int, int] = {}

    def claim(index: int, seen: set[int]) -> bool:
        for cell in sorted(choices[index]):
            if cell in seen:
                continue
            seen.add(cell)
            if cell not in owner or claim(owner[cell], seen):
                owner[cell] = index
                return True
        return False

    return all(claim(index, set()) for index in range(len(choices)))


def _hole_slots(
    touched: dict[int, list[int]], holes: list[list[int]]
) -> tuple[dict[int, int], list[int], tuple[int, ...]]:
    """For each hole a stack touches, the slot `hole_bound` counts it in; the room
    (empty cells) of each slot; and per slot, the slots linked to it (a bit mask).

    Recolouring a top counted in a hole reaches every hole linked to that one
    through stacks open into several (`links`: looser than the stack's own
    holes, but the same for every top counted in a hole, so a bound)."""
    pooled = list(range(len(holes)))

    def pool_of(h: int) -> int:
        while pooled[h] != h:
            h = pooled[h]
        return h

    for found in touched.values():
        for h in found[1:]:
            pooled[pool_of(h)] = pool_of(found[0])
    # Holes told apart make `_unlocks_holes` exponential in their number:
    # past a few, linked holes are pooled into one (looser, still a bound).
    reached = {h for found in touched.values() for h in found}
    separate = len(reached) <= _SEPARATE_HOLES
    unit = {h: h if separate else pool_of(h) for h in reached}
    used = sorted(set(unit.values()))
    number = {h: i for i, h in enumerate(used)}
    slot = {h: number[unit[h]] for h in reached}
    room = [0] * len(used)
    for h in reached:
        room[slot[h]] += len(holes[h])
    links = tuple(sum(1 << number[j] for j in used if pool_of(j) == pool_of(h)) for h in used)
    return slot, room, links


_Tally = tuple[int, int, int, int, int, int]
"""The palace as the relaxation sees it: its open large and medium tops, its closed
large and medium tops, the colours of its open tops and those of two open tops
or more (a bit each)."""


def _recoloured(tally: _Tally, old: int, new: int) -> _Tally:
    """`tally` once an open stack's top `old` is covered by `new` (it stays open),
    for `bound_of`: which colours have two open tops is no longer kept exact."""
    open_l, open_m, closed_l, closed_m, colours, twice = tally
    open_l += (new >> _SHIFT == LARGE) - (old >> _SHIFT == LARGE)
    open_m += (new >> _SHIFT == MEDIUM) - (old >> _SHIFT == MEDIUM)
    old_bit = 1 << (old & _COLOUR_MASK)
    if not twice & old_bit:
        colours &= ~old_bit
    new_bit = 1 << (new & _COLOUR_MASK)
    return open_l, open_m, closed_l, closed_m, colours | new_bit, twice


@dataclass(frozen=True, slots=True)
class _Outside:
    """The empty cells of a box of cells around the palace (low x to high x, low y
    to high y) that reach the box's border, as bits: cell x, y is bit
    `(x - low_x) * stride + y - low_y`."""

    low_x: int
    high_x: int
    low_y: int
    high_y: int
    stride: int
    bits: int

    def reaches(self, cell: int) -> bool:
        """Whether an empty cell is open to the outside: reached, or beyond the box."""
        here = cell + _HALF
        x, y = here >> _BITS, (here & _LOW) - _HALF
        if not (self.low_x <= x <= self.high_x and self.low_y <= y <= self.high_y):
            return True
        return bool(self.bits >> ((x - self.low_x) * self.stride + y - self.low_y) & 1)


class _Search:
    """One solve: the palace as mutable dicts with undo, the yard as counts by top code."""

    def __init__(
        self, tops: dict[int, int], counts: list[int], rng: Rng | None, budget: int
    ) -> None:
        self.tops = tops
        self.rng = rng
        # The work of this solve, and how much each budgeted phase may do.
        self.meter = _Meter()
        self.budget = budget
        self.counts = counts
        self.colours = sorted({code & _COLOUR_MASK for code, n in enumerate(counts) if n})
        # Placed so far in the search, in order: (code, cell), and the tops
        # each placement replaced (None: it founded a new stack).
        self.trail: list[tuple[int, int]] = []
        self.undo: list[int | None] = []
        self.changed: dict[int, int] = {}
        # How many placements of the trail are on each cell.
        self.touched: dict[int, int] = {}
        # Positions known to fail: the smallest number of placements proven
        # out of reach from there.
        self.fail: dict[tuple[frozenset[tuple[int, int]], tuple[int, ...]], int] = {}
        self.found: list[tuple[int, int]] = []
        # The outside as of the greedy plan's last look (`outside`): the
        # stacks then, and the outside flooded around them once asked for.
        self.looked: list[int] = []
        self.flooded: _Outside | None = None
        # The outside when the exact search starts (`hole_bound`); None floods
        # at every position.
        self.seen: _Outside | None = None
        # `first_values`, once worked out.
        self.firsts: dict[int, int] | None = None

    # -- the bounds -------------------------------------------------------

    def colour_counts(self, colour: int) -> tuple[int, int, int]:
        counts = self.counts
        return (
            counts[(SMALL << _SHIFT) | colour],
            counts[(MEDIUM << _SHIFT) | colour],
            counts[(LARGE << _SHIFT) | colour],
        )

    def remaining(self) -> int:
        return sum(self.counts)

    def bound(self) -> int:
        """The relaxation's count from the current position (an upper bound)."""
        if not self.tops:
            return self.empty_bound()
        return self.bound_of(self.tally())

    def tally(self) -> _Tally:
        """The palace as the relaxation sees it (see `_Tally`)."""
        tops = self.tops
        open_l = open_m = closed_l = closed_m = 0
        open_colours = twice = 0
        for cell, code in tops.items():
            size = code >> _SHIFT
            is_open = (
                cell + 1 not in tops
                or cell - 1 not in tops
                or cell + _WIDE not in tops
                or cell - _WIDE not in tops
            )
            if is_open:
                bit = 1 << (code & _COLOUR_MASK)
                twice |= open_colours & bit
                open_colours |= bit
                if size == LARGE:
                    open_l += 1
                elif size == MEDIUM:
                    open_m += 1
            elif size == LARGE:
                closed_l += 1
            elif size == MEDIUM:
                closed_m += 1
        return open_l, open_m, closed_l, closed_m, open_colours, twice

    def bound_of(self, tally: _Tally) -> int:
        """`bound` from the tally of the current palace."""
        open_l, open_m, closed_l, closed_m, open_colours, _ = tally
        best = -1
        for founders in self.founder_sets(open_colours):
            best = max(best, self.relaxed(founders, open_l, open_m, closed_l, closed_m))
        return best

    def founder_sets(self, open_colours: int) -> list[int]:
        """The largest sets of open colours that can all found from the tops they have.

        The first founding of a colour from a top it already has fills one
        of the empty cells next to such a top, and two colours never fill
        the same cell: so the colours that found that way need distinct
        cells (a matching). Where two colours share their only cell, one of
        them can found only after an unlock, like a colour with no open top.
        Usually every open colour has cells enough and this is one set.
        """
        counts = self.counts
        wanting = [
            colour
            for colour in self.colours
            if open_colours >> colour & 1
            and (counts[_SMALLS | colour] or counts[_MEDIUMS | colour] or counts[_LARGES | colour])
        ]
        if len(wanting) < 2:
            # An open colour has an empty cell next to one of its tops.
            return [open_colours]
        if self.cells_enough(wanting):
            return [open_colours]
        tops = self.tops
        ports: dict[int, set[int]] = {colour: set() for colour in wanting}
        for cell, code in tops.items():
            colour = code & _COLOUR_MASK
            if colour in ports:
                ports[colour].update((cell + 1, cell - 1, cell + _WIDE, cell - _WIDE))
        for cells in ports.values():
            cells.difference_update(tops)
        if all(len(cells) >= len(wanting) for cells in ports.values()):
            return [open_colours]
        others = open_colours & ~sum(1 << colour for colour in wanting)
        sets: list[int] = []
        for size in range(len(wanting), 0, -1):
            for chosen in combinations(wanting, size):
                mask = sum(1 << colour for colour in chosen)
                if any(mask & ~done == 0 for done in sets):
                    continue
                if _matchable([ports[colour] for colour in chosen]):
                    sets.append(mask)
        return [others | mask for mask in sets] or [others]

    def cells_enough(self, wanting: list[int]) -> bool:
        """Whether each colour of `wanting` has at least as many empty cells next to its
        tops as there are such colours (then every one of them can found). Looks at
        the stacks only until it is sure: a few, usually, where `founder_sets`
        would gather every colour's cells."""
        tops = self.tops
        need = len(wanting)
        cells: dict[int, set[int]] = {colour: set() for colour in wanting}
        short = need
        for cell, code in tops.items():
            found = cells.get(code & _COLOUR_MASK)
            if found is None or len(found) >= need:
                continue
            for step in _NEAR:
                if cell + step not in tops:
                    found.add(cell + step)
            if len(found) >= need:
                short -= 1
                if not short:
                    return True
        return False

    def relaxed(
        self, open_colours: int, open_l: int, open_m: int, closed_l: int, closed_m: int
    ) -> int:
        placed = 0
        locked: list[tuple[int, int, int]] = []
        counts = self.counts
        # `colour_counts` written out: every bound asks this of every colour.
        for colour in self.colours:
            smalls = counts[(SMALL << _SHIFT) | colour]
            mediums = counts[(MEDIUM << _SHIFT) | colour]
            larges = counts[(LARGE << _SHIFT) | colour]
            if not (smalls or mediums or larges):
                continue
            if open_colours >> colour & 1:
                placed += smalls + mediums + larges
                open_m += mediums
                open_l += larges
            else:
                locked.append((smalls, mediums, larges))
        if not locked:
            return placed
        return placed + _unlocks(
            self.meter, open_l, open_m, closed_l, closed_m, tuple(sorted(locked))
        )

    def flood_outside(self, stacks: Iterable[int] | None = None) -> _Outside:
        """The empty cells of the frame around the palace (or around `stacks`) that
        reach its border."""
        shifted = [cell + _HALF for cell in (self.tops if stacks is None else stacks)]
        xs = [here >> _BITS for here in shifted]
        ys = [(here & _LOW) - _HALF for here in shifted]
        low_x = min(xs) - 1
        low_y = min(ys) - 1
        high_x = max(xs) + 1
        high_y = max(ys) + 1
        # A bit per cell of the frame, row by row (a row is one x), with a bit
        # more per row that is never free, so that no step wraps to another row.
        stride = high_y - low_y + 2
        rows = high_x - low_x + 1
        row = (1 << (stride - 1)) - 1
        # The first cell of each row.
        column = ((1 << (stride * rows)) - 1) // ((1 << stride) - 1)
        free = row * column
        taken = 0
        for x, y in zip(xs, ys, strict=True):
            taken |= 1 << ((x - low_x) * stride + y - low_y)
        free &= ~taken
        # The frame's border is empty (the palace is inside the frame) and all of
        # one piece: growing from all of it reaches what growing from a corner
        # does, in fewer steps.
        reach = row | row << (stride * (rows - 1)) | column | column << (stride - 2)
        while True:
            grown = (reach | reach << 1 | reach >> 1 | reach << stride | reach >> stride) & free
            if grown == reach:
                return _Outside(low_x, high_x, low_y, high_y, stride, reach)
            reach = grown

    def outside(self) -> _Outside:
        """The outside as of the greedy plan's last look at the palace, flooded when
        first asked for: the random builder seldom asks (only to recolour)."""
        if self.flooded is None:
            self.flooded = self.flood_outside(self.looked)
        return self.flooded

    def hole_bound(self, seen: _Outside | None = None) -> int:
        """The relaxation told which empty cells are walled in (an upper bound, often
        below `bound()`): founding into a hole is limited to one pyramid a cell.

        `seen` is an outside flooded earlier in this solve, to spare a flood per
        position searched: placements only ever shrink the outside, so a cell
        of it walled in since counts as outside, which loosens the bound only.
        """
        if not self.tops:
            return self.empty_bound()
        # Its own work, besides the `_unlocks_holes` calls: a few looks at each stack.
        self.meter.charge(len(self.tops))
        touched, holes = self.walled_in(self.flood_outside() if seen is None else seen)
        slot, room, links = _hole_slots(touched, holes)
        hole_tops, open_l, open_m, closed, outside_colours, masks = self.tally_tops(
            touched, slot, len(room)
        )
        placed, more_l, more_m, groups = self.reach_groups(outside_colours, masks)
        if not groups:
            return placed
        holes_now = tuple((room[i], hole_tops[i][0], hole_tops[i][1]) for i in range(len(room)))
        return placed + _unlocks_holes(
            self.meter,
            open_l + more_l,
            open_m + more_m,
            closed,
            holes_now,
            tuple(sorted(groups)),
            links,
        )

    def walled_in(self, outside: _Outside) -> tuple[dict[int, list[int]], list[list[int]]]:
        """The stacks open into holes only, each with the numbers of the holes it
        touches, sorted; and the cells of each hole.

        A stack with no outside neighbour but some empty one is open into
        holes. Its colour reaches each of them; its top is counted in the
        first (`tally_tops`)."""
        tops = self.tops
        is_out = outside.reaches
        hole_of: dict[int, int] = {}
        holes: list[list[int]] = []
        touched: dict[int, list[int]] = {}
        for cell in tops:
            empty = [cell + step for step in _NEAR if cell + step not in tops]
            if not empty or any(is_out(near) for near in empty):
                continue
            touched[cell] = sorted(
                {self.hole_index(near, is_out, hole_of, holes) for near in empty}
            )
        return touched, holes

    def tally_tops(
        self, touched: dict[int, list[int]], slot: dict[int, int], slots: int
    ) -> tuple[list[list[int]], int, int, tuple[int, int], int, dict[int, int]]:
        """The tops by where they are open: the large and medium tops counted in each
        hole slot, the outside-open large and medium tops, the closed ones, the
        outside-open colours (a bit each), and the hole slots each colour reaches."""
        tops = self.tops
        hole_tops = [[0, 0] for _ in range(slots)]
        open_l = open_m = closed_l = closed_m = 0
        outside_colours = 0
        masks: dict[int, int] = {}
        for cell, code in tops.items():
            size = code >> _SHIFT
            colour = code & _COLOUR_MASK
            if cell in touched:
                found = touched[cell]
                for h in found:
                    masks[colour] = masks.get(colour, 0) | 1 << slot[h]
                if size > SMALL:
                    hole_tops[slot[found[0]]][LARGE - size] += 1
            elif any(cell + step not in tops for step in _NEAR):
                outside_colours |= 1 << colour
                open_l += size == LARGE
                open_m += size == MEDIUM
            else:
                closed_l += size == LARGE
                closed_m += size == MEDIUM
        return hole_tops, open_l, open_m, (closed_l, closed_m), outside_colours, masks

    def reach_groups(
        self, outside_colours: int, masks: dict[int, int]
    ) -> tuple[int, int, int, list[Group]]:
        """The yard by colour: what the outside-open colours place (all of it), the
        large and medium tops they add, and the other colours as `Group`s."""
        placed = more_l = more_m = 0
        groups: list[Group] = []
        for colour in self.colours:
            s, m, la = self.colour_counts(colour)
            if not s + m + la:
                continue
            if outside_colours >> colour & 1:
                placed += s + m + la
                more_l += la
                more_m += m
            else:
                groups.append((masks.get(colour, 0), s, m, la))
        return placed, more_l, more_m, groups

    def hole_index(
        self,
        cell: int,
        is_out: Callable[[int], bool],
        hole_of: dict[int, int],
        holes: list[list[int]],
    ) -> int:
        """The number of the hole holding the empty `cell` (filled in on first sight)."""
        if cell in hole_of:
            return hole_of[cell]
        number = len(holes)
        cells = [cell]
        hole_of[cell] = number
        todo = [cell]
        while todo:
            here = todo.pop()
            for step in _NEAR:
                near = here + step
                if near not in hole_of and near not in self.tops and not is_out(near):
                    hole_of[near] = number
                    cells.append(near)
                    todo.append(near)
        holes.append(cells)
        return number

    def empty_bound(self) -> int:
        return max((1 + value for value in self.first_values().values()), default=0)

    def first_values(self) -> dict[int, int]:
        """The relaxation's count after each first pyramid (by code) on the empty
        palace, that pyramid left out: its stack at 0,0 is the only top, open.

        Kept for the greedy plan's `best_first`, which weighs the same: the
        palace is empty only before the first placement, so the yard is then
        always the whole yard. `empty_bound` still works them out each time,
        so that the work it counts is the same at every call."""
        values: dict[int, int] = {}
        counts = self.counts
        for code, n in enumerate(counts):
            if not n:
                continue
            counts[code] -= 1
            size = code >> _SHIFT
            try:
                values[code] = self.relaxed(
                    1 << (code & _COLOUR_MASK), int(size == LARGE), int(size == MEDIUM), 0, 0
                )
            finally:
                counts[code] += 1
        self.firsts = values
        return values

    def final_block(self) -> int:
        """How many of the pyramids left the final block of covers places."""
        large_tops = medium_tops = 0
        for code in self.tops.values():
            size = code >> _SHIFT
            if size == LARGE:
                large_tops += 1
            elif size == MEDIUM:
                medium_tops += 1
        counts = self.counts
        smalls = sum(counts[(SMALL << _SHIFT) | c] for c in self.colours)
        mediums = sum(counts[(MEDIUM << _SHIFT) | c] for c in self.colours)
        return final_covers(smalls, mediums, large_tops, medium_tops)

    # -- placing and taking back -----------------------------------------

    def place(self, code: int, cell: int) -> None:
        self.counts[code] -= 1
        before = self.tops.get(cell)
        self.undo.append(before)
        self.tops[cell] = code
        self.changed[cell] = code
        self.trail.append((code, cell))
        self.touched[cell] = self.touched.get(cell, 0) + 1

    def take_back(self) -> None:
        code, cell = self.trail.pop()
        before = self.undo.pop()
        self.counts[code] += 1
        earlier = self.touched[cell] - 1
        if earlier:
            self.touched[cell] = earlier
        else:
            del self.touched[cell]
        if before is None:
            del self.tops[cell]
            del self.changed[cell]
        else:
            self.tops[cell] = before
            # The cell was changed before this cover only if an earlier
            # placement in the trail touched it.
            if earlier:
                self.changed[cell] = before
            else:
                del self.changed[cell]

    def final_steps(self) -> list[tuple[int, int]]:
        """Covers placing `final_block()` pyramids: mediums on larges, then smalls."""
        counts = self.counts
        mediums = [
            (MEDIUM << _SHIFT) | c
            for c in self.colours
            for _ in range(counts[(MEDIUM << _SHIFT) | c])
        ]
        smalls = [
            (SMALL << _SHIFT) | c
            for c in self.colours
            for _ in range(counts[(SMALL << _SHIFT) | c])
        ]
        if not (mediums or smalls):
            # Often so at the end of a greedy plan: the tops need no sorting.
            return []
        large = sorted(cell for cell, code in self.tops.items() if code >> _SHIFT == LARGE)
        medium = sorted(cell for cell, code in self.tops.items() if code >> _SHIFT == MEDIUM)
        steps = list(zip(mediums, large, strict=False))
        steps.extend(zip(smalls, sorted(large + medium), strict=False))
        return steps

    # -- the greedy plan ---------------------------------------------------

    def run(self) -> tuple[int, list[tuple[int, int]], bool]:
        """The count, a plan placing it, and whether the count is proven maximal."""
        total = self.remaining()
        if not total:
            return 0, [], True
        upper = self.bound()
        count, steps = self.greedy()
        if count >= upper:
            return count, steps, True
        self.unwind()
        # Two budgeted phases. Everything in them counts: positions, and the
        # bounds (the hole-aware one at the root too).
        meter = self.meter
        meter.limit = meter.work + self.budget
        target = upper
        try:
            if self.tops:
                self.seen = self.flood_outside()
            upper = min(upper, self.hole_bound(self.seen))
            for target in range(upper, count, -1):
                if self.feasible(target):
                    return target, self.found, True
            return count, steps, True
        except _OutOfWork:
            self.unwind()
        # Everything above `target` is refuted; climb from the greedy count
        # with a fresh budget and keep the best plan found (the memos of
        # refuted positions and of the bounds still hold).
        meter.limit = meter.work + self.budget
        try:
            need = count + 1
            while need <= target and self.feasible(need):
                count, steps = len(self.found), self.found
                need = count + 1
            return count, steps, True
        except _OutOfWork:
            self.unwind()
            return count, steps, False

    def reach(self, need: int) -> list[tuple[int, int]] | None:
        """A plan placing at least `need`, if the bounds and the budgeted search find one."""
        if self.remaining() < need or self.bound() < need:
            return None
        count, steps = self.greedy()
        if count >= need:
            return steps
        self.unwind()
        meter = self.meter
        meter.limit = meter.work + self.budget
        try:
            if self.tops:
                self.seen = self.flood_outside()
                if self.hole_bound(self.seen) < need:
                    return None
            return self.found if self.feasible(need) else None
        except _OutOfWork:
            self.unwind()
            return None

    def unwind(self) -> None:
        while self.trail:
            self.take_back()

    def greedy(self) -> tuple[int, list[tuple[int, int]]]:
        """A real plan following the relaxation's choices. Its placements stay on the
        palace, as most callers need only the plan: `unwind` takes them back."""
        depth = len(self.trail)
        if not self.remaining():
            return 0, []
        if not self.tops:
            self.place(self.best_first(), _ORIGIN)
        while True:
            self.looked, self.flooded = list(self.tops), None
            self.found_all()
            if not self.best_unlock():
                break
        steps = self.trail[depth:] + self.final_steps()
        return len(steps), steps

    def best_first(self) -> int:
        """The first pyramid the relaxation values most (the lowest code on a tie)."""
        values = self.firsts if self.firsts is not None else self.first_values()
        return max(values, key=values.__getitem__)

    def found_all(self) -> None:
        """Found every pyramid that can be founded.

        Each colour grows a chain from its best cell on, smalls first, so
        that its larges end up at the open end, where a later recolouring
        wants them. Extending the chain from its last stack keeps this
        linear in the number of pyramids. One pass over the colours does it:
        a colour stops only when no empty cell is next to its tops, and
        foundings of other colours never make one.
        """
        for colour in self.colours:
            self.found_colour(colour)

    def found_colour(self, colour: int) -> None:
        """Found what `found_all` can of `colour`, in one chain."""
        if self.rng is not None:
            self.found_at_random(colour, self.rng)
            return
        counts = self.counts
        head: int | None = None
        for size in (SMALL, MEDIUM, LARGE):
            code = (size << _SHIFT) | colour
            while counts[code]:
                cell = None if head is None else self.extend(head)
                if cell is None:
                    cell = self.best_cell(colour)
                if cell is None:
                    # No empty cell is next to a top of this colour, nor will
                    # be for its larger sizes: nothing is placed meanwhile.
                    return
                self.place(code, cell)
                head = cell

    def found_at_random(self, colour: int, rng: Rng) -> None:
        """`found_colour` for the random builder: each pyramid on a cell drawn from the
        empty cells next to the colour's tops, in cell order."""
        counts = self.counts
        tops = self.tops
        # Found once and then kept sorted and up to date (only this colour is
        # placed meanwhile).
        spots: list[int] | None = None
        for size in (SMALL, MEDIUM, LARGE):
            code = (size << _SHIFT) | colour
            while counts[code]:
                if spots is None:
                    spots = sorted(self.spots(colour))
                if not spots:
                    # Nor will there be a cell for its larger sizes.
                    return
                cell = spots.pop(rng.below(len(spots)))
                for step in _NEAR:
                    near = cell + step
                    if near not in tops and near not in spots:
                        insort(spots, near)
                self.place(code, cell)

    def spot_key(self, spot: int) -> tuple[int, int, int, int]:
        """How good an empty cell is to found on: closes no stack, is open to the
        outside (not walled in), keeps room."""
        closes, free = self.closes_and_free(spot)
        return (-closes, int(self.outside().reaches(spot)), free, -spot)

    def closes_and_free(self, spot: int) -> tuple[int, int]:
        """How many stacks have the empty `spot` as their only empty neighbour, and how
        many of its neighbours are empty."""
        tops = self.tops
        free = 0
        closes = 0
        for step, side in _NEAR_SIDES:
            near = spot + step
            if near not in tops:
                free += 1
            # `spot` is one empty neighbour of that stack: the only one when its
            # three others (on along `step`, and to either side) are stacks.
            elif near + step in tops and near + side in tops and near - side in tops:
                closes += 1
        return closes, free

    def extend(self, head: int) -> int | None:
        """The best empty cell next to the chain's last stack, if it closes nothing
        and leaves room to go on (and is open to the outside: asked last, as it
        costs most)."""
        best: tuple[int, int] | None = None
        best_cell = None
        for step in _NEAR:
            spot = head + step
            if spot in self.tops:
                continue
            closes, free = self.closes_and_free(spot)
            if closes or free < 2:
                continue
            key = (free, -spot)
            if (best is None or key > best) and self.outside().reaches(spot):
                best, best_cell = key, spot
        return best_cell

    def spots(self, colour: int) -> set[int]:
        """The empty cells next to a top of `colour`: where it may found."""
        tops = self.tops
        return {
            cell + step
            for cell, code in tops.items()
            if code & _COLOUR_MASK == colour
            for step in _NEAR
            if cell + step not in tops
        }

    def best_cell(self, colour: int) -> int | None:
        """The empty cell next to a top of `colour` that keeps the most room."""
        tops = self.tops
        best: tuple[int, int, int, int] | None = None
        best_cell = None
        for cell, code in tops.items():
            if code & _COLOUR_MASK != colour:
                continue
            for step in _NEAR:
                spot = cell + step
                if spot in tops:
                    continue
                key = self.spot_key(spot)
                if best is None or key > best:
                    best, best_cell = key, spot
                    if key[:3] == _ROOMIEST:
                        return spot
        return best_cell

    def best_unlock(self) -> bool:
        """Take the recolouring the relaxation values most, if it is worth as much as stopping."""
        moves = self.recolourings(greedy=True)
        # The random builder's work is never budgeted, so with no move to weigh
        # it spares the bound. The solver's greedy plan asks it all the same:
        # what the bounds' memos keep from it changes what the budgeted search
        # after it counts.
        if not moves and self.rng is not None:
            return False
        # Every move only covers one open stack: the palace is tallied once.
        tally = self.tally()
        stop = self.bound_of(tally)
        best_value = -1
        best_move: tuple[tuple[int, int], ...] = ()
        for move in moves:
            cover, target = move[-1]
            after = _recoloured(tally, self.tops[target], cover)
            for code, cell in move:
                self.place(code, cell)
            value = len(move) + self.bound_of(after)
            for _ in move:
                self.take_back()
            if value > best_value:
                best_value, best_move = value, move
        if not best_move or best_value < stop:
            return False
        for code, cell in best_move:
            self.place(code, cell)
        return True

    def recolourings(self, greedy: bool) -> list[tuple[tuple[int, int], ...]]:
        """The covers worth making before the final block: they give an open stack a new
        colour, of which a pyramid is left to found next to it.

        A small may go onto a medium put there just before (of a colour not
        its own): that medium could not go on the large after the small.
        `greedy` keeps, per kind of move, only the target the greedy plan
        would pick; otherwise every open stack is tried.
        """
        tops = self.tops
        counts = self.counts
        moves: list[tuple[tuple[int, int], ...]] = []
        # Only a colour with two pyramids left or more gains by opening.
        colours = [
            colour
            for colour in self.colours
            if counts[_SMALLS | colour] + counts[_MEDIUMS | colour] + counts[_LARGES | colour] >= 2
        ]
        if not colours:
            return moves
        open_cells = [
            cell
            for cell in sorted(tops)
            if cell + 1 not in tops
            or cell - 1 not in tops
            or cell + _WIDE not in tops
            or cell - _WIDE not in tops
        ]
        if greedy:
            open_colours = {tops[cell] & _COLOUR_MASK for cell in open_cells}
            # Looked for only when a colour needs it: usually none does.
            targets: dict[int, int | None] = {}
        for colour in colours:
            if greedy and colour in open_colours:
                continue
            for size in (MEDIUM, SMALL):
                code = (size << _SHIFT) | colour
                if not counts[code]:
                    continue
                cells = open_cells
                if greedy:
                    if size not in targets:
                        targets[size] = self.best_target(size)
                    target = targets[size]
                    cells = [] if target is None else [target]
                for cell in cells:
                    top = tops[cell]
                    if top >> _SHIFT <= size or top & _COLOUR_MASK == colour:
                        continue
                    moves.append(((code, cell),))
                if size == SMALL:
                    moves.extend(self._onto_a_new_medium(code, open_cells, greedy))
        return moves

    def _onto_a_new_medium(
        self, small: int, open_cells: list[int], greedy: bool
    ) -> list[tuple[tuple[int, int], ...]]:
        """The recolourings by `small` onto a medium of another colour put on an
        open large just before; `greedy` keeps the first large only."""
        tops = self.tops
        colour = small & _COLOUR_MASK
        moves: list[tuple[tuple[int, int], ...]] = []
        for cell in open_cells:
            top = tops[cell]
            if top >> _SHIFT != LARGE or top & _COLOUR_MASK == colour:
                continue
            for filler in self.colours:
                under = (MEDIUM << _SHIFT) | filler
                if filler != colour and self.counts[under]:
                    moves.append(((under, cell), (small, cell)))
            if greedy:
                break
        return moves

    def best_target(self, size: int) -> int | None:
        """The open stack to recolour with a pyramid of `size`: one open to the outside,
        then the smallest top that takes it, then the one with the most room."""
        best: tuple[int, int, int, int] | None = None
        best_cell = None
        tops = self.tops
        for cell, code in tops.items():
            top = code >> _SHIFT
            if top <= size:
                continue
            empty = [cell + step for step in _NEAR if cell + step not in tops]
            if not empty:
                continue
            reaches = self.outside().reaches
            out = int(any(reaches(near) for near in empty))
            key = (out, -top, len(empty), -cell)
            if best is None or key > best:
                best, best_cell = key, cell
        return best_cell

    # -- the exact search --------------------------------------------------

    def feasible(self, need: int) -> bool:
        """Can `need` more pyramids be placed from here? Sets `self.found` when so.

        Raises `_OutOfWork` on the call past the budget."""
        # A position costs about as much as the palace has stacks (bounds,
        # moves): counting that keeps the budget's time steady on any palace.
        self.meter.charge(1 + len(self.tops))
        if self.final_block() >= need:
            self.found = list(self.trail) + self.final_steps()
            return True
        key = (frozenset(self.changed.items()), tuple(self.counts))
        if self.fail.get(key, _NO_NEED) <= need:
            return False
        upper = self.bound()
        if upper >= need:
            upper = min(upper, self.hole_bound(self.seen))
        if upper < need:
            self.fail[key] = upper + 1
            return False
        for move in self.moves():
            for code, cell in move:
                self.place(code, cell)
            ok = self.feasible(need - len(move))
            for _ in move:
                self.take_back()
            if ok:
                return True
        self.fail[key] = min(self.fail.get(key, _NO_NEED), need)
        return False

    def founding_spots(self) -> dict[int, int]:
        """Each empty cell next to a stack, with the bits of the colours that may found
        there (those of the tops beside it)."""
        tops = self.tops
        spots: dict[int, int] = {}
        for cell, code in tops.items():
            bit = 1 << (code & _COLOUR_MASK)
            for step in _NEAR:
                spot = cell + step
                if spot not in tops:
                    spots[spot] = spots.get(spot, 0) | bit
        return spots

    def moves(self) -> list[tuple[tuple[int, int], ...]]:
        """Foundings on every candidate cell, then recolourings of open stacks."""
        tops = self.tops
        counts = self.counts
        if not tops:
            return [((code, _ORIGIN),) for code in range(len(counts)) if counts[code]]
        moves: list[tuple[tuple[int, int], ...]] = []
        spots = self.founding_spots()
        for spot in sorted(spots):
            mask = spots[spot]
            for colour in self.colours:
                if not mask >> colour & 1:
                    continue
                for size in (LARGE, MEDIUM, SMALL):
                    code = (size << _SHIFT) | colour
                    if counts[code]:
                        moves.append(((code, spot),))
        moves.extend(self.recolourings(greedy=False))
        return moves


BEST_BUDGET = 20_000
"""How much work `best_plan`'s search may do: each position counts one more than
the stacks of its palace, and the bounds count as in `SEARCH_BUDGET`."""


def best_plan(
    stacks: Mapping[Cell, tuple[Piece, int]],
    pieces: Iterable[Piece],
    need: int,
    mine: str,
    leader: str,
    start: Sequence[Step],
    budget: int = BEST_BUDGET,
) -> tuple[Step, ...]:
    """Of the plans placing `need` of `pieces`, the one with the most palace points
    for colour `mine`, then the fewest for `leader`, then the first found.

    `stacks` maps each palace cell to its top and its height. `start` is a plan
    placing `need`: the search's first best, so the answer is never worse for
    `mine` than it. The search goes depth first over real placements (every
    cover and every founding, the builder's covers of the tallest stacks
    first), each position once, and cuts a position from which the
    relaxation's bound cannot place what is still needed, or from which the
    builder's points cannot reach the best found. Past `budget` of work the
    best found stands. Deterministic, like `solve`: `build auto` is replayed
    by calling it again.
    """
    tops = {cell: top for cell, (top, _) in stacks.items()}
    search, letters = _prepare(tops, pieces, None, budget, (mine, leader))
    heights = {_cell(x, y): height for (x, y), (_, height) in stacks.items()}
    # A colour in neither the palace nor the yard has no points, and never will:
    # it is counted in a slot no placement touches.
    absent = _COLOUR_MASK + 1
    colour = {letter: index for index, letter in enumerate(letters)}
    best = _Best(
        search, heights, colour.get(mine, absent), colour.get(leader, absent), start, colour
    )
    search.meter.limit = budget
    with contextlib.suppress(_OutOfWork):
        best.descend(need)
    return _plan(len(best.plan), best.plan, letters, False).steps


class _Best:
    """`best_plan`'s search: `_Search` keeps the palace, the yard and the bounds;
    this keeps the stacks' heights and the colours' points beside it."""

    def __init__(
        self,
        search: _Search,
        heights: dict[int, int],
        mine: int,
        leader: int,
        start: Sequence[Step],
        colour: Mapping[str, int],
    ) -> None:
        self.search = search
        self.heights = heights
        self.mine = mine
        self.leader = leader
        # Each colour's palace points, kept as placements come and go.
        self.points = [0] * (_COLOUR_MASK + 2)
        for cell, code in search.tops.items():
            self.points[code & _COLOUR_MASK] += heights[cell]
        # Positions already searched, by the set of placements that made them:
        # a placement's level on its cell follows from its size.
        self.seen: set[frozenset[tuple[int, int]]] = set()
        codes = [((size << _SHIFT) | colour[c], _cell(x, y)) for size, c, x, y in start]
        for code, cell in codes:
            self.place(code, cell)
        self.value, self.plan = self.score(), codes
        for _ in codes:
            self.take_back()

    def score(self) -> tuple[int, int]:
        return self.points[self.mine], -self.points[self.leader]

    def place(self, code: int, cell: int) -> None:
        before = self.search.tops.get(cell)
        height = self.heights.get(cell, 0)
        if before is not None:
            self.points[before & _COLOUR_MASK] -= height
        self.points[code & _COLOUR_MASK] += height + 1
        self.heights[cell] = height + 1
        self.search.place(code, cell)

    def take_back(self) -> None:
        code, cell = self.search.trail[-1]
        self.search.take_back()
        height = self.heights[cell] - 1
        self.points[code & _COLOUR_MASK] -= height + 1
        after = self.search.tops.get(cell)
        if after is None:
            del self.heights[cell]
        else:
            self.heights[cell] = height
            self.points[after & _COLOUR_MASK] += height

    def descend(self, need: int) -> None:
        search = self.search
        search.meter.charge(1 + len(search.tops))
        if need == 0:
            score = self.score()
            if score > self.value:
                self.value, self.plan = score, list(search.trail)
            return
        key = frozenset(search.trail)
        if key in self.seen:
            return
        self.seen.add(key)
        if self.most_points(need) < self.value[0] or search.bound() < need:
            return
        for code, cell in self.moves():
            self.place(code, cell)
            self.descend(need - 1)
            self.take_back()

    def most_points(self, need: int) -> int:
        """An upper bound of the builder's points once `need` more are placed.

        A stack whose top has size `t` takes at most `t - 1` more pyramids
        (each strictly smaller). So each of the builder's pyramids placed
        takes over at most one other stack, worth at most its height plus
        that, or founds a stack at most 3 high; the builder's own stacks
        grow by at most their room."""
        search = self.search
        own = 0
        gains = [3] * min(need, sum(search.colour_counts(self.mine)))
        for cell, code in search.tops.items():
            room = (code >> _SHIFT) - 1
            if code & _COLOUR_MASK == self.mine:
                own += room
            elif room:
                gains.append(self.heights[cell] + room)
        gains.sort(reverse=True)
        takes = min(need, sum(search.colour_counts(self.mine)))
        return self.points[self.mine] + sum(gains[:takes]) + min(need, own)

    def moves(self) -> list[tuple[int, int]]:
        """Every placement, the builder's covers of the tallest stacks first, then
        covers of the leader's, then foundings, then the other covers."""
        search = self.search
        tops, counts = search.tops, search.counts
        if not tops:
            return [(code, _ORIGIN) for code in range(len(counts)) if counts[code]]
        ranked: list[tuple[int, int, int, int]] = []
        spots = search.founding_spots()
        for code in range(len(counts)):
            if not counts[code]:
                continue
            colour, size = code & _COLOUR_MASK, code >> _SHIFT
            for cell, top in tops.items():
                if top >> _SHIFT <= size:
                    continue
                height = self.heights[cell]
                if colour == self.mine:
                    rank = 0 if top & _COLOUR_MASK != self.mine else 3
                elif top & _COLOUR_MASK == self.leader:
                    rank = 1
                else:
                    rank = 3 if top & _COLOUR_MASK != self.mine else 4
                ranked.append((rank, -height, code, cell))
            for spot, mask in spots.items():
                if mask >> colour & 1:
                    ranked.append((2, 0, code, spot))
        ranked.sort()
        return [(code, cell) for _, _, code, cell in ranked]
