"""MaNiKi: the rules file's examples, both modes, options, secrecy and properties."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from itertools import product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import games
from referee.engine import JSON, BadOptions, IllegalMove, Played, Resign, RoundSummary, ScoreLine
from referee.games.maniki import (
    ARRANGEMENTS,
    GAME,
    Answer,
    Call,
    LastRound,
    Move,
    Pass,
    State,
    apply_orders,
    shortest_solution,
)
from referee.i18n import speaking
from referee.record import Entry, Header, Record
from referee.replay import ReplayError, replay
from referee.rng import Rng, commitment

ALL_ORDERS = ("KI", "LO", "NI", "MA", "SO")
NO_NI = ("KI", "LO", "MA", "SO")


def options(**raw: Any) -> JSON:
    return GAME.load_options(raw, 3)


def card(name: str) -> int:
    return ARRANGEMENTS.index(name)


def state_at(
    position: str,
    deck: tuple[str, ...],
    players: int = 3,
    sealed: bool = False,
    expert: bool = False,
    won: tuple[int, ...] | None = None,
) -> State:
    """A state in the middle of a game: the animals on `position`, `deck[0]` the target."""
    return State(
        players=players,
        sealed=sealed,
        expert=expert,
        position=card(position),
        deck=tuple(card(name) for name in deck),
        won=won or (0,) * players,
        answers=(),
        tail=0,
        resigned=frozenset(),
        last_round=None,
    )


def call(text: str) -> Call:
    move = GAME.parse(text)
    assert isinstance(move, Call)
    return move


def play_all(state: State, moves: list[tuple[int, str]]) -> State:
    for seat, text in moves:
        state = GAME.play(state, seat, GAME.parse(text))
    return state


# -- the registry and options --------------------------------------------


def test_registered_under_its_name() -> None:
    assert games.get("maniki") is GAME
    assert GAME.players == (2, 3, 4, 5, 6)


def test_option_defaults() -> None:
    assert options() == {"mode": "race", "expert": False, "names": "maniki"}
    assert options(mode="sealed", expert=True, names="crazy_circus") == {
        "mode": "sealed",
        "expert": True,
        "names": "crazy_circus",
    }


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"mode": "fastest"}, "mode"),
        ({"names": "cirque"}, "names"),
        ({"expert": "maybe"}, "expert"),
        ({"speed": 3}, "speed"),
    ],
)
def test_bad_options_are_refused(raw: JSON, field: str) -> None:
    with pytest.raises(BadOptions) as error:
        options(**raw)
    assert field in error.value.errors


@pytest.mark.parametrize("players", [0, 1, 7])
def test_player_counts_outside_two_to_six_are_refused(players: int) -> None:
    with pytest.raises(BadOptions):
        GAME.load_options({}, players)


# -- arrangements and orders ---------------------------------------------


def test_the_24_cards_are_every_arrangement_once() -> None:
    assert len(set(ARRANGEMENTS)) == 24
    for name in ARRANGEMENTS:
        red, blue = name.split("/")
        animals = red.strip("-") + blue.strip("-")
        assert sorted(animals) == ["B", "E", "L"]
        assert (red == "-") == (red.strip("-") == "")
        assert (blue == "-") == (blue.strip("-") == "")


def test_worked_checks() -> None:
    assert apply_orders("EL/B", ("MA", "NI", "KI")) == "LBE/-"
    assert apply_orders("EB/L", ("MA", "LO", "SO")) == "B/EL"


@pytest.mark.parametrize(
    ("start", "order", "after"),
    [
        ("EL/B", "KI", "ELB/-"),  # blue's top bear jumps onto red
        ("EL/B", "LO", "E/BL"),  # red's top lion jumps onto blue
        ("EL/B", "NI", "EB/L"),  # lion and bear swap
        ("EL/B", "MA", "LE/B"),  # red's bottom elephant climbs to the top
        ("E/LB", "SO", "E/BL"),  # blue's bottom lion climbs to the top
        ("-/BEL", "KI", "L/BE"),
        ("BEL/-", "LO", "BE/L"),
    ],
)
def test_each_order(start: str, order: str, after: str) -> None:
    assert apply_orders(start, (order,)) == after


IMPOSSIBLE = [
    ("BEL/-", "KI"),  # blue empty
    ("-/BEL", "LO"),  # red empty
    ("BEL/-", "NI"),  # blue empty
    ("-/BEL", "NI"),  # red empty
    ("B/EL", "MA"),  # red holds one
    ("-/BEL", "MA"),  # red holds none
    ("EL/B", "SO"),  # blue holds one
    ("BEL/-", "SO"),  # blue holds none
]


@pytest.mark.parametrize(("start", "order"), IMPOSSIBLE)
def test_an_impossible_order_makes_the_sequence_wrong_whatever_follows(
    start: str, order: str
) -> None:
    assert apply_orders(start, (order,)) is None
    # What follows alone would be right: the impossible order spoils it.
    rest = ("LO",) if start.split("/")[0] != "-" else ("KI",)
    target = apply_orders(start, rest)
    assert target is not None
    assert apply_orders(start, (order, *rest)) is None
    state = state_at(start, (target, "ELB/-"), players=2)
    after = GAME.play(state, 0, Call((order, *rest)))
    assert after.won == (0, 0)
    assert GAME.view(after, None)["in_round"] == [1]
    assert GAME.view(after, None)["target"] == target


def test_an_impossible_order_in_the_middle_spoils_the_sequence() -> None:
    # KI empties blue, so the second KI cannot be carried out; LO alone is right.
    assert apply_orders("EL/B", ("LO",)) == "E/BL"
    assert apply_orders("EL/B", ("KI", "KI", "LO", "LO")) is None


# -- the referee's search ----------------------------------------------------


def brute_force_distances(orders: tuple[str, ...]) -> dict[tuple[str, str], int]:
    """The fewest orders between every two cards, by trying every sequence up to 5."""
    best: dict[tuple[str, str], int] = {}
    for start in ARRANGEMENTS:
        for length in range(1, 6):
            for sequence in product(orders, repeat=length):
                end = apply_orders(start, sequence)
                if end is not None:
                    best.setdefault((start, end), length)
    return best


@pytest.mark.parametrize("expert", [False, True])
def test_every_card_is_reachable_from_every_other_in_at_most_5(expert: bool) -> None:
    orders = NO_NI if expert else ALL_ORDERS
    distances = brute_force_distances(orders)
    for start, goal in product(ARRANGEMENTS, repeat=2):
        if start == goal:
            continue
        solution = shortest_solution(start, goal, expert=expert)
        assert apply_orders(start, solution) == goal
        assert set(solution) <= set(orders)
        assert len(solution) == distances[start, goal] <= 5


@pytest.mark.parametrize("expert", [False, True])
def test_from_a_card_to_itself_the_shortest_is_a_round_trip_of_two(expert: bool) -> None:
    for name in ARRANGEMENTS:
        solution = shortest_solution(name, name, expert=expert)
        assert len(solution) == 2
        assert apply_orders(name, solution) == name


def test_unknown_arrangements_are_refused_by_the_search() -> None:
    with pytest.raises(ValueError, match="not an arrangement"):
        shortest_solution("EL/B", "ELB")


# -- setup -------------------------------------------------------------------


def test_start_turns_up_the_first_card_and_puts_it_at_the_bottom() -> None:
    state = GAME.start(3, options(), Rng("setup"))
    assert sorted(state.deck) == list(range(24))
    assert state.deck[-1] == state.position
    assert state.won == (0, 0, 0)
    view = GAME.view(state, None)
    assert view["position"] == ARRANGEMENTS[state.position]
    assert view["target"] == ARRANGEMENTS[state.deck[0]]
    assert view["deck_left"] == 23
    assert view["in_round"] == [0, 1, 2]
    assert view["last_round"] is None
    assert GAME.start(3, options(), Rng("setup")) == state


def test_the_shuffle_depends_on_the_seed() -> None:
    decks = {GAME.start(2, options(), Rng(f"seed {n}")).deck for n in range(10)}
    assert len(decks) == 10


# -- race rounds ------------------------------------------------------------------


def test_race_a_wrong_sequence_eliminates_and_the_first_right_one_wins() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    state = GAME.play(state, 0, call("MA"))
    assert GAME.actors(state) == {1, 2}
    with pytest.raises(IllegalMove) as error:
        GAME.play(state, 0, call("MA NI KI"))
    assert error.value.code == "not_your_turn"
    assert GAME.legal_moves(state, 0) == []
    state = GAME.play(state, 2, call("MA NI KI"))
    view = GAME.view(state, 1)
    assert view["cards_won"] == [0, 0, 1]
    assert view["position"] == "LBE/-"
    assert view["target"] == "B/EL"
    assert view["deck_left"] == 1
    assert view["in_round"] == [0, 1, 2]
    # KI MA (through ELB/-) is shorter, and no single order reaches LBE/-.
    assert view["last_round"] == {
        "card": "LBE/-",
        "winner": 2,
        "sequence": "MA NI KI",
        "shortest": 2,
    }
    assert GAME.hidden_tail(state) == 0


def test_race_when_everyone_passes_or_fails_the_card_goes_to_the_bottom() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    state = play_all(state, [(1, "pass"), (0, "KI"), (2, "pass")])
    assert state.position == card("EL/B")
    assert state.deck == tuple(card(name) for name in ("B/EL", "-/BEL", "LBE/-"))
    view = GAME.view(state, None)
    assert view["cards_won"] == [0, 0, 0]
    assert view["target"] == "B/EL"
    assert view["in_round"] == [0, 1, 2]
    assert view["last_round"] == {"card": "LBE/-", "winner": None, "sequence": None, "shortest": 2}


def test_the_round_summary_names_the_winner_and_scores_are_the_cards_won() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    assert GAME.round_summary(state) == RoundSummary()
    missed = play_all(state, [(1, "pass"), (0, "KI"), (2, "pass")])
    assert GAME.round_summary(missed) == RoundSummary(
        (), (("card", "LBE/-"), ("sequence", None), ("shortest", "2"))
    )
    won = play_all(state, [(2, "MA NI KI")])
    assert GAME.round_summary(won).winners == (2,)
    assert GAME.scores(won) == (0, 0, 1) and GAME.score_label == "Cards"


def test_the_timeout_pass_is_offered_to_every_seat_still_to_answer() -> None:
    state = play_all(state_at("EL/B", ("LBE/-", "B/EL", "-/BEL")), [(0, "KI")])
    assert [GAME.pass_move(state, seat) for seat in range(3)] == [None, Pass(), Pass()]
    state = GAME.play(state, 2, Resign())
    assert GAME.pass_move(state, 2) is None and GAME.resigned(state) == {2}


def test_the_starting_card_is_won_by_a_sequence_that_comes_back() -> None:
    state = state_at("EL/B", ("EL/B",), players=2)
    state = GAME.play(state, 1, call("KI LO"))
    assert state.won == (0, 1)
    assert GAME.result(state) is not None
    assert GAME.view(state, None)["last_round"]["shortest"] == 2


def test_an_empty_sequence_is_refused() -> None:
    state = state_at("EL/B", ("EL/B",), players=2)
    with pytest.raises(IllegalMove) as error:
        GAME.play(state, 0, Call(()))
    assert error.value.code == "illegal_move"
    with pytest.raises(IllegalMove) as error:
        GAME.parse("  ")
    assert error.value.code == "bad_notation"


def test_the_game_ends_when_the_last_card_is_won_and_ties_share() -> None:
    state = state_at("EL/B", ("LBE/-",), won=(11, 12, 0))
    assert GAME.result(state) is None
    state = GAME.play(state, 0, call("KI MA"))
    result = GAME.result(state)
    assert result is not None
    assert result.scores == (12, 12, 0)
    assert result.winners == (0, 1)
    assert GAME.actors(state) == frozenset()
    assert GAME.legal_moves(state, 2) == []
    view = GAME.view(state, None)
    assert view["target"] is None
    assert view["deck_left"] == 0
    with pytest.raises(IllegalMove) as error:
        GAME.play(state, 2, Pass())
    assert error.value.code == "game_over"


def test_most_cards_wins() -> None:
    state = state_at("EL/B", ("LBE/-",), won=(11, 12, 0))
    state = GAME.play(state, 1, call("KI MA"))
    result = GAME.result(state)
    assert result is not None
    assert result.winners == (1,)


# -- sealed rounds ---------------------------------------------------------------


def sealed_state(players: int = 3) -> State:
    return state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"), players=players, sealed=True)


def test_sealed_the_shortest_right_sequence_wins() -> None:
    state = play_all(sealed_state(), [(2, "MA NI KI"), (1, "KI"), (0, "KI MA")])
    assert state.won == (1, 0, 0)
    assert GAME.view(state, None)["last_round"] == {
        "card": "LBE/-",
        "winner": 0,
        "sequence": "KI MA",
        "shortest": 2,
    }


def test_sealed_equal_lengths_go_to_the_earliest() -> None:
    state = play_all(sealed_state(), [(1, "MA NI KI"), (2, "pass"), (0, "MA NI KI")])
    assert state.won == (0, 1, 0)


def test_sealed_a_right_sequence_does_not_end_the_round_early() -> None:
    state = GAME.play(sealed_state(), 1, call("KI MA"))
    assert state.won == (0, 0, 0)
    assert GAME.actors(state) == {0, 2}
    with pytest.raises(IllegalMove) as error:
        GAME.play(state, 1, call("KI MA"))
    assert error.value.code == "not_your_turn"


def test_sealed_nobody_right_sends_the_card_to_the_bottom() -> None:
    state = play_all(sealed_state(), [(0, "pass"), (1, "KI"), (2, "pass")])
    assert state.won == (0, 0, 0)
    assert state.position == card("EL/B")
    assert GAME.view(state, None)["target"] == "B/EL"
    assert state.deck[-1] == card("LBE/-")


def test_sealed_answers_stay_hidden_until_the_round_is_decided() -> None:
    state = play_all(sealed_state(), [(2, "MA NI KI"), (0, "pass")])
    assert GAME.hidden_tail(state) == 2
    for viewer in (None, 0, 1, 2):
        view = GAME.view(state, viewer)
        assert view["submitted"] == [0, 2]
        assert view["in_round"] == [1]
        assert view["last_round"] is None
        assert view["cards_won"] == [0, 0, 0]
        text = json.dumps(view)
        assert "MA NI KI" not in text
        assert "pass" not in text
    state = GAME.play(state, 1, Pass())
    assert GAME.hidden_tail(state) == 0
    assert GAME.view(state, 0)["last_round"]["sequence"] == "MA NI KI"
    assert GAME.view(state, 0)["submitted"] == []


def test_race_mode_hides_nothing_and_has_no_submitted_field() -> None:
    state = GAME.play(state_at("EL/B", ("LBE/-", "B/EL")), 0, call("MA"))
    assert GAME.hidden_tail(state) == 0
    assert "submitted" not in GAME.view(state, 1)


# -- resign ---------------------------------------------------------------------


def test_resigning_leaves_one_seat_who_wins_whatever_the_cards() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL"), players=2, won=(5, 0))
    state = GAME.play(state, 0, Resign())
    result = GAME.result(state)
    assert result is not None
    assert result.winners == (1,)
    assert GAME.actors(state) == frozenset()


def test_a_resigned_seat_is_out_of_every_later_round() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    state = GAME.play(state, 2, Resign())
    assert GAME.actors(state) == {0, 1}
    assert GAME.view(state, None)["resigned"] == [2]
    state = GAME.play(state, 0, call("KI MA"))
    assert GAME.actors(state) == {0, 1}
    assert GAME.legal_moves(state, 2) == []
    for move in (Pass(), call("KI"), Resign()):
        with pytest.raises(IllegalMove) as error:
            GAME.play(state, 2, move)
        assert error.value.code == "not_your_turn"
    # The others passing is enough to close a round.
    state = play_all(state, [(0, "pass"), (1, "pass")])
    assert GAME.view(state, None)["target"] == "-/BEL"


def test_a_resign_that_leaves_only_answered_seats_decides_the_round() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    state = play_all(state, [(0, "pass"), (1, "KI"), (2, "resign")])
    assert GAME.result(state) is None
    assert GAME.view(state, None)["target"] == "B/EL"
    assert GAME.actors(state) == {0, 1}


def test_sealed_a_resigned_seats_answer_no_longer_counts() -> None:
    state = sealed_state()
    state = GAME.play(state, 0, call("KI MA"))
    assert GAME.hidden_tail(state) == 1
    state = GAME.play(state, 0, Resign())
    assert GAME.hidden_tail(state) == 2
    state = GAME.play(state, 1, call("KI"))
    assert GAME.hidden_tail(state) == 3
    state = GAME.play(state, 2, Pass())
    assert GAME.hidden_tail(state) == 0
    assert state.won == (0, 0, 0)
    assert GAME.view(state, None)["last_round"]["winner"] is None


def test_sealed_a_resign_before_any_answer_is_not_hidden() -> None:
    state = GAME.play(sealed_state(), 1, Resign())
    assert GAME.hidden_tail(state) == 0


def test_sealed_the_game_ending_by_resign_reveals_the_open_round() -> None:
    state = GAME.play(sealed_state(players=2), 0, call("KI MA"))
    assert GAME.hidden_tail(state) == 1
    state = GAME.play(state, 1, Resign())
    assert GAME.hidden_tail(state) == 0
    result = GAME.result(state)
    assert result is not None
    assert result.winners == (0,)


# -- options: names and expert -------------------------------------------------


def test_crazy_circus_names_swap_the_swap_and_the_blue_climb() -> None:
    crazy = options(names="crazy_circus")
    assert GAME.parse("SO", crazy) == Call(("NI",))
    assert GAME.parse("NI", crazy) == Call(("SO",))
    assert GAME.parse("ki lo ma", crazy) == Call(("KI", "LO", "MA"))
    assert GAME.parse("SO", options()) == Call(("SO",))
    move = GAME.parse("MA SO KI", crazy)
    assert GAME.notate(move) == "MA NI KI"
    assert GAME.move_to_json(move) == {"type": "sequence", "orders": ["MA", "NI", "KI"]}
    state = GAME.play(state_at("EL/B", ("LBE/-", "B/EL")), 0, move)
    assert state.won == (1, 0, 0)


def test_expert_has_no_ni() -> None:
    state = state_at("EL/B", ("EB/L", "B/EL"), expert=True)
    listed = GAME.legal_moves(state, 0)
    assert listed == [Pass(), Call(("KI",)), Call(("LO",)), Call(("MA",)), Call(("SO",))]
    for sequence in ("NI", "KI NI"):
        with pytest.raises(IllegalMove) as error:
            GAME.play(state, 0, call(sequence))
        assert error.value.code == "illegal_move"
        assert "expert" in error.value.reason
    swap = GAME.parse("SO", options(names="crazy_circus", expert=True))
    with pytest.raises(IllegalMove):
        GAME.play(state, 0, swap)
    # Still solvable without NI: EL/B to EB/L the long way.
    solution = shortest_solution("EL/B", "EB/L", expert=True)
    assert GAME.play(state, 1, Call(solution)).won == (0, 1, 0)


def test_legal_moves_are_pass_and_the_single_orders() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL"))
    listed = GAME.legal_moves(state, 1)
    assert listed == [Pass(), *(Call((order,)) for order in ALL_ORDERS)]
    assert GAME.lists_every_move is False
    for move in listed:
        GAME.play(state, 1, move)
        assert GAME.parse(GAME.notate(move)) == move


def test_play_refuses_malformed_sequences_and_strangers() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL"))
    for move in (Call(("XX",)), Call(("KI",) * 33)):
        with pytest.raises(IllegalMove) as error:
            GAME.play(state, 0, move)
        assert error.value.code == "illegal_move"
    for seat in (-1, 3):
        with pytest.raises(IllegalMove) as error:
            GAME.play(state, seat, Pass())
        assert error.value.code == "not_your_turn"


# -- notation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "MA NI KI",
        "ma-ni-ki",
        "  Ma   NI\tki ",
        "MANIKI",
        "ma\u2013ni\u2014ki",
        "Ma - Ni - Ki",
        "ma,ni,ki",
    ],
)
def test_notation_is_forgiving(text: str) -> None:
    assert GAME.parse(text) == Call(("MA", "NI", "KI"))


def test_pass_and_resign_notation() -> None:
    assert GAME.parse(" PASS ") == Pass()
    assert GAME.parse("Resign") == Resign()
    assert GAME.notate(Pass()) == "pass"
    assert GAME.notate(Resign()) == "resign"
    assert GAME.notate(Call(("MA", "NI", "KI"))) == "MA NI KI"


@pytest.mark.parametrize("text", ["", "   ", "-", "MA XX KI", "MAN", "pass KI", "KI pass", "BEL"])
def test_bad_notation_says_what_is_expected(text: str) -> None:
    with pytest.raises(IllegalMove) as error:
        GAME.parse(text)
    assert error.value.code == "bad_notation"
    assert "MA NI KI" in error.value.reason


def test_at_most_32_orders() -> None:
    assert GAME.parse(" ".join(["KI", "LO"] * 16)) == Call(("KI", "LO") * 16)
    assert GAME.parse("KILO" * 16) == Call(("KI", "LO") * 16)
    with pytest.raises(IllegalMove) as error:
        GAME.parse(" ".join(["KI"] * 33))
    assert error.value.code == "bad_notation"
    assert "32" in error.value.reason
    with pytest.raises(IllegalMove) as error:
        GAME.move_from_json({"type": "sequence", "orders": ["KI"] * 33})
    assert error.value.code == "bad_move"


# -- JSON -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "move", [Call(("MA", "NI", "KI")), Call(("SO",)), Call(("KI",) * 32), Pass(), Resign()]
)
def test_move_json_round_trips(move: Move) -> None:
    data = json.loads(json.dumps(GAME.move_to_json(move)))
    assert GAME.move_from_json(data) == move
    assert GAME.parse(GAME.notate(move)) == move


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "KI",
        {},
        {"type": "dance"},
        {"type": "sequence"},
        {"type": "sequence", "orders": "KI"},
        {"type": "sequence", "orders": ["ki"]},
        {"type": "sequence", "orders": []},
        {"type": "sequence", "orders": [1]},
        {"type": "sequence", "orders": [["KI"]]},
        {"type": "sequence", "orders": ["KI"], "seat": 1},
        {"type": "pass", "orders": ["KI"]},
        {"type": 1},
    ],
)
def test_malformed_move_json_is_refused(data: Any) -> None:
    with pytest.raises(IllegalMove) as error:
        GAME.move_from_json(data)
    assert error.value.code == "bad_move"


def test_state_json_round_trips_with_everything_set() -> None:
    state = replace(
        sealed_state(),
        answers=(Answer(2, ("MA", "NI", "KI")), Answer(0, None)),
        tail=3,
        resigned=frozenset({1}),
        last_round=LastRound(card("BEL/-"), 1, ("KI", "LO"), 2),
    )
    data = json.loads(json.dumps(GAME.state_to_json(state)))
    assert GAME.state_from_json(data) == state


# -- properties: random playouts ---------------------------------------------------


@dataclass
class Playout:
    start: State
    log: list[tuple[int, Move]]
    states: list[State]


def playout(seed: str, players: int, game_options: JSON, chooser: Rng) -> Playout:
    """A random game; now and then a random seat resigns."""
    state = GAME.start(players, game_options, Rng(seed))
    played = Playout(state, [], [])
    for _ in range(20_000):
        if GAME.result(state) is not None:
            return played
        if chooser.below(3000) == 0:
            seat = chooser.choice(sorted(set(range(players)) - state.resigned))
            move: Move = Resign()
        else:
            seat = chooser.choice(sorted(GAME.actors(state)))
            move = GAME.random_move(state, seat, chooser)
        state = GAME.play(state, seat, move)
        played.log.append((seat, move))
        played.states.append(state)
    raise AssertionError("the playout did not end")


game_setups = st.tuples(
    st.integers(0, 10**9).map(str),
    st.integers(2, 6),
    st.sampled_from(["race", "sealed"]),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(game_setups)
def test_random_playouts_end_and_replay_equals_live(setup: tuple[str, int, str, bool]) -> None:
    seed, players, mode, expert = setup
    game_options = GAME.load_options({"mode": mode, "expert": expert}, players)
    played = playout(seed, players, game_options, Rng("chooser " + seed))
    state = GAME.start(players, game_options, Rng(seed))
    assert state == played.start
    for (seat, move), live in zip(played.log, played.states, strict=True):
        notation = GAME.notate(move)
        assert GAME.parse(notation) == move
        assert GAME.move_from_json(json.loads(json.dumps(GAME.move_to_json(move)))) == move
        if expert and isinstance(move, Call):
            assert "NI" not in move.orders
        state = GAME.play(state, seat, GAME.parse(notation))
        assert state == live
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(live)))) == live
    final = played.states[-1]
    result = GAME.result(final)
    assert result is not None
    assert GAME.hidden_tail(final) == 0
    if not final.resigned:
        # Every card won, or a whole turn of the deck with none won (rules version 2).
        assert sum(result.scores) == 24 - len(final.deck)
        assert not final.deck or final.barren == len(final.deck)
        assert result.winners == tuple(
            seat for seat in range(players) if result.scores[seat] == max(result.scores)
        )
    else:
        assert not set(result.winners) & final.resigned


def visible(state: State) -> str:
    """Everything any client is shown of a state, as one text."""
    shown = {
        "views": [GAME.view(state, viewer) for viewer in [None, *range(state.players)]],
        "actors": sorted(GAME.actors(state)),
        "result": None if (result := GAME.result(state)) is None else result.to_json(),
        "hidden_tail": GAME.hidden_tail(state),
    }
    return json.dumps(shown, sort_keys=True)


@settings(max_examples=25, deadline=None)
@given(game_setups)
def test_views_never_leak_the_deck_order_or_sealed_answers(
    setup: tuple[str, int, str, bool],
) -> None:
    seed, players, mode, expert = setup
    game_options = GAME.load_options({"mode": mode, "expert": expert}, players)
    played = playout(seed, players, game_options, Rng("chooser " + seed))
    # Cards turned up so far (the starting card, every target) are public;
    # the ones never turned up follow the target, in a secret order.
    seen = {played.start.position}
    answered: set[int] = set()
    resigned: set[int] = set()
    pending = 0
    for (seat, move), state in zip(played.log, played.states, strict=True):
        if state.deck:
            seen.add(state.deck[0])
        unseen = [c for c in state.deck[1:] if c not in seen]
        assert list(state.deck[1 : 1 + len(unseen)]) == unseen
        text = visible(state)
        for secret in unseen:
            assert f'"{ARRANGEMENTS[secret]}"' not in text
        if len(unseen) > 1:
            shuffled = (state.deck[0], *reversed(unseen), *state.deck[1 + len(unseen) :])
            assert visible(replace(state, deck=shuffled)) == text
        # What was answered in an open sealed round changes nothing shown.
        if state.sealed and state.answers:
            other = tuple(
                Answer(a.seat, ("KI", "LO") if a.orders is None else None) for a in state.answers
            )
            assert visible(replace(state, answers=other)) == text
            assert GAME.view(state, None)["submitted"] == sorted(a.seat for a in state.answers)
        # hidden_tail: every move since the first answer of the open sealed round.
        if isinstance(move, Resign):
            resigned.add(seat)
        else:
            answered.add(seat)
        if GAME.result(state) is not None or not state.sealed:
            pending = 0
        elif set(range(players)) - resigned <= answered:
            answered, pending = set(), 0
        else:
            pending = pending + 1 if answered else 0
        assert GAME.hidden_tail(state) == pending


def test_random_moves_can_hit_every_card_from_every_position() -> None:
    rng = Rng("random walks")
    for position in ARRANGEMENTS:
        state = state_at(position, ("BEL/-",))
        ends = set()
        for _ in range(2000):
            move = GAME.random_move(state, 0, rng)
            if isinstance(move, Call):
                assert 1 <= len(move.orders) <= 6
                ends.add(apply_orders(position, move.orders))
        assert ends == set(ARRANGEMENTS)


def test_random_move_is_only_for_seats_in_the_round() -> None:
    state = GAME.play(state_at("EL/B", ("LBE/-", "B/EL")), 0, Pass())
    with pytest.raises(IllegalMove) as error:
        GAME.random_move(state, 0, Rng("x"))
    assert error.value.code == "not_your_turn"


# -- the rounds decided ----------------------------------------------------


def test_the_rounds_decided_rise_once_per_card_won_or_not() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"))
    assert GAME.rounds_decided(state) == 0
    state = GAME.play(state, 0, call("MA"))  # wrong: the card is still on
    assert GAME.rounds_decided(state) == 0
    state = GAME.play(state, 2, call("MA NI KI"))  # won
    assert GAME.rounds_decided(state) == 1
    state = play_all(state, [(1, "pass"), (0, "pass")])
    assert GAME.rounds_decided(state) == 1
    state = GAME.play(state, 2, Pass())  # nobody won it
    assert GAME.rounds_decided(state) == 2
    assert GAME.view(state, None)["last_round"]["winner"] is None
    assert GAME.state_from_json(GAME.state_to_json(state)) == state


def test_sealed_rounds_count_only_once_decided_and_never_when_resigns_end_the_game() -> None:
    state = play_all(sealed_state(), [(2, "MA NI KI"), (1, "KI")])
    assert GAME.rounds_decided(state) == 0
    state = GAME.play(state, 0, call("KI MA"))
    assert GAME.rounds_decided(state) == 1
    state = play_all(state, [(0, "KI"), (1, "resign"), (2, "resign")])
    assert GAME.result(state) is not None and GAME.rounds_decided(state) == 1


# -- a whole turn of the deck with no card won (rules version 2) -----------------


def all_pass(rules: Any, state: State, rounds: int) -> State:
    """Every seat passes `rounds` cards in a row (fewer if the game ends first)."""
    for _ in range(rounds):
        for seat in sorted(rules.actors(state)):
            state = rules.play(state, seat, Pass())
    return state


def test_a_turn_of_the_deck_with_no_card_won_ends_the_game() -> None:
    state = GAME.start(2, GAME.load_options({}, 2), Rng("barren"))
    state = all_pass(GAME, state, 23)
    assert GAME.result(state) is None
    assert GAME.view(state, None)["unwon_in_a_row"] == 23
    state = all_pass(GAME, state, 1)
    assert state.barren == len(state.deck) == 24
    assert GAME.actors(state) == frozenset()
    result = GAME.result(state)
    assert result is not None and result.scores == (0, 0) and result.winners == (0, 1)
    with pytest.raises(IllegalMove):
        GAME.play(state, 0, Pass())


def test_winning_a_card_starts_the_count_again() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL", "BEL/-"), players=2)
    state = all_pass(GAME, state, 2)
    assert state.barren == 2 and GAME.result(state) is None
    target = ARRANGEMENTS[state.deck[0]]
    state = GAME.play(state, 0, Call(shortest_solution(ARRANGEMENTS[state.position], target)))
    assert state.barren == 0 and state.won == (1, 0) and len(state.deck) == 2
    state = all_pass(GAME, state, 2)
    result = GAME.result(state)
    assert result is not None and result.winners == (0,)


def test_rules_version_1_lets_a_barren_deck_go_round_for_ever() -> None:
    old = games.get("maniki", "1")
    assert old.rules_version == "1" and games.get("maniki").rules_version == "2"
    state = old.start(2, old.load_options({}, 2), Rng("barren"))
    state = all_pass(old, state, 100)
    assert old.result(state) is None and old.actors(state) == frozenset({0, 1})
    # Version 1 keeps no count in its states, so states stored before it are read the same.
    assert "barren" not in old.state_to_json(state)
    assert "unwon_in_a_row" not in old.view(state, None)


def test_a_version_1_record_of_endless_passes_replays_under_version_1_only() -> None:
    seed = "an old endless game"
    entries = tuple(Entry(n, (n - 1) % 2, "pass", "") for n in range(1, 121))
    header = Header("maniki", ("a", "b"), GAME.load_options({}, 2), commitment(seed), "1", seed)
    final = replay(Record(header, entries)).final
    assert games.get("maniki", "1").result(final) is None
    with pytest.raises(ReplayError, match="line 50"):
        replay(Record(replace(header, rules_version="2"), entries))  # over at move 48


def test_the_breakdown_lists_the_cards_each_seat_won() -> None:
    start = state = state_at("EL/B", ("LBE/-", "B/EL", "-/BEL"), players=2)
    played = []
    to_bel = " ".join(shortest_solution("LBE/-", "-/BEL"))
    # LBE/- won by seat 0, B/EL passed by both (no line), -/BEL won by seat
    # 1, and B/EL passed again: a turn of the deck with no card won ends it.
    moves = [(0, "MA NI KI"), (0, "pass"), (1, "pass"), (1, to_bel), (1, "pass"), (0, "pass")]
    for seat, text in moves:
        state = GAME.play(state, seat, GAME.parse(text))
        played.append(Played(seat, GAME.parse(text), state))
    assert GAME.result(state) is not None
    assert GAME.breakdown(start, played) == (
        (ScoreLine("card LBE/-: MA NI KI (move 1)", 1),),
        (ScoreLine(f"card -/BEL: {to_bel} (move 4)", 1),),
    )


# -- building a sequence on the board ---------------------------------------------


def test_the_first_choices_are_the_orders_the_animals_can_carry_out_and_pass() -> None:
    # All three on red: blue is empty, so neither KI, NI nor SO can be carried out.
    built = GAME.build(state_at("BEL/-", ("EL/B", "B/EL")), 1, ())
    assert [choice.step for choice in built.choices] == ["LO", "MA", "pass"]
    assert built.choices[0].label == "LO: red's top animal jumps onto blue"
    assert built.choices[-1].label == "Pass: give up on this card"
    assert built.move is None
    assert built.prompt == "Add an order, or pass"
    assert built.view == GAME.view(state_at("BEL/-", ("EL/B", "B/EL")), 1)


def test_each_order_moves_the_animals_of_the_preview_and_the_sequence_may_be_sent() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL"))
    built = GAME.build(state, 0, ("MA",))
    assert built.view["position"] == "LE/B"
    assert built.move == Call(("MA",))
    assert "pass" not in [choice.step for choice in built.choices]
    assert built.prompt == "Add an order, or play the sequence"
    built = GAME.build(state, 0, ("MA", "NI", "KI"))
    assert built.view["position"] == "LBE/-" == built.view["target"]
    # The referee confirms no sequence: the prompt is the same, matching or not.
    assert built.prompt == "Add an order, or play the sequence"
    # The view is the seat's own: only the position is moved.
    assert {**built.view, "position": "EL/B"} == GAME.view(state, 0)
    assert GAME.play(state, 0, built.move).won == (1, 0, 0)


def test_a_pass_ends_the_building_and_a_step_not_offered_is_refused() -> None:
    state = state_at("BEL/-", ("EL/B", "B/EL"))
    built = GAME.build(state, 2, ("pass",))
    assert built.move == Pass() and built.choices == ()
    assert built.prompt == "Play the pass, or undo"
    for steps in (("KI",), ("LO", "pass"), ("pass", "LO"), ("LO", "XX")):
        with pytest.raises(IllegalMove) as refused:
            GAME.build(state, 2, steps)
        assert refused.value.code == "bad_step"


def test_a_sequence_is_built_up_to_32_orders() -> None:
    state = state_at("EL/B", ("LBE/-", "B/EL"))
    built = GAME.build(state, 0, ("KI", "LO") * 16)
    assert built.choices == ()
    assert built.prompt == "A sequence holds at most 32 orders: play it, or undo"
    with pytest.raises(IllegalMove):
        GAME.build(state, 0, ("KI", "LO") * 16 + ("KI",))


def test_a_seat_that_has_answered_cannot_build() -> None:
    state = GAME.play(state_at("EL/B", ("LBE/-", "B/EL")), 1, Pass())
    with pytest.raises(IllegalMove) as refused:
        GAME.build(state, 1, ())
    assert refused.value.code == "not_your_turn"


def test_with_the_crazy_circus_names_the_buttons_and_the_written_move_use_them() -> None:
    state = GAME.start(3, options(names="crazy_circus", expert=True), Rng("crazy"))
    assert GAME.view(state, 0)["names"] == "crazy_circus"
    built = GAME.build(replace(state, position=card("E/LB")), 0, ())
    labels = {choice.step: choice.label for choice in built.choices}
    # No swap in expert mode; the blue climb is called NI.
    assert labels["SO"] == "NI: blue's bottom animal climbs to the top"
    assert "NI" not in labels
    move = Call(("SO", "KI"))
    written = GAME.written(move, options(names="crazy_circus"))
    assert written == "NI KI"
    assert GAME.parse(written, options(names="crazy_circus")) == move
    assert GAME.written(move, options()) == GAME.notate(move) == "SO KI"
    assert GAME.written(Pass(), options(names="crazy_circus")) == "pass"
    # The names live in the state (only where they are not the default).
    assert GAME.state_to_json(state)["names"] == "crazy_circus"
    assert GAME.state_from_json(GAME.state_to_json(state)) == state
    assert "names" not in GAME.state_to_json(GAME.start(2, options(), Rng("x")))


def test_a_sequence_is_built_in_the_page_language() -> None:
    state = state_at("BEL/-", ("EL/B", "B/EL"))
    with speaking("fr"):
        built = GAME.build(state, 1, ())
        missed = play_all(
            state_at("EL/B", ("LBE/-", "B/EL", "-/BEL")), [(1, "pass"), (0, "KI"), (2, "pass")]
        )
        summary = GAME.round_summary(missed)
    assert built.choices[-1].label == "Passer : renoncer à cette carte"
    assert built.prompt == "Ajoutez un ordre, ou passez"
    assert [label for label, _value in summary.facts] == ["carte", "série", "plus courte"]
