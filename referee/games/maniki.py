"""MaNiKi (Crazy Circus): call the orders that move three animals onto the card.

A bear `B`, an elephant `E` and a lion `L` stand on a red and a blue stool.
An arrangement is written `red/blue`, each stool bottom to top, `-` for an
empty one (`EL/B`). Each of the 24 cards shows one arrangement; players race
(or, in `sealed` mode, submit once) to name a sequence of orders that turns
the current arrangement into the card's. The rules are
`docs/rules/maniki.md`.

The 24 cards are numbered in a fixed order (the six orders of the animals
`BEL BLE EBL ELB LBE LEB`, each with three, two, one and no animals on red)
that the shuffle in `start` depends on: it must never change.

Sealed mode keeps the answers of an undecided round secret: `view` shows
who has answered but not what, and `hidden_tail` tells the layers above how
many of the latest logged moves to show as `sealed` until the round is
decided.

RULINGS (where the rules file is silent):

- A sequence holds at least one order; an empty one is malformed.
- The starting card goes to the bottom of the deck. Until a card is won the
  animals still stand on it, so it may come up as a target equal to the
  current arrangement: it is then won by any non-empty sequence that comes
  back (`KI LO` or `LO KI` always does), so every card can be won and the
  game always ends, when all 24 cards have been won.
- Each seat answers a card at most once: in `race` mode a wrong sequence or
  a pass puts it out of the round, in `sealed` mode its one submission does.
- An order that cannot be carried out makes the sequence wrong (it is
  accepted and eliminates its player); only malformed text, more than 32
  orders and `NI` in expert mode are refused.
- `resign` is accepted from any seat that has not resigned, at any time:
  the seat is out of the current round (in `sealed` mode its answer no
  longer counts) and of every later one, and ranks after every other seat
  whatever its cards. When one seat is left, the game is over at once with
  that seat the winner; a sealed round open then is never decided and its
  answers are shown.
- In `sealed` mode a pass is as secret as a sequence. `hidden_tail` covers
  every move logged since the round's first answer, so a resign logged in
  between is shown as `sealed` too until the round is decided.
- `last_round.shortest` is the length of the shortest non-empty solution
  from the arrangement the round started on, also for a card nobody won.
- Move JSON, the log and `notate` always use the MaNiKi names; the option
  `names: crazy_circus` changes how `parse` reads what a player wrote, and
  how `written`, the board's buttons and pictures name the orders (the
  state keeps it for them).
- On the board (`build`) a sequence is built from the orders the animals
  can carry out from where the orders before took them: an impossible one
  would only make it wrong, and can still be typed. Neither the preview
  nor the prompt says whether the animals match the card: the referee
  confirms no sequence before the round is decided.
- A whole turn of the deck with no card won ends the game (rules version
  2): once every card still in the deck has come up since the last card
  was won (or since the start) and nobody won any of them, the players
  have given up on what is left, and the game is over with the cards won
  so far. Without this, seats that always pass would play forever and the
  log would grow without end; with it a game lasts at most 300 rounds
  (24 cards, at most n rounds while n are left), fewer than 2,000 moves
  at 6 seats. Rules version 1 had no such end: `ManikiV1` keeps it, for
  games begun and records written under it (their deck may have gone
  round more than once), and counts the same rounds but never ends on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any, ClassVar

import marshmallow
from marshmallow import fields, validate

from referee.engine import (
    JSON,
    RESIGN_NOTATION,
    Breakdown,
    Building,
    Choice,
    Game,
    IllegalMove,
    Played,
    Resign,
    Result,
    RoundSummary,
    ScoreLine,
    bad_step,
    not_your_turn,
    rank,
)
from referee.games.reasons import reason
from referee.i18n import N_, _
from referee.rng import Rng

ORDERS = ("KI", "LO", "NI", "MA", "SO")
EXPERT_ORDERS = ("KI", "LO", "MA", "SO")
MAX_ORDERS = 32
PASS_NOTATION = "pass"

# Crazy Circus swaps the names of the swap and the blue climb. Each table
# maps a written name to its order, and, being its own inverse, back.
_CRAZY_CIRCUS = {"KI": "KI", "LO": "LO", "NI": "SO", "MA": "MA", "SO": "NI"}
_MANIKI = {order: order for order in ORDERS}
_NAMES = {"maniki": _MANIKI, "crazy_circus": _CRAZY_CIRCUS}

# What each order does, in the words the board's buttons say.
EFFECTS = {
    "KI": N_("blue's top animal jumps onto red"),
    "LO": N_("red's top animal jumps onto blue"),
    "NI": N_("the two top animals swap"),
    "MA": N_("red's bottom animal climbs to the top"),
    "SO": N_("blue's bottom animal climbs to the top"),
}


def _arrangements() -> tuple[str, ...]:
    cards = []
    for animals in permutations("BEL"):
        line = "".join(animals)
        for on_red in (3, 2, 1, 0):
            cards.append(f"{line[:on_red] or '-'}/{line[on_red:] or '-'}")
    return tuple(cards)


ARRANGEMENTS = _arrangements()
_INDEX = {card: index for index, card in enumerate(ARRANGEMENTS)}


def _stools(card: str) -> tuple[str, str]:
    red, blue = card.split("/")
    return red.strip("-"), blue.strip("-")


def _card(red: str, blue: str) -> str:
    return f"{red or '-'}/{blue or '-'}"


def _order(card: str, order: str) -> str | None:
    red, blue = _stools(card)
    if order == "KI":
        return _card(red + blue[-1], blue[:-1]) if blue else None
    if order == "LO":
        return _card(red[:-1], blue + red[-1]) if red else None
    if order == "NI":
        return _card(red[:-1] + blue[-1], blue[:-1] + red[-1]) if red and blue else None
    if order == "MA":
        return _card(red[1:] + red[0], blue) if len(red) >= 2 else None
    return _card(red, blue[1:] + blue[0]) if len(blue) >= 2 else None


# _STEP[order][card] is the card after the order, -1 where it is impossible.
_STEP = {
    order: tuple(
        -1 if (after := _order(card, order)) is None else _INDEX[after] for card in ARRANGEMENTS
    )
    for order in ORDERS
}


def _possible(orders: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(
        tuple(order for order in orders if _STEP[order][card] >= 0)
        for card in range(len(ARRANGEMENTS))
    )


_POSSIBLE = {False: _possible(ORDERS), True: _possible(EXPERT_ORDERS)}


def _reach(card: int, orders: tuple[str, ...]) -> int:
    """The card the orders lead to from `card`, -1 once one is impossible."""
    for order in orders:
        card = _STEP[order][card]
        if card < 0:
            return -1
    return card


def _solutions(start: int, orders: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    # The start is not marked as reached, so its entry becomes the shortest
    # non-empty sequence that comes back to it.
    paths: list[tuple[str, ...] | None] = [None] * len(ARRANGEMENTS)
    frontier: list[tuple[int, tuple[str, ...]]] = [(start, ())]
    while frontier:
        reached = []
        for card, path in frontier:
            for order in orders:
                after = _STEP[order][card]
                if after >= 0 and paths[after] is None:
                    paths[after] = (*path, order)
                    reached.append((after, (*path, order)))
        frontier = reached
    found = tuple(path for path in paths if path is not None)
    assert len(found) == len(ARRANGEMENTS), "every arrangement is reachable"
    return found


# _SOLUTIONS[expert][start][goal]: a shortest non-empty sequence.
_SOLUTIONS = {
    expert: tuple(_solutions(start, orders) for start in range(len(ARRANGEMENTS)))
    for expert, orders in ((False, ORDERS), (True, EXPERT_ORDERS))
}


def _card_index(card: str) -> int:
    try:
        return _INDEX[card]
    except KeyError:
        raise ValueError(f"{card!r} is not an arrangement such as 'EL/B'") from None


def apply_orders(card: str, orders: tuple[str, ...]) -> str | None:
    """The arrangement the orders lead to from `card`; None once one is impossible."""
    after = _reach(_card_index(card), orders)
    return None if after < 0 else ARRANGEMENTS[after]


def possible_orders(card: str, *, expert: bool = False) -> tuple[str, ...]:
    """The orders the animals can carry out from `card`, in the order `ORDERS` lists them."""
    return _POSSIBLE[expert][_card_index(card)]


def shown_name(order: str, names: str) -> str:
    """The name the players of a game with the option `names` call `order` by."""
    return _NAMES[names][order]


def shortest_solution(start: str, goal: str, *, expert: bool = False) -> tuple[str, ...]:
    """A shortest non-empty sequence of orders from `start` to `goal`.

    The referee's own search (breadth first over the 24 arrangements), used
    to announce the shortest length once a round is decided; `expert`
    leaves out `NI`. From an arrangement to itself it is a 2-order round trip.
    """
    return _SOLUTIONS[expert][_card_index(start)][_card_index(goal)]


@dataclass(frozen=True, slots=True)
class Call:
    """A sequence of orders, in MaNiKi names."""

    orders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pass:
    """Giving up on the current card."""


Move = Call | Pass | Resign


@dataclass(frozen=True, slots=True)
class Answer:
    """A seat's answer to the current card; `orders` is None for a pass."""

    seat: int
    orders: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class LastRound:
    """How the previous card went; `winner` is None when nobody won it."""

    card: int
    winner: int | None
    orders: tuple[str, ...] | None
    shortest: int


