"""Mandala Stones (Filip Głowacz, Board&Dice 2021): the rules as pure functions.

The main board is the rules file's 7 by 7 lattice: circles are the cells with
both coordinates odd (numbered 1-9 row by row), stacks the 24 cells with
exactly one odd coordinate, indexed 0-23 in lattice row order. A stone is an
int `colour * 2 + pattern` (colours `YBRV`, patterns `*o`), so bit 0 is its
pattern. Towers and stacks are tuples bottom to top.

The printed mandala board and objective deck live as data in
`mandala_stones_data`, which also documents the JSON shape of the options
`mandala_board` and `objectives` that replace them.

Randomness drawn in `start`, in this order: the 96 stones are shuffled and
dealt into the stacks 4 at a time (stack 0 first, bottom first); the
circles 2, 4, 6, 8 are shuffled and given to A1-A4; the objective deck is
shuffled and dealt 2 cards to each seat in seat order; the first player is
drawn last.

RULINGS (where the rules file is silent):

- `first` must name a direction whose stone is collectable, and is written
  even when only one stone is; a pick therefore has one notation per outcome.
- SCORE, of either kind, may be chosen even when a pick is possible.
  `score tops` lists distinct non-empty towers; their order is the order the
  stones go onto the mandala.
- Space 1 counts the heights of all 5 spaces before any stone of that
  scoring is removed (it is scored first, being leftmost).
- A custom mandala board must have a hands space for the game's player
  count, so that the mandala can end the game.
- The immediate end (a seat that can neither pick nor score) is checked
  whenever a seat's turn begins, the very first turn included; the round is
  not completed then.
- Once the mandala has triggered the end, the round is complete when the
  turn order comes back round to the first player's seat, whether or not
  that seat (or the one before it) has resigned.
- Objectives are scored at every end, the end by resignations included (the
  last seat left wins anyway). A seat scores the best card it holds whose
  condition holds, or nothing; a "tower" is a non-empty space.
- Stones set aside once the mandala is full give no points; their number is
  shown as `set_aside`.
- The patterns under the tops of the stacks stay hidden even after the end.
- A seat that resigns out of turn leaves the turn where it is; resigning
  on turn hands it on (and may complete the round or end the game).
- Notation also takes colour and direction names (`score violet`,
  `first north`), and `score top` for `score tops`; `objectives` takes
  `off` in any case.
- The old name of red is read wherever a colour is: `P` and `pink` in
  notation, `P` in a move's JSON (`{"type": "score", "colour": "P"}`) and
  in the stones of a stored state (`P*`). All of them mean red and come
  back out as `R`, so an old record replays to the same states.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import operator
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import marshmallow
from marshmallow import fields, validate, validates_schema

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
    walk,
)
from referee.games import mandala_stones_data
from referee.games.reasons import ALREADY_LEFT, NO_SEAT, reason, words
from referee.i18n import N_, _
from referee.rng import Rng

COLOURS = "YBRV"
# Red was called pink (`P`) before the original's *rouge* was followed:
# records and snapshots written then still say `P`, read as red.
_OLD_RED = "P"
PATTERNS = "*o"
DIRECTIONS = "NESW"
ARTISTS = 4
SPACES = 5

_COLOUR_NAMES = {"yellow": "Y", "blue": "B", "red": "R", "pink": "R", "violet": "V"}
_DIRECTION_NAMES = {"north": "N", "east": "E", "south": "S", "west": "W"}
# A1 and A2 show the star (pattern 0), A3 and A4 the circle (pattern 1).
_ARTIST_PATTERN = (0, 0, 1, 1)
_START_CIRCLES = (2, 4, 6, 8)
_ALL_STONES = tuple(stone for stone in range(8) for _ in range(12))
_HEIGHT_POINTS = {2: (0, 4, 2, 1, 1), 3: (0, 1, 3, 4, 1), 4: (0, 1, 2, 4, 6)}
_STEPS = ((-1, 0), (0, 1), (1, 0), (0, -1))


def _lattice() -> tuple[
    tuple[tuple[int, int], ...], tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]
]:
    """Stack cells, each circle's stacks N/E/S/W, and the circle beyond each."""
    stack_cells = tuple(
        (row, col) for row in range(7) for col in range(7) if (row % 2) + (col % 2) == 1
    )
    index = {cell: i for i, cell in enumerate(stack_cells)}
    circle_cells = [(row, col) for row in (1, 3, 5) for col in (1, 3, 5)]
    circle_number = {cell: n + 1 for n, cell in enumerate(circle_cells)}
    stacks = []
    beyond = []
    for row, col in circle_cells:
        stacks.append(tuple(index[(row + dr, col + dc)] for dr, dc in _STEPS))
        beyond.append(
            tuple(circle_number.get((row + 2 * dr, col + 2 * dc), 0) for dr, dc in _STEPS)
        )
    return stack_cells, tuple(stacks), tuple(beyond)


STACK_CELLS, CIRCLE_STACKS, _BEYOND = _lattice()
"""`CIRCLE_STACKS[c - 1][d]`: the stack in direction `d` (0-3 = N, E, S, W) of
circle `c`; `_BEYOND[c - 1][d]`: the other circle that stack touches, 0 on
the border."""


# -- values -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Card:
    """An objective card; `args` are its condition's parameters in the order
    of `_CONDITIONS[kind]` (a pattern as its index, `heights` spread out)."""

    number: int
    points: int
    kind: str
    args: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Setup:
    """What the options fixed for the whole game."""

    spaces: int
    bonuses: tuple[int, ...]  # points for covering each mandala space, in filling order
    end_space: int  # the space whose hands equal the player count


# Not frozen: a frozen dataclass sets each field through `object.__setattr__`, which
# made building a state (every move builds one) six times dearer. A state is still a
# value: the rules build new states and never change one, except to fill in the
# derived fields below, once, as they are first needed.
@dataclass(slots=True, unsafe_hash=True)
class State:
    setup: Setup
    stacks: tuple[tuple[int, ...], ...]
    artists: tuple[int, ...]  # circle of A1..A4
    boards: tuple[tuple[tuple[int, ...], ...], ...]  # per seat, its 5 towers
    scores: tuple[int, ...]
    mandala: tuple[int, ...]
    set_aside: int
    objectives: tuple[tuple[Card, ...], ...]
    first_player: int
    current: int
    end_triggered: bool
    resigned: tuple[int, ...]
    objective_points: tuple[int, ...] | None  # set when the game ends
    # Derived from the fields above, worked out when first asked for (`_showing`,
    # `_reach`) and carried to the next state by the moves that leave them as they are.
    # Any other way of building a state (`dataclasses.replace` included) starts them
    # afresh as None.
    showing: tuple[int, int] | None = dataclasses.field(
        default=None, init=False, compare=False, repr=False
    )
    reach: tuple[tuple[int, ...], int] | None = dataclasses.field(
        default=None, init=False, compare=False, repr=False
    )

    @property
    def over(self) -> bool:
        return self.objective_points is not None


_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(State) if f.init)
_FIELD_VALUES = operator.attrgetter(*_FIELDS)


_FIELD_INDEX = {name: index for index, name in enumerate(_FIELDS)}
_new_object = object.__new__


def _moved(
    setup: Setup,
    stacks: tuple[tuple[int, ...], ...],
    artists: tuple[int, ...],
    boards: tuple[tuple[tuple[int, ...], ...], ...],
    scores: tuple[int, ...],
    mandala: tuple[int, ...],
    set_aside: int,
    objectives: tuple[tuple[Card, ...], ...],
    first_player: int,
    current: int,
    end_triggered: bool,
    resigned: tuple[int, ...],
    showing: tuple[int, int] | None,
    reach: tuple[tuple[int, ...], int] | None,
) -> State:
    """The state after a move of a game going on, with its derived fields where
    the move knows them (else None).

    Built field by field, not by `State(...)`: calling the class runs its
    generated `__init__` in an interpreter frame of its own, which made a
    move's new state half as dear again.
    """
    after = _new_object(State)
    after.setup = setup
    after.stacks = stacks
    after.artists = artists
    after.boards = boards
    after.scores = scores
    after.mandala = mandala
    after.set_aside = set_aside
    after.objectives = objectives
    after.first_player = first_player
    after.current = current
    after.end_triggered = end_triggered
    after.resigned = resigned
    after.objective_points = None
    after.showing = showing
    after.reach = reach
    return after


def _replace(state: State, **changes: Any) -> State:
    """`dataclasses.replace`, without its checks (the derived fields start afresh)."""
    values = list(_FIELD_VALUES(state))
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    return State(*values)


@dataclass(frozen=True, slots=True)
class Pick:
    artist: int  # 1-4
    circle: int  # 1-9
    first: str  # N, E, S or W
    space: int  # 1-5


@dataclass(frozen=True, slots=True)
class ScoreColour:
    colour: str  # Y, B, R or V


@dataclass(frozen=True, slots=True)
class ScoreTops:
    spaces: tuple[int, ...]


Move = Pick | ScoreColour | ScoreTops | Resign

# Every pick there can be, `_PICKS[artist - 1][circle - 1][direction][space - 1]`:
# moves are values, and listing them is cheaper than making them anew.
_PICKS = tuple(
    tuple(
        tuple(
            tuple(Pick(artist, circle, first, space) for space in range(1, SPACES + 1))
            for first in DIRECTIONS
        )
        for circle in range(1, 10)
    )
    for artist in range(1, ARTISTS + 1)
)


