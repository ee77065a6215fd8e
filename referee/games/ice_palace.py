"""Ice Palace: win rounds in the yard, then build the yard into the palace.

Geoff Hanna's game as `docs/rules/ice_palace.md` states it. A
pyramid is a two-letter string, size then colour (`Lr`, `Sk`, `Mw`); a
stack is a tuple of pyramids, bottom first; the yard and the palace are
tuples of `(x, y, stack)` sorted by cell. The pool is kept per size as a
string of colour letters in draw order (the front is drawn first). The
exact maximum of a build comes from `ice_palace_solver`.

RULINGS (where the rules file is silent):

- Setup order: the first player is found by shuffling the whole pool once
  (sizes S, M, L; within a size the colours in seat order, then black,
  then white) and reading it from the front until a player colour shows;
  then each size's part of the pool is shuffled on its own. Only player
  colours of seated players are in the game.
- Refills (and the first hands) are dealt seat by seat from the marker
  holder on; each seat takes its smalls, then mediums, then larges, from
  the front of that size's pool. The game ends before any draw when some
  size's pool holds fewer pyramids than the seats still playing need.
- A seat with no legal placement is asked like any other seat: it is the
  seat to act, its only legal move is `pass`, and it passes through the
  ordinary submission path (or its deadline's timeout policy plays `pass`
  for it, which `random` also comes to). The rules' "passes automatically"
  is read as "can only pass": a pass the referee made at once, with no
  submission and at the same instant as the move before, would tell every
  other seat that the hidden hand holds nothing playable. So nobody but
  that seat can tell this pass from a chosen one, in the log, the moves
  list, the mails, the webhooks or the timestamps. Logs of games played
  before, where the referee recorded these passes itself, hold them as
  ordinary passes of that seat and replay unchanged.
- A build with nothing to place (the yard held only black and white, or
  no yard pyramid fits the palace) is recorded by the referee itself as
  `build` (`forced_move`): the yard and the palace are public, so every
  seat can see there is nothing to choose.
- `build auto` stays `build auto` in the log; `play` replaces it with the
  referee's plan for that position (`auto_plan`), worked out again from the
  position on every replay, so replay is exact. Changing which plan that
  is changes history: it needs a new rules version. When the round ends
  the state keeps a maximal plan found fast (`build_plan`, `quick_plan`'s),
  which `legal_moves` offers and `build auto`'s search starts from (in
  versions 1 and 2 it was `build auto`'s plan itself).
- Which maximal plan (version 3): of all plans placing the required number,
  the one with the most palace points for the builder's colour, then the
  fewest for the leader's (the other seat still playing with the most
  palace points, the lowest on a tie), then the first found.
  `ice_palace_solver.best_plan` searches for it from `quick_plan` (version
  2's choice, below), with a budget of work (`BEST_BUDGET`, counted, never
  timed): every small build is searched to the end, and past the budget
  the best plan found stands, never worse for the builder than
  `quick_plan`'s. The random builder (`random_move`, playouts) draws its
  colour order from its rng, and where it draws the referee's plan it
  plays the plan the state keeps (`build_plan`): the search would cost
  every playout dearly (versions 1 and 2 played `build auto`, the same
  plan there). Version 2 (`IcePalaceV2`) took the best of
  the solver's plans for a few colour orders (`_auto_orders`), which fell
  short of the best in most small builds; version 1 (`IcePalaceV1`) took
  the colours alphabetically in both, which favoured the colour met last.
- The builder's required number (`build_max`) is the solver's maximum.
  Should its exact search reach its budget (a fixed count of work:
  positions searched and steps of the bounds computed for them, never a
  time, and nothing carried over from earlier builds, so every replay
  decides alike; see `ice_palace_solver.SEARCH_BUDGET`), the required
  number is that of the best plan it found (its greedy plan, or a better
  one found climbing from it with a second budget of the same size),
  `build auto` uses that plan, and a builder's plan placing more is
  accepted as it is.
- `legal_moves` of the builder gives one maximal plan and `build auto`
  (the plans themselves are too many to list).
- A palace plan's first pyramid on an empty palace must go to `0,0`.
- Building on the board (`build`): in the yard a pyramid of the hand, then
  its cell, or `pass`; the builder a pyramid of the yard, then its palace
  cell, again and again, or the referee's own plan in one step. A step of
  a plan is offered only if a plan placing the required number can still
  follow it: the solver's plan, or one `ice_palace_solver.completes` finds
  (past its budget of work, only the next step of the plan already known),
  so a plan clicked to its end is always maximal.
- Resigning: the seat's hand leaves the game (it counts in
  `out_of_game`), it draws no more, and from then on each of its turns in
  the yard is a pass that the referee makes without asking or logging
  it. So the round still ends after as many passes in a row as there are
  seats. If the seat resigns on its own turn, that turn is its pass; if it
  was about to lead, the marker and the lead go on to the next seat still
  playing. If the round's last placer has resigned (before or while
  building), nobody builds: the yard's pyramids leave the game, and the
  round ends as after a build (marker on, refills). The marker and the
  lead skip resigned seats. A resigned seat's colour keeps scoring for it
  in the palace, but it ranks after every seat still playing; when one
  seat is left the game ends with that seat the winner.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, TypeAlias

import marshmallow

from referee.engine import (
    JSON,
    Breakdown,
    Building,
    Choice,
    Game,
    IllegalMove,
    Played,
    Resign,
    Result,
    ScoreLine,
    bad_step,
    not_your_turn,
    rank,
    walk,
)
from referee.games import ice_palace_solver
from referee.games.pyramid_words import pyramid_words
from referee.games.reasons import ALREADY_RESIGNED, reason
from referee.i18n import N_, _, ngettext
from referee.rng import Rng

SIZES = "SML"
PLAYER_COLOURS = "rygbpo"
BLACK = "k"
WHITE = "w"
ALL_COLOURS = PLAYER_COLOURS + BLACK + WHITE
STASH_PER_SIZE = 5
HAND_PER_SIZE = 2
NOBODY = -1

# The answers of `actors`, made once: every move asks it more than once.
_ONLY = tuple(frozenset((seat,)) for seat in range(len(PLAYER_COLOURS)))
_NOBODY: frozenset[int] = frozenset()

YARD = "yard"
BUILD = "build"

Stack: TypeAlias = tuple[str, ...]
Board: TypeAlias = tuple[tuple[int, int, Stack], ...]


@dataclass(frozen=True, slots=True)
class Place:
    """A pyramid from the hand into the yard, or (inside a `Build`) into the palace."""

    pyramid: str
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Placing nothing this turn."""


@dataclass(frozen=True, slots=True)
class Build:
    """The builder's whole palace plan, in order; `auto` asks for the referee's own."""

    steps: tuple[Place, ...] = ()
    auto: bool = False


Move: TypeAlias = Place | Pass | Build | Resign

# Placements made once and shared (they are immutable): a frozen dataclass's
# `__init__` sets each field through `object.__setattr__`, which costs as much
# as a whole yard move's drawing, and playouts and plans name the same few
# pyramids and cells again and again. Cleared when full, so it stays small.
_PLACES: dict[tuple[str, int, int], Place] = {}
_PLACES_KEPT = 1 << 14
_PASS = Pass()


def _place(pyramid: str, x: int, y: int) -> Place:
    """`Place(pyramid, x, y)`, shared."""
    key = (pyramid, x, y)
    place = _PLACES.get(key)
    if place is None:
        if len(_PLACES) >= _PLACES_KEPT:
            _PLACES.clear()
        place = _PLACES[key] = Place(pyramid, x, y)
    return place


# Not slotted: `_replace` copies a state's fields as one dict.
@dataclass(frozen=True)
class State:
    """An Ice Palace position.

    `turn` is the seat to place or pass in the yard, or the builder while
    `phase` is `build`; `NOBODY` once the game is over. `build_max` and
    `build_plan` are the solver's answer for the current build (0 and ()
    in the yard). `rounds` counts the rounds finished (built, or with
    nobody to build). `yard_bits` is derived from `yard` (never stored,
    compared or shown; None until `_yard_bits` works it out).
    """

    colours: str
    hands: tuple[tuple[str, ...], ...]
    pool: tuple[str, str, str]
    yard: Board
    palace: Board
    marker: int
    turn: int
    phase: str
    passes: int
    last_placer: int
    build_max: int
    build_plan: tuple[Place, ...]
    out_of_game: int
    resigned: tuple[int, ...]
    rounds: int = 0
    yard_bits: YardBits | None = field(default=None, init=False, compare=False, repr=False)