@dataclass(frozen=True, slots=True)
class State:
    """The whole game, secrets included.

    Cards and the position are indices into `ARRANGEMENTS`. `deck[0]` is
    the target; the cards won are gone from the deck. `answers` are
    this card's answers in the order received (race mode keeps only the
    wrong ones and passes: a right one ends the round). `tail` counts the
    moves logged since the first answer of an undecided sealed round.
    `decided` counts the cards decided so far, won or not; `barren` the
    rounds decided in a row with no card won (version 2 ends the game when
    it reaches the deck's size).
    """

    players: int
    sealed: bool
    expert: bool
    position: int
    deck: tuple[int, ...]
    won: tuple[int, ...]
    answers: tuple[Answer, ...]
    tail: int
    resigned: frozenset[int]
    last_round: LastRound | None
    decided: int = 0
    barren: int = 0
    # The `names` option: how the orders are named to the players (and read).
    names: str = "maniki"


class ManikiOptions(marshmallow.Schema):
    mode = fields.String(load_default="race", validate=validate.OneOf(("race", "sealed")))
    expert = fields.Boolean(load_default=False)
    names = fields.String(
        load_default="maniki", validate=validate.OneOf(("maniki", "crazy_circus"))
    )


_WORD_SEPARATORS = re.compile(r"[\s,\-\u2010-\u2015]+")

