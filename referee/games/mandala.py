"""Mandala: a race along a spiral path of pyramids, sets scored by majority.

Kory Heath's game after Knizia's Tutankhamen, as `docs/rules/mandala.md`
states it. A kind of pyramid (size and colour, `Mg`) is stored as an index
into `KINDS`; an empty path index holds `EMPTY`. The whole state is public.

RULINGS (where the rules file is silent):

- Setup order: the path starts as the kinds in `KINDS` order, five copies
  each (`Sr Sr Sr Sr Sr Sy ...`), is shuffled with the seed, and then the
  first player is drawn with `below(players)` from the same rng.
- Resigning lifts the seat's pawn off the path: it no longer counts as the
  rearmost pawn, so everything behind the rearmost pawn still in the game
  goes to the eye at once (and the sets this completes are scored at
  once). Otherwise a pawn abandoned near the start would keep every
  pyramid from the eye for the rest of the game. `pawns` still shows where
  the pawn last stood, and ties involving the resigned seat are broken by
  that index (it stays unique: nobody can land on an emptied index).
- A resigned seat's collection stays in play: it still counts for every
  set's majority, and the seat still scores, but it ranks after every
  other seat whatever its score.
- For the end of the game resigned seats count as out of the race: when
  at most one seat that has not resigned still has a pyramid ahead, that
  seat (if any) takes what is left on the path and every remaining set is
  scored. So when a resignation leaves one seat, it sweeps and wins.
- A seat that has reached the end may still resign: its points still count
  in the game's totals until then, and resigning only drops its rank.
- If the last move leaves no seat with a pyramid ahead, nobody sweeps: the
  eye step has by then emptied the path (every pyramid left lay behind
  every pawn).
- `scored` lists every set dealt with, in the order scored (kind order
  within one moment), including sets wholly in the eye that scored nothing.
- `collections` and `eye` list only kinds with a nonzero count; `at_end`
  lists the seats, not resigned, with no pyramid ahead of their pawn.
- The one winner (rules version 2): the seat, not resigned, with the most
  points, and among equal totals the one whose pawn stands furthest along
  the path where the game ended, as the original says. A resigned seat
  never wins, whatever its total or its pawn. Pawns of seats still in
  the game never share an index when it ends (a taken index stays empty,
  and two pawns still before the path would both still be racing), so
  there is always exactly one.
- Rules version 1 shared the win between equal totals. `MandalaV1` keeps
  it, for games begun and records written under version 1, so that they
  end and verify as they did; the moves and states of both are the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

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
    not_your_turn,
    rank,
    walk,
)
from referee.games.pyramid_words import pyramid_words
from referee.games.reasons import ALREADY_RESIGNED, reason
from referee.i18n import N_, _, ngettext
from referee.rng import Rng

SIZES = "SML"
COLOURS = "rygbk"
KINDS: tuple[str, ...] = tuple(size + colour for size in SIZES for colour in COLOURS)
KIND_OF: dict[str, int] = {name: kind for kind, name in enumerate(KINDS)}
COPIES = 5
PATH_LENGTH = len(KINDS) * COPIES
EMPTY = -1
# The index of a pawn that has not entered the path yet.
BEFORE_PATH = -1
OVER = -1

SOLE_HOLDER_POINTS = 5
FIRST_POINTS = 3
SECOND_POINTS = 2


@dataclass(frozen=True, slots=True)
class Take:
    """Move the pawn forward to `index` and take the pyramid lying there."""

    index: int


Move: TypeAlias = Take | Resign


@dataclass(frozen=True, slots=True)
class State:
    """A Mandala position; `to_move` is `OVER` once the game has ended."""

    path: tuple[int, ...]
    pawns: tuple[int, ...]
    collections: tuple[tuple[int, ...], ...]
    eye: tuple[int, ...]
    scored: tuple[int, ...]
    scores: tuple[int, ...]
    first_player: int
    to_move: int
    resigned: tuple[int, ...]


class MandalaOptions(marshmallow.Schema):
    """Mandala has no variants; any option given is refused as unknown."""


def _last_pyramid(path: tuple[int, ...] | list[int]) -> int:
    """The highest index still holding a pyramid, -1 when the path is empty."""
    last = PATH_LENGTH - 1
    while last >= 0 and path[last] == EMPTY:
        last -= 1
    return last


def _awards(
    kind: int,
    pawns: tuple[int, ...],
    collections: tuple[tuple[int, ...], ...] | list[tuple[int, ...]],
) -> tuple[tuple[int, int], ...]:
    """The (seat, points) a set gives when it is scored, pawns standing as given."""
    # Pawn position breaks ties in the count: the pawn further along wins.
    ranking = sorted(
        ((collection[kind], pawns[seat], seat) for seat, collection in enumerate(collections)),
        reverse=True,
    )
    first, second = ranking[0], ranking[1]
    if first[0] == 0:
        return ()
    if second[0] == 0:
        return ((first[2], SOLE_HOLDER_POINTS),)
    return ((first[2], FIRST_POINTS), (second[2], SECOND_POINTS))


def _score_set(
    kind: int, pawns: tuple[int, ...], collections: list[tuple[int, ...]], scores: list[int]
) -> None:
    for seat, points in _awards(kind, pawns, collections):
        scores[seat] += points


_AWARD_NAMES = {
    SOLE_HOLDER_POINTS: N_("only holder"),
    FIRST_POINTS: N_("most"),
    SECOND_POINTS: N_("second most"),
}


def _award_lines(
    kind: int, pawns: tuple[int, ...], collections: tuple[tuple[int, ...], ...]
) -> list[tuple[int, ScoreLine]]:
    """Each seat's line for the set of `kind` scored with the pawns standing as given."""
    name = f"{pyramid_words(KINDS[kind])} ({KINDS[kind]})"
    counts = [collection[kind] for collection in collections]
    lines = []
    for seat, points in _awards(kind, pawns, collections):
        held = counts[seat]
        tied = counts.count(held) > 1
        label = ngettext(
            "{name}: {held} held, {award}", "{name}: {held} held, {award}", held
        ).format(name=name, held=held, award=_(_AWARD_NAMES[points]))
        if tied:
            label = _("{label} (tie broken by the pawns)").format(label=label)
        lines.append((seat, ScoreLine(label, points)))
    return lines