class IcePalaceOptions(marshmallow.Schema):
    """Ice Palace has no variants; any option given is refused as unknown."""


# -- pyramids and boards ------------------------------------------------------


_SIZE_OF = {size: number for number, size in enumerate(SIZES, 1)}


def _size(pyramid: str) -> int:
    return _SIZE_OF[pyramid[0]]


# Every pyramid as the solver takes it, (size, colour): each build asks this of
# every palace top and yard pyramid.
_PIECE = {size + colour: (_SIZE_OF[size], colour) for size in SIZES for colour in ALL_COLOURS}


def _matches(colour: str, top: str) -> bool:
    """The yard's founding match: black matches nothing, white every other colour."""
    if colour == BLACK or top == BLACK:
        return False
    return top in (colour, WHITE) or colour == WHITE


def _as_dict(board: Board) -> dict[tuple[int, int], Stack]:
    return {(x, y): stack for x, y, stack in board}


def _as_board(cells: dict[tuple[int, int], Stack]) -> Board:
    return tuple((x, y, cells[x, y]) for x, y in sorted(cells))


_CELL_OF = operator.itemgetter(0, 1)


def _stacked(board: Board, cell: tuple[int, int], pyramid: str) -> Board:
    """`board` with `pyramid` put on top at `cell` (a new stack there if none): the
    board stays sorted by cell without being sorted again."""
    index = bisect.bisect_left(board, cell, key=_CELL_OF)
    if index < len(board) and _CELL_OF(board[index]) == cell:
        return (*board[:index], (*cell, (*board[index][2], pyramid)), *board[index + 1 :])
    return (*board[:index], (*cell, (pyramid,)), *board[index:])


def _neighbours(x: int, y: int) -> tuple[tuple[int, int], ...]:
    return ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))


# The yard as bit sets: with a reach r, cell x, y is bit (x + r) * (2r + 1) + y + r,
# so its neighbours are the bits +-1 and +-(2r + 1) and the bits sort as the
# cells do. The reach grows with the yard: its stacks stay within r - 1 of 0,0,
# so their neighbours have bits and no step wraps to another row; the ints
# stay small (most yards fit a reach of 4).
_FIRST_REACH = 4


class YardBits(NamedTuple):
    """The yard's stacks as bit sets (derived from `State.yard`, see `_yard_bits`):
    all of them, those topped by a small, by a medium, and by each colour; and
    the reach and row span of the bits. `foundings` keeps `_founding_bits` of
    each colour once asked: the yard stays as it is while seats pass."""

    reach: int
    span: int
    taken: int
    smalls: int
    mediums: int
    colours: Mapping[str, int]
    foundings: dict[str, int]


# `YardBits(...)` (or `Played(...)`) runs the named tuple's Python `__new__`, which
# costs as much again as building the tuple directly, and every placement makes one.
_new_tuple = tuple.__new__

_EMPTY_YARD = YardBits(_FIRST_REACH, 2 * _FIRST_REACH + 1, 0, 0, 0, {}, {})


def _yard_bit(bits: YardBits, x: int, y: int) -> int:
    """The bit of cell x, y; 0 for a cell too far out to be next to a stack."""
    reach = bits.reach
    if -reach <= x <= reach and -reach <= y <= reach:
        return 1 << ((x + reach) * bits.span + y + reach)
    return 0


def _bit_cell(bits: YardBits, bit: int) -> tuple[int, int]:
    x, y = divmod(bit.bit_length() - 1, bits.span)
    return x - bits.reach, y - bits.reach


def _bits_with(bits: YardBits, bit: int, pyramid: str, covered: str | None) -> YardBits:
    """`bits` once `pyramid` tops the cell of `bit` (over `covered`, if a stack was there)."""
    colours = dict(bits.colours)
    smalls, mediums = bits.smalls, bits.mediums
    if covered is not None:
        colours[covered[1]] &= ~bit
        smalls &= ~bit
        mediums &= ~bit
    colours[pyramid[1]] = colours.get(pyramid[1], 0) | bit
    if pyramid[0] == "S":
        smalls |= bit
    elif pyramid[0] == "M":
        mediums |= bit
    return _new_tuple(
        YardBits, (bits.reach, bits.span, bits.taken | bit, smalls, mediums, colours, {})
    )


def _bits_of(board: Board) -> YardBits:
    reach = _FIRST_REACH
    for x, y, _stack in board:
        while not (-reach < x < reach and -reach < y < reach):
            reach *= 2
    bits = YardBits(reach, 2 * reach + 1, 0, 0, 0, {}, {})
    for x, y, stack in board:
        bits = _bits_with(bits, _yard_bit(bits, x, y), stack[-1], None)
    return bits


def _yard_bits(state: State) -> YardBits:
    """The yard's bit sets: carried from move to move, worked out from the yard only
    for a state made otherwise (from JSON, or by `dataclasses.replace`)."""
    bits = state.yard_bits
    if bits is None:
        bits = _bits_of(state.yard)
        # A cache of what `yard` holds anyway: the state does not change.
        state.__dict__["yard_bits"] = bits
    return bits


def _founding_bits(bits: YardBits, colour: str) -> int:
    """The empty cells where a pyramid of `colour` founds a stack: next to a top it
    matches (its own colour or white; white matches every colour but black)."""
    if colour == BLACK:
        return 0
    colours = bits.colours
    if colour == WHITE:
        matched = bits.taken & ~colours.get(BLACK, 0)
    else:
        matched = colours.get(colour, 0) | colours.get(WHITE, 0)
    span = bits.span
    return (matched << 1 | matched >> 1 | matched << span | matched >> span) & ~bits.taken


def _allowed_bits(bits: YardBits, pyramid: str) -> int:
    """The cells where the yard code lets `pyramid` go: the stacks it may cover (only
    a strictly larger pyramid covers) and the cells where it may found one; on
    an empty yard, 0,0."""
    if not bits.taken:
        return _yard_bit(bits, 0, 0)
    size = pyramid[0]
    covers = 0 if size == "S" else bits.smalls if size == "M" else bits.smalls | bits.mediums
    return covers | _founding_bits(bits, pyramid[1])


def _yard_option_bits(hand: Iterable[str], bits: YardBits) -> dict[str, int]:
    """`_allowed_bits` of each pyramid of `hand` (colours alike are worked out once)."""
    if not bits.taken:
        return dict.fromkeys(hand, _yard_bit(bits, 0, 0))
    covers = {"S": 0, "M": bits.smalls, "L": bits.smalls | bits.mediums}
    foundings = bits.foundings
    options: dict[str, int] = {}
    for pyramid in hand:
        if pyramid in options:
            continue
        size, colour = pyramid[0], pyramid[1]
        found = foundings.get(colour)
        if found is None:
            found = foundings[colour] = _founding_bits(bits, colour)
        options[pyramid] = covers[size] | found
    return options


def _mask_cells(bits: YardBits, mask: int) -> list[tuple[int, int]]:
    cells = []
    while mask:
        low = mask & -mask
        cells.append(_bit_cell(bits, low))
        mask ^= low
    return cells


def _yard_cells(hand: Iterable[str], bits: YardBits) -> dict[str, list[tuple[int, int]]]:
    """For each pyramid of `hand`, the yard cells where the yard code lets it go, sorted."""
    options = _yard_option_bits(hand, bits)
    return {pyramid: _mask_cells(bits, mask) for pyramid, mask in options.items()}


def _random_yard_move(hand: tuple[str, ...], bits: YardBits, rng: Rng) -> tuple[Place | Pass, int]:
    """The move `rng.choice(legal_moves(state, seat))` would draw in the yard from
    `hand`, and its cell's bit (0 for a pass), found by counting: most of the
    placements listed would be thrown away. (`_yard_option_bits` written out: a
    playout draws this at nearly every move.)"""
    pyramids = sorted(set(hand))
    if not bits.taken:
        pyramid = pyramids[rng.below(len(pyramids))]
        return _place(pyramid, 0, 0), _yard_bit(bits, 0, 0)
    foundings = bits.foundings
    smalls = bits.smalls
    masks = []
    choices = 1
    for pyramid in pyramids:
        colour = pyramid[1]
        mask = foundings.get(colour)
        if mask is None:
            mask = foundings[colour] = _founding_bits(bits, colour)
        size = pyramid[0]
        if size == "M":
            mask |= smalls
        elif size == "L":
            mask |= smalls | bits.mediums
        masks.append(mask)
        choices += mask.bit_count()
    pick = rng.below(choices)
    for pyramid, mask in zip(pyramids, masks, strict=True):
        count = mask.bit_count()
        if pick < count:
            for _ in range(pick):
                mask &= mask - 1
            bit = mask & -mask
            return _place(pyramid, *_bit_cell(bits, bit)), bit
        pick -= count
    return _PASS, 0


