"""Subdivision (Carlton Noles, 2007): placing pyramids of three sizes on a grid.

The board is held as bitboards in Python ints: bit `rank * side + file` is
one cell (`a1` is bit 0). A state keeps one mask per seat and size, the mask
of free cells (neither a park nor built on), and two masks per seat kept up
to date move by move: the cells near that seat's own larges (where rule 1
forbids another of its larges) and the cells near other colours' smalls and
larges (the only cells rule 2 lets that seat put a small on). Legality is
then a few `&`s, a random move is a random set bit, groups are counted by
popcounts (Euler's formula, then a flood for holes) and the small-near-large
penalty is a popcount, which keeps random playouts cheap.

RULINGS (where the rules file is silent):
- `parks=players` is accepted when the park count divides evenly among the
  players, and 0 does (four players with `three_house`): there is nothing
  to place and the pyramids start at once. A park may go on any cell that is
  not a park yet. Seat 0 places the first park and, once the parks are all
  placed, the first pyramid too.
- `cells` names are read like moves (`C3` is `c3`); giving `cells` with a
  `parks` other than `cells` is refused rather than ignored.
- A resigned seat's pyramids stay on the board: they still count as another
  colour for rule 2 and as smalls near other players' larges; its unplaced
  pyramids score nothing and it ranks last whatever its score. If a seat
  resigns while parks are being placed, the others place the remaining ones.
- `private_parks`: a park none of whose near cells is free (all parks)
  scores for nobody.
- `legal_moves` leaves `resign` out (it is always legal, as the engine says).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import marshmallow
from marshmallow import fields, validate

from referee.engine import (
    JSON,
    BadOptions,
    Breakdown,
    Building,
    Choice,
    Game,
    IllegalMove,
    Played,
    Resign,
    Result,
    ScoreLine,
    rank,
    walk,
)
from referee.games.reasons import ALREADY_LEFT, NO_SEAT, reason, words
from referee.i18n import N_, _, ngettext
from referee.rng import Rng

SMALL, MEDIUM, LARGE = 1, 2, 3
SIZE_NAMES = dict(
    zip((SMALL, MEDIUM, LARGE), words(N_("small"), N_("medium"), N_("large")), strict=True)
)
OVER = -1
# The building's labels by size: French sizes agree with the pyramid, before or after it.
_PLACE_A = {
    SMALL: N_("Place a small pyramid on {cell}"),
    MEDIUM: N_("Place a medium pyramid on {cell}"),
    LARGE: N_("Place a large pyramid on {cell}"),
}
_SIZE_ON = {
    SMALL: N_("Small pyramid on {cell}"),
    MEDIUM: N_("Medium pyramid on {cell}"),
    LARGE: N_("Large pyramid on {cell}"),
}

# (players, three_house) -> (board side, parks, pyramids of each size)
SETUP = {
    (2, False): (6, 6, 5),
    (3, False): (7, 4, 5),
    (4, False): (8, 4, 5),
    (2, True): (5, 7, 3),
    (3, True): (6, 9, 3),
    (4, True): (6, 0, 3),
}
_STANDARD_EXTRA = {
    (2, False): ("c3", "d4"),
    (2, True): ("c3", "c1", "c5"),
    (3, True): ("c3", "d3", "c4", "d4", "a3"),
}
# What a park surrounded by one group of a seat gives it (`private_parks`).
PARK_POINTS = 3
# The penalty of a large with `n` smalls near it: the first is free, 3 at most.
_PENALTY = tuple(min(max(n - 1, 0), 3) for n in range(9))


class _Board:
    """Per-side constants: the masks every rule and score is built from."""

    __slots__ = (
        "cells",
        "edge",
        "full",
        "index",
        "names",
        "near",
        "not_first",
        "not_last",
        "side",
    )

    def __init__(self, side: int) -> None:
        self.side = side
        self.cells = side * side
        self.full = (1 << self.cells) - 1
        first_file = sum(1 << (row * side) for row in range(side))
        # Shifting by one moves the last file onto the next rank's first one
        # (and back): these masks cut those wrapped bits off.
        self.not_first = self.full & ~first_file
        self.not_last = self.full & ~(first_file << (side - 1))
        first_rank = (1 << side) - 1
        self.edge = (
            first_file | first_file << (side - 1) | first_rank | first_rank << (self.cells - side)
        )
        near = []
        for cell in range(self.cells):
            row, col = divmod(cell, side)
            mask = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if (dr or dc) and 0 <= row + dr < side and 0 <= col + dc < side:
                        mask |= 1 << ((row + dr) * side + col + dc)
            near.append(mask)
        self.near = tuple(near)
        self.names = tuple(
            f"{chr(97 + cell % side)}{cell // side + 1}" for cell in range(self.cells)
        )
        self.index = {name: cell for cell, name in enumerate(self.names)}

    def flood(self, seed: int, within: int) -> int:
        """The cells of `within` connected to `seed` through next-to links."""
        side, not_first, not_last = self.side, self.not_first, self.not_last
        group = seed
        while True:
            grown = (
                group
                | ((group << 1) & not_first)
                | ((group >> 1) & not_last)
                | (group << side)
                | (group >> side)
            ) & within
            if grown == group:
                return group
            group = grown

    def groups(self, mask: int) -> int:
        """How many groups the cells of `mask` make, by Euler's formula rather
        than by walking each group: for cells linked by sides, the cells less
        the links plus the 2x2 blocks is the groups less the holes. A hole is
        a region of other cells (linked by sides and corners, as a ring of
        cells linked by sides closes) that does not reach the board's edge."""
        side = self.side
        across = mask & mask >> 1 & self.not_last  # each cell linked to the next on its rank
        links = across.bit_count() + (mask & mask >> side).bit_count()
        blocks = (across & across >> side).bit_count()
        return mask.bit_count() - links + blocks + self.holes(mask)

    def holes(self, mask: int) -> int:
        """How many regions of the cells not in `mask` do not reach the edge.

        The others are flooded from the edge until they are all reached (as
        they mostly are, in two or three steps) or the flood stops short."""
        side, not_first, not_last = self.side, self.not_first, self.not_last
        others = self.full ^ mask
        reached = others & self.edge
        while reached != others:
            # `spread(reached) & others` written out: every final score floods.
            rank = reached | (reached << 1 & not_first) | (reached >> 1 & not_last)
            grown = (rank | rank << side | rank >> side) & others
            if grown == reached:
                return self.regions(others ^ reached)
            reached = grown
        return 0

    def spread(self, mask: int) -> int:
        """`mask` and the cells near it (by a side or a corner), and bits past
        the last cell: callers keep only the cells they look at."""
        side = self.side
        rank = mask | (mask << 1 & self.not_first) | (mask >> 1 & self.not_last)
        return rank | rank << side | rank >> side

    def regions(self, mask: int) -> int:
        """How many regions the cells of `mask` make, linked by sides and corners."""
        count = 0
        while mask:
            region = mask & -mask
            while True:
                grown = self.spread(region) & mask
                if grown == region:
                    break
                region = grown
            mask ^= region
            count += 1
        return count

    def cell_list(self, mask: int) -> list[str]:
        names = self.names
        out = []
        while mask:
            low = mask & -mask
            out.append(names[low.bit_length() - 1])
            mask ^= low
        return out

    def mask_of(self, cells: Iterable[str]) -> int:
        mask = 0
        for name in cells:
            mask |= 1 << self.index[name]
        return mask