_EXPECTED = reason(
    N_(
        "expected a sequence of orders (KI, LO, NI, MA, SO) separated by spaces or dashes, "
        "e.g. 'MA NI KI', or 'pass'"
    )
)
ANSWERED = reason(N_("you have already answered this card"))
NOT_A_SEQUENCE = reason(N_("a move is a sequence of orders, pass or resign"))
SEQUENCE_IS = reason(N_("a sequence is 1 to {most} of the orders KI LO NI MA SO"))
NO_SWAP = reason(
    N_("the swap order (NI; SO with the crazy_circus names) does not exist in expert mode")
)
EMPTY = reason(N_("the move is empty: {expected}"))
NOT_AN_ORDER = reason(N_("{word} is not an order: {expected}"))
TOO_LONG = reason(N_("a sequence has at most {most} orders, this one has {count}"))
EXPECTED_JSON = reason(
    N_(
        "a move is {{'type': 'sequence', 'orders': ['MA', 'NI', 'KI']}}, "
        "{{'type': 'pass'}} or {{'type': 'resign'}}"
    )
)
ORDERS_ARE = reason(N_("'orders' is a list of the orders {orders} (upper case)"))
SEQUENCE_LENGTH = reason(N_("a sequence has 1 to {most} orders, this one has {count}"))


def _bad_move(reason: str) -> IllegalMove:
    return IllegalMove("bad_move", reason)