def _yard_placed(yard: Board, bits: YardBits, move: Place, bit: int) -> tuple[Board, YardBits]:
    """The yard and its bits once the legal `move` is made, `bit` its cell's in `bits`."""
    pyramid, x, y = move.pyramid, move.x, move.y
    index = bisect.bisect_left(yard, (x, y), key=_CELL_OF)
    covered = None
    if bits.taken & bit:
        stack = yard[index][2]
        covered = stack[-1]
        yard = (*yard[:index], (x, y, (*stack, pyramid)), *yard[index + 1 :])
    else:
        yard = (*yard[:index], (x, y, (pyramid,)), *yard[index:])
    reach = bits.reach
    if -reach < x < reach and -reach < y < reach:
        return yard, _bits_with(bits, bit, pyramid, covered)
    return yard, _bits_of(yard)


def _taken_from(
    hands: tuple[tuple[str, ...], ...], seat: int, pyramid: str
) -> tuple[tuple[str, ...], ...]:
    """`hands` once `seat` has placed one `pyramid` of its hand."""
    hand = hands[seat]
    at = hand.index(pyramid)
    return _with(hands, seat, hand[:at] + hand[at + 1 :])


def _yard_refusal(pyramid: str, cell: tuple[int, int], yard: dict[tuple[int, int], Stack]) -> str:
    """Why the yard code refuses `pyramid` at `cell` ("" when it allows it)."""
    reason = _yard_reason(pyramid, cell, yard)
    return REFUSED_AT(pyramid=pyramid, x=cell[0], y=cell[1], why=reason) if reason else ""


def _yard_reason(pyramid: str, cell: tuple[int, int], yard: dict[tuple[int, int], Stack]) -> str:
    """`_yard_refusal` without the placement named: it is written only for a refusal."""
    if not yard:
        return "" if cell == (0, 0) else LEAD_AT_ORIGIN()
    stack = yard.get(cell)
    if stack is not None:
        if _size(stack[-1]) < _size(pyramid):
            return ""
        return YARD_COVER(top=stack[-1])
    x, y = cell
    colour = pyramid[1]
    near = False
    for neighbour in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
        if neighbour in yard:
            if _matches(colour, yard[neighbour][-1][1]):
                return ""
            near = True
    if not near:
        return YARD_ALONE()
    return YARD_COLOUR()


def _palace_refusal(
    pyramid: str, cell: tuple[int, int], palace: dict[tuple[int, int], Stack]
) -> str:
    """Why the palace code refuses `pyramid` at `cell` ("" when it allows it)."""
    reason = _palace_reason(pyramid, cell, palace)
    return REFUSED_AT(pyramid=pyramid, x=cell[0], y=cell[1], why=reason) if reason else ""


def _palace_reason(
    pyramid: str, cell: tuple[int, int], palace: dict[tuple[int, int], Stack]
) -> str:
    """`_palace_refusal` without the placement named: it is written only for a refusal."""
    if not palace:
        return "" if cell == (0, 0) else PALACE_AT_ORIGIN()
    stack = palace.get(cell)
    if stack is not None:
        if _size(stack[-1]) > _size(pyramid):
            return ""
        return PALACE_COVER(top=stack[-1])
    x, y = cell
    colour = pyramid[1]
    for neighbour in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
        if neighbour in palace and palace[neighbour][-1][1] == colour:
            return ""
    return PALACE_COLOUR()


def _buildable(yard: Board) -> list[str]:
    """The yard's pyramids that may be built into the palace: all but black and
    white, which leave the game when the round ends."""
    return [p for _, _, stack in yard for p in stack if p[1] not in (BLACK, WHITE)]


def _build_input(
    state: State,
) -> tuple[dict[tuple[int, int], ice_palace_solver.Piece], list[ice_palace_solver.Piece]]:
    """The palace tops and the yard's pyramids that may be built (not black, not white)."""
    tops = {(x, y): _PIECE[stack[-1]] for x, y, stack in state.palace}
    pieces = [_PIECE[p] for p in _buildable(state.yard)]
    return tops, pieces


def _places(plan: ice_palace_solver.Plan) -> tuple[Place, ...]:
    return tuple(_place(SIZES[size - 1] + colour, x, y) for size, colour, x, y in plan.steps)


def _leader(palace: Board, colours: str, builder: int, resigned: Sequence[int]) -> str:
    """The colour of the seat with the most palace points among the others still
    playing (the first in seat order on a tie); the builder's own when none is."""
    points = _points_after(palace, ice_palace_solver.Plan(0, ()))
    others = [seat for seat in range(len(colours)) if seat != builder and seat not in resigned]
    if not others:
        return colours[builder]
    return colours[max(others, key=lambda seat: (points.get(colours[seat], 0), -seat))]


def _auto_orders(colours: Sequence[str], mine: str, leader: str) -> list[tuple[str, ...]]:
    """The colour orders `build auto` asks the solver for, without repeats: the
    alphabetical one (rules version 1's plan, so that the builder never does
    worse), the builder's colour last (the colour the greedy builder meets last
    tops most stacks), and the same with the leader's colour first (it then tops
    fewest). Other orders were measured to add nothing on 1,000 builds."""
    others = [colour for colour in colours if colour != mine]
    rest = [colour for colour in others if colour != leader]
    orders = [tuple(colours), (*others, mine)]
    if leader in others:
        orders.append((leader, *rest, mine))
    return list(dict.fromkeys(orders))


def _points_after(palace: Board, plan: ice_palace_solver.Plan) -> dict[str, int]:
    """The palace points of each colour once `plan` is built on `palace`."""
    stacks = _as_dict(palace)
    for size, colour, x, y in plan.steps:
        stacks[x, y] = (*stacks.get((x, y), ()), SIZES[size - 1] + colour)
    points: dict[str, int] = {}
    for stack in stacks.values():
        points[stack[-1][1]] = points.get(stack[-1][1], 0) + len(stack)
    return points