# -- options ----------------------------------------------------------------

_CONDITIONS: dict[str, tuple[str, ...]] = {
    "top_pattern_only": ("pattern",),
    "tower_count": ("count",),
    "top_colours": ("count", "min_towers"),
    "heights_present": ("heights",),
    "towers_of_height": ("height", "at_least"),
    "same_height": ("count",),
}
_COUNT_RANGE = {"tower_count": (0, 5), "top_colours": (1, 4), "same_height": (1, 5)}


def _space_key(key: str) -> int | None:
    return int(key) if re.fullmatch(r"[1-9][0-9]*", key) else None


# The player counts a board names a hands space for.
_PLAYER_COUNTS = ("2", "3", "4")


# What the options' own checks say (a custom board, objective cards), registered so
# that a form says them in its reader's language.
NOT_A_SPACE = reason(N_("{key} is not a space number from 1 to {size}"))
HANDS_SPACE = reason(N_("the hands space for {players} players, {space}, is not from 1 to {size}"))
SHARED_HANDS = reason(N_("two player counts share one hands space"))
NEEDS = reason(N_("a {kind} condition needs {name}"))
TAKES_ONLY = reason(N_("a {kind} condition takes only {names}"))
COUNT_FROM = reason(N_("a {kind} count must be from {low} to {high}"))
EACH_HEIGHT = reason(N_("each height once"))
OFF_OR_CARDS = reason(N_('objectives are "off" or a list of cards'))
SAME_NUMBER = reason(N_("two cards have the same number"))


class _MandalaBoardSchema(marshmallow.Schema):
    spaces = fields.Integer(required=True, strict=True, validate=validate.Range(1, 96))
    bonuses = fields.Dict(
        required=True,
        keys=fields.String(),
        values=fields.Integer(strict=True, validate=validate.Range(min=1)),
        # Space numbers: no board has more than 96 spaces (whether this one has the
        # space is checked against `spaces`, which no JSON Schema can compare).
        metadata={
            "properties": {str(space): {"type": "integer", "minimum": 1} for space in range(1, 97)},
            "additionalProperties": False,
        },
    )
    hands = fields.Dict(
        required=True,
        keys=fields.String(validate=validate.OneOf(_PLAYER_COUNTS)),
        values=fields.Integer(strict=True, validate=validate.Range(1, 96)),
        # What the JSON Schema of the options says: these player counts, no other key.
        metadata={
            "properties": {
                count: {"type": "integer", "minimum": 1, "maximum": 96} for count in _PLAYER_COUNTS
            },
            "additionalProperties": False,
        },
    )

    @validates_schema
    def _spaces_exist(self, data: JSON, **_: Any) -> None:
        size = data["spaces"]
        errors: dict[str, list[str]] = {}
        for key in data["bonuses"]:
            space = _space_key(key)
            if space is None or space > size:
                errors.setdefault("bonuses", []).append(NOT_A_SPACE(key=repr(key), size=size))
        for players, space in data["hands"].items():
            if not 1 <= space <= size:
                errors.setdefault("hands", []).append(
                    HANDS_SPACE(players=players, space=space, size=size)
                )
        if len(set(data["hands"].values())) < len(data["hands"]):
            errors.setdefault("hands", []).append(SHARED_HANDS())
        if errors:
            raise marshmallow.ValidationError(errors)


class _ConditionSchema(marshmallow.Schema):
    kind = fields.String(required=True, validate=validate.OneOf(list(_CONDITIONS)))
    pattern = fields.String(validate=validate.OneOf(list(PATTERNS)))
    count = fields.Integer(strict=True)
    min_towers = fields.Integer(strict=True, validate=validate.Range(0, SPACES))
    heights = fields.List(
        fields.Integer(strict=True, validate=validate.Range(1, 4)),
        validate=validate.Length(min=1),
    )
    height = fields.Integer(strict=True, validate=validate.Range(1, 4))
    at_least = fields.Integer(strict=True, validate=validate.Range(1, SPACES))

    @validates_schema
    def _parameters_fit_kind(self, data: JSON, **_: Any) -> None:
        kind = data["kind"]
        wanted = _CONDITIONS[kind]
        errors: dict[str, list[str]] = {}
        for name in wanted:
            if name not in data:
                errors[name] = [NEEDS(kind=kind, name=name)]
        for name in data:
            if name != "kind" and name not in wanted:
                errors[name] = [TAKES_ONLY(kind=kind, names=", ".join(wanted))]
        if "count" in data and kind in _COUNT_RANGE:
            low, high = _COUNT_RANGE[kind]
            if not low <= data["count"] <= high:
                errors["count"] = [COUNT_FROM(kind=kind, low=low, high=high)]
        heights = data.get("heights", [])
        if len(set(heights)) < len(heights):
            errors["heights"] = [EACH_HEIGHT()]
        if errors:
            raise marshmallow.ValidationError(errors)


class _CardSchema(marshmallow.Schema):
    card = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    points = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))
    condition = fields.Nested(_ConditionSchema, required=True)


class _ObjectivesField(fields.Field[Any]):
    """`"off"` (any case) or a list of objective cards with distinct numbers."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if isinstance(value, str) and value.lower() == "off":
            return "off"
        if not isinstance(value, list):
            raise marshmallow.ValidationError(OFF_OR_CARDS())
        cards: list[JSON] = _CardSchema(many=True).load(value)
        numbers = [card["card"] for card in cards]
        if len(set(numbers)) < len(numbers):
            raise marshmallow.ValidationError(SAME_NUMBER())
        return cards


def _default_board() -> JSON:
    return copy.deepcopy(mandala_stones_data.MANDALA_BOARD)


def _default_objectives() -> list[JSON]:
    return copy.deepcopy(mandala_stones_data.OBJECTIVES)


# What each kind's parameters take, as JSON Schema (`_ConditionSchema` checks them).
_PARAMETERS: dict[str, JSON] = {
    "pattern": {"type": "string", "enum": list(PATTERNS)},
    "min_towers": {"type": "integer", "minimum": 0, "maximum": SPACES},
    "heights": {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": "integer", "minimum": 1, "maximum": 4},
    },
    "height": {"type": "integer", "minimum": 1, "maximum": 4},
    "at_least": {"type": "integer", "minimum": 1, "maximum": SPACES},
}


def _parameter_schema(kind: str, name: str) -> JSON:
    if name == "count":
        low, high = _COUNT_RANGE[kind]
        return {"type": "integer", "minimum": low, "maximum": high}
    return _PARAMETERS[name]


def condition_schema(kind: str) -> JSON:
    """One kind of objective condition as JSON Schema: its `kind`, its parameters, no other."""
    wanted = _CONDITIONS[kind]
    return {
        "type": "object",
        # Names the kind's component in the OpenAPI document (api/schemas/rules.py).
        "title": "".join(part.capitalize() for part in kind.split("_")) + "Condition",
        "properties": {
            "kind": {"type": "string", "enum": [kind]},
            **{name: _parameter_schema(kind, name) for name in wanted},
        },
        "required": ["kind", *wanted],
        "additionalProperties": False,
    }


# What `objectives` takes, as the JSON Schema GET /v1/rules publishes (the
# field's own check is `_ObjectivesField`): each condition kind a schema of
# its own, so that a condition the schema takes is one the referee takes.
# Two cards with one number are refused too, which no JSON Schema can say.
_OBJECTIVES_JSON_SCHEMA: JSON = {
    "oneOf": [
        {"type": "string", "enum": ["off"], "description": "play without objective cards"},
        {
            "type": "array",
            "description": "the objective cards, with distinct numbers",
            "items": {
                "type": "object",
                "required": ["card", "points", "condition"],
                "additionalProperties": False,
                "properties": {
                    "card": {"type": "integer", "minimum": 1},
                    "points": {"type": "integer", "minimum": 0},
                    "condition": {
                        "description": "when the card scores; each kind takes only its parameters",
                        "oneOf": [condition_schema(kind) for kind in _CONDITIONS],
                        "discriminator": {"propertyName": "kind"},
                    },
                },
            },
        },
    ]
}


class MandalaStonesOptions(marshmallow.Schema):
    mandala_board = fields.Nested(_MandalaBoardSchema, load_default=_default_board)
    objectives = _ObjectivesField(
        load_default=_default_objectives, metadata=_OBJECTIVES_JSON_SCHEMA
    )


def objective_card(data: JSON) -> Card:
    """The card of a loaded `objectives` option entry."""
    condition = data["condition"]
    kind = condition["kind"]
    args: list[int] = []
    for name in _CONDITIONS[kind]:
        value = condition[name]
        if name == "pattern":
            args.append(PATTERNS.index(value))
        elif name == "heights":
            args.extend(value)
        else:
            args.append(value)
    return Card(data["card"], data["points"], kind, tuple(args))


def objective_holds(card: Card, towers: tuple[tuple[int, ...], ...]) -> bool:
    """Whether `card`'s condition holds on a board of 5 towers."""
    built = [tower for tower in towers if tower]
    heights = [len(tower) for tower in built]
    tops = [tower[-1] for tower in built]
    args = card.args
    match card.kind:
        case "top_pattern_only":
            return bool(built) and all(stone & 1 == args[0] for stone in tops)
        case "tower_count":
            return len(built) == args[0]
        case "top_colours":
            return len({stone >> 1 for stone in tops}) == args[0] and len(built) >= args[1]
        case "heights_present":
            return all(height in heights for height in args)
        case "towers_of_height":
            return heights.count(args[0]) >= args[1]
        case "same_height":
            return len(built) == args[0] and len(set(heights)) == 1
    raise ValueError(f"unknown objective kind {card.kind!r}")