class Maniki(Game[State, Move]):
    name = "maniki"
    title = "MaNiKi"
    rules_version: ClassVar[str] = "2"
    # Version 2: a whole turn of the deck with no card won ends the game.
    ends_when_barren: ClassVar[bool] = True
    players = (2, 3, 4, 5, 6)
    options_schema = ManikiOptions
    option_labels: ClassVar[Mapping[str, str]] = {
        "mode": N_("Mode: race, or sealed rounds"),
        "expert": N_("Expert: without the swap order"),
        "names": N_("Names of the orders"),
        "mode=race": N_("race: the first right sequence wins"),
        "mode=sealed": N_("sealed rounds: the shortest right sequence wins"),
        "names=maniki": N_("MaNiKi's (KI, LO, NI, MA, SO)"),
        "names=crazy_circus": N_("Crazy Circus's"),
    }
    move_fields: ClassVar[Mapping[str, JSON]] = {
        "sequence": {
            "properties": {
                "orders": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(ORDERS)},
                    "minItems": 1,
                    "maxItems": MAX_ORDERS,
                }
            },
            "required": ["orders"],
        },
        "pass": {"properties": {}, "required": []},
    }
    notation_help = N_(
        "Write the orders separated by spaces or dashes, e.g. 'MA NI KI', at most 32: "
        "KI blue's top animal jumps onto red, LO red's top jumps onto blue, NI the two "
        "tops swap, MA red's bottom climbs to its top, SO blue's bottom climbs to its top "
        "(with the crazy_circus names SO is the swap and NI the blue climb). "
        "Or write 'pass' to give up on this card."
    )
    # The legal moves listed are the single orders a sequence is written with.
    lists_every_move = False
    # A seat's score is the cards it has won.
    score_label = N_("Cards")

    # -- the rules -------------------------------------------------------

    def start(self, players: int, options: JSON, rng: Rng) -> State:
        cards = rng.shuffled(range(len(ARRANGEMENTS)))
        return State(
            players=players,
            sealed=options["mode"] == "sealed",
            expert=bool(options["expert"]),
            position=cards[0],
            deck=(*cards[1:], cards[0]),
            won=(0,) * players,
            answers=(),
            tail=0,
            resigned=frozenset(),
            last_round=None,
            names=options["names"],
        )

    def _over(self, state: State) -> bool:
        return (
            not state.deck
            or state.players - len(state.resigned) <= 1
            or (self.ends_when_barren and state.barren >= len(state.deck))
        )

    def actors(self, state: State) -> frozenset[int]:
        if self._over(state):
            return frozenset()
        answered = {answer.seat for answer in state.answers}
        return frozenset(range(state.players)) - state.resigned - answered

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat not in self.actors(state):
            return []
        orders = EXPERT_ORDERS if state.expert else ORDERS
        return [Pass(), *(Call((order,)) for order in orders)]

    def _random_move_in_turn(self, state: State, seat: int, rng: Rng) -> Move:
        if rng.below(10) == 0:
            return Pass()
        # A random walk through possible orders: it lands on any card now and
        # then, so random playouts end, yet it never looks for the solution.
        possible = _POSSIBLE[state.expert]
        card = state.position
        orders = []
        for _order in range(1 + rng.below(6)):
            order = rng.choice(possible[card])
            orders.append(order)
            card = _STEP[order][card]
        return Call(tuple(orders))

    def _resign(self, state: State, seat: int) -> State:
        if not 0 <= seat < state.players or seat in state.resigned:
            raise not_your_turn()
        return _settle(state, state.answers, state.resigned | {seat})

    def _out_of_turn_refusal(self, state: State, seat: int) -> IllegalMove:
        if seat not in state.resigned and any(answer.seat == seat for answer in state.answers):
            return IllegalMove("not_your_turn", ANSWERED())
        return not_your_turn()

    def _play_in_turn(self, state: State, seat: int, move: Move) -> State:
        if isinstance(move, Pass):
            return _settle(state, (*state.answers, Answer(seat, None)), state.resigned)
        if not isinstance(move, Call):
            raise IllegalMove("illegal_move", NOT_A_SEQUENCE())
        orders = move.orders
        if not 1 <= len(orders) <= MAX_ORDERS or any(order not in ORDERS for order in orders):
            raise IllegalMove("illegal_move", SEQUENCE_IS(most=MAX_ORDERS))
        if state.expert and "NI" in orders:
            raise IllegalMove("illegal_move", NO_SWAP())
        if not state.sealed and _reach(state.position, orders) == state.deck[0]:
            return _win(state, seat, orders, state.resigned)
        return _settle(state, (*state.answers, Answer(seat, orders)), state.resigned)

    def hidden_tail(self, state: State) -> int:
        return state.tail

    def rounds_decided(self, state: State) -> int:
        return state.decided

    def decision_key(self, state: State, seat: int) -> Any:
        # Another seat's wrong answer or pass leaves the card standing: the
        # question is the same until the card is decided (or the seat resigns).
        return (state.decided, seat in state.resigned)

    def answer_note(self, before: State, after: State, seat: int) -> str | None:
        if seat in after.resigned:
            return None
        if after.decided > before.decided:
            if after.last_round is not None and after.last_round.winner == seat:
                return "Right: you won this card."
            # Its answer was the card's last, and not right (or the round
            # ended otherwise): the round-over mail tells how it went.
            return "This card is decided, and not won by you."
        answer = next((a for a in after.answers if a.seat == seat), None)
        if answer is None:
            return None
        if after.sealed:
            return "Your answer to this card is sealed until every seat has answered."
        if answer.orders is None:
            return "You passed: you are out of this card."
        return "Wrong: that sequence does not end on the card. You are out of this card."

    def pass_move(self, state: State, seat: int) -> Move | None:
        return Pass() if seat in self.actors(state) else None

    def resigned(self, state: State) -> frozenset[int]:
        return state.resigned

    def scores(self, state: State) -> tuple[int, ...]:
        return state.won

    def breakdown(self, start: State, played: Sequence[Played[State, Move]]) -> Breakdown:
        """The cards each seat won, in the order won, with the winning sequence."""
        lines: list[list[ScoreLine]] = [[] for _ in range(start.players)]
        decided = start.decided
        for number, step in enumerate(played, 1):
            after = step.state
            last = after.last_round
            if after.decided > decided and last is not None and last.winner is not None:
                orders = " ".join(last.orders or ())
                label = _("card {card}: {orders} (move {number})").format(
                    card=ARRANGEMENTS[last.card], orders=orders, number=number
                )
                lines[last.winner].append(ScoreLine(label, 1))
            decided = after.decided
        return tuple(tuple(seat_lines) for seat_lines in lines)

    def round_summary(self, state: State) -> RoundSummary:
        last = state.last_round
        if last is None:
            return RoundSummary()
        return RoundSummary(
            winners=() if last.winner is None else (last.winner,),
            facts=(
                (_("card"), ARRANGEMENTS[last.card]),
                (_("sequence"), None if last.orders is None else " ".join(last.orders)),
                (_("shortest"), str(last.shortest)),
            ),
        )

    def view(self, state: State, seat: int | None) -> JSON:
        last = state.last_round
        view: JSON = {
            "mode": "sealed" if state.sealed else "race",
            "expert": state.expert,
            "names": state.names,
            "position": ARRANGEMENTS[state.position],
            "target": ARRANGEMENTS[state.deck[0]] if state.deck else None,
            "cards_won": list(state.won),
            "deck_left": max(len(state.deck) - 1, 0),
            "in_round": sorted(self.actors(state)),
            "resigned": sorted(state.resigned),
            "last_round": None
            if last is None
            else {
                "card": ARRANGEMENTS[last.card],
                "winner": last.winner,
                "sequence": None if last.orders is None else " ".join(last.orders),
                "shortest": last.shortest,
            },
        }
        if self.ends_when_barren:
            view["unwon_in_a_row"] = state.barren
        if state.sealed:
            view["submitted"] = sorted({answer.seat for answer in state.answers})
        return view

    def result(self, state: State) -> Result | None:
        if not self._over(state):
            return None
        return rank(state.won, state.resigned)

    # -- building a move on the board -----------------------------------

    def build(self, state: State, seat: int, steps: Sequence[str]) -> Building[Move]:
        """`pass` alone, or the orders one by one, up to 32, each one that the
        animals can carry out from where the orders before it took them.

        An order that cannot be carried out is left out: it would make the
        sequence wrong whatever followed (it can still be typed). The
        preview is the seat's own view with the animals where the orders
        take them; whether they reach the card is said, since the seat
        could work it out from what it sees, but every sequence may be sent.
        """
        self._check_turn(state, seat)
        card, passed = state.position, False
        for depth, step in enumerate(steps):
            offered = () if passed else self._choices(state, card, depth)
            if step not in {choice.step for choice in offered}:
                raise bad_step(step)
            passed = step == PASS_NOTATION
            card = card if passed else _STEP[step][card]
        view = self.view(state, seat)
        view["position"] = ARRANGEMENTS[card]
        taken = tuple(steps)
        if passed:
            return Building(taken, (), Pass(), view, _("Play the pass, or undo"))
        choices = self._choices(state, card, len(taken))
        move = Call(taken) if taken else None
        return Building(taken, choices, move, view, _prompt(taken))

    def _choices(self, state: State, card: int, depth: int) -> tuple[Choice, ...]:
        if depth >= MAX_ORDERS:
            return ()
        orders = tuple(
            Choice(order, f"{shown_name(order, state.names)}: {_(EFFECTS[order])}")
            for order in _POSSIBLE[state.expert][card]
        )
        first = (Choice(PASS_NOTATION, _("Pass: give up on this card")),) if depth == 0 else ()
        return (*orders, *first)

    # -- notation and JSON ------------------------------------------------

    def written(self, move: Move, options: JSON) -> str:
        if isinstance(move, Call):
            names = options.get("names", "maniki")
            return " ".join(shown_name(order, names) for order in move.orders)
        return self.notate(move)

    def parse(self, text: str, options: JSON | None = None) -> Move:
        words = [word for word in _WORD_SEPARATORS.split(text.strip().upper()) if word]
        if not words:
            raise IllegalMove("bad_notation", EMPTY(expected=_EXPECTED()))
        if words == [PASS_NOTATION.upper()]:
            return Pass()
        if words == [RESIGN_NOTATION.upper()]:
            return Resign()
        names = _CRAZY_CIRCUS if (options or {}).get("names") == "crazy_circus" else _MANIKI
        orders: list[str] = []
        for word in words:
            # Orders run together ("MANIKI") are read two letters at a time.
            pieces = [word[i : i + 2] for i in range(0, len(word), 2)]
            if any(piece not in names for piece in pieces):
                raise IllegalMove(
                    "bad_notation", NOT_AN_ORDER(word=repr(word), expected=_EXPECTED())
                )
            orders.extend(names[piece] for piece in pieces)
        if len(orders) > MAX_ORDERS:
            raise IllegalMove("bad_notation", TOO_LONG(most=MAX_ORDERS, count=len(orders)))
        return Call(tuple(orders))

    def notate(self, move: Move) -> str:
        if isinstance(move, Call):
            return " ".join(move.orders)
        if isinstance(move, Pass):
            return PASS_NOTATION
        return RESIGN_NOTATION

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Call):
            return {"type": "sequence", "orders": list(move.orders)}
        if isinstance(move, Pass):
            return {"type": "pass"}
        return {"type": "resign"}

    def move_from_json(self, data: Any) -> Move:
        expected = EXPECTED_JSON()
        if not isinstance(data, dict):
            raise _bad_move(expected)
        kind = data.get("type")
        if kind in ("pass", "resign") and data.keys() == {"type"}:
            return Pass() if kind == "pass" else Resign()
        if kind != "sequence" or data.keys() != {"type", "orders"}:
            raise _bad_move(expected)
        orders = data["orders"]
        if not isinstance(orders, list) or not all(order in ORDERS for order in orders):
            raise _bad_move(ORDERS_ARE(orders=", ".join(ORDERS)))
        if not 1 <= len(orders) <= MAX_ORDERS:
            raise _bad_move(SEQUENCE_LENGTH(most=MAX_ORDERS, count=len(orders)))
        return Call(tuple(orders))

    def state_to_json(self, state: State) -> JSON:
        last = state.last_round
        return {
            "players": state.players,
            "sealed": state.sealed,
            "expert": state.expert,
            "position": ARRANGEMENTS[state.position],
            "deck": [ARRANGEMENTS[card] for card in state.deck],
            "won": list(state.won),
            "answers": [
                {"seat": answer.seat, "orders": _orders_json(answer.orders)}
                for answer in state.answers
            ],
            "tail": state.tail,
            "resigned": sorted(state.resigned),
            "last_round": None
            if last is None
            else {
                "card": ARRANGEMENTS[last.card],
                "winner": last.winner,
                "orders": _orders_json(last.orders),
                "shortest": last.shortest,
            },
            "decided": state.decided,
            **({"barren": state.barren} if self.ends_when_barren else {}),
            # Written only where it is not the default, so that the snapshots
            # of games stored before the field came stay as they were.
            **({"names": state.names} if state.names != "maniki" else {}),
        }

    def state_from_json(self, data: JSON) -> State:
        last = data["last_round"]
        return State(
            players=data["players"],
            sealed=data["sealed"],
            expert=data["expert"],
            position=_INDEX[data["position"]],
            deck=tuple(_INDEX[card] for card in data["deck"]),
            won=tuple(data["won"]),
            answers=tuple(
                Answer(answer["seat"], _orders_from_json(answer["orders"]))
                for answer in data["answers"]
            ),
            tail=data["tail"],
            resigned=frozenset(data["resigned"]),
            last_round=None
            if last is None
            else LastRound(
                _INDEX[last["card"]],
                last["winner"],
                _orders_from_json(last["orders"]),
                last["shortest"],
            ),
            # Snapshots made before the count have none; only its rises are read.
            decided=data.get("decided", 0),
            # Version 1 never ends on it, and keeps no count.
            barren=data.get("barren", 0),
            names=data.get("names", "maniki"),
        )