_BOARDS = {side: _Board(side) for side in {setup[0] for setup in SETUP.values()}}
_ONLY = tuple(frozenset({seat}) for seat in range(4))
_NOBODY: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Place:
    """A pyramid of `size` (1 small, 2 medium, 3 large) on `cell` (`c4`)."""

    size: int
    cell: str


@dataclass(frozen=True, slots=True)
class Park:
    """A park on `cell`, while the players place the parks (`parks=players`)."""

    cell: str


Move = Place | Park | Resign

# Every placement on each board, by side, size (1-3) less one and cell: random
# moves hand these out rather than make a new one each time (moves are values).
_PLACES = {
    side: tuple(tuple(Place(size, name) for name in board.names) for size in SIZE_NAMES)
    for side, board in _BOARDS.items()
}


# Per-seat (and per-seat-and-size) bit sets are packed side by side in one
# int, each in a lane of `_LANE` bits, wide enough for the largest board: a
# move then changes an int where it would rebuild a tuple. The pyramids left
# are packed alike, a count in each `_COUNT` bits.
_LANE = 64
_COUNT = 4
_COUNT_MASK = (1 << _COUNT) - 1
# A seat's pyramids left, shifted down to its own counts: which sizes it has.
_HAS_SMALL, _HAS_MEDIUM, _HAS_LARGE = (_COUNT_MASK << _COUNT * size for size in range(3))
# For each player count and seat, a 1 at the start of every other seat's
# lane: a mask times this is that mask in each of their lanes.
_OTHER_LANES = {
    players: tuple(
        sum(1 << colour * _LANE for colour in range(players) if colour != seat)
        for seat in range(players)
    )
    for players in {players for players, _ in SETUP}
}


def _lane(packed: int, lane: int) -> int:
    """The bit set in lane `lane` of `packed`."""
    return packed >> lane * _LANE & _LANE_MASK


_LANE_MASK = (1 << _LANE) - 1


def _count(stash: int, k: int) -> int:
    """The pyramids left of kind `k` (`seat * 3 + size - 1`) in `stash`."""
    return stash >> k * _COUNT & _COUNT_MASK


class State(NamedTuple):
    """A position.

    `pieces` holds a lane per seat and size, lane `seat * 3 + size - 1`
    (`_lane`), and `stash` the pyramids left in the same order (`_count`).
    `legal`, `free`, `near_own_large` (a lane per seat), `near_other`
    (likewise) and `outcome` follow from the other fields; they are kept so
    that a move costs a few bit operations.

    A named tuple rather than a frozen dataclass: as immutable and compared
    by value, but a frozen dataclass sets each field through
    `object.__setattr__`, which cost more than the rest of a random move.
    """

    side: int
    players: int
    parks: int
    parks_left: int
    resigned: int  # a bit per seat
    private_parks: bool
    pieces: int
    stash: int
    to_move: int  # the seat to act, OVER once the game has ended
    # The cells where `to_move` may place a small, a medium and a large
    # (none while the parks are placed and once the game is over).
    legal: tuple[int, int, int]
    free: int  # the cells neither a park nor built on
    near_own_large: int
    near_other: int
    # The result once the game is over (`_ended`), None before: a driver asks
    # `result` of the last state more than once, and counting its groups is
    # the dearest step of a random playout.
    outcome: Result | None = None


# `_new_tuple(State, fields)` is `State(*fields)` with every field given: the
# named tuple's own constructor runs a Python `__new__` that costs as much
# again as building the tuple, and every move builds a state.
_new_tuple = tuple.__new__

# For each 12 bits, the positions of the set ones, lowest first.
_CHUNK = 12
_BITS_OF_CHUNK = tuple(
    tuple(bit for bit in range(_CHUNK) if chunk >> bit & 1) for chunk in range(1 << _CHUNK)
)
_CHUNK_MASK = (1 << _CHUNK) - 1


def _nth_bit(mask: int, n: int) -> int:
    """The index of the `n`th set bit of `mask` (from 0, lowest first), 12 bits at a time."""
    offset = 0
    while True:
        bits = _BITS_OF_CHUNK[mask & _CHUNK_MASK]
        count = len(bits)
        if n < count:
            return offset + bits[n]
        n -= count
        mask >>= _CHUNK
        offset += _CHUNK