# -- stones and picks -------------------------------------------------------


def stone_name(stone: int) -> str:
    return COLOURS[stone >> 1] + PATTERNS[stone & 1]


def _colour_letter(letter: str) -> str:
    """The canonical letter of a colour: the old `P` is red."""
    return "R" if letter == _OLD_RED else letter


def stone_value(name: str) -> int:
    """The stone called `name` (`R*`; the old `P*` is red too)."""
    colour = _colour_letter(name[:1])
    if len(name) != 2 or colour not in COLOURS or name[1] not in PATTERNS:
        raise ValueError(f"not a stone: {name!r}")
    return COLOURS.index(colour) * 2 + PATTERNS.index(name[1])


def collectable(
    stacks: tuple[tuple[int, ...], ...], artists: tuple[int, ...], artist: int, circle: int
) -> list[int]:
    """Directions (0-3) of the stones `artist` (1-4) would collect on `circle`."""
    pattern = _ARTIST_PATTERN[artist - 1]
    others = [artists[i] for i in range(ARTISTS) if i != artist - 1]
    found = []
    around = CIRCLE_STACKS[circle - 1]
    beyond = _BEYOND[circle - 1]
    for direction in range(4):
        stack = stacks[around[direction]]
        if stack and stack[-1] & 1 == pattern and beyond[direction] not in others:
            found.append(direction)
    return found


def _taking_order(found: Sequence[int], first: int) -> list[int]:
    """The directions of the stones a pick takes, in the order taken: clockwise from `first`
    (one of `found`, which are in order: so the order is `found` turned to start there)."""
    start = found.index(first)
    return [*found[start:], *found[:start]]


# Playouts spend their time choosing picks, so there stacks and circles are read as
# bit sets (bit i: stack i; bit c - 1: circle c), and what a circle offers an artist
# is one `&`.
_STACK_BIT = tuple(1 << stack for stack in range(len(STACK_CELLS)))
_CIRCLE_BIT = tuple(1 << circle for circle in range(len(CIRCLE_STACKS)))
_ALL_CIRCLES = sum(_CIRCLE_BIT)
# Per circle (index circle - 1): the stacks around it.
_AROUND = tuple(sum(_STACK_BIT[stack] for stack in around) for around in CIRCLE_STACKS)
# Per stack: the circles it touches.
_TOUCHING = tuple(
    sum(bit for bit, around in zip(_CIRCLE_BIT, CIRCLE_STACKS, strict=True) if stack in around)
    for stack in range(len(STACK_CELLS))
)
# Per set of circles (bits): the circles, in order.
_CIRCLES_IN = tuple(
    tuple(circle for circle in range(1, len(CIRCLE_STACKS) + 1) if circles >> circle - 1 & 1)
    for circles in range(1 << len(CIRCLE_STACKS))
)
# A pick's artist and circle as a bit: `9 * (artist - 1) + circle - 1`.
_CIRCLES = len(CIRCLE_STACKS)
_ONE_CIRCLE_EACH = sum(1 << _CIRCLES * artist for artist in range(ARTISTS))


# The circles that a set of stacks touches, read half the set at a time, as the picks
# of one artist: `_TOUCHED_BY_HALF[artist - 1][k][half]` for the stacks 12k to 12k + 11
# whose bits `half` sets. (Shifted here to each artist's picks, not in `_reach`: an
# operation on ints costs as much as a table lookup.)
def _touched_by_half(k: int) -> tuple[int, ...]:
    """For stacks 12k to 12k + 11, by the bits `half` sets: the circles they touch. Each
    entry is an earlier one with its highest stack added (a table built at import)."""
    touched = [0] * (1 << 12)
    for half in range(1, 1 << 12):
        highest = half.bit_length() - 1
        touched[half] = touched[half ^ 1 << highest] | _TOUCHING[12 * k + highest]
    return tuple(touched)


_HALVES = (_touched_by_half(0), _touched_by_half(1))
_TOUCHED_BY_HALF = tuple(
    tuple(tuple(touched << _CIRCLES * artist for touched in half) for half in _HALVES)
    for artist in range(ARTISTS)
)
# By name, for `_reach_in`: a global is read as cheaply as a local is unpacked.
(_LOW1, _HIGH1), (_LOW2, _HIGH2), (_LOW3, _HIGH3), (_LOW4, _HIGH4) = _TOUCHED_BY_HALF
_ALL_STACKS = sum(_STACK_BIT)
# Per placing of the artists (the circles of A1-A4): the picks to circles free for
# their artist to move to, and per artist the stacks it may take from (those touching
# no circle holding another artist).
_LAYOUTS = {
    artists: (
        (_ALL_CIRCLES & ~sum(_CIRCLE_BIT[circle - 1] for circle in artists)) * _ONE_CIRCLE_EACH,
        *(
            _ALL_STACKS
            & ~functools.reduce(
                operator.or_,
                (_AROUND[circle - 1] for other, circle in enumerate(artists) if other != artist),
            )
            for artist in range(ARTISTS)
        ),
    )
    for artists in itertools.permutations(range(1, len(CIRCLE_STACKS) + 1), ARTISTS)
}


# An entry of `_LAYOUTS`: the free circles' picks, then per artist the stacks it may take from.
Layout = tuple[int, ...]
# Every non-empty set of directions, each in order.
_DIRECTION_SETS = tuple(tuple(d for d in range(4) if mask >> d & 1) for mask in range(1, 16))
# Per circle: the directions (0-3, in order) of each set of the stacks around it.
_DIRECTIONS_OF = tuple(
    {sum(_STACK_BIT[around[d]] for d in directions): directions for directions in _DIRECTION_SETS}
    for around in CIRCLE_STACKS
)
# Per circle and set of its stacks collected: by the first direction (its letter), the
# stacks taken from, in the order taken.
_TAKING = tuple(
    {
        found: {
            DIRECTIONS[first]: tuple(around[d] for d in _taking_order(directions, first))
            for first in directions
        }
        for found, directions in by_set.items()
    }
    for around, by_set in zip(CIRCLE_STACKS, _DIRECTIONS_OF, strict=True)
)
# The same, as a choice to draw from: per circle and set of its stacks collected, each
# first direction (0-3, in order) with the stacks taken from.
_FIRSTS = tuple(
    {
        found: tuple((direction, taking[found][DIRECTIONS[direction]]) for direction in directions)
        for found, directions in by_set.items()
    }
    for taking, by_set in zip(_TAKING, _DIRECTIONS_OF, strict=True)
)


# Per pattern: the table turning a stack's top (a stone, or 8 for an empty stack) into
# the binary digit 1 where it shows the pattern, else 0.
_SHOWS_DIGIT = tuple(
    bytes(ord("1") if code < 8 and code & 1 == pattern else ord("0") for code in range(256))
    for pattern in (0, 1)
)


def _showing(state: State) -> tuple[int, int]:
    """The stacks whose top shows the star, and those whose top shows the circle."""
    showing = state.showing
    if showing is None:
        tops = bytes([stack[-1] if stack else 8 for stack in reversed(state.stacks)])
        showing = state.showing = _showing_of(tops)
    return showing


def _showing_of(tops: bytes) -> tuple[int, int]:
    """`_showing` of the stacks' tops (a stone, or 8 for an empty stack), last stack first."""
    # The tops read as two binary numbers.
    return int(tops.translate(_SHOWS_DIGIT[0]), 2), int(tops.translate(_SHOWS_DIGIT[1]), 2)


def _reach(state: State) -> tuple[tuple[int, ...], int]:
    """Per artist A1-A4, the stacks whose tops it may take; and the picks (bits: artist
    and circle, `_ONE_CIRCLE_EACH`) to free circles where it would collect one or more
    of them.

    The same as asking `collectable` for every artist and free circle: an
    artist takes the tops showing its pattern from the stacks around its new
    circle, but not from a stack that touches another artist's circle.
    """
    reach = state.reach
    if reach is None:
        reach = state.reach = _reach_in(state.showing or _showing(state), _LAYOUTS[state.artists])
    return reach


def _reach_in(showing: tuple[int, int], layout: Layout) -> tuple[tuple[int, ...], int]:
    """`_reach` of a state whose tops show `showing` (`_showing`) and whose artists
    are placed as `layout` (`_LAYOUTS`) says."""
    stars, circles = showing
    free, open1, open2, open3, open4 = layout
    # A1 and A2 take stars, A3 and A4 circles (`_ARTIST_PATTERN`).
    t1, t2, t3, t4 = stars & open1, stars & open2, circles & open3, circles & open4
    return (
        (t1, t2, t3, t4),
        (
            _LOW1[t1 & 4095]
            | _HIGH1[t1 >> 12]
            | _LOW2[t2 & 4095]
            | _HIGH2[t2 >> 12]
            | _LOW3[t3 & 4095]
            | _HIGH3[t3 >> 12]
            | _LOW4[t4 & 4095]
            | _HIGH4[t4 >> 12]
        )
        & free,
    )