_TAKE_TEXT = re.compile(r"(?:t(?:ake)?)?\s*([0-9]+)", re.IGNORECASE)
_EXPECTED = reason(
    N_("expected `take N` (or `N`, `tN`) with N a path index from 0 to 74, or `resign`")
)
NO_INDEX = reason(N_("there is no index {index} on the path (indices run 0-74)"))
FORWARD_ONLY = reason(N_("pawns only move forward: yours stands on {pawn}, pick an index above it"))
TAKEN = reason(N_("index {index} holds no pyramid any more; pick one ahead of your pawn that does"))
OFF_PATH = reason(N_("{digits} is off the path: {expected}"))
NOT_AN_OBJECT = reason(N_('a move is a JSON object such as {{"type": "take", ...}}'))
BAD_INDEX = reason(N_("`index` must be an integer path index from 0 to 74"))
EXPECTED_JSON = reason(
    N_('expected {{"type": "take", "index": N}} (N from 0 to 74) or {{"type": "resign"}}')
)


class Mandala(Game[State, Move]):
    name: ClassVar[str] = "mandala"
    title: ClassVar[str] = "Mandala"
    score_label: ClassVar[str] = N_("Score")
    rules_version: ClassVar[str] = "2"
    players: ClassVar[tuple[int, ...]] = (2, 3, 4, 5)
    options_schema: ClassVar[type[marshmallow.Schema]] = MandalaOptions
    move_fields: ClassVar[Mapping[str, JSON]] = {
        "take": {
            "properties": {
                "index": {"type": "integer", "minimum": 0, "maximum": PATH_LENGTH - 1},
            },
            "required": ["index"],
        },
    }
    notation_help: ClassVar[str] = N_(
        "Move with `take N`: your pawn jumps forward to path index N (0-74), which must "
        "lie ahead of it and still hold a pyramid, and you take that pyramid. `17` and "
        "`t17` mean `take 17`. `resign` leaves the game."
    )

    # -- the rules -------------------------------------------------------

    def start(self, players: int, options: JSON, rng: Rng) -> State:
        path = [kind for kind in range(len(KINDS)) for _ in range(COPIES)]
        rng.shuffle(path)
        first = rng.below(players)
        return State(
            path=tuple(path),
            pawns=(BEFORE_PATH,) * players,
            collections=((0,) * len(KINDS),) * players,
            eye=(0,) * len(KINDS),
            scored=(),
            scores=(0,) * players,
            first_player=first,
            to_move=first,
            resigned=(),
        )

    def actors(self, state: State) -> frozenset[int]:
        return frozenset() if state.to_move == OVER else frozenset((state.to_move,))

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat != state.to_move or state.to_move == OVER:
            return []
        path = state.path
        return [Take(i) for i in range(state.pawns[seat] + 1, PATH_LENGTH) if path[i] != EMPTY]

    def _random_move_in_turn(self, state: State, seat: int, rng: Rng) -> Move:
        path = state.path
        ahead = [i for i in range(state.pawns[seat] + 1, PATH_LENGTH) if path[i] != EMPTY]
        return Take(ahead[rng.below(len(ahead))])

    def _play_in_turn(self, state: State, seat: int, move: Move) -> State:
        assert isinstance(move, Take)  # the engine hands `Resign` to `_resign`
        index = move.index
        path = state.path
        if not 0 <= index < PATH_LENGTH:
            raise IllegalMove("illegal_move", NO_INDEX(index=index))
        pawn = state.pawns[seat]
        if index <= pawn:
            raise IllegalMove("illegal_move", FORWARD_ONLY(pawn=pawn))
        kind = path[index]
        if kind == EMPTY:
            raise IllegalMove("illegal_move", TAKEN(index=index))
        new_path = list(path)
        new_path[index] = EMPTY
        collections = list(state.collections)
        mine = collections[seat]
        collections[seat] = (*mine[:kind], mine[kind] + 1, *mine[kind + 1 :])
        pawns = (*state.pawns[:seat], index, *state.pawns[seat + 1 :])
        return self._settle(state, new_path, pawns, collections, state.resigned, [kind], seat + 1)

    def _resign(self, state: State, seat: int) -> State:
        if not 0 <= seat < len(state.pawns):
            raise not_your_turn()
        if seat in state.resigned:
            raise IllegalMove("illegal_move", ALREADY_RESIGNED())
        resigned = tuple(sorted((*state.resigned, seat)))
        # Searching from the seat to move keeps the turn where it is, unless
        # the seat to move is the one resigning.
        path, collections = list(state.path), list(state.collections)
        return self._settle(state, path, state.pawns, collections, resigned, [], state.to_move)

    def _settle(
        self,
        before: State,
        path: list[int],
        pawns: tuple[int, ...],
        collections: list[tuple[int, ...]],
        resigned: tuple[int, ...],
        touched: list[int],
        turn_from: int,
    ) -> State:
        """Steps 2 and 3 of a turn (the eye, scoring), then the end or the next turn."""
        players = len(pawns)
        eye = list(before.eye)
        scores = list(before.scores)
        scored = list(before.scored)
        # Everything below the rearmost pawn of the state before is gone
        # already, so the sweep into the eye starts there.
        old_rear = min(before.pawns[s] for s in range(players) if s not in before.resigned)
        rear = min(pawns[s] for s in range(players) if s not in resigned)
        low = max(old_rear, 0)
        if rear > low:
            for kind in path[low:rear]:
                if kind != EMPTY:
                    eye[kind] += 1
                    touched.append(kind)
            path[low:rear] = [EMPTY] * (rear - low)
        # A touched kind lay on the path before this move, so it cannot have
        # been scored yet: it is scored when its last copy has left.
        for kind in sorted(set(touched)):
            if kind not in path:
                _score_set(kind, pawns, collections, scores)
                scored.append(kind)

        last = _last_pyramid(path)
        racing = [s for s in range(players) if pawns[s] < last and s not in resigned]
        if len(racing) > 1:
            to_move = turn_from % players
            while to_move not in racing:
                to_move = (to_move + 1) % players
        else:
            to_move = OVER
            if racing:
                sweeper = list(collections[racing[0]])
                for kind in path[: last + 1]:
                    if kind != EMPTY:
                        sweeper[kind] += 1
                collections[racing[0]] = tuple(sweeper)
                path = [EMPTY] * PATH_LENGTH
            for kind in range(len(KINDS)):
                if kind not in scored:
                    _score_set(kind, pawns, collections, scores)
                    scored.append(kind)
        return State(
            path=tuple(path),
            pawns=pawns,
            collections=tuple(collections),
            eye=tuple(eye),
            scored=tuple(scored),
            scores=tuple(scores),
            first_player=before.first_player,
            to_move=to_move,
            resigned=resigned,
        )

    def at_end(self, state: State) -> list[int]:
        """The seats still in the game that have no pyramid ahead of their pawn."""
        last = _last_pyramid(state.path)
        return [
            seat
            for seat, pawn in enumerate(state.pawns)
            if pawn >= last and seat not in state.resigned
        ]

    def resigned(self, state: State) -> frozenset[int]:
        return frozenset(state.resigned)

    def scores(self, state: State) -> tuple[int, ...]:
        return state.scores

    def breakdown(self, start: State, played: Sequence[Played[State, Move]]) -> Breakdown:
        """Each set's award, scored again where it was scored: the pawns that
        broke its ties are those of the state right after that move."""
        lines: list[list[ScoreLine]] = [[] for _ in start.pawns]
        before = start
        for step in played:
            after = step.state
            for kind in after.scored[len(before.scored) :]:
                for seat, line in _award_lines(kind, after.pawns, after.collections):
                    lines[seat].append(line)
            before = after
        return tuple(tuple(seat_lines) for seat_lines in lines)

    def view(self, state: State, seat: int | None) -> JSON:
        return {
            "path": [None if kind == EMPTY else KINDS[kind] for kind in state.path],
            "pawns": list(state.pawns),
            "collections": [_counts(c) for c in state.collections],
            "eye": _counts(state.eye),
            "scored": [KINDS[kind] for kind in state.scored],
            "scores": list(state.scores),
            "at_end": self.at_end(state),
            "first_player": state.first_player,
            "to_move": None if state.to_move == OVER else state.to_move,
            "resigned": list(state.resigned),
        }

    def result(self, state: State) -> Result | None:
        if state.to_move != OVER:
            return None
        # The original breaks equal totals by the pawn furthest along (RULINGS).
        staying = [seat for seat in range(len(state.scores)) if seat not in state.resigned]
        winner = max(staying, key=lambda seat: (state.scores[seat], state.pawns[seat]))
        return Result(state.scores, (winner,))

    # -- building a move on the board -----------------------------------

    def build(self, state: State, seat: int, steps: Sequence[str]) -> Building[Move]:
        """One step: the index of a pyramid ahead of the pawn, which it takes."""
        self._check_turn(state, seat)
        view = self.view(state, seat)
        paths: list[tuple[Sequence[Choice], Move]] = [
            ((Choice(str(take.index), _take_label(view["path"][take.index], take.index)),), take)
            for take in self.legal_moves(state, seat)
            if isinstance(take, Take)
        ]
        choices, move = walk(paths, steps)
        if isinstance(move, Take):
            _preview(view, seat, move.index)
            prompt = _("Play the move, or undo")
        else:
            prompt = _("Choose a pyramid to take")
        return Building(tuple(steps), choices, move, view, prompt)

    # -- notation and JSON ------------------------------------------------

    def parse(self, text: str, options: JSON | None = None) -> Move:
        cleaned = text.strip()
        if cleaned.lower() == "resign":
            return Resign()
        match = _TAKE_TEXT.fullmatch(cleaned)
        if match is None:
            raise IllegalMove("bad_notation", _EXPECTED())
        digits = match.group(1)
        # The length check keeps int() away from absurdly long digit strings.
        if len(digits) > 3 or int(digits) >= PATH_LENGTH:
            raise IllegalMove("bad_notation", OFF_PATH(digits=digits, expected=_EXPECTED()))
        return Take(int(digits))

    def notate(self, move: Move) -> str:
        if isinstance(move, Resign):
            return "resign"
        return f"take {move.index}"

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Resign):
            return {"type": "resign"}
        return {"type": "take", "index": move.index}

    def move_from_json(self, data: Any) -> Move:
        if not isinstance(data, dict):
            raise IllegalMove("bad_move", NOT_AN_OBJECT())
        kind = data.get("type")
        if kind == "resign" and data.keys() == {"type"}:
            return Resign()
        if kind == "take" and data.keys() == {"type", "index"}:
            index = data["index"]
            if type(index) is int and 0 <= index < PATH_LENGTH:
                return Take(index)
            raise IllegalMove("bad_move", BAD_INDEX())
        raise IllegalMove("bad_move", EXPECTED_JSON())

    def state_to_json(self, state: State) -> JSON:
        return {
            "path": [None if kind == EMPTY else KINDS[kind] for kind in state.path],
            "pawns": list(state.pawns),
            "collections": [list(c) for c in state.collections],
            "eye": list(state.eye),
            "scored": [KINDS[kind] for kind in state.scored],
            "scores": list(state.scores),
            "first_player": state.first_player,
            "to_move": state.to_move,
            "resigned": list(state.resigned),
        }

    def state_from_json(self, data: JSON) -> State:
        return State(
            path=tuple(EMPTY if name is None else KIND_OF[name] for name in data["path"]),
            pawns=tuple(data["pawns"]),
            collections=tuple(tuple(c) for c in data["collections"]),
            eye=tuple(data["eye"]),
            scored=tuple(KIND_OF[name] for name in data["scored"]),
            scores=tuple(data["scores"]),
            first_player=data["first_player"],
            to_move=data["to_move"],
            resigned=tuple(data["resigned"]),
        )