def _size_counts(pyramids: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(SIZES, 0)
    for pyramid in pyramids:
        counts[pyramid[0]] += 1
    return counts


# -- notation -------------------------------------------------------------------

_PYRAMID = r"(?:([sml])\s*([rygbpokw])|([rygbpokw])\s*([sml]))"
_PLACE = re.compile(
    _PYRAMID + r"\s*@\s*\(?\s*([+-]?\d{1,9})\s*,\s*([+-]?\d{1,9})\s*\)?", re.IGNORECASE
)
_SEPARATORS = re.compile(r"[\s,;:]*")
_EXPECTED = reason(
    N_(
        "expected a placement like `Mw@1,0` (size S/M/L, colour r/y/g/b/p/o/k/w, then @x,y), "
        "`pass`, `build` followed by placements (`build Lr@0,1 Mg@0,1`), `build auto`, or "
        "`resign`"
    )
)
REFUSED_AT = reason(N_("{pyramid}@{x},{y}: {why}"))
LEAD_AT_ORIGIN = reason(N_("the lead goes at 0,0"))
YARD_COVER = reason(
    N_(
        "it cannot cover the {top} there; only a strictly larger "
        "pyramid covers (nothing covers a large)"
    )
)
YARD_ALONE = reason(N_("a new stack must be next to a yard stack"))
YARD_COLOUR = reason(
    N_(
        "no neighbouring top matches its colour (same colour; white matches "
        "every colour but black; black matches nothing)"
    )
)
PALACE_AT_ORIGIN = reason(N_("the first pyramid of the palace goes at 0,0"))
PALACE_COVER = reason(
    N_(
        "it cannot cover the {top} there; in the palace only a strictly "
        "smaller pyramid covers (nothing covers a small)"
    )
)
PALACE_COLOUR = reason(N_("a new palace stack needs a neighbouring top of exactly its colour"))
PLACEMENT_IS = reason(N_("a placement is an object {{pyramid, x, y}}"))
PYRAMID_IS = reason(N_("`pyramid` must be size S/M/L then colour r/y/g/b/p/o/k/w, like `Mw`"))
INTEGERS = reason(N_("`x` and `y` must be integers"))
BUILD_NOW = reason(
    N_(
        "the round is over and you build: send your palace plan "
        "(`build Lr@0,1 ...`) or `build auto`"
    )
)
ROUND_ON = reason(N_("the round is still on: place a pyramid in the yard or pass"))
LEAD_PASS = reason(N_("the lead cannot pass: place a pyramid of your hand at 0,0"))
NOT_IN_HAND = reason(N_("you have no {pyramid} in your hand"))
NONE_TO_BUILD = reason(
    N_(
        "step {number}, {placement}: the yard has no {pyramid} "
        "left to build with (black and white ones have left the game)"
    )
)
STEP = reason(N_("step {number}, {refusal}"))
TOO_SHORT = reason(
    N_("this plan places {count} pyramids, but {most} can be placed: your plan must place {most}")
)
NOT_AN_OBJECT = reason(N_("a move is a JSON object with a `type`"))
AUTO_IS = reason(N_("`auto` must be true or false"))
PLAN_IS = reason(N_("`plan` must be a list of placements"))
AUTO_ALONE = reason(N_("`build auto` takes no plan"))
TYPE_IS = reason(N_("`type` must be one of `place`, `pass`, `build`, `resign`"))
UNREADABLE_PLAN = reason(
    N_(
        "cannot read the plan at {text}: a plan is "
        "placements separated by spaces, like `build Lr@0,1 Mg@0,1 Sg@2,0`"
    )
)


def _pyramid_of(match: re.Match[str]) -> str:
    size = match.group(1) or match.group(4)
    colour = match.group(2) or match.group(3)
    return size.upper() + colour.lower()


def _place_of(match: re.Match[str]) -> Place:
    return Place(_pyramid_of(match), int(match.group(5)), int(match.group(6)))


def _notate_place(place: Place) -> str:
    return f"{place.pyramid}@{place.x},{place.y}"


def _valid_pyramid(value: str) -> bool:
    return len(value) == 2 and value[0] in SIZES and value[1] in ALL_COLOURS


def _place_from_json(data: Any) -> Place:
    if not isinstance(data, dict):
        raise IllegalMove("bad_move", PLACEMENT_IS())
    pyramid, x, y = data.get("pyramid"), data.get("x"), data.get("y")
    if not (isinstance(pyramid, str) and _valid_pyramid(pyramid)):
        raise IllegalMove("bad_move", PYRAMID_IS())
    if (
        not (isinstance(x, int) and isinstance(y, int))
        or isinstance(x, bool)
        or isinstance(y, bool)
    ):
        raise IllegalMove("bad_move", INTEGERS())
    return Place(pyramid, x, y)


_PLACEMENT_SCHEMA: JSON = {
    "properties": {
        "pyramid": {
            "type": "string",
            "pattern": f"^[{SIZES}][{ALL_COLOURS}]$",
            "description": "size S/M/L then colour, like `Mw`",
        },
        "x": {"type": "integer"},
        "y": {"type": "integer"},
    },
    "required": ["pyramid", "x", "y"],
}


def _place_to_json(place: Place) -> JSON:
    return {"pyramid": place.pyramid, "x": place.x, "y": place.y}


def _board_to_json(board: Board) -> list[Any]:
    return [[x, y, list(stack)] for x, y, stack in board]


def _board_from_json(data: Any) -> Board:
    return tuple((int(x), int(y), tuple(stack)) for x, y, stack in data)


def _board_view(board: Board) -> dict[str, list[str]]:
    return {f"{x},{y}": list(stack) for x, y, stack in board}


class _IcePalaceRules(Game[State, Move]):
    """Ice Palace's rules; `IcePalace`, at the end of the module, adds the
    written-out copies of a random move and of a whole random playout."""

    name: ClassVar[str] = "ice_palace"
    title: ClassVar[str] = N_("Ice Palace")
    score_label: ClassVar[str] = N_("Score")
    rules_version: ClassVar[str] = "3"
    players: ClassVar[tuple[int, ...]] = (3, 4, 5, 6)
    options_schema: ClassVar[type[marshmallow.Schema]] = IcePalaceOptions
    move_fields: ClassVar[Mapping[str, JSON]] = {
        "place": _PLACEMENT_SCHEMA,
        "pass": {"properties": {}, "required": []},
        "build": {
            "properties": {
                "auto": {"type": "boolean", "default": False},
                "plan": {
                    "type": "array",
                    "items": {"type": "object", **_PLACEMENT_SCHEMA, "additionalProperties": False},
                    "default": [],
                },
            },
            "required": [],
        },
    }
    lists_every_move: ClassVar[bool] = False
    notation_help: ClassVar[str] = N_(
        "In the yard, place a pyramid of your hand as size, colour, @x,y: `Mw@1,0` "
        "(the lead goes at `0,0`), or `pass`. The round's builder sends the whole "
        "palace plan, in order, on one line: `build Lr@0,1 Mg@0,1 Sg@2,0`; it must "
        "place as many pyramids as possible. `build auto` takes the referee's own "
        "maximal plan. `resign` leaves the game."
    )

    # -- the rules -------------------------------------------------------

    def start(self, players: int, options: JSON, rng: Rng) -> State:
        colours = PLAYER_COLOURS[:players]
        # Each size's part of the pool: the stashes less each hand's one of that size.
        one_size = [c for c in colours for _ in range(STASH_PER_SIZE - 1)]
        one_size += [BLACK] * STASH_PER_SIZE + [WHITE] * STASH_PER_SIZE
        parts = [list(one_size) for _ in SIZES]
        everything = [size + c for size in SIZES for c in one_size]
        first = next(p for p in rng.shuffled(everything) if p[1] in colours)
        marker = colours.index(first[1])
        for part in parts:
            rng.shuffle(part)
        hands = tuple(tuple(size + c for size in SIZES) for c in colours)
        pool = ("".join(parts[0]), "".join(parts[1]), "".join(parts[2]))
        carried = {
            "colours": colours,
            "hands": hands,
            "pool": pool,
            "palace": (),
            "out_of_game": 0,
            "resigned": (),
            "rounds": 0,
        }
        return _new_round(carried, marker)

    def actors(self, state: State) -> frozenset[int]:
        return _NOBODY if state.turn == NOBODY else _ONLY[state.turn]

    def forced_move(self, state: State) -> tuple[int, Move] | None:
        # Only the empty build: a yard pass depends on a hidden hand (RULINGS).
        if state.phase == BUILD and state.turn != NOBODY and state.build_max == 0:
            return state.turn, Build()
        return None

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat != state.turn or state.turn == NOBODY:
            return []
        if state.phase == BUILD:
            return [Build(state.build_plan), Build(auto=True)]
        moves: list[Move] = list(self._placements(state, seat))
        if state.yard:
            moves.append(Pass())
        return moves

    def build(self, state: State, seat: int, steps: Sequence[str]) -> Building[Move]:
        """In the yard: a pyramid of the hand, then its cell, or `pass`. The
        builder: a yard pyramid, then its palace cell, again and again until
        the plan places as many as can be placed, or the referee's own plan."""
        self._check_turn(state, seat)
        view = self.view(state, seat)
        taken = tuple(steps)
        if state.phase == BUILD and taken[:1] == (AUTO_STEP,):
            if len(taken) > 1:
                raise bad_step(taken[1])
            _show_plan(view, self.auto_plan(state))
            prompt = _("Play the referee's plan, or undo")
            return Building(taken, (), Build(auto=True), view, prompt)
        if state.phase == BUILD:
            return _palace_building(state, taken, view)
        return _yard_building(state, seat, taken, view)

    def _random_move_in_turn(self, state: State, seat: int, rng: Rng) -> Move:
        if state.phase == BUILD:
            return self._random_build(state, rng)
        return _random_yard_move(state.hands[seat], _yard_bits(state), rng)[0]

    def _random_build(self, state: State, rng: Rng) -> Build:
        if rng.below(4) == 0:
            return self._drawn_auto(state)
        # A random plan when it is maximal: palaces then grow in every
        # shape, as players grow them, not only in the solver's lines.
        tops, pieces = _build_input(state)
        order = self._random_order(state, rng)
        plan = ice_palace_solver.random_plan(tops, pieces, rng, order)
        if plan.count == state.build_max:
            return Build(_places(plan))
        return Build(state.build_plan)

    def _drawn_auto(self, state: State) -> Build:
        """What the random builder plays where it draws the referee's plan: the plan
        kept for the build, as `build auto`'s search would cost every playout dearly."""
        return Build(state.build_plan)

    def _random_order(self, state: State, rng: Rng) -> tuple[str, ...]:
        """The order the random builder takes the colours in: drawn from its stream, so
        that no colour is buried first in every random palace (RULINGS)."""
        return tuple(rng.shuffled(list(state.colours)))

    def auto_plan(self, state: State) -> tuple[Place, ...]:
        """The plan `build auto` plays in this build: `referee_plan`, its search started
        from the plan the state keeps (`quick_plan`'s, found when the round ended)."""
        kept = tuple((_size(p.pyramid), p.pyramid[1], p.x, p.y) for p in state.build_plan)
        quick = ice_palace_solver.Plan(state.build_max, kept)
        args = (state.palace, state.yard, state.colours, state.turn, state.resigned)
        return _places(self._bettered(*args, quick))

    def referee_plan(
        self, palace: Board, yard: Board, colours: str, builder: int, resigned: Sequence[int]
    ) -> ice_palace_solver.Plan:
        """The plan `build auto` plays when `builder` builds `yard` into `palace` (RULINGS):
        of the maximal plans, the one with the most palace points for the builder's
        colour, then the fewest for the leader among the other seats still playing,
        then the first found by `ice_palace_solver.best_plan`, whose search starts from
        `quick_plan` (so never worse for the builder than it)."""
        quick = self.quick_plan(palace, yard, colours, builder, resigned)
        return self._bettered(palace, yard, colours, builder, resigned, quick)

    def _bettered(
        self,
        palace: Board,
        yard: Board,
        colours: str,
        builder: int,
        resigned: Sequence[int],
        quick: ice_palace_solver.Plan,
    ) -> ice_palace_solver.Plan:
        if quick.count == 0:
            return quick
        stacks = {(x, y): (_PIECE[stack[-1]], len(stack)) for x, y, stack in palace}
        pieces = [_PIECE[p] for p in _buildable(yard)]
        leader = _leader(palace, colours, builder, resigned)
        steps = ice_palace_solver.best_plan(
            stacks, pieces, quick.count, colours[builder], leader, quick.steps
        )
        return ice_palace_solver.Plan(quick.count, steps, quick.exact)

    def quick_plan(
        self, palace: Board, yard: Board, colours: str, builder: int, resigned: Sequence[int]
    ) -> ice_palace_solver.Plan:
        """A maximal plan good for `builder`, found fast (rules version 2's `build
        auto`): of the solver's plans with the colours in each of `_auto_orders`, the
        most palace points for the builder's colour, then the fewest for the leader,
        then the first in that list. Bots estimate builds by it."""
        tops = {(x, y): _PIECE[stack[-1]] for x, y, stack in palace}
        pieces = [_PIECE[p] for p in _buildable(yard)]
        found = sorted({colour for _, colour in pieces} | {c for _, c in tops.values()})
        mine = colours[builder]
        leader = _leader(palace, colours, builder, resigned)
        plans = [
            ice_palace_solver.solve(tops, pieces, order=order)
            for order in _auto_orders(found, mine, leader)
        ]
        most = max(plan.count for plan in plans)

        def worth(number: int) -> tuple[int, int, int]:
            points = _points_after(palace, plans[number])
            return (-points.get(mine, 0), points.get(leader, 0), number)

        best = min((n for n, plan in enumerate(plans) if plan.count == most), key=worth)
        return plans[best]

    def _placements(self, state: State, seat: int) -> list[Place]:
        cells = _yard_cells(state.hands[seat], _yard_bits(state))
        return [Place(pyramid, x, y) for pyramid in sorted(cells) for x, y in cells[pyramid]]

    def _play_in_turn(self, state: State, seat: int, move: Move) -> State:
        if state.phase == BUILD:
            if not isinstance(move, Build):
                raise IllegalMove("illegal_move", BUILD_NOW())
            return self._build(state, move)
        if isinstance(move, Build):
            raise IllegalMove("illegal_move", ROUND_ON())
        if isinstance(move, Pass):
            if not state.yard:
                raise IllegalMove("illegal_move", LEAD_PASS())
            return self._next_turn(state, seat, state.passes + 1)
        assert isinstance(move, Place)  # the engine hands `Resign` to `_resign`
        return self._place(state, seat, move)

    def _place(self, state: State, seat: int, move: Place) -> State:
        if move.pyramid not in state.hands[seat]:
            raise IllegalMove("illegal_move", NOT_IN_HAND(pyramid=move.pyramid))
        bits = _yard_bits(state)
        cell = (move.x, move.y)
        bit = _yard_bit(bits, *cell)
        if not _allowed_bits(bits, move.pyramid) & bit:
            raise IllegalMove(
                "illegal_move", _yard_refusal(move.pyramid, cell, _as_dict(state.yard))
            )
        return self._placed(state, seat, move, bits, bit)

    def _placed(self, state: State, seat: int, move: Place, bits: YardBits, bit: int) -> State:
        """`_place` of a legal placement, `bit` its cell's in the yard's `bits`: the new
        state's fields set one by one (a playout places at most of its moves)."""
        yard, bits = _yard_placed(state.yard, bits, move, bit)
        fields = state.__dict__.copy()
        fields["hands"] = _taken_from(state.hands, seat, move.pyramid)
        fields["yard"] = yard
        fields["yard_bits"] = bits
        fields["last_placer"] = seat
        return self._handed_on(fields, seat, 0)

    def _next_turn(self, state: State, seat: int, passes: int, **changes: Any) -> State:
        """The turn goes round; resigned seats pass on their own; enough passes end the round.

        `changes` are made to `state` with the turn's (one new state, not two).
        """
        fields = state.__dict__.copy()
        if "yard" in changes and "yard_bits" not in changes:
            fields["yard_bits"] = None
        fields.update(changes)
        return self._handed_on(fields, seat, passes)

    def _handed_on(self, fields: dict[str, Any], seat: int, passes: int) -> State:
        """`_next_turn` of the state with these `fields` (all but the turn's own)."""
        players = len(fields["colours"])
        resigned = fields["resigned"]
        while passes < players:
            seat = (seat + 1) % players
            if seat not in resigned:
                fields["turn"] = seat
                fields["passes"] = passes
                return _state_of(fields)
            passes += 1
        fields["passes"] = passes
        return self._end_round(_state_of(fields))

    def _end_round(self, state: State) -> State:
        builder = state.last_placer
        pyramids = sum(len(stack) for _, _, stack in state.yard)
        pieces = _buildable(state.yard)
        out = state.out_of_game + pyramids - len(pieces)
        if builder in state.resigned:
            return self._after_build(state, state.palace, out + len(pieces))
        plan = self.quick_plan(state.palace, state.yard, state.colours, builder, state.resigned)
        return _replace(
            state,
            phase=BUILD,
            turn=builder,
            build_max=plan.count,
            build_plan=_places(plan),
            out_of_game=out,
        )

    def _build(self, state: State, move: Build) -> State:
        steps = self.auto_plan(state) if move.auto else move.steps
        left = Counter(_buildable(state.yard))
        palace = _as_dict(state.palace)
        for number, step in enumerate(steps, 1):
            if left[step.pyramid] == 0:
                raise IllegalMove(
                    "illegal_move",
                    NONE_TO_BUILD(
                        number=number, placement=_notate_place(step), pyramid=step.pyramid
                    ),
                )
            refusal = _palace_refusal(step.pyramid, (step.x, step.y), palace)
            if refusal:
                raise IllegalMove("illegal_move", STEP(number=number, refusal=refusal))
            left[step.pyramid] -= 1
            cell = (step.x, step.y)
            palace[cell] = (*palace.get(cell, ()), step.pyramid)
        # More than `build_max` is possible only where the solver's search ran
        # out of budget (see RULINGS): such a plan is maximal all the more.
        if len(steps) < state.build_max:
            raise IllegalMove("illegal_move", TOO_SHORT(count=len(steps), most=state.build_max))
        out = state.out_of_game + sum(left.values())
        return self._after_build(state, _as_board(palace), out)

    def _after_build(self, state: State, palace: Board, out_of_game: int) -> State:
        """The marker moves on and a new round begins (`_new_round`)."""
        carried = state.__dict__ | {
            "palace": palace,
            "out_of_game": out_of_game,
            "rounds": state.rounds + 1,
        }
        return _new_round(carried, _next_playing(state, state.marker))

    def _resign(self, state: State, seat: int) -> State:
        players = len(state.colours)
        if not 0 <= seat < players:
            raise not_your_turn()
        if seat in state.resigned:
            raise IllegalMove("illegal_move", ALREADY_RESIGNED())
        resigned = tuple(sorted((*state.resigned, seat)))
        state = _replace(
            state,
            resigned=resigned,
            hands=_with(state.hands, seat, ()),
            out_of_game=state.out_of_game + len(state.hands[seat]),
        )
        if players - len(resigned) == 1:
            return _replace(state, turn=NOBODY)
        if seat != state.turn:
            return state
        if state.phase == BUILD:
            # Black and white left the game when the round ended.
            coloured = len(_buildable(state.yard))
            return self._after_build(state, state.palace, state.out_of_game + coloured)
        if not state.yard:
            lead = _next_playing(state, seat)
            return _replace(state, marker=lead, turn=lead)
        return self._next_turn(state, seat, state.passes + 1)

    def pass_move(self, state: State, seat: int) -> Move | None:
        # The lead may not pass, nor may the builder.
        if seat == state.turn and state.phase == YARD and state.yard:
            return Pass()
        return None

    def resigned(self, state: State) -> frozenset[int]:
        return frozenset(state.resigned)

    def scores(self, state: State) -> tuple[int, ...]:
        return _scores(state)

    def breakdown(self, start: State, played: Sequence[Played[State, Move]]) -> Breakdown:
        """Each palace stack, to the seat whose colour tops it: only the
        palace counts, which everyone sees (the hands and the pool do not)."""
        final = played[-1].state if played else start
        lines: list[list[ScoreLine]] = [[] for _ in final.colours]
        for x, y, stack in final.palace:
            label = _("stack at {x},{y}: {stack} ({high} high)").format(
                x=x, y=y, stack=" ".join(stack), high=len(stack)
            )
            lines[final.colours.index(stack[-1][1])].append(ScoreLine(label, len(stack)))
        return tuple(tuple(seat_lines) for seat_lines in lines)

    def view(self, state: State, seat: int | None) -> JSON:
        building = state.phase == BUILD and state.turn != NOBODY
        return {
            "colours": list(state.colours),
            "marker": state.marker,
            "phase": state.phase,
            "turn": None if state.turn == NOBODY else state.turn,
            "hands": [
                list(hand) if owner == seat else _size_counts(hand)
                for owner, hand in enumerate(state.hands)
            ],
            "pool": {size: len(part) for size, part in zip(SIZES, state.pool, strict=True)},
            "yard": _board_view(state.yard),
            "palace": _board_view(state.palace),
            "last_placer": None if state.last_placer == NOBODY else state.last_placer,
            "passes": state.passes,
            "builder": state.turn if building else None,
            "build_max": state.build_max if building else None,
            "out_of_game": state.out_of_game,
            "resigned": list(state.resigned),
            "scores": list(_scores(state)),
        }

    def rounds_decided(self, state: State) -> int:
        return state.rounds

    def result(self, state: State) -> Result | None:
        if state.turn != NOBODY:
            return None
        return rank(_scores(state), state.resigned)

    # -- notation and JSON ------------------------------------------------

    def parse(self, text: str, options: JSON | None = None) -> Move:
        words = text.strip()
        lowered = words.lower()
        if lowered == "resign":
            return Resign()
        if lowered == "pass":
            return Pass()
        if lowered.startswith("build"):
            rest = words[len("build") :]
            if rest.strip().lower() == "auto":
                return Build(auto=True)
            return Build(tuple(_parse_places(rest)))
        match = _PLACE.fullmatch(words)
        if match is None:
            raise IllegalMove("bad_notation", _EXPECTED())
        return _place_of(match)

    def notate(self, move: Move) -> str:
        if isinstance(move, Resign):
            return "resign"
        if isinstance(move, Pass):
            return "pass"
        if isinstance(move, Place):
            return _notate_place(move)
        if move.auto:
            return "build auto"
        return " ".join(["build", *(_notate_place(step) for step in move.steps)])

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Resign):
            return {"type": "resign"}
        if isinstance(move, Pass):
            return {"type": "pass"}
        if isinstance(move, Place):
            return {"type": "place", **_place_to_json(move)}
        return {
            "type": "build",
            "auto": move.auto,
            "plan": [_place_to_json(step) for step in move.steps],
        }

    def move_from_json(self, data: Any) -> Move:
        if not isinstance(data, dict):
            raise IllegalMove("bad_move", NOT_AN_OBJECT())
        kind = data.get("type")
        if kind == "resign":
            return Resign()
        if kind == "pass":
            return Pass()
        if kind == "place":
            return _place_from_json(data)
        if kind == "build":
            auto = data.get("auto", False)
            plan = data.get("plan", [])
            if not isinstance(auto, bool):
                raise IllegalMove("bad_move", AUTO_IS())
            if not isinstance(plan, list):
                raise IllegalMove("bad_move", PLAN_IS())
            if auto and plan:
                raise IllegalMove("bad_move", AUTO_ALONE())
            return Build(tuple(_place_from_json(step) for step in plan), auto)
        raise IllegalMove("bad_move", TYPE_IS())

    def state_to_json(self, state: State) -> JSON:
        return {
            "colours": state.colours,
            "hands": [list(hand) for hand in state.hands],
            "pool": list(state.pool),
            "yard": _board_to_json(state.yard),
            "palace": _board_to_json(state.palace),
            "marker": state.marker,
            "turn": state.turn,
            "phase": state.phase,
            "passes": state.passes,
            "last_placer": state.last_placer,
            "build_max": state.build_max,
            "build_plan": [_place_to_json(step) for step in state.build_plan],
            "out_of_game": state.out_of_game,
            "resigned": list(state.resigned),
            "rounds": state.rounds,
        }

    def state_from_json(self, data: JSON) -> State:
        small, medium, large = data["pool"]
        return State(
            colours=data["colours"],
            hands=tuple(tuple(hand) for hand in data["hands"]),
            pool=(small, medium, large),
            yard=_board_from_json(data["yard"]),
            palace=_board_from_json(data["palace"]),
            marker=data["marker"],
            turn=data["turn"],
            phase=data["phase"],
            passes=data["passes"],
            last_placer=data["last_placer"],
            build_max=data["build_max"],
            build_plan=tuple(_place_from_json(step) for step in data["build_plan"]),
            out_of_game=data["out_of_game"],
            resigned=tuple(data["resigned"]),
            # Snapshots made before the count have none; only its rises are read.
            rounds=data.get("rounds", 0),
        )