def _pick_options(state: State) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every (artist, circle, collectable directions) with something to collect, by
    artist then circle."""
    takes, picks = _reach(state)
    return [
        (artist, circle, _DIRECTIONS_OF[circle - 1][takes[artist - 1] & _AROUND[circle - 1]])
        for artist in range(1, ARTISTS + 1)
        for circle in _CIRCLES_IN[picks >> _CIRCLES * (artist - 1) & _ALL_CIRCLES]
    ]


# A pick's bit (`_CIRCLES * (artist - 1) + circle - 1`): its artist, its circle, the
# stacks around that circle, the circle's first stones by the stacks collected
# (`_FIRSTS`) and its moves by direction and space (`_PICKS`).
_PICK_AT = tuple(
    (artist, circle, _AROUND[circle - 1], _FIRSTS[circle - 1], _PICKS[artist - 1][circle - 1])
    for artist in range(1, ARTISTS + 1)
    for circle in range(1, _CIRCLES + 1)
)
PickAt = tuple[
    int,
    int,
    int,
    dict[int, tuple[tuple[int, tuple[int, ...]], ...]],
    tuple[tuple[Pick, ...], ...],
]
# Per 12 bits, the positions of those set, in order: picks are read 12 bits at a time.
_SET_BITS = tuple(tuple(bit for bit in range(12) if bits >> bit & 1) for bits in range(1 << 12))


def _nth_pick(picks: int, n: int) -> PickAt:
    """`_PICK_AT` of the pick `_pick_options(state)[n]`, from the picks of `_reach(state)`
    without listing the others."""
    low = 0
    while True:
        bits = _SET_BITS[picks >> low & 4095]
        if n < len(bits):
            return _PICK_AT[low + bits[n]]
        n -= len(bits)
        low += 12


def _scoring_points(towers: tuple[tuple[int, ...], ...], spaces: Sequence[int]) -> int:
    """The points the rules give for scoring the tops of `spaces` (before the mandala's
    bonuses): space 1 the number of distinct tower heights, space 5 one more than the
    colours in its tower, the others by their tower's height."""
    points = 0
    for space in spaces:
        if space == 1:
            points += len(set(map(len, towers)))
        elif space == SPACES:
            points += 1 + len({stone >> 1 for stone in towers[SPACES - 1]})
        else:
            points += _HEIGHT_POINTS[space][len(towers[space - 1])]
    return points


# Per board, by the colour (0-3) on top of each space (4 where empty): its empty spaces,
# its built ones, the colours it may score (on top of two towers or more) and the spaces
# each of those colours tops. A playout asks at every move.
_SUMMARIES = {
    tops: (
        tuple(space for space, top in enumerate(tops, 1) if top == 4),
        tuple(space for space, top in enumerate(tops, 1) if top < 4),
        tuple(colour for colour in range(4) if tops.count(colour) >= 2),
        tuple(
            tuple(space for space, top in enumerate(tops, 1) if top == colour)
            for colour in range(4)
            if tops.count(colour) >= 2
        ),
    )
    for tops in itertools.product(range(5), repeat=SPACES)
}
Summary = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[tuple[int, ...], ...]]


def _board_summary(towers: tuple[tuple[int, ...], ...]) -> Summary:
    """The board's empty spaces, its built ones, the colours (0-3) it may score and the
    spaces each of those colours tops."""
    # Written out for the 5 spaces: a playout asks at every move.
    t1, t2, t3, t4, t5 = towers
    return _SUMMARIES[
        (
            t1[-1] >> 1 if t1 else 4,
            t2[-1] >> 1 if t2 else 4,
            t3[-1] >> 1 if t3 else 4,
            t4[-1] >> 1 if t4 else 4,
            t5[-1] >> 1 if t5 else 4,
        )
    ]


def _colour_scoring(towers: tuple[tuple[int, ...], ...], colour: int) -> tuple[list[int], int]:
    """The spaces a colour scoring takes the tops of, left to right, and the points their
    rules give (before the mandala's bonuses)."""
    spaces = [space for space, tower in enumerate(towers, 1) if tower and tower[-1] >> 1 == colour]
    return spaces, _scoring_points(towers, spaces)


Scored = tuple[tuple[tuple[tuple[int, ...], ...], ...], tuple[int, ...], tuple[int, ...], int, bool]


def _tops_removed(state: State, seat: int, spaces: Sequence[int], points: int) -> Scored:
    """What changes when the top of each listed tower goes onto the mandala, in order,
    and the points are scored with the bonuses covered: the boards, the scores, the
    mandala, the stones set aside and whether the end is triggered."""
    towers = list(state.boards[seat])
    tops = []
    for space in spaces:
        tower = towers[space - 1]
        tops.append(tower[-1])
        towers[space - 1] = tower[:-1]
    # The tops go onto the mandala while it has spaces left, the others aside.
    setup = state.setup
    before = len(state.mandala)
    mandala = state.mandala + tuple(tops)
    if len(mandala) > setup.spaces:
        mandala = mandala[: setup.spaces]
    filled = len(mandala)
    points += sum(setup.bonuses[before:filled])
    set_aside = state.set_aside + len(tops) - (filled - before)
    triggered = state.end_triggered or before < setup.end_space <= filled
    boards = list(state.boards)
    boards[seat] = tuple(towers)
    scores = list(state.scores)
    scores[seat] += points
    return tuple(boards), tuple(scores), mandala, set_aside, triggered


_SCORE_COLOURS = tuple(ScoreColour(colour) for colour in COLOURS)
# Every `score tops` there can be, by its spaces (each tower's top once, in any order).
_TOPS_SCORINGS = {
    spaces: ScoreTops(spaces)
    for count in range(1, SPACES + 1)
    for spaces in itertools.permutations(range(1, SPACES + 1), count)
}
_NO_PICKS: tuple[tuple[int, ...], int] = ((), 0)


def _can_act(state: State, seat: int) -> bool:
    # An empty board has every space free, so any pick would do.
    return any(state.boards[seat]) or _reach(state)[1] != 0


# -- turn order ---------------------------------------------------------------


def _best_objective(cards: tuple[Card, ...], board: tuple[tuple[int, ...], ...]) -> Card | None:
    """The card of `cards` that scores on `board`: the best one whose condition holds."""
    holding = [card for card in cards if objective_holds(card, board)]
    return max(holding, key=lambda card: card.points, default=None)


def _objective_line(cards: tuple[Card, ...], board: tuple[tuple[int, ...], ...]) -> ScoreLine:
    best = _best_objective(cards, board)
    if best is None:
        numbers = _(" nor ").join(str(card.number) for card in cards)
        return ScoreLine(_("objective: neither card {numbers} holds").format(numbers=numbers), 0)
    return ScoreLine(_("objective: card {number} holds").format(number=best.number), best.points)


def _finish(state: State) -> State:
    points = tuple(
        0 if best is None else best.points
        for best in (
            _best_objective(cards, board)
            for cards, board in zip(state.objectives, state.boards, strict=True)
        )
    )
    scores = tuple(score + extra for score, extra in zip(state.scores, points, strict=True))
    return _replace(state, scores=scores, objective_points=points)


def _next_seat(state: State, triggered: bool) -> int | None:
    """Whose turn follows `state.current`'s; None where the game ends instead (one seat
    left, or the end triggered and the turn order back at the first player's seat)."""
    players = len(state.scores)
    resigned = state.resigned
    if players - len(resigned) <= 1:
        return None
    seat = state.current
    for _turn in range(players):
        seat = (seat + 1) % players
        if seat == state.first_player and triggered:
            return None
        if seat not in resigned:
            break
    return seat


def _advance(
    state: State,
    stacks: tuple[tuple[int, ...], ...],
    artists: tuple[int, ...],
    boards: tuple[tuple[tuple[int, ...], ...], ...],
    scores: tuple[int, ...],
    mandala: tuple[int, ...],
    set_aside: int,
    triggered: bool,
    showing: tuple[int, int] | None,
    reach: tuple[tuple[int, ...], int] | None,
) -> State:
    """`state` with a pick's or a scoring's new fields, and the turn handed on from
    `state.current`, ending the game where due.

    Who resigned stays as it is; the turn order reads whether the end is
    triggered after the move (a scoring may trigger it). `showing` and `reach`
    are the new state's derived fields where the move knows them, else None.
    """
    if state.resigned:
        seat = _next_seat(state, triggered)
    else:  # `_next_seat` where every seat plays on, written out
        seat = (state.current + 1) % len(scores)
        if triggered and seat == state.first_player:
            seat = None
    after = _moved(
        state.setup,
        stacks,
        artists,
        boards,
        scores,
        mandala,
        set_aside,
        state.objectives,
        state.first_player,
        state.current if seat is None else seat,
        triggered,
        state.resigned,
        showing,
        reach,
    )
    if seat is None:
        return _finish(after)
    # `_begin`, written out: a seat that has a tower can always score.
    return after if any(boards[seat]) or _reach(after)[1] else _finish(after)


def _picked(
    state: State,
    seat: int,
    artist: int,
    circle: int,
    found: int,
    taken: tuple[int, ...],
    space: int,
) -> State:
    """The state after a legal pick: `artist` moves to `circle` and collects the tops of
    the stacks `found` (bits), taken in the order `taken`, into the seat's tower `space`."""
    artists = list(state.artists)
    artists[artist - 1] = circle
    stacks, boards, showing = _picked_fields(
        state.stacks,
        state.boards,
        state.showing or _showing(state),
        seat,
        artist,
        circle,
        found,
        taken,
        space,
    )
    return _advance(
        state,
        stacks,
        tuple(artists),
        boards,
        state.scores,
        state.mandala,
        state.set_aside,
        state.end_triggered,
        showing,
        None,
    )