# What placing a pyramid adds to a state's packed ints, worked out once: a
# move then looks its bits up where it would shift (and multiply) ints some
# hundreds of bits long. By kind (`seat * 3 + size - 1`): a pyramid of it in
# `stash`, and by kind and cell, its bit in `pieces`.
_ONE_OF_KIND = tuple(1 << k * _COUNT for k in range(4 * 3))
_PIECE_BIT = tuple(tuple(1 << k * _LANE + cell for cell in range(_LANE)) for k in range(4 * 3))


class _Marks(NamedTuple):
    """By seat and cell, the cells near that cell in the seat's own lane of
    `near_own_large` and in every other seat's lane of `near_other`."""

    near_own_large: tuple[tuple[int, ...], ...]
    near_other: tuple[tuple[int, ...], ...]


def _marks(side: int, players: int) -> _Marks:
    near, others = _BOARDS[side].near, _OTHER_LANES[players]
    return _Marks(
        tuple(tuple(around << seat * _LANE for around in near) for seat in range(players)),
        tuple(tuple(around * others[seat] for around in near) for seat in range(players)),
    )


# Every board with every player count: `state_from_json` takes any.
_MARKS = {(side, players): _marks(side, players) for side in _BOARDS for players in _OTHER_LANES}


def _placed(state: State, seat: int, size: int, index: int) -> State:
    """The state after `seat` places a pyramid of `size` on cell `index`, which
    the rules allow (`_place` checks the moves it is given, and random
    placements are drawn among the legal ones)."""
    # Unpacked at once: a named tuple's field read by name costs a call each.
    (
        side,
        players,
        parks,
        parks_left,
        resigned,
        private_parks,
        pieces,
        stash,
        _,
        _,
        free,
        near_own_large,
        near_other,
        _,
    ) = state
    k = seat * 3 + size - 1
    if size != MEDIUM:
        marks = _MARKS[side, players]
        if size == LARGE:
            near_own_large |= marks.near_own_large[seat][index]
        # The other colours may now put a small around it.
        near_other |= marks.near_other[seat][index]
    stash -= _ONE_OF_KIND[k]
    free ^= 1 << index
    to_move, legal = _turn(free, stash, near_own_large, near_other, resigned, players, seat + 1)
    after = _new_tuple(
        State,
        (
            side,
            players,
            parks,
            parks_left,
            resigned,
            private_parks,
            pieces | _PIECE_BIT[k][index],
            stash,
            to_move,
            legal,
            free,
            near_own_large,
            near_other,
            None,
        ),
    )
    return _ended(after) if to_move == OVER else after


_NO_PLACES = (0, 0, 0)


def _placements(
    free: int, stash: int, near_own_large: int, near_other: int, seat: int
) -> tuple[int, int, int]:
    """The cells where `seat` may place a small, a medium and a large."""
    has = stash >> seat * 3 * _COUNT
    # A lane shifted down keeps the lanes above it: `free` cuts them off.
    shift = seat * _LANE
    return (
        free & near_other >> shift if has & _HAS_SMALL else 0,
        free if has & _HAS_MEDIUM else 0,
        free & ~(near_own_large >> shift) if has & _HAS_LARGE else 0,
    )


def _turn(
    free: int,
    stash: int,
    near_own_large: int,
    near_other: int,
    resigned: int,
    players: int,
    first: int,
) -> tuple[int, tuple[int, int, int]]:
    """The first seat from `first` on (in turn order) that can place, and its
    `_placements`; OVER and none where no seat can."""
    if free:
        seats = _SEATS_IN_TURN[players][resigned][first]
        # `_placements` written out: this runs after every move.
        for seat, shift, has_small, has_medium, has_large in seats:
            small = free & near_other >> shift if stash & has_small else 0
            medium = free if stash & has_medium else 0
            # `free` less the cells near its larges, without a negative int
            # (a bitwise op with one copies it into two's complement first).
            large = free ^ free & near_own_large >> shift if stash & has_large else 0
            if small or medium or large:
                return seat, (small, medium, large)
    return OVER, _NO_PLACES


# For each seat, the shift down to its lanes and the counts in `stash` of
# its smalls, mediums and larges.
_SEAT_SHIFT_AND_SIZES = tuple(
    (seat * _LANE, *(mask << seat * 3 * _COUNT for mask in (_HAS_SMALL, _HAS_MEDIUM, _HAS_LARGE)))
    for seat in range(4)
)

# For each player count, the seats in turn order from seat `first` on, for
# `first` from 0 to the player count (the seat after the last is seat 0).
_TURN_ORDER = {
    players: tuple(
        tuple((first + step) % players for step in range(players)) for first in range(players + 1)
    )
    for players in {players for players, _ in SETUP}
}


# For each player count, set of seats resigned (a bit each) and seat `first`
# (0 to the player count), the seats still playing from `first` on in turn
# order, each with its `_SEAT_SHIFT_AND_SIZES`: the seats `_turn` asks in turn.
_SEATS_IN_TURN = {
    players: tuple(
        tuple(
            tuple(
                (seat, *_SEAT_SHIFT_AND_SIZES[seat]) for seat in order if not resigned >> seat & 1
            )
            for order in orders
        )
        for resigned in range(1 << players)
    )
    for players, orders in _TURN_ORDER.items()
}


def _next_playing(players: int, resigned: int, after: int) -> int:
    for step in range(1, players + 1):
        seat = (after + step) % players
        if not resigned >> seat & 1:
            return seat
    return OVER


def _resigned_seats(state: State) -> frozenset[int]:
    return frozenset(seat for seat in range(state.players) if state.resigned >> seat & 1)


def _ended(state: State) -> State:
    """`state` with its `outcome`, where no seat can act any more (`to_move` is OVER)."""
    outcome = rank(scores(state), _resigned_seats(state) if state.resigned else ())
    return _new_tuple(State, (*state[:-1], outcome))