# -- helpers that build states ----------------------------------------------------


def _replace(state: State, **changes: Any) -> State:
    """`dataclasses.replace` without its checks and its `__init__` (a frozen dataclass
    sets each field through `object.__setattr__`): most moves make a state or two,
    and this copies the fields in one go.

    A new yard without its bits leaves them to be worked out when asked for."""
    fields = state.__dict__.copy()
    if "yard" in changes and "yard_bits" not in changes:
        fields["yard_bits"] = None
    fields.update(changes)
    return _state_of(fields)


def _state_of(fields: dict[str, Any]) -> State:
    """The state with these fields (every one of `State`'s, `yard_bits` too)."""
    new = object.__new__(State)
    object.__setattr__(new, "__dict__", fields)
    return new


def _new_round(carried: dict[str, Any], marker: int) -> State:
    """The state as a round begins, with the `carried` fields (any of a round's
    own among them are replaced): the yard empty, `marker` leading, no build
    pending, and every hand still playing refilled from the pool from `marker`
    on; or the game over (nobody's turn) where the pool cannot refill them all."""
    state = _state_of(
        {
            **carried,
            "yard": (),
            "yard_bits": _EMPTY_YARD,
            "marker": marker,
            "turn": marker,
            "phase": YARD,
            "passes": 0,
            "last_placer": NOBODY,
            "build_max": 0,
            "build_plan": (),
        }
    )
    need = dict.fromkeys(SIZES, 0)
    for seat, hand in enumerate(state.hands):
        if seat not in state.resigned:
            for size, count in _size_counts(hand).items():
                need[size] += HAND_PER_SIZE - count
    if any(need[size] > len(part) for size, part in zip(SIZES, state.pool, strict=True)):
        return _replace(state, turn=NOBODY)
    hands, pool = _deal(state, marker)
    return _replace(state, hands=hands, pool=pool)