Picked = tuple[
    tuple[tuple[int, ...], ...],
    tuple[tuple[tuple[int, ...], ...], ...],
    tuple[int, int],
]


def _picked_fields(
    stacks_before: tuple[tuple[int, ...], ...],
    boards_before: tuple[tuple[tuple[int, ...], ...], ...],
    showing: tuple[int, int],
    seat: int,
    artist: int,
    circle: int,
    found: int,
    taken: tuple[int, ...],
    space: int,
) -> Picked:
    """What changes in a legal pick (`_picked`) of a state with those stacks, boards
    and tops showing (`_showing`), but the artists: the same three after it."""
    stacks = list(stacks_before)
    # The stones taken all show the artist's pattern; the stones under them show theirs.
    stars, circles = showing
    # `found` holds only stacks showing the artist's pattern (A1 and A2 take stars): their
    # bits are cleared by flipping them.
    if artist > 2:
        circles ^= found
    else:
        stars ^= found
    tower = []
    for index in taken:
        stack = stacks[index]
        tower.append(stack[-1])
        stacks[index] = rest = stack[:-1]
        if not rest:
            continue
        if rest[-1] & 1:
            circles |= _STACK_BIT[index]
        else:
            stars |= _STACK_BIT[index]
    new_towers = list(boards_before[seat])
    new_towers[space - 1] = tuple(tower)
    boards = list(boards_before)
    boards[seat] = tuple(new_towers)
    return tuple(stacks), tuple(boards), (stars, circles)


def _scored(state: State, seat: int, spaces: Sequence[int], points: int) -> State:
    """The state after a legal scoring of the tops of `spaces`, in order, for `points`
    before the mandala's bonuses."""
    scored = _tops_removed(state, seat, spaces, points)
    # A scoring leaves the stacks and the artists, so the picks, as they were.
    return _advance(state, state.stacks, state.artists, *scored, state.showing, state.reach)


def _begin(state: State) -> State:
    """The immediate end: the seat to move can neither pick nor score."""
    return state if _can_act(state, state.current) else _finish(state)


def _winner(state: State) -> int:
    players = len(state.scores)
    order = [(state.first_player + k) % players for k in range(players)]
    staying = [seat for seat in order if seat not in state.resigned]
    best = max(state.scores[seat] for seat in staying)
    return next(seat for seat in staying if state.scores[seat] == best)


# -- notation -----------------------------------------------------------------

_PICK = re.compile(
    r"pick\s*a\s*([1-4])\s*to\s*([1-9])\s*first\s*(north|east|south|west|n|e|s|w)\s*on\s*([1-5])"
)
_SCORE_COLOUR = re.compile(r"score\s*(yellow|blue|red|pink|violet|y|b|r|p|v)")
_SCORE_TOPS = re.compile(r"score\s*tops?\s*([1-5](?:[\s,]*[1-5])*)")
_PICK_HELP = reason(
    N_(
        "a pick is written `pick A2 to 5 first N on 3`: an artist A1-A4, the circle 1-9 it "
        "moves to, the direction N/E/S/W of the first stone taken, and your tower space 1-5"
    )
)
_SCORE_HELP = reason(
    N_(
        "a score is written `score Y` (a colour: Y, B, R or V) or `score tops 1 4` "
        "(tower spaces 1-5, in the order their stones go onto the mandala)"
    )
)
EXPECTED = reason(N_("expected a pick, a score or `resign`; {pick}; {score}"))
INTEGER = reason(N_("{key} must be an integer from {low} to {high}"))
KEYS = reason(N_("a {kind} move has exactly the keys {keys}"))
MUST_SCORE = reason(N_("your board has no empty tower space: you must score"))
NOT_EMPTY = reason(N_("your tower space {space} is not empty"))
ALREADY_THERE = reason(N_("A{artist} is already on circle {circle}"))
HELD = reason(N_("circle {circle} holds A{holder}"))
FIRST = reason(
    N_(
        "the stack {first} of circle {circle} has no collectable stone; "
        "the first stone is one of {choices}"
    )
)
NOTHING_TO_COLLECT = reason(
    N_(
        "A{artist} would collect no stone on circle {circle}: it takes only "
        "tops showing the {shows} from stacks that touch no circle holding another artist"
    )
)
PATTERN_NAMES = words(N_("star"), N_("circle"))
TOO_FEW = reason(
    N_("{colour} is on top of {count} of your towers; scoring a colour needs at least 2")
)
NO_TOWER = reason(N_("list at least one tower"))
TWICE = reason(N_("each tower may be listed once"))
EMPTY_SPACE = reason(N_("your tower space {space} is empty"))
NOT_AN_OBJECT = reason(N_("a move is an object with a string `type`"))
ARTIST_IS = reason(N_("artist must be one of A1, A2, A3, A4"))
FIRST_IS = reason(N_("first must be one of N, E, S, W"))
COLOUR_IS = reason(N_("colour must be one of Y, B, R, V"))
SPACES_ARE = reason(N_("spaces must be a list of tower spaces 1-5"))
TYPE_IS = reason(N_("type must be pick, score, score_tops or resign"))


def _bad_move(reason: str) -> IllegalMove:
    return IllegalMove("bad_move", reason)


def _exact_int(data: JSON, key: str, low: int, high: int) -> int:
    value = data.get(key)
    if type(value) is not int or not low <= value <= high:
        raise _bad_move(INTEGER(key=key, low=low, high=high))
    return value


def _check_keys(data: JSON, keys: set[str]) -> None:
    if set(data) != keys | {"type"}:
        raise _bad_move(KEYS(kind=data["type"], keys=sorted(keys | {"type"})))


# -- building a move on the board ----------------------------------------------

Path = tuple[tuple[Choice, ...], Move]


# The building's words, whole: in French a colour agrees with the stone, the
# star or the circle it names ("pierre bleue", "cercle bleu").
# By direction then colour.
_FIRST_STONE = (
    (
        N_("First stone north (yellow)"),
        N_("First stone north (blue)"),
        N_("First stone north (red)"),
        N_("First stone north (violet)"),
    ),
    (
        N_("First stone east (yellow)"),
        N_("First stone east (blue)"),
        N_("First stone east (red)"),
        N_("First stone east (violet)"),
    ),
    (
        N_("First stone south (yellow)"),
        N_("First stone south (blue)"),
        N_("First stone south (red)"),
        N_("First stone south (violet)"),
    ),
    (
        N_("First stone west (yellow)"),
        N_("First stone west (blue)"),
        N_("First stone west (red)"),
        N_("First stone west (violet)"),
    ),
)
# By colour then pattern.
_TOP_WORDS = (
    (N_("yellow star"), N_("yellow circle")),
    (N_("blue star"), N_("blue circle")),
    (N_("red star"), N_("red circle")),
    (N_("violet star"), N_("violet circle")),
)
_SCORE_WORDS = (N_("Score yellow"), N_("Score blue"), N_("Score red"), N_("Score violet"))


def _top_words(stone: int) -> str:
    return _(_TOP_WORDS[stone >> 1][stone & 1])


def _pick_paths(state: State, seat: int, artist: str | None) -> list[Path]:
    """Each pick's path (`artist` alone where given): the artist, the circle, the first
    stone, the tower's space."""
    towers = state.boards[seat]
    empty = [space for space in range(1, SPACES + 1) if not towers[space - 1]]
    paths: list[Path] = []
    for number, circle, found in _pick_options(state) if empty else []:
        name = f"A{number}"
        if artist not in (None, name):
            continue
        who = Choice(name, _("Artist {name}").format(name=name))
        where = Choice(str(circle), _("Circle {circle}").format(circle=circle))
        build_on = _("Build on space {space}")
        for direction in found:
            top = state.stacks[CIRCLE_STACKS[circle - 1][direction]][-1]
            first = Choice(
                DIRECTIONS[direction],
                _(_FIRST_STONE[direction][top >> 1]),
            )
            paths.extend(
                (
                    (who, where, first, Choice(str(space), build_on.format(space=space))),
                    Pick(number, circle, DIRECTIONS[direction], space),
                )
                for space in empty
            )
    return paths


def _tops_paths(towers: tuple[tuple[int, ...], ...], taken: Sequence[str]) -> list[Path]:
    """Each `score tops`, the towers' tops in the order they go onto the mandala, every
    prefix a move of its own: those that agree with the tops `taken` so far, and go at
    most one top beyond them (all that `walk` needs, where all orders would be hundreds)."""
    top_of = _("Top of tower {space} ({top})")
    built = [
        Choice(f"t{space}", top_of.format(space=space, top=_top_words(towers[space - 1][-1])))
        for space in range(1, SPACES + 1)
        if towers[space - 1]
    ]
    paths: list[Path] = []
    pending: list[tuple[Choice, ...]] = [()]
    while pending:
        path = pending.pop()
        if path:
            paths.append((path, ScoreTops(tuple(int(choice.step[1]) for choice in path))))
        depth = len(path)
        if depth <= len(taken):
            pending.extend(
                (*path, choice)
                for choice in reversed(built)
                if choice not in path and (depth == len(taken) or choice.step == taken[depth])
            )
    return paths


