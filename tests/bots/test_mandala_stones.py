"""Mandala Stones' bots: deals consistent with a seat's view, and moves that
depend on nothing the seat cannot see."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from referee import bots
from referee.bots.mandala_stones import KNOWLEDGE
from referee.engine import JSON
from referee.games.mandala_stones import GAME, Card, State, objective_card
from referee.replay import new_state
from referee.rng import QuickRng, Rng

# A small mandala fills up before the round ends: stones are set aside.
SMALL_BOARD = {"spaces": 6, "bonuses": {"2": 1}}
FEW_CARDS: list[JSON] = [
    {"card": n, "points": n, "condition": {"kind": "tower_count", "count": n % 6}}
    for n in range(1, 10)
]


def small_board(players: int) -> JSON:
    return {**SMALL_BOARD, "hands": {str(players): 6}}


def option_sets(players: int) -> list[JSON]:
    return [
        {},
        {"objectives": "off"},
        {"mandala_board": small_board(players), "objectives": FEW_CARDS[: 2 * players + 1]},
    ]


def positions(players: int, raw: JSON, games: int, seed: str) -> Any:
    """Every position of `games` random playouts, with the options they were played with."""
    options = GAME.load_options(raw, players)
    rng = QuickRng(Rng(seed))
    for number in range(games):
        state = new_state(GAME, f"{seed}-{number}", players, options)
        while GAME.actors(state):
            yield state, options
            seat = next(iter(GAME.actors(state)))
            state = GAME.play(state, seat, GAME.random_move(state, seat, rng))
        yield state, options


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_sample_shows_the_seat_what_it_sees_and_plays_on(players: int) -> None:
    rng = Rng(f"sample-{players}")
    checked = set_aside = 0
    for index, raw in enumerate(option_sets(players)):
        for number, (state, options) in enumerate(
            positions(players, raw, 2, f"p{players}-{index}")
        ):
            if number % 2:
                continue
            for seat in range(players):
                seen = bots.seen_by(GAME, state, seat, players=players, options=options)
                sample = KNOWLEDGE.sample(seen, rng)
                assert GAME.view(sample, seat) == seen.view
                assert tuple(GAME.legal_moves(sample, seat)) == seen.legal
                assert GAME.actors(sample) == GAME.actors(state)
                for actor in GAME.actors(sample):
                    GAME.play(sample, actor, GAME.random_move(sample, actor, rng))
                checked += 1
            set_aside += state.set_aside > 0
    assert checked > 150
    assert set_aside  # the small board's deals were tried with stones set aside


def test_samples_deal_the_hidden_part_anew() -> None:
    options = GAME.load_options({}, 3)
    state = new_state(GAME, "anew", 3, options)
    seen = bots.seen_by(GAME, state, 0, players=3, options=options)
    rng = Rng("anew")
    samples = [KNOWLEDGE.sample(seen, rng) for _ in range(20)]
    assert len({sample.objectives for sample in samples}) > 1
    assert len({sample.stacks for sample in samples}) > 1
    assert all(sample.objectives[0] == state.objectives[0] for sample in samples)


def unseen_swapped(state: State, seat: int, options: JSON) -> State:
    """`state` with what `seat` cannot see dealt otherwise: the others' cards
    and the patterns under the stacks' tops, each colour's shuffled among them."""
    rng = Rng("swap")
    held = {card.number for cards in state.objectives for card in cards}
    spare = [objective_card(data) for data in options["objectives"] if data["card"] not in held]
    others: list[Card] = [
        card for other, cards in enumerate(state.objectives) if other != seat for card in cards
    ]
    pool = rng.shuffled(spare + others)
    objectives = []
    for other, cards in enumerate(state.objectives):
        if other == seat:
            objectives.append(cards)
        else:
            objectives.append(tuple(pool[: len(cards)]))
            pool = pool[len(cards) :]
    under = [stone for stack in state.stacks for stone in stack[:-1]]
    by_colour = {
        colour: rng.shuffled([s for s in under if s >> 1 == colour]) for colour in range(4)
    }
    stacks = []
    for stack in state.stacks:
        rebuilt = [by_colour[stone >> 1].pop() for stone in stack[:-1]]
        stacks.append((*rebuilt, *stack[-1:]))
    return replace(state, objectives=tuple(objectives), stacks=tuple(stacks))


def some_positions() -> list[tuple[State, JSON]]:
    found = list(positions(2, {}, 1, "hidden"))
    return [(state, options) for state, options in found[:-1:6]]


def decided(level: str, state: State, options: JSON, seed: str) -> Any:
    return bots.decide(
        GAME,
        level,
        state,
        state.current,
        players=len(state.scores),
        options=options,
        rng=Rng(seed),
        seconds=0.02,
    )


@pytest.mark.parametrize("level", bots.levels("mandala_stones"))
def test_a_move_depends_only_on_what_the_seat_sees(level: str) -> None:
    for number, (state, options) in enumerate(some_positions()):
        seat = state.current
        other = unseen_swapped(state, seat, options)
        assert other != state
        assert GAME.view(other, seat) == GAME.view(state, seat)

        move = decided(level, state, options, f"{level}-{number}")
        assert decided(level, other, options, f"{level}-{number}") == move
        # And the same again: nothing a search leaves behind changes it.
        assert decided(level, state, options, f"{level}-{number}") == move
        assert move in GAME.legal_moves(state, seat)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_level_plays_a_legal_move(players: int) -> None:
    for number, (state, options) in enumerate(positions(players, {}, 1, f"legal-{players}")):
        if number % 7 or not GAME.actors(state):
            continue
        seat = state.current
        for level in bots.levels("mandala_stones"):
            move = bots.decide(
                GAME,
                level,
                state,
                seat,
                players=players,
                options=options,
                rng=Rng(f"{level}-{number}"),
                seconds=0.01,
            )
            assert move in GAME.legal_moves(state, seat)


def test_a_game_of_bots_ends() -> None:
    options = GAME.load_options({}, 2)
    state = new_state(GAME, "bots", 2, options)
    levels = ("strong", "greedy")
    moves = 0
    while GAME.actors(state):
        seat = state.current
        move = bots.decide(
            GAME,
            levels[seat],
            state,
            seat,
            players=2,
            options=options,
            rng=Rng(f"bots-{moves}"),
            seconds=0.005,
        )
        state = GAME.play(state, seat, move)
        moves += 1
        assert moves < 200
    assert GAME.result(state) is not None