def _with(
    hands: tuple[tuple[str, ...], ...], seat: int, hand: tuple[str, ...]
) -> tuple[tuple[str, ...], ...]:
    return (*hands[:seat], hand, *hands[seat + 1 :])


def _next_playing(state: State, seat: int) -> int:
    players = len(state.colours)
    for step in range(1, players + 1):
        candidate = (seat + step) % players
        if candidate not in state.resigned:
            return candidate
    return seat


def _deal(state: State, first: int) -> tuple[tuple[tuple[str, ...], ...], tuple[str, str, str]]:
    """Every seat still playing refills to two of each size, from `first` on in seat order."""
    players = len(state.colours)
    hands = [list(hand) for hand in state.hands]
    pool = list(state.pool)
    for step in range(players):
        seat = (first + step) % players
        if seat in state.resigned:
            continue
        counts = _size_counts(hands[seat])
        for index, size in enumerate(SIZES):
            need = HAND_PER_SIZE - counts[size]
            hands[seat].extend(size + colour for colour in pool[index][:need])
            pool[index] = pool[index][need:]
    small, medium, large = pool
    return tuple(tuple(sorted(hand, key=_hand_order)) for hand in hands), (small, medium, large)


_HAND_ORDER = {
    size + colour: (number, ALL_COLOURS.index(colour))
    for number, size in enumerate(SIZES)
    for colour in ALL_COLOURS
}
# A pyramid's place in a hand: by size, then colour (a lookup: every deal sorts hands).
_hand_order = _HAND_ORDER.__getitem__