def _paths(state: State, seat: int, steps: Sequence[str]) -> list[Path]:
    """The paths of choices of the legal moves that agree with `steps`: every move's at
    the start, then one artist's picks, one colour, or the tops chosen so far (so that
    each click stays quick)."""
    first = steps[0] if steps else None
    towers = state.boards[seat]
    paths: list[Path] = []
    if first is None or first.startswith("A"):
        paths += _pick_paths(state, seat, first)
    paths += [
        ((Choice(COLOURS[colour], _(_SCORE_WORDS[colour])),), ScoreColour(COLOURS[colour]))
        for colour in _board_summary(towers)[2]
        if first in (None, COLOURS[colour])
    ]
    if first is None or first.startswith("t"):
        paths += _tops_paths(towers, steps)
    return paths


def _show_pick(view: JSON, state: State, seat: int, steps: Sequence[str]) -> None:
    """The pick so far on the seat's view: the artist on its new circle, then the stacks
    it takes from in order (`taking`, stack indices), then those stones as the new tower.

    Only the view's own stones move: the stone under a taken top keeps its pattern
    hidden, as the view gives it.
    """
    if len(steps) < 2:
        return
    artist, circle = int(steps[0][1]), int(steps[1])
    view["artists"][steps[0]] = circle
    if len(steps) < 3:
        return
    found = collectable(state.stacks, state.artists, artist, circle)
    order = _taking_order(found, DIRECTIONS.index(steps[2]))
    view["taking"] = [CIRCLE_STACKS[circle - 1][direction] for direction in order]
    if len(steps) < 4:
        return
    tower = []
    for index in view["taking"]:
        stone = view["stacks"][index].pop()
        tower.append(stone["colour"] + stone["pattern"])
    view["boards"][seat][int(steps[3]) - 1] = tower


def _prompt(steps: Sequence[str], choices: Sequence[Choice], move: Move | None) -> str:
    if move is not None:
        return _("Play the move, or add another top") if choices else _("Play the move, or undo")
    if steps:
        artist = steps[0]
        return (
            _("Choose a circle for {artist}"),
            _("Choose the first stone {artist} takes"),
            _("Choose a space for the new tower"),
        )[len(steps) - 1].format(artist=artist)
    if not choices[0].step.startswith("A"):
        return _("Score: choose a colour or a tower's top")
    if len(choices) > 1 and not choices[-1].step.startswith("A"):
        return _("Choose an artist to move, or score")
    return _("Choose an artist to move")


def _space_refusal(towers: tuple[tuple[int, ...], ...], space: int) -> IllegalMove:
    """Why a pick may not build on `space`, which holds a tower."""
    if all(towers):
        return IllegalMove("illegal_move", MUST_SCORE())
    return IllegalMove("illegal_move", NOT_EMPTY(space=space))


def _circle_refusal(state: State, move: Pick) -> IllegalMove:
    """Why `move`'s artist may not go to its circle, which holds an artist."""
    if state.artists[move.artist - 1] == move.circle:
        return IllegalMove("illegal_move", ALREADY_THERE(artist=move.artist, circle=move.circle))
    holder = state.artists.index(move.circle) + 1
    return IllegalMove("illegal_move", HELD(circle=move.circle, holder=holder))


def _first_refusal(move: Pick, found: int) -> IllegalMove:
    """Why a pick may not start from `move.first`: not a collectable stone's direction
    (`found`: the stacks it would collect from)."""
    DIRECTIONS.index(move.first)  # a direction that is none of N, E, S, W is no move at all
    choices = ", ".join(DIRECTIONS[d] for d in _DIRECTIONS_OF[move.circle - 1][found])
    return IllegalMove("illegal_move", FIRST(first=move.first, circle=move.circle, choices=choices))


# -- the game -----------------------------------------------------------------

# `actors` is asked several times a move: it hands out the same few sets.
_NOBODY: frozenset[int] = frozenset()
_ALONE = tuple(frozenset((seat,)) for seat in range(4))