def _cell_index(state: State, cell: str) -> int:
    """The bit of `cell`, which must be on the board and not a park."""
    board = _BOARDS[state.side]
    index = board.index.get(cell)
    if index is None:
        raise IllegalMove("illegal_move", OFF_BOARD(cell=cell, last=board.names[-1]))
    if state.parks >> index & 1:
        raise IllegalMove("illegal_move", PARK(cell=cell))
    return index


def _derived(side: int, players: int, parks: int, pieces: int) -> tuple[int, int, int]:
    """`free`, `near_own_large` and `near_other` computed from scratch."""
    board = _BOARDS[side]
    near = board.near

    def around(mask: int) -> int:
        out = 0
        while mask:
            low = mask & -mask
            out |= near[low.bit_length() - 1]
            mask ^= low
        return out

    free = board.full & ~parks
    for k in range(players * 3):
        free &= ~_lane(pieces, k)
    near_own_large = near_other = 0
    for seat in range(players):
        near_own_large |= around(_lane(pieces, seat * 3 + 2)) << seat * _LANE
        small_large = around(_lane(pieces, seat * 3) | _lane(pieces, seat * 3 + 2))
        near_other |= small_large * _OTHER_LANES[players][seat]
    return free, near_own_large, near_other


def _kinds(state: State) -> tuple[int, ...]:
    """The pieces of each seat and size, by `seat * 3 + size - 1`: the lanes
    of `pieces` read as the 64-bit words of its bytes, in one unpacking."""
    words = _LANE_WORDS[state.players]
    return words.unpack(state.pieces.to_bytes(words.size, "little"))


# For each player count, `pieces`' lanes as 64-bit words (`_LANE` is 64).
_LANE_WORDS = {players: struct.Struct(f"<{players * 3}Q") for players, _ in SETUP}


def _smalls(kinds: Sequence[int]) -> int:
    """Every colour's smalls."""
    smalls = 0
    for small in kinds[::3]:
        smalls |= small
    return smalls


def scores(state: State) -> tuple[int, ...]:
    """Each seat's score if the game ended now."""
    board = _BOARDS[state.side]
    near = board.near
    kinds = _kinds(state)
    smalls = _smalls(kinds)
    park_rings = [ring for _, ring in _park_rings(state)] if state.private_parks else ()
    out = []
    for k in range(0, len(kinds), 3):
        small, medium, large = kinds[k : k + 3]
        own = small | medium | large
        score = small.bit_count() + 2 * medium.bit_count() + 3 * large.bit_count()
        score -= board.groups(own)
        while large:
            low = large & -large
            score -= _PENALTY[(near[low.bit_length() - 1] & smalls).bit_count()]
            large ^= low
        for ring in park_rings:
            if _held_by_one_group(board, ring, own):
                score += PARK_POINTS
        out.append(score)
    return tuple(out)


def _park_rings(state: State) -> list[tuple[int, int]]:
    """Under `private_parks`, each park's bit and its near cells that are not parks.

    A park none of whose near cells is free scores for nobody, so it is left out.
    """
    if not state.private_parks:
        return []
    near = _BOARDS[state.side].near
    rings = []
    parks = state.parks
    while parks:
        low = parks & -parks
        ring = near[low.bit_length() - 1] & ~state.parks
        if ring:
            rings.append((low, ring))
        parks ^= low
    return rings


def _held_by_one_group(board: _Board, ring: int, own: int) -> bool:
    return not ring & ~own and not ring & ~board.flood(ring & -ring, own)


def _pieces_line(size: int, count: int) -> str:
    """ "3 smalls at 1 point": a sentence per size, since French sizes agree."""
    points = ngettext("{count} point", "{count} points", size).format(count=size)
    if size == SMALL:
        said = ngettext("{count} small at {points}", "{count} smalls at {points}", count)
    elif size == MEDIUM:
        said = ngettext("{count} medium at {points}", "{count} mediums at {points}", count)
    else:
        said = ngettext("{count} large at {points}", "{count} larges at {points}", count)
    return said.format(count=count, points=points)


def seat_lines(state: State, seat: int) -> tuple[ScoreLine, ...]:
    """`seat`'s score as the rules count it: pips, groups, smalls near larges, parks.

    Built apart from `scores` (which is bit arithmetic for speed) and in the
    rules' words; the tests check that both agree on every playout.
    """
    board = _BOARDS[state.side]
    kinds = _kinds(state)
    pieces = kinds[seat * 3 : seat * 3 + 3]
    lines = [
        ScoreLine(_pieces_line(size, mask.bit_count()), size * mask.bit_count())
        for size, mask in zip((SMALL, MEDIUM, LARGE), pieces, strict=True)
        if mask
    ]
    own = pieces[0] | pieces[1] | pieces[2]
    groups = board.groups(own)
    if groups:
        said = ngettext("{count} group, a point off", "{count} groups, a point off each", groups)
        lines.append(ScoreLine(said.format(count=groups), -groups))
    smalls = _smalls(kinds)
    for cell in board.cell_list(pieces[2]):
        near = (board.near[board.index[cell]] & smalls).bit_count()
        if _PENALTY[near]:
            said = ngettext(
                "large on {cell}: {near} smalls near", "large on {cell}: {near} smalls near", near
            )
            lines.append(ScoreLine(said.format(cell=cell, near=near), -_PENALTY[near]))
    for park, ring in _park_rings(state):
        if _held_by_one_group(board, ring, own):
            cell = board.names[park.bit_length() - 1]
            said = _("park on {cell} surrounded").format(cell=cell)
            lines.append(ScoreLine(said, PARK_POINTS))
    return tuple(lines)