class MandalaV1(Mandala):
    """Rules version 1: equal totals shared the win; nothing else differs."""

    rules_version: ClassVar[str] = "1"

    def result(self, state: State) -> Result | None:
        if state.to_move != OVER:
            return None
        return rank(state.scores, state.resigned)


def _take_label(kind: str, index: int) -> str:
    """A target's name, as a screen reader says it: "Take the large red pyramid at 17"."""
    return _("Take the {words} pyramid at {index}").format(words=pyramid_words(kind), index=index)


def _preview(view: JSON, seat: int, index: int) -> None:
    """`view` with the pawn of `seat` moved to `index` and its pyramid taken.

    Step 2 of the turn is shown too, since it is certain: what every pawn
    still in the game has now passed goes to the eye. Scoring, and the
    sweep of a last racer, are left to the move itself.
    """
    path = view["path"]
    kind = path[index]
    path[index] = None
    view["pawns"][seat] = index
    held = view["collections"][seat]
    held[kind] = held.get(kind, 0) + 1
    rear = min(pawn for s, pawn in enumerate(view["pawns"]) if s not in view["resigned"])
    for passed in range(max(rear, 0)):
        if path[passed] is not None:
            view["eye"][path[passed]] = view["eye"].get(path[passed], 0) + 1
            path[passed] = None


def _counts(counts: tuple[int, ...]) -> dict[str, int]:
    return {KINDS[kind]: count for kind, count in enumerate(counts) if count}


GAME = Mandala()
GAME_V1 = MandalaV1()