class _MandalaStonesRules(Game[State, Move]):
    """Mandala Stones' rules; `MandalaStones`, at the end of the module, adds the
    written-out copy of a whole random playout."""

    name: ClassVar[str] = "mandala_stones"
    title: ClassVar[str] = "Mandala Stones"
    score_label: ClassVar[str] = N_("Score")
    rules_version: ClassVar[str] = "1"
    players: ClassVar[tuple[int, ...]] = (2, 3, 4)
    options_schema: ClassVar[type[marshmallow.Schema]] = MandalaStonesOptions
    option_labels: ClassVar[Mapping[str, str]] = {
        "mandala_board": N_("Mandala board"),
        "objectives": N_("Objective cards"),
    }
    move_fields: ClassVar[Mapping[str, JSON]] = {
        "pick": {
            "properties": {
                "artist": {"type": "string", "enum": [f"A{n}" for n in range(1, ARTISTS + 1)]},
                "circle": {"type": "integer", "minimum": 1, "maximum": 9},
                "first": {"type": "string", "enum": list(DIRECTIONS)},
                "space": {"type": "integer", "minimum": 1, "maximum": SPACES},
            },
            "required": ["artist", "circle", "first", "space"],
        },
        "score": {
            "properties": {"colour": {"type": "string", "enum": list(COLOURS)}},
            "required": ["colour"],
        },
        "score_tops": {
            "properties": {
                "spaces": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1, "maximum": SPACES},
                }
            },
            "required": ["spaces"],
        },
    }
    notation_help: ClassVar[str] = N_(
        "Pick: `pick A2 to 5 first N on 3` moves artist A2 to circle 5, takes every "
        "collectable stone around it clockwise starting with the one north (N/E/S/W) of "
        "the circle, and builds the tower on your space 3. Score a colour on top of at "
        "least 2 towers with `score Y` (Y, B, R, V), or single tops with `score tops 1 4`. "
        "`resign` leaves the game."
    )

    def check_options(self, options: JSON, players: int) -> None:
        if str(players) not in options["mandala_board"]["hands"]:
            raise BadOptions(
                {"mandala_board": {"hands": [f"no hands space for {players} players"]}}
            )
        cards = options["objectives"]
        if cards != "off" and len(cards) < 2 * players:
            raise BadOptions(
                {
                    "objectives": [
                        f"{players} players need at least {2 * players} cards (2 each), "
                        f"got {len(cards)}"
                    ]
                }
            )

    def start(self, players: int, options: JSON, rng: Rng) -> State:
        board = options["mandala_board"]
        bonuses = [0] * board["spaces"]
        for key, points in board["bonuses"].items():
            bonuses[int(key) - 1] = points
        setup = Setup(board["spaces"], tuple(bonuses), board["hands"][str(players)])
        stones = rng.shuffled(_ALL_STONES)
        dealt = iter(stones)
        stacks = tuple(zip(dealt, dealt, dealt, dealt, strict=True))  # 4 at a time
        artists = tuple(rng.shuffled(_START_CIRCLES))
        deck = [] if options["objectives"] == "off" else rng.shuffled(options["objectives"])
        cards = [objective_card(card) for card in deck[: 2 * players]]
        objectives = tuple(tuple(cards[2 * seat : 2 * seat + 2]) for seat in range(players))
        first = rng.below(players)
        empty_board = ((),) * SPACES
        state = State(
            setup,
            stacks,
            artists,
            (empty_board,) * players,
            (0,) * players,
            (),
            0,
            objectives,
            first,
            first,
            False,
            (),
            None,
        )
        # The tops are the fourth stones dealt to each stack: read here, last stack first.
        state.showing = _showing_of(bytes(stones[::-4]))
        return _begin(state)

    def actors(self, state: State) -> frozenset[int]:
        # `state.over` written out: asked three times a move.
        return _ALONE[state.current] if state.objective_points is None else _NOBODY

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if state.over or seat != state.current:
            return []
        towers = state.boards[seat]
        moves: list[Move] = []
        empty = [space for space in range(1, SPACES + 1) if not towers[space - 1]]
        if empty:
            for artist, circle, found in _pick_options(state):
                for direction in found:
                    by_space = _PICKS[artist - 1][circle - 1][direction]
                    moves.extend(by_space[space - 1] for space in empty)
        moves.extend(ScoreColour(COLOURS[colour]) for colour in _board_summary(towers)[2])
        built = [space for space in range(1, SPACES + 1) if towers[space - 1]]
        orders: list[tuple[int, ...]] = [()]
        for _space in built:
            orders = [(*order, space) for order in orders for space in built if space not in order]
            moves.extend(ScoreTops(order) for order in orders)
        return moves

    def _random_move_in_turn(self, state: State, seat: int, rng: Rng) -> Move:
        move, _ = self.play_random(state, seat, rng)
        return move

    def play_random(self, state: State, seat: int, rng: Rng) -> tuple[Move, State]:
        """A random move, played as it is drawn (it is legal: the checks of `play` are
        skipped). Each pick (artist, circle), each colour and "some tops" weigh the same,
        so that playouts mix picking and scoring."""
        if state.objective_points is not None or seat != state.current:
            return super().play_random(state, seat, rng)  # refused as `random_move` refuses
        towers = state.boards[seat]
        empty, built, colours, colour_spaces = _board_summary(towers)
        # A full board can pick nothing.
        takes, options = _reach(state) if empty else _NO_PICKS
        picks = options.bit_count()
        choice = rng.below(picks + len(colours) + (1 if built else 0))
        if choice < picks:
            artist, circle, around, firsts_by_found, moves = _nth_pick(options, choice)
            found = takes[artist - 1] & around
            firsts = firsts_by_found[found]
            direction, taken = firsts[rng.below(len(firsts))]
            space = empty[rng.below(len(empty))]
            move = moves[direction][space - 1]
            return move, _picked(state, seat, artist, circle, found, taken, space)
        choice -= picks
        if choice < len(colours):
            spaces = colour_spaces[choice]
            points = _scoring_points(towers, spaces)
            return _SCORE_COLOURS[colours[choice]], _scored(state, seat, spaces, points)
        spaces = tuple(rng.shuffled(built)[: 1 + rng.below(len(built))])
        return _TOPS_SCORINGS[spaces], _scored(state, seat, spaces, len(spaces))

    def _play_in_turn(self, state: State, seat: int, move: Move) -> State:
        if isinstance(move, Pick):
            return self._pick(state, seat, move)
        if isinstance(move, ScoreColour):
            return self._score_colour(state, seat, move)
        assert isinstance(move, ScoreTops)  # the engine hands `Resign` to `_resign`
        return self._score_tops(state, seat, move)

    def _resign(self, state: State, seat: int) -> State:
        if not 0 <= seat < len(state.scores):
            raise IllegalMove("illegal_move", NO_SEAT(seat=seat))
        if seat in state.resigned:
            raise IllegalMove("illegal_move", ALREADY_LEFT())
        resigned = tuple(sorted((*state.resigned, seat)))
        after = _replace(state, resigned=resigned)
        if seat == state.current or len(state.scores) - len(resigned) <= 1:
            # Nothing but the turn changes: the picks are worked out afresh if asked for.
            return _advance(
                after,
                after.stacks,
                after.artists,
                after.boards,
                after.scores,
                after.mandala,
                after.set_aside,
                after.end_triggered,
                None,
                None,
            )
        return after

    def _pick(self, state: State, seat: int, move: Pick) -> State:
        towers = state.boards[seat]
        if towers[move.space - 1]:
            raise _space_refusal(towers, move.space)
        artist, circle = move.artist, move.circle
        if circle in state.artists:
            raise _circle_refusal(state, move)
        found = _reach(state)[0][artist - 1] & _AROUND[circle - 1]
        if not found:
            shows = PATTERN_NAMES[0] if _ARTIST_PATTERN[artist - 1] == 0 else PATTERN_NAMES[1]
            raise IllegalMove(
                "illegal_move", NOTHING_TO_COLLECT(artist=artist, circle=circle, shows=shows)
            )
        taken = _TAKING[circle - 1][found].get(move.first)
        if taken is None:
            raise _first_refusal(move, found)
        return _picked(state, seat, artist, circle, found, taken, move.space)

    def _score_colour(self, state: State, seat: int, move: ScoreColour) -> State:
        towers = state.boards[seat]
        colour = COLOURS.index(move.colour)
        if colour not in _board_summary(towers)[2]:
            on_top = sum(1 for tower in towers if tower and tower[-1] >> 1 == colour)
            raise IllegalMove("illegal_move", TOO_FEW(colour=move.colour, count=on_top))
        return _scored(state, seat, *_colour_scoring(towers, colour))

    def _score_tops(self, state: State, seat: int, move: ScoreTops) -> State:
        towers = state.boards[seat]
        if not move.spaces:
            raise IllegalMove("illegal_move", NO_TOWER())
        if len(set(move.spaces)) < len(move.spaces):
            raise IllegalMove("illegal_move", TWICE())
        for space in move.spaces:
            if not towers[space - 1]:
                raise IllegalMove("illegal_move", EMPTY_SPACE(space=space))
        return _scored(state, seat, move.spaces, len(move.spaces))

    def build(self, state: State, seat: int, steps: Sequence[str]) -> Building[Move]:
        """A pick: an artist, its circle, the first stone, the tower's space. A colour
        scoring: the colour. Tops: the towers one by one, in the mandala's order, sendable
        from the first on."""
        self._check_turn(state, seat)
        choices, move = walk(_paths(state, seat, steps), steps)
        if isinstance(move, ScoreColour | ScoreTops):
            towers = state.boards[seat]
            spaces, points = (
                _colour_scoring(towers, COLOURS.index(move.colour))
                if isinstance(move, ScoreColour)
                else (list(move.spaces), len(move.spaces))
            )
            # A scoring moves only stones every seat sees, from the towers to the mandala,
            # and draws nothing: the state it leaves shows nothing hidden.
            boards, scores, mandala, set_aside, triggered = _tops_removed(
                state, seat, spaces, points
            )
            after = _replace(
                state,
                boards=boards,
                scores=scores,
                mandala=mandala,
                set_aside=set_aside,
                end_triggered=triggered,
            )
            view = self.view(after, seat)
        else:
            view = self.view(state, seat)
            _show_pick(view, state, seat, steps)
        return Building(tuple(steps), choices, move, view, _prompt(steps, choices, move))

    def resigned(self, state: State) -> frozenset[int]:
        return frozenset(state.resigned)

    def scores(self, state: State) -> tuple[int, ...]:
        return state.scores

    def breakdown(self, start: State, played: Sequence[Played[State, Move]]) -> Breakdown:
        """Each scoring, with what its stones earned on the mandala, then the objective.

        The objectives are shown to all at the end, so naming the card that
        scored tells nothing hidden; the stacks' patterns play no part.
        """
        lines: list[list[ScoreLine]] = [[] for _ in start.scores]
        before = start
        for number, step in enumerate(played, 1):
            after = step.state
            if isinstance(step.move, ScoreColour | ScoreTops):
                lines[step.seat].append(self._scoring_line(number, step, before))
            before = after
        final = before
        for seat, cards in enumerate(final.objectives):
            if cards:
                lines[seat].append(_objective_line(cards, final.boards[seat]))
        return tuple(tuple(seat_lines) for seat_lines in lines)

    def _scoring_line(self, number: int, step: Played[State, Move], before: State) -> ScoreLine:
        after, seat = step.state, step.seat
        points = after.scores[seat] - before.scores[seat]
        if after.objective_points is not None:
            points -= after.objective_points[seat]  # the scoring that ended the game
        bonus = sum(before.setup.bonuses[len(before.mandala) : len(after.mandala)])
        label = _("move {number}: {move}").format(number=number, move=self.notate(step.move))
        if bonus:
            label = _("{label} (mandala bonus {bonus})").format(label=label, bonus=bonus)
        return ScoreLine(label, points)

    def view(self, state: State, seat: int | None) -> JSON:
        stacks = [
            [{"colour": COLOURS[stone >> 1], "pattern": None} for stone in stack[:-1]]
            + [{"colour": COLOURS[stack[-1] >> 1], "pattern": PATTERNS[stack[-1] & 1]}]
            if stack
            else []
            for stack in state.stacks
        ]
        objectives: list[Any] = [
            [card.number for card in cards] if state.over or owner == seat else len(cards)
            for owner, cards in enumerate(state.objectives)
        ]
        return {
            "stacks": stacks,
            "artists": {f"A{i + 1}": circle for i, circle in enumerate(state.artists)},
            "boards": [
                [[stone_name(stone) for stone in tower] for tower in towers]
                for towers in state.boards
            ],
            "scores": list(state.scores),
            "mandala": [stone_name(stone) for stone in state.mandala],
            "objectives": objectives,
            "first_player": state.first_player,
            "end_triggered": state.end_triggered,
            "to_move": None if state.over else state.current,
            "resigned": list(state.resigned),
            "mandala_spaces": state.setup.spaces,
            "set_aside": state.set_aside,
            "objective_points": None
            if state.objective_points is None
            else list(state.objective_points),
        }

    def result(self, state: State) -> Result | None:
        if state.objective_points is None:  # `over`, written out: asked every move
            return None
        return Result(state.scores, (_winner(state),))

    # -- notation and JSON ------------------------------------------------

    def parse(self, text: str, options: JSON | None = None) -> Move:
        line = " ".join(text.lower().split())
        if line == "resign":
            return Resign()
        if line.startswith("pick"):
            found = _PICK.fullmatch(line)
            if not found:
                raise IllegalMove("bad_notation", _PICK_HELP())
            artist, circle, first, space = found.groups()
            first = _DIRECTION_NAMES.get(first, first.upper())
            return Pick(int(artist), int(circle), first, int(space))
        if line.startswith("score"):
            colour = _SCORE_COLOUR.fullmatch(line)
            if colour:
                name = colour.group(1)
                letter = _COLOUR_NAMES.get(name, name.upper())
                return ScoreColour(_colour_letter(letter))
            tops = _SCORE_TOPS.fullmatch(line)
            if tops:
                return ScoreTops(tuple(int(digit) for digit in re.findall(r"[1-5]", tops.group(1))))
            raise IllegalMove("bad_notation", _SCORE_HELP())
        raise IllegalMove("bad_notation", EXPECTED(pick=_PICK_HELP(), score=_SCORE_HELP()))

    def notate(self, move: Move) -> str:
        if isinstance(move, Pick):
            return f"pick A{move.artist} to {move.circle} first {move.first} on {move.space}"
        if isinstance(move, ScoreColour):
            return f"score {move.colour}"
        if isinstance(move, ScoreTops):
            return "score tops " + " ".join(str(space) for space in move.spaces)
        return "resign"

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Pick):
            return {
                "type": "pick",
                "artist": f"A{move.artist}",
                "circle": move.circle,
                "first": move.first,
                "space": move.space,
            }
        if isinstance(move, ScoreColour):
            return {"type": "score", "colour": move.colour}
        if isinstance(move, ScoreTops):
            return {"type": "score_tops", "spaces": list(move.spaces)}
        return {"type": "resign"}

    def move_from_json(self, data: Any) -> Move:
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            raise _bad_move(NOT_AN_OBJECT())
        kind = data["type"]
        if kind == "resign":
            _check_keys(data, set())
            return Resign()
        if kind == "pick":
            _check_keys(data, {"artist", "circle", "first", "space"})
            artist = data["artist"]
            if artist not in ("A1", "A2", "A3", "A4"):
                raise _bad_move(ARTIST_IS())
            if data["first"] not in ("N", "E", "S", "W"):
                raise _bad_move(FIRST_IS())
            circle = _exact_int(data, "circle", 1, 9)
            space = _exact_int(data, "space", 1, SPACES)
            return Pick(int(artist[1]), circle, data["first"], space)
        if kind == "score":
            _check_keys(data, {"colour"})
            colour = data["colour"]
            if colour not in (*COLOURS, _OLD_RED):
                raise _bad_move(COLOUR_IS())
            return ScoreColour(_colour_letter(colour))
        if kind == "score_tops":
            _check_keys(data, {"spaces"})
            spaces = data["spaces"]
            if not isinstance(spaces, list) or not all(
                type(space) is int and 1 <= space <= SPACES for space in spaces
            ):
                raise _bad_move(SPACES_ARE())
            return ScoreTops(tuple(spaces))
        raise _bad_move(TYPE_IS())

    def state_to_json(self, state: State) -> JSON:
        setup = state.setup
        return {
            "setup": {
                "spaces": setup.spaces,
                "bonuses": list(setup.bonuses),
                "end_space": setup.end_space,
            },
            "stacks": [[stone_name(stone) for stone in stack] for stack in state.stacks],
            "artists": list(state.artists),
            "boards": [
                [[stone_name(stone) for stone in tower] for tower in towers]
                for towers in state.boards
            ],
            "scores": list(state.scores),
            "mandala": [stone_name(stone) for stone in state.mandala],
            "set_aside": state.set_aside,
            "objectives": [
                [
                    {"card": c.number, "points": c.points, "kind": c.kind, "args": list(c.args)}
                    for c in cards
                ]
                for cards in state.objectives
            ],
            "first_player": state.first_player,
            "current": state.current,
            "end_triggered": state.end_triggered,
            "resigned": list(state.resigned),
            "objective_points": None
            if state.objective_points is None
            else list(state.objective_points),
        }

    def state_from_json(self, data: JSON) -> State:
        setup = data["setup"]
        points = data["objective_points"]
        return State(
            Setup(setup["spaces"], tuple(setup["bonuses"]), setup["end_space"]),
            tuple(tuple(stone_value(s) for s in stack) for stack in data["stacks"]),
            tuple(data["artists"]),
            tuple(
                tuple(tuple(stone_value(s) for s in tower) for tower in towers)
                for towers in data["boards"]
            ),
            tuple(data["scores"]),
            tuple(stone_value(s) for s in data["mandala"]),
            data["set_aside"],
            tuple(
                tuple(Card(c["card"], c["points"], c["kind"], tuple(c["args"])) for c in cards)
                for cards in data["objectives"]
            ),
            data["first_player"],
            data["current"],
            data["end_triggered"],
            tuple(data["resigned"]),
            None if points is None else tuple(points),
        )