def _cell_of(text: str) -> str | None:
    """The canonical cell name of `text` (`C 3` -> `c3`), None if it is not one."""
    found = _CELL.fullmatch(text.strip().lower())
    return f"{found[1]}{int(found[2])}" if found else None


_CELL_PATTERN = r"([a-z])\s*0*([1-9][0-9]?)"
_CELL = re.compile(_CELL_PATTERN)
_SIZES = {
    "1": SMALL,
    "s": SMALL,
    "small": SMALL,
    "2": MEDIUM,
    "m": MEDIUM,
    "med": MEDIUM,
    "medium": MEDIUM,
    "3": LARGE,
    "l": LARGE,
    "large": LARGE,
}
_PLACE = re.compile("(" + "|".join(_SIZES) + r")\s*" + _CELL_PATTERN)
_CANONICAL_CELL = re.compile(r"[a-z][1-9][0-9]?")


def _first_state(
    players: int, three_house: bool, private_parks: bool, parks: int, parks_left: int
) -> State:
    """The state before the first move, once the parks (or how many are to come) are known."""
    side, _, each = SETUP[players, three_house]
    stash = sum(each << k * _COUNT for k in range(players * 3))
    free, near_own_large, near_other = _derived(side, players, parks, 0)
    to_move, legal = (
        (0, _NO_PLACES)
        if parks_left
        else _turn(free, stash, near_own_large, near_other, 0, players, 0)
    )
    state = State(
        side=side,
        players=players,
        parks=parks,
        parks_left=parks_left,
        resigned=0,
        private_parks=private_parks,
        pieces=0,
        stash=stash,
        to_move=to_move,
        legal=legal,
        free=free,
        near_own_large=near_own_large,
        near_other=near_other,
    )
    return _ended(state) if to_move == OVER else state


def _standard_parks(players: int, three_house: bool) -> int:
    """The corners (where the board has parks) and the setup's own extra parks."""
    side, count, _ = SETUP[players, three_house]
    board = _BOARDS[side]
    corners = (0, side - 1, board.cells - side, board.cells - 1)
    parks = sum(1 << cell for cell in corners) if count else 0
    return parks | board.mask_of(_STANDARD_EXTRA.get((players, three_house), ()))


# The standard parks draw nothing and leave nothing to choose, so each setup's
# first state is made once, here: a playout's start is then a look-up.
_STANDARD_STARTS = {
    (players, three_house, private_parks): _first_state(
        players, three_house, private_parks, _standard_parks(players, three_house), 0
    )
    for players, three_house in SETUP
    for private_parks in (False, True)
}

_EXPECTED = reason(
    N_(
        "expected a size and a cell such as 3c4 (large), 2d4 (medium) or 1b2 (small), "
        "a bare cell such as c3 while parks are being placed, or resign"
    )
)
OFF_BOARD = reason(N_("{cell} is not on the board (a1 to {last})"))
PARK = reason(N_("{cell} is a park"))
NOT_A_MOVE = reason(N_("{move} is not a Subdivision move"))
PARKS_FIRST = reason(N_("the parks are placed first ({left} to go): name a bare cell such as c3"))
SIZE_IS = reason(N_("a pyramid's size is 1, 2 or 3"))
BUILT_ON = reason(N_("{cell} is already built on"))
NONE_LEFT = reason(N_("you have no {size} pyramid left"))
LARGE_NEAR_LARGE = reason(
    N_("a large may not be placed near another large of your colour ({cell})")
)
SMALL_ALONE = reason(
    N_("a small must be placed near a small or large of another colour ({cell} is not)")
)
PARKS_PLACED = reason(N_("the parks are all placed: place a pyramid, size then cell, such as 2c3"))
NO_PASS = reason(
    N_(
        "there is no pass in Subdivision: a player who cannot place is skipped "
        "by the referee; {expected}"
    )
)
NOT_AN_OBJECT = reason(N_("a move is a JSON object with a type"))
EXPECTED_JSON = reason(
    N_(
        'expected {{"type": "place", "size": 1|2|3, "cell": "c4"}}, '
        '{{"type": "park", "cell": "c3"}} or {{"type": "resign"}}'
    )
)


class OptionsSchema(marshmallow.Schema):
    parks = fields.String(
        load_default="standard",
        validate=validate.OneOf(("standard", "random", "players", "cells")),
    )
    cells = fields.List(fields.String(), load_default=list)
    three_house = fields.Boolean(load_default=False)
    private_parks = fields.Boolean(load_default=False)