def _scores(state: State) -> tuple[int, ...]:
    scores = [0] * len(state.colours)
    for _x, _y, stack in state.palace:
        scores[state.colours.index(stack[-1][1])] += len(stack)
    return tuple(scores)


def _parse_places(text: str) -> list[Place]:
    places: list[Place] = []
    position = 0
    for match in _PLACE.finditer(text):
        if not _SEPARATORS.fullmatch(text, position, match.start()):
            break
        places.append(_place_of(match))
        position = match.end()
    if not _SEPARATORS.fullmatch(text, position):
        raise IllegalMove(
            "bad_notation", UNREADABLE_PLAN(text=repr(_shorten(text[position:].strip())))
        )
    return places


def _shorten(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


# -- building a move on the board ------------------------------------------------

PASS_STEP = "pass"
AUTO_STEP = "auto"
# The colours' names, as labels and pictures say them.
COLOUR_WORDS = {
    "r": N_("red"),
    "y": N_("yellow"),
    "g": N_("green"),
    "b": N_("blue"),
    "p": N_("purple"),
    "o": N_("orange"),
    "k": N_("black"),
    "w": N_("white"),
}
_CELL_STEP = re.compile(r"(-?\d{1,6}),(-?\d{1,6})")


def _cell_step(cell: tuple[int, int]) -> str:
    return f"{cell[0]},{cell[1]}"


def _cell_of_step(step: str) -> tuple[int, int] | None:
    match = _CELL_STEP.fullmatch(step)
    return None if match is None else (int(match[1]), int(match[2]))


def _yard_building(state: State, seat: int, steps: tuple[str, ...], view: JSON) -> Building[Move]:
    """A pyramid of the hand, then a cell the yard code allows it; or a pass."""
    cells = _yard_cells(state.hands[seat], _yard_bits(state))
    lead = not state.yard
    paths: list[tuple[Sequence[Choice], Move]] = []
    leading, placing = _("Lead a {words} pyramid"), _("Place a {words} pyramid")
    for pyramid in sorted(cells, key=_hand_order):
        words = pyramid_words(pyramid)
        which = Choice(pyramid, (leading if lead else placing).format(words=words))
        the = _("The {words} at {cell}")
        paths.extend(
            (
                (which, Choice(_cell_step(cell), the.format(words=words, cell=_cell_step(cell)))),
                Place(pyramid, *cell),
            )
            for cell in cells[pyramid]
        )
    fits = bool(paths)
    if not lead:
        paths.append(((Choice(PASS_STEP, _("Pass")),), Pass()))
    choices, move = walk(paths, steps)
    if isinstance(move, Place):
        hand = list(view["hands"][seat])
        hand.remove(move.pyramid)
        view["hands"][seat] = hand
        where = f"{move.x},{move.y}"
        view["yard"][where] = [*view["yard"].get(where, []), move.pyramid]
    if move is not None:
        prompt = _("Play the move, or undo")
    elif steps:
        prompt = _("Choose where the {words} goes in the yard")
        prompt = prompt.format(words=pyramid_words(steps[0]))
    elif lead:
        prompt = _("Choose a pyramid to lead at 0,0")
    else:
        prompt = _("Choose a pyramid to place, or pass")
        if not fits:
            prompt = _("Nothing fits the yard: pass")
    return Building(steps, choices, move, view, prompt)


class _PalacePlan:
    """A palace plan being built step by step, with a plan known to finish it.

    `witness` places at least `need` more from here (the solver's plan at
    first): so some next step always keeps the plan maximal.
    """

    def __init__(self, state: State) -> None:
        self.palace = _as_dict(state.palace)
        self.left = Counter(_buildable(state.yard))
        self.witness = state.build_plan
        self.placed: list[Place] = []
        self.need = state.build_max

    def pyramids(self) -> list[str]:
        return sorted((p for p, n in self.left.items() if n), key=_hand_order)

    def cells(self, pyramid: str) -> list[tuple[int, int]]:
        """The cells the palace code allows `pyramid` now."""
        if not self.palace:
            return [(0, 0)]
        near = {cell for x, y in self.palace for cell in _neighbours(x, y)}
        candidates = sorted(set(self.palace) | near)
        return [c for c in candidates if not _palace_refusal(pyramid, c, self.palace)]

    def follow(self, pyramid: str, cell: tuple[int, int]) -> tuple[Place, ...] | None:
        """A plan finishing the build after `pyramid` at `cell`; None if none is known."""
        quick = self.mended(pyramid, cell)
        return self.searched(pyramid, cell) if quick is None else quick

    def mended(self, pyramid: str, cell: tuple[int, int]) -> tuple[Place, ...] | None:
        """The known plan, mended to follow `pyramid` at `cell`, if it still places enough."""
        if self.need <= 1:
            return ()
        palace, left = self.after(pyramid, cell)
        mended = _mend(self.witness, Place(pyramid, *cell), palace, left)
        return mended if len(mended) >= self.need - 1 else None

    def searched(self, pyramid: str, cell: tuple[int, int]) -> tuple[Place, ...] | None:
        """A plan the solver finds after `pyramid` at `cell`, placing enough."""
        palace, left = self.after(pyramid, cell)
        tops = tuple(sorted((c, (_size(stack[-1]), stack[-1][1])) for c, stack in palace.items()))
        return _completion(tops, tuple(sorted(left.elements())), self.need - 1)

    def after(
        self, pyramid: str, cell: tuple[int, int]
    ) -> tuple[dict[tuple[int, int], Stack], Counter[str]]:
        palace = dict(self.palace)
        palace[cell] = (*palace.get(cell, ()), pyramid)
        return palace, self.left - Counter((pyramid,))

    def options(
        self, pyramid: str, first: bool = False
    ) -> list[tuple[tuple[int, int], tuple[Place, ...]]]:
        """The cells for `pyramid` after which the build can still be finished (with
        `first`, one is enough). Mending the known plan is cheap: every cell gets
        that chance before the solver searches from any."""
        found: list[tuple[tuple[int, int], tuple[Place, ...]]] = []
        hard: list[tuple[int, int]] = []
        for cell in self.cells(pyramid):
            quick = self.mended(pyramid, cell)
            if quick is None:
                hard.append(cell)
                continue
            found.append((cell, quick))
            if first:
                return found
        for cell in hard:
            plan = self.searched(pyramid, cell)
            if plan is not None:
                found.append((cell, plan))
                if first:
                    break
        return sorted(found)

    def take(self, pyramid: str, cell: tuple[int, int], follow: tuple[Place, ...]) -> None:
        self.palace[cell] = (*self.palace.get(cell, ()), pyramid)
        self.left[pyramid] -= 1
        self.placed.append(Place(pyramid, *cell))
        self.witness = follow
        self.need -= 1

    def take_step(self, pyramid: str, where: str) -> None:
        """Take a pyramid and its cell, as chosen; `bad_step` unless they were offered."""
        if not self.left[pyramid]:
            raise bad_step(pyramid)
        cell = _cell_of_step(where)
        follow = None
        if cell is not None and cell in self.cells(pyramid):
            follow = self.follow(pyramid, cell)
        if cell is None or follow is None:
            raise bad_step(where)
        self.take(pyramid, cell, follow)


def _palace_building(state: State, steps: tuple[str, ...], view: JSON) -> Building[Move]:
    """Pyramid, cell, pyramid, cell... (the referee's plan in one step is `build`'s)."""
    plan = _PalacePlan(state)
    for index in range(0, len(steps) - 1, 2):
        plan.take_step(steps[index], steps[index + 1])
    _show_plan(view, tuple(plan.placed))
    if len(steps) % 2:
        pyramid = steps[-1]
        options = plan.options(pyramid) if plan.left[pyramid] else []
        if not options:
            raise bad_step(pyramid)
        words = pyramid_words(pyramid)
        build_at = _("Build the {words} at {cell}")
        choices = tuple(
            Choice(_cell_step(cell), build_at.format(words=words, cell=_cell_step(cell)))
            for cell, _plan in options
        )
        prompt = _("Choose where the {words} goes in the palace ({more})").format(
            words=words, more=_more(plan.need)
        )
        return Building(steps, choices, None, view, prompt)
    offered = [p for p in plan.pyramids() if plan.options(p, first=True)]
    build_a = _("Build a {words} pyramid")
    choices = tuple(Choice(p, build_a.format(words=pyramid_words(p))) for p in offered)
    if not steps:
        choices += (Choice(AUTO_STEP, _("Let the referee build")),)
    if plan.need > 0:
        prompt = _("Choose a pyramid to build ({more})").format(more=_more(plan.need))
        return Building(steps, choices, None, view, prompt)
    prompt = _("Play the plan, or build more") if choices else _("Play the plan, or undo")
    return Building(steps, choices, Build(tuple(plan.placed)), view, prompt)


def _mend(
    plan: tuple[Place, ...], taken: Place, palace: dict[tuple[int, int], Stack], left: Counter[str]
) -> tuple[Place, ...]:
    """What stays legal of `plan` once `taken` is placed first: the plan without its
    first pyramid like `taken`, skipping the steps the palace code now refuses.

    Most steps a player takes only reorder the known plan or swap a cell, so this
    often shows a way on without searching."""
    palace, left = dict(palace), Counter(left)
    dropped = False
    kept: list[Place] = []
    for step in plan:
        if not dropped and step.pyramid == taken.pyramid:
            dropped = True
            continue
        cell = (step.x, step.y)
        if left[step.pyramid] and not _palace_refusal(step.pyramid, cell, palace):
            left[step.pyramid] -= 1
            palace[cell] = (*palace.get(cell, ()), step.pyramid)
            kept.append(step)
    return tuple(kept)


@functools.lru_cache(maxsize=4096)
def _completion(
    tops: tuple[tuple[tuple[int, int], tuple[int, str]], ...], pieces: tuple[str, ...], need: int
) -> tuple[Place, ...] | None:
    """A plan placing `need` of `pieces` on a palace with these `tops`, if the solver
    finds one. Remembered: each click of a plan built on the board checks again
    every step taken before it, and the answer for a position never changes."""
    plan = ice_palace_solver.completes(dict(tops), [(_size(p), p[1]) for p in pieces], need)
    return None if plan is None else _places(plan)


def _more(need: int) -> str:
    return ngettext("{count} more to place", "{count} more to place", need).format(count=need)


def _show_plan(view: JSON, placed: tuple[Place, ...]) -> None:
    """The preview of a plan: each pyramid taken from the yard, put in the palace."""
    for step in placed:
        where = f"{step.x},{step.y}"
        view["palace"][where] = [*view["palace"].get(where, []), step.pyramid]
        for cell, stack in sorted(view["yard"].items()):
            if step.pyramid in stack:
                stack.reverse()
                stack.remove(step.pyramid)
                stack.reverse()
                if not stack:
                    del view["yard"][cell]
                break
    view["plan"] = [_notate_place(step) for step in placed]


# -- playouts -------------------------------------------------------------------
# The speed-only copies of the rules' `play_random` and default random playout,
# after the rules: tests hold them to `random_move` then `play`, and to the
# default loop, draw for draw.


class IcePalace(_IcePalaceRules):
    """The rules, with a random move and a whole random playout written out for speed."""

    def play_random(self, state: State, seat: int, rng: Rng) -> tuple[Move, State]:
        """`random_move` then `play`, the yard's bit sets worked out once: the drawn
        move is legal, so it is made without `play`'s checks."""
        if seat != state.turn or state.turn == NOBODY:
            return super().play_random(state, seat, rng)
        if state.phase == BUILD:
            build = self._random_build(state, rng)
            steps = self.auto_plan(state) if build.auto else build.steps
            coloured = len(_buildable(state.yard))
            palace = _as_dict(state.palace)
            for step in steps:
                cell = (step.x, step.y)
                palace[cell] = (*palace.get(cell, ()), step.pyramid)
            out = state.out_of_game + coloured - len(steps)
            return build, self._after_build(state, _as_board(palace), out)
        bits = _yard_bits(state)
        move, bit = _random_yard_move(state.hands[seat], bits, rng)
        if isinstance(move, Pass):
            return move, self._next_turn(state, seat, state.passes + 1)
        return move, self._placed(state, seat, move, bits, bit)

    def random_playout(self, state: State, rng: Rng) -> Iterator[Played[State, Move]]:
        """`Game.random_playout`, each round's yard played by `_random_yard_round`; the
        builds, forced or drawn, as the default loop plays them. A random move never
        resigns, so only a playout from a position with a resigned seat meets one: it
        is left to the default loop."""
        if state.resigned:
            yield from super().random_playout(state, rng)
            return
        while True:
            if state.phase == BUILD:
                state = yield from self.forced_moves(state)
            seat = state.turn
            if seat == NOBODY:
                return
            if state.phase == YARD:
                state = yield from self._random_yard_round(state, rng)
            else:
                move, state = self.play_random(state, seat, rng)
                yield _new_tuple(Played, (seat, move, state))

    def _random_yard_round(
        self, state: State, rng: Rng
    ) -> Generator[Played[State, Move], None, State]:
        """`play_random` of the seat to place, move after move, until the round's yard
        ends (at `_end_round`); returns the state after the last move. For a game
        with no resigned seat: `_handed_on` is written out for it, with the hands,
        the yard, its bits, the turn and the passes kept in locals."""
        players = len(state.colours)
        hands, yard, bits = state.hands, state.yard, _yard_bits(state)
        seat, passes = state.turn, state.passes
        while True:
            move, bit = _random_yard_move(hands[seat], bits, rng)
            fields = state.__dict__.copy()
            if isinstance(move, Place):
                yard, bits = _yard_placed(yard, bits, move, bit)
                hands = _taken_from(hands, seat, move.pyramid)
                fields["hands"] = hands
                fields["yard"] = yard
                fields["yard_bits"] = bits
                fields["last_placer"] = seat
                passes = 0
            else:
                passes += 1
                if passes == players:
                    fields["passes"] = passes
                    state = self._end_round(_state_of(fields))
                    yield _new_tuple(Played, (seat, move, state))
                    return state
            played_by, seat = seat, (seat + 1) % players
            fields["turn"] = seat
            fields["passes"] = passes
            state = _state_of(fields)
            yield _new_tuple(Played, (played_by, move, state))


class IcePalaceV2(IcePalace):
    """Rules version 2: `build auto` was `quick_plan`, the best of the solver's plans
    for a few colour orders rather than of all maximal plans (RULINGS)."""

    rules_version: ClassVar[str] = "2"

    def referee_plan(
        self, palace: Board, yard: Board, colours: str, builder: int, resigned: Sequence[int]
    ) -> ice_palace_solver.Plan:
        return self.quick_plan(palace, yard, colours, builder, resigned)

    def auto_plan(self, state: State) -> tuple[Place, ...]:
        return state.build_plan

    def _drawn_auto(self, state: State) -> Build:
        return Build(auto=True)


class IcePalaceV1(IcePalaceV2):
    """Rules version 1: `build auto` was the solver's plan with the colours in
    alphabetical order, and so was the random builder's (RULINGS)."""

    rules_version: ClassVar[str] = "1"

    def _random_order(self, state: State, rng: Rng) -> tuple[str, ...]:
        return ()

    def quick_plan(
        self, palace: Board, yard: Board, colours: str, builder: int, resigned: Sequence[int]
    ) -> ice_palace_solver.Plan:
        tops = {(x, y): _PIECE[stack[-1]] for x, y, stack in palace}
        return ice_palace_solver.solve(tops, [_PIECE[p] for p in _buildable(yard)])


GAME = IcePalace()
GAME_V2 = IcePalaceV2()
GAME_V1 = IcePalaceV1()