def _prompt(orders: tuple[str, ...]) -> str:
    # Never whether the animals match the card: the referee confirms no
    # sequence before the round is decided (the seat sees the preview).
    if not orders:
        return _("Add an order, or pass")
    if len(orders) >= MAX_ORDERS:
        return _("A sequence holds at most {most} orders: play it, or undo").format(most=MAX_ORDERS)
    return _("Add an order, or play the sequence")


def _settle(state: State, answers: tuple[Answer, ...], resigned: frozenset[int]) -> State:
    """The state after an answer or a resign: the round is decided once every
    seat still playing has answered, unless the game is over."""
    playing = state.players - len(resigned)
    answered = {answer.seat for answer in answers if answer.seat not in resigned}
    if playing <= 1 or len(answered) < playing:
        # Dataclass `replace` is avoided here and below: playouts spend
        # most of their time in these few constructors.
        return State(
            state.players,
            state.sealed,
            state.expert,
            state.position,
            state.deck,
            state.won,
            answers,
            state.tail + 1 if state.sealed and answers and playing > 1 else 0,
            resigned,
            state.last_round,
            state.decided,
            state.barren,
            state.names,
        )
    target = state.deck[0]
    right = [
        answer
        for answer in answers
        if answer.seat not in resigned
        and answer.orders is not None
        and _reach(state.position, answer.orders) == target
    ]
    if right:
        # min keeps the first of equal lengths: ties go to the earliest.
        best = min(right, key=lambda answer: len(answer.orders or ()))
        return _win(state, best.seat, best.orders or (), resigned)
    return State(
        state.players,
        state.sealed,
        state.expert,
        state.position,
        (*state.deck[1:], target),
        state.won,
        (),
        0,
        resigned,
        LastRound(target, None, None, _shortest(state)),
        state.decided + 1,
        state.barren + 1,
        state.names,
    )


def _win(state: State, seat: int, orders: tuple[str, ...], resigned: frozenset[int]) -> State:
    target = state.deck[0]
    won = list(state.won)
    won[seat] += 1
    return State(
        state.players,
        state.sealed,
        state.expert,
        target,
        state.deck[1:],
        tuple(won),
        (),
        0,
        resigned,
        LastRound(target, seat, orders, _shortest(state)),
        state.decided + 1,
        0,
        state.names,
    )


def _shortest(state: State) -> int:
    return len(_SOLUTIONS[state.expert][state.position][state.deck[0]])


def _orders_json(orders: tuple[str, ...] | None) -> list[str] | None:
    return None if orders is None else list(orders)


def _orders_from_json(orders: list[str] | None) -> tuple[str, ...] | None:
    return None if orders is None else tuple(orders)


class ManikiV1(Maniki):
    """Rules version 1: a deck that goes round with no card won goes round again."""

    rules_version: ClassVar[str] = "1"
    ends_when_barren: ClassVar[bool] = False


GAME = Maniki()
GAME_V1 = ManikiV1()