class _SubdivisionRules(Game[State, Move]):
    """Subdivision's rules; `Subdivision`, at the end of the module, adds the
    written-out copy of a whole random playout."""

    name: ClassVar[str] = "subdivision"
    title: ClassVar[str] = "Subdivision"
    score_label: ClassVar[str] = N_("Score")
    rules_version: ClassVar[str] = "1"
    players: ClassVar[tuple[int, ...]] = (2, 3, 4)
    options_schema: ClassVar[type[marshmallow.Schema]] = OptionsSchema
    option_labels: ClassVar[Mapping[str, str]] = {
        "parks": N_("Parks"),
        "cells": N_("The parks' cells (parks: cells)"),
        "three_house": N_("Three houses: 3 pyramids of each size"),
        "private_parks": N_("Private parks: 3 points for a park one group surrounds"),
        "parks=standard": N_("the standard parks"),
        "parks=random": N_("parks drawn at random"),
        "parks=players": N_("placed by the players"),
        "parks=cells": N_("on the cells given below"),
    }
    move_fields: ClassVar[Mapping[str, JSON]] = {
        "place": {
            "properties": {
                "size": {"type": "integer", "enum": sorted(SIZE_NAMES)},
                "cell": {"type": "string", "pattern": "^[a-z][1-9][0-9]?$"},
            },
            "required": ["size", "cell"],
        },
        "park": {
            "properties": {"cell": {"type": "string", "pattern": "^[a-z][1-9][0-9]?$"}},
            "required": ["cell"],
        },
    }
    notation_help: ClassVar[str] = N_(
        "Place a pyramid by its size and a cell: 3c4 (large), 2d4 (medium), 1b2 "
        "(small); L C4, large c4, m d4 and s b2 work too. Files run a, b, c... from "
        "the left, ranks 1, 2, 3... from the bottom. While players place the parks, "
        "name the bare cell: c3. Type resign to leave the game."
    )

    # -- options ---------------------------------------------------------

    def check_options(self, options: JSON, players: int) -> None:
        side, count, _ = SETUP[players, options["three_house"]]
        mode, cells = options["parks"], options["cells"]
        if mode != "cells" and cells:
            raise BadOptions({"cells": [f"cells is only used with parks=cells, not {mode}"]})
        if mode == "players" and count % players:
            raise BadOptions(
                {
                    "parks": [
                        f"{count} parks cannot be shared evenly among {players} players: "
                        "choose standard, random or cells"
                    ]
                }
            )
        if mode == "cells":
            self._cells_mask(cells, side, count, players)

    @staticmethod
    def _cells_mask(cells: list[str], side: int, count: int, players: int) -> int:
        board = _BOARDS[side]
        errors = []
        mask = 0
        for text in cells:
            name = _cell_of(text)
            if name is None:
                errors.append(f"{text!r} is not a cell such as c3")
            elif name not in board.index:
                errors.append(f"{name} is not on the {side}x{side} board (a1 to {board.names[-1]})")
            elif mask >> board.index[name] & 1:
                errors.append(f"{name} is given twice")
            else:
                mask |= 1 << board.index[name]
        if len(cells) != count:
            errors.append(
                f"{players} players on the {side}x{side} board need exactly {count} park "
                f"cells, not {len(cells)}"
            )
        if errors:
            raise BadOptions({"cells": errors})
        return mask

    # -- the rules -------------------------------------------------------

    def start(self, players: int, options: JSON, rng: Rng) -> State:
        three_house, private_parks = bool(options["three_house"]), bool(options["private_parks"])
        mode = options["parks"]
        if mode == "standard":
            return _STANDARD_STARTS[players, three_house, private_parks]
        side, count, _ = SETUP[players, three_house]
        parks_left = 0
        if mode == "random":
            parks = sum(1 << cell for cell in rng.shuffled(range(side * side))[:count])
        elif mode == "players":
            parks, parks_left = 0, count
        else:
            parks = self._cells_mask(options["cells"], side, count, players)
        return _first_state(players, three_house, private_parks, parks, parks_left)

    def actors(self, state: State) -> frozenset[int]:
        return _NOBODY if state.to_move == OVER else _ONLY[state.to_move]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat != state.to_move:
            return []
        board = _BOARDS[state.side]
        if state.parks_left:
            return [Park(cell) for cell in board.cell_list(board.full & ~state.parks)]
        moves: list[Move] = []
        for size, mask in zip((SMALL, MEDIUM, LARGE), state.legal, strict=True):
            moves.extend(Place(size, cell) for cell in board.cell_list(mask))
        return moves

    def _random_move_in_turn(self, state: State, seat: int, rng: Rng) -> Move:
        if state.parks_left:
            board = _BOARDS[state.side]
            free = board.full & ~state.parks
            return Park(board.names[_nth_bit(free, rng.below(free.bit_count()))])
        move, _ = self.play_random(state, seat, rng)
        return move

    def play_random(self, state: State, seat: int, rng: Rng) -> tuple[Move, State]:
        """A uniform legal placement, played at once (it is legal: `_place`'s
        checks are skipped): one draw among the smalls' cells, then the
        mediums', then the larges', lowest first."""
        if seat != state.to_move or state.parks_left:
            return super().play_random(state, seat, rng)
        small, medium, large = state.legal
        n_small, n_medium = small.bit_count(), medium.bit_count()
        pick = rng.below(n_small + n_medium + large.bit_count())
        if pick < n_small:
            size, index = SMALL, _nth_bit(small, pick)
        elif pick < n_small + n_medium:
            size, index = MEDIUM, _nth_bit(medium, pick - n_small)
        else:
            size, index = LARGE, _nth_bit(large, pick - n_small - n_medium)
        return _PLACES[state.side][size - 1][index], _placed(state, seat, size, index)

    def _play_in_turn(self, state: State, seat: int, move: Move) -> State:
        if type(move) is Place:
            return self._place(state, seat, move)
        if type(move) is Park:
            return self._park(state, seat, move)
        raise IllegalMove("bad_move", NOT_A_MOVE(move=repr(move)))

    def _place(self, state: State, seat: int, move: Place) -> State:
        size = move.size
        if state.parks_left:
            raise IllegalMove("illegal_move", PARKS_FIRST(left=state.parks_left))
        if size not in SIZE_NAMES:
            raise IllegalMove("bad_move", SIZE_IS())
        index = _cell_index(state, move.cell)
        bit = 1 << index
        if not state.free & bit:  # not a park (`_cell_index` said so): built on
            raise IllegalMove("illegal_move", BUILT_ON(cell=move.cell))
        if not _count(state.stash, seat * 3 + size - 1):
            raise IllegalMove("illegal_move", NONE_LEFT(size=SIZE_NAMES[size]))
        if size == LARGE and _lane(state.near_own_large, seat) & bit:
            raise IllegalMove("illegal_move", LARGE_NEAR_LARGE(cell=move.cell))
        if size == SMALL and not _lane(state.near_other, seat) & bit:
            raise IllegalMove("illegal_move", SMALL_ALONE(cell=move.cell))
        return _placed(state, seat, size, index)

    def _park(self, state: State, seat: int, move: Park) -> State:
        if not state.parks_left:
            raise IllegalMove("illegal_move", PARKS_PLACED())
        bit = 1 << _cell_index(state, move.cell)
        parks = state.parks | bit
        free = state.free & ~bit
        parks_left = state.parks_left - 1
        if parks_left:
            to_move, legal = _next_playing(state.players, state.resigned, seat), _NO_PLACES
        else:
            # Turn order starts again from seat 0 for the pyramids.
            to_move, legal = _turn(
                free,
                state.stash,
                state.near_own_large,
                state.near_other,
                state.resigned,
                state.players,
                0,
            )
        after = state._replace(
            parks=parks, parks_left=parks_left, to_move=to_move, legal=legal, free=free
        )
        return _ended(after) if to_move == OVER else after

    def _resign(self, state: State, seat: int) -> State:
        if not 0 <= seat < state.players:
            raise IllegalMove("illegal_move", NO_SEAT(seat=seat))
        if state.resigned >> seat & 1:
            raise IllegalMove("illegal_move", ALREADY_LEFT())
        resigned = state.resigned | 1 << seat
        to_move, legal = state.to_move, state.legal
        if (~resigned & ((1 << state.players) - 1)).bit_count() == 1:
            to_move, legal = OVER, _NO_PLACES
        elif seat == to_move and state.parks_left:
            to_move = _next_playing(state.players, resigned, seat)
        elif seat == to_move:
            to_move, legal = _turn(
                state.free,
                state.stash,
                state.near_own_large,
                state.near_other,
                resigned,
                state.players,
                seat + 1,
            )
        after = state._replace(resigned=resigned, to_move=to_move, legal=legal)
        return _ended(after) if to_move == OVER else after

    def resigned(self, state: State) -> frozenset[int]:
        return _resigned_seats(state)

    def scores(self, state: State) -> tuple[int, ...]:
        return scores(state)

    def breakdown(self, start: State, played: Sequence[Played[State, Move]]) -> Breakdown:
        final = played[-1].state if played else start
        return tuple(seat_lines(final, seat) for seat in range(final.players))

    def view(self, state: State, seat: int | None) -> JSON:
        # Nothing is hidden in Subdivision: every viewer sees the whole state.
        phase = "over" if state.to_move == OVER else "parks" if state.parks_left else "pyramids"
        return {
            **self.state_to_json(state),
            "scores": list(scores(state)),
            "phase": phase,
        }

    def result(self, state: State) -> Result | None:
        return state.outcome

    # -- building a move on the board -----------------------------------

    def build(self, state: State, seat: int, steps: Sequence[str]) -> Building[Move]:
        """A cell, then a size where more than one fits there (a park: the cell alone)."""
        self._check_turn(state, seat)
        board = _BOARDS[state.side]
        if state.parks_left:
            park_on = _("Park on {cell}")
            paths: list[tuple[Sequence[Choice], Move]] = [
                ((Choice(cell, park_on.format(cell=cell)),), Park(cell))
                for cell in board.cell_list(board.full & ~state.parks)
            ]
        else:
            paths = self._place_paths(state, seat)
        choices, move = walk(paths, steps)
        view = self.view(state, seat)
        if isinstance(move, Park):
            view["parks"] = sorted([*view["parks"], move.cell])
        elif isinstance(move, Place):
            view["pieces"][move.cell] = {"seat": seat, "size": move.size}
            view["stash"][seat][move.size - 1] -= 1
        if move is not None:
            prompt = _("Play the move, or undo")
        elif steps:
            prompt = _("Choose the size of the pyramid on {cell}").format(cell=steps[0])
        else:
            prompt = _("Choose a cell for a park") if state.parks_left else _("Choose a cell")
        return Building(tuple(steps), choices, move, view, prompt)

    def _place_paths(self, state: State, seat: int) -> list[tuple[Sequence[Choice], Move]]:
        """Each placement's path: its cell, and its size where more than one fits there."""
        board = _BOARDS[state.side]
        fitting: dict[str, list[int]] = {}
        for size, mask in zip((LARGE, MEDIUM, SMALL), reversed(state.legal), strict=True):
            for cell in board.cell_list(mask):
                fitting.setdefault(cell, []).append(size)
        paths: list[tuple[Sequence[Choice], Move]] = []
        for cell in sorted(fitting, key=board.index.__getitem__):
            sizes = fitting[cell]
            placing = _("Place on {cell}") if len(sizes) > 1 else _(_PLACE_A[sizes[0]])
            where = Choice(cell, placing.format(cell=cell))
            if len(sizes) == 1:
                paths.append(((where,), Place(sizes[0], cell)))
                continue
            paths.extend(
                (
                    (
                        where,
                        Choice(str(size), _(_SIZE_ON[size]).format(cell=cell)),
                    ),
                    Place(size, cell),
                )
                for size in sizes
            )
        return paths

    # -- notation and JSON ------------------------------------------------

    def parse(self, text: str, options: JSON | None = None) -> Move:
        words = text.strip().lower()
        if words == "resign":
            return Resign()
        if words == "pass":
            raise IllegalMove("bad_notation", NO_PASS(expected=_EXPECTED()))
        placed = _PLACE.fullmatch(words)
        if placed:
            return Place(_SIZES[placed[1]], f"{placed[2]}{int(placed[3])}")
        cell = _cell_of(words)
        if cell is not None:
            return Park(cell)
        raise IllegalMove("bad_notation", _EXPECTED())

    def notate(self, move: Move) -> str:
        if isinstance(move, Place):
            return f"{move.size}{move.cell}"
        if isinstance(move, Park):
            return move.cell
        return "resign"

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Place):
            return {"type": "place", "size": move.size, "cell": move.cell}
        if isinstance(move, Park):
            return {"type": "park", "cell": move.cell}
        return {"type": "resign"}

    def move_from_json(self, data: Any) -> Move:
        if not isinstance(data, dict):
            raise IllegalMove("bad_move", NOT_AN_OBJECT())
        kind = data.get("type")
        keys = set(data)
        if kind == "resign" and keys == {"type"}:
            return Resign()
        cell = data.get("cell")
        if not isinstance(cell, str) or not _CANONICAL_CELL.fullmatch(cell):
            raise IllegalMove("bad_move", EXPECTED_JSON())
        if kind == "park" and keys == {"type", "cell"}:
            return Park(cell)
        size = data.get("size")
        if kind == "place" and keys == {"type", "size", "cell"}:
            if type(size) is int and size in SIZE_NAMES:
                return Place(size, cell)
            raise IllegalMove("bad_move", SIZE_IS())
        raise IllegalMove("bad_move", EXPECTED_JSON())

    def state_to_json(self, state: State) -> JSON:
        board = _BOARDS[state.side]
        found = {}
        for k, mask in enumerate(_kinds(state)):
            while mask:
                low = mask & -mask
                found[low.bit_length() - 1] = {"seat": k // 3, "size": k % 3 + 1}
                mask ^= low
        stash = state.stash
        return {
            "size": state.side,
            "parks": board.cell_list(state.parks),
            "parks_to_place": state.parks_left,
            "pieces": {board.names[index]: found[index] for index in sorted(found)},
            "stash": [
                [_count(stash, seat * 3 + size) for size in range(3)]
                for seat in range(state.players)
            ],
            "resigned": [seat for seat in range(state.players) if state.resigned >> seat & 1],
            "private_parks": state.private_parks,
            "to_move": None if state.to_move == OVER else state.to_move,
        }

    def state_from_json(self, data: JSON) -> State:
        side = data["size"]
        board = _BOARDS[side]
        players = len(data["stash"])
        pieces = 0
        for cell, piece in data["pieces"].items():
            k = piece["seat"] * 3 + piece["size"] - 1
            pieces |= 1 << board.index[cell] << k * _LANE
        parks = board.mask_of(data["parks"])
        free, near_own_large, near_other = _derived(side, players, parks, pieces)
        to_move = data["to_move"]
        stash = sum(
            count << (seat * 3 + size) * _COUNT
            for seat, counts in enumerate(data["stash"])
            for size, count in enumerate(counts)
        )
        parks_left = data["parks_to_place"]
        legal = (
            _NO_PLACES
            if parks_left or to_move is None
            else _placements(free, stash, near_own_large, near_other, to_move)
        )
        state = State(
            side=side,
            players=players,
            parks=parks,
            parks_left=parks_left,
            resigned=sum(1 << seat for seat in data["resigned"]),
            private_parks=data["private_parks"],
            pieces=pieces,
            stash=stash,
            to_move=OVER if to_move is None else to_move,
            legal=legal,
            free=free,
            near_own_large=near_own_large,
            near_other=near_other,
        )
        return state if to_move is not None else _ended(state)


# -- playouts -------------------------------------------------------------------
# The speed-only copy of the rules' default random playout, after the rules: a
# test holds it to the default loop of `play_random` draw for draw.


class Subdivision(_SubdivisionRules):
    """The rules, with a whole random playout written out for speed."""

    def random_playout(self, state: State, rng: Rng) -> Iterator[Played[State, Move]]:
        """`play_random` move after move, with the state's fields kept in locals
        from one move to the next (`_nth_bit`, `_placed` and `_turn` written
        out): a state is built a move, never read back."""
        if state.parks_left or state.to_move == OVER:
            yield from super().random_playout(state, rng)
            return
        (
            side,
            players,
            parks,
            parks_left,
            resigned,
            private_parks,
            pieces,
            stash,
            seat,
            legal,
            free,
            near_own_large,
            near_other,
            _,
        ) = state
        places, (near_own, near_others) = _PLACES[side], _MARKS[side, players]
        seats_from = _SEATS_IN_TURN[players][resigned]
        small, medium, large = legal
        while True:
            n_small, n_medium = small.bit_count(), medium.bit_count()
            pick = rng.below(n_small + n_medium + large.bit_count())
            if pick < n_small:
                size, mask = SMALL, small
            elif pick < n_small + n_medium:
                size, mask, pick = MEDIUM, medium, pick - n_small
            else:
                size, mask, pick = LARGE, large, pick - n_small - n_medium
            index = 0  # `_nth_bit(mask, pick)` written out
            bits = _BITS_OF_CHUNK[mask & _CHUNK_MASK]
            while pick >= len(bits):
                pick -= len(bits)
                mask >>= _CHUNK
                index += _CHUNK
                bits = _BITS_OF_CHUNK[mask & _CHUNK_MASK]
            index += bits[pick]
            k = seat * 3 + size - 1
            if size != MEDIUM:
                if size == LARGE:
                    near_own_large |= near_own[seat][index]
                near_other |= near_others[seat][index]
            stash -= _ONE_OF_KIND[k]
            free ^= 1 << index
            pieces |= _PIECE_BIT[k][index]
            to_move, legal = OVER, _NO_PLACES
            if free:
                for after, shift, has_small, has_medium, has_large in seats_from[seat + 1]:
                    small = free & near_other >> shift if stash & has_small else 0
                    medium = free if stash & has_medium else 0
                    large = free ^ free & near_own_large >> shift if stash & has_large else 0
                    if small or medium or large:
                        to_move, legal = after, (small, medium, large)
                        break
            state = _new_tuple(
                State,
                (
                    side,
                    players,
                    parks,
                    parks_left,
                    resigned,
                    private_parks,
                    pieces,
                    stash,
                    to_move,
                    legal,
                    free,
                    near_own_large,
                    near_other,
                    None,
                ),
            )
            if to_move == OVER:
                yield Played(seat, places[size - 1][index], _ended(state))
                return
            yield _new_tuple(Played, (seat, places[size - 1][index], state))
            seat = to_move


GAME = Subdivision()