# -- playouts -------------------------------------------------------------------
# The speed-only copy of the rules' default random playout, after the rules, and
# the tables only it reads: a test holds it to the default loop of `play_random`
# draw for draw.

# `Played(...)` runs the named tuple's Python `__new__`; a playout builds one a move.
_new_tuple = tuple.__new__

# A table of the placings of the artists, as `_placed` gives it.
Placed = dict[tuple[int, ...], tuple[Layout, tuple[tuple[tuple[int, ...], ...], ...]]]


@functools.cache
def _placed() -> Placed:
    """Per placing of the artists: its `_LAYOUTS` entry, and by artist and circle the
    placing once that artist has moved to that free circle (one of `_LAYOUTS`' keys;
    empty where the circle holds an artist). A playout keeps a placing's entry while
    its artists stay, and moves an artist by looking the new placing up rather than
    building it. Built at the first playout: a process that plays none (the server,
    a worker that only decides) need not spend its start on it."""
    placings = {placing: placing for placing in _LAYOUTS}  # each placing built once, shared
    return {
        artists: (
            layout,
            tuple(
                tuple(
                    ()
                    if circle in artists
                    else placings[(*artists[:artist], circle, *artists[artist + 1 :])]
                    for circle in range(1, _CIRCLES + 1)
                )
                for artist in range(ARTISTS)
            ),
        )
        for artists, layout in _LAYOUTS.items()
    }


# `_SUMMARIES`' summaries by the number whose base-5 digits are those colours, space 1 first
# (`_tops_code`), each with the number of scorings a random move draws among (a colour
# each, and "some tops" if any tower is built): a playout follows that number from
# move to move.
_SUMMARY_AT = tuple(
    (*summary, len(summary[2]) + (1 if summary[1] else 0)) for summary in _SUMMARIES.values()
)
# By space and stone: what building a tower topped by that stone on the empty space
# adds to the board's number.
_BUILT_ON = tuple(
    tuple((stone >> 1) * weight - 4 * weight for stone in range(8))
    for weight in (625, 125, 25, 5, 1)
)


def _tops_code(towers: tuple[tuple[int, ...], ...]) -> int:
    """The index in `_SUMMARY_AT` of the board's summary."""
    # Written out for the 5 spaces, as in `_board_summary`.
    t1, t2, t3, t4, t5 = towers
    return (
        (t1[-1] >> 1 if t1 else 4) * 625
        + (t2[-1] >> 1 if t2 else 4) * 125
        + (t3[-1] >> 1 if t3 else 4) * 25
        + (t4[-1] >> 1 if t4 else 4) * 5
        + (t5[-1] >> 1 if t5 else 4)
    )


# `_tops_code` of a board with no tower.
_BARE = _tops_code(((),) * SPACES)


class MandalaStones(_MandalaStonesRules):
    """The rules, with a whole random playout written out for speed."""

    def random_playout(self, state: State, rng: Rng) -> Iterator[Played[State, Move]]:
        """`play_random` move after move, without the turn checks of a move played
        one at a time. The fields of the state, the artists' placing (`_placed`)
        and each board's number (`_tops_code`) are kept in locals from one move
        to the next; written out here: `play_random`'s draws, `_picked` and
        `_scored` (their fields come from `_picked_fields` and `_tops_removed`),
        and `_advance` and `_begin` for a game where no seat has resigned."""
        if state.objective_points is not None or state.resigned:
            yield from super().random_playout(state, rng)
            return
        below, shuffled = rng.below, rng.shuffled
        setup, objectives, first_player = state.setup, state.objectives, state.first_player
        stacks, artists, boards = state.stacks, state.artists, state.boards
        scores, mandala, set_aside = state.scores, state.mandala, state.set_aside
        triggered, showing, reach = state.end_triggered, state.showing, state.reach
        showing = showing or _showing(state)
        players = len(scores)
        seat = state.current
        codes = [_tops_code(towers) for towers in boards]
        placed = _placed()
        layout, moved = placed[artists]
        while True:
            empty, built, colours, colour_spaces, scorings = _SUMMARY_AT[codes[seat]]
            if empty:
                # A full board can pick nothing.
                takes, options = reach = reach or _reach_in(showing, layout)
            else:
                takes, options = _NO_PICKS
            picks = options.bit_count()
            choice = below(picks + scorings)
            if choice < picks:
                artist, circle, around, firsts_by_found, moves = _nth_pick(options, choice)
                found = takes[artist - 1] & around
                firsts = firsts_by_found[found]
                direction, taken = firsts[below(len(firsts))]
                space = empty[below(len(empty))]
                move: Move = moves[direction][space - 1]
                stacks, boards, showing = _picked_fields(
                    stacks, boards, showing, seat, artist, circle, found, taken, space
                )
                artists = moved[artist - 1][circle - 1]
                layout, moved = placed[artists]
                codes[seat] += _BUILT_ON[space - 1][boards[seat][space - 1][-1]]
                reach = None
            else:
                choice -= picks
                if choice < len(colours):
                    spaces = colour_spaces[choice]
                    points = _scoring_points(boards[seat], spaces)
                    move = _SCORE_COLOURS[colours[choice]]
                else:
                    spaces = tuple(shuffled(built)[: 1 + below(len(built))])
                    points = len(spaces)
                    move = _TOPS_SCORINGS[spaces]
                # A scoring leaves the stacks and the artists, so the picks, as they were.
                boards, scores, mandala, set_aside, triggered = _tops_removed(
                    state, seat, spaces, points
                )
                codes[seat] = _tops_code(boards[seat])
            played_by = seat
            seat = (seat + 1) % players
            state = _moved(
                setup,
                stacks,
                artists,
                boards,
                scores,
                mandala,
                set_aside,
                objectives,
                first_player,
                seat,
                triggered,
                (),
                showing,
                reach,
            )
            if triggered and seat == first_player:
                state.current = played_by
                yield _new_tuple(Played, (played_by, move, _finish(state)))
                return
            # `_begin`: a seat that has a tower can always score (its board's number, at
            # hand, says whether it has one).
            if codes[seat] == _BARE:
                reach = state.reach = reach or _reach_in(showing, layout)
                if not reach[1]:
                    yield _new_tuple(Played, (played_by, move, _finish(state)))
                    return
            yield _new_tuple(Played, (played_by, move, state))


GAME = MandalaStones()
