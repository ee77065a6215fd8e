"""MaNiKi's bots: they wait for the people in the round, then see a card
through only as far as their level allows (docs/rules/maniki.md)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from referee import bots
from referee.bots.maniki import LONGEST_SEEN
from referee.games import maniki
from referee.playout import steps
from referee.rng import Rng

GAME = maniki.GAME


def started(players: int, **options: object) -> maniki.State:
    return GAME.start(players, GAME.load_options(options, players), Rng("bots-maniki"))


def decide(state: maniki.State, level: str, seat: int = 1, bot_seats: tuple[int, ...] = (1,)):
    return bots.decide(
        GAME,
        level,
        state,
        seat,
        players=state.players,
        options={},
        rng=Rng(f"{level}:{seat}"),
        seconds=0.1,
        bots=bot_seats,
    )


def waits(state: maniki.State, seat: int, bot_seats: tuple[int, ...]) -> bool:
    move = bots.answer(
        GAME,
        "strong",
        state,
        seat,
        players=state.players,
        options={},
        rng=Rng("w"),
        seconds=0.1,
        bots=bot_seats,
    )
    return move is None


def at(state: maniki.State, position: str, target: str) -> maniki.State:
    """The same game with the animals on `position` and `target` the card."""
    target_index = maniki.ARRANGEMENTS.index(target)
    deck = (target_index, *(card for card in state.deck if card != target_index))
    return dataclasses.replace(state, position=maniki.ARRANGEMENTS.index(position), deck=deck)


def test_levels_are_listed_weakest_first() -> None:
    assert bots.levels("maniki") == ("random", "greedy", "strong", "expert")


@pytest.mark.parametrize("expert", [False, True])
def test_each_level_answers_exactly_the_cards_its_length_allows(expert: bool) -> None:
    state = started(2, expert=expert)
    answered = dict.fromkeys(LONGEST_SEEN, 0)
    for position, target in itertools.product(maniki.ARRANGEMENTS, repeat=2):
        if position == target:
            continue
        shortest = maniki.shortest_solution(position, target, expert=expert)
        here = at(state, position, target)
        for level, longest in LONGEST_SEEN.items():
            move = decide(here, level)
            if len(shortest) <= longest:
                assert move == maniki.Call(shortest)
                assert maniki.apply_orders(position, move.orders) == target
                answered[level] += 1
            else:
                assert move == maniki.Pass()
    # Each level sees strictly further than the one below; the strongest sees every card.
    assert answered["greedy"] < answered["strong"] < answered["expert"] == 24 * 23


def test_a_bot_waits_until_every_person_in_the_round_has_answered() -> None:
    state = started(3)
    # Seats 0 and 2 are people: the bot at seat 1 waits for both.
    assert waits(state, 1, bot_seats=(1,))
    state = GAME.play(state, 0, maniki.Pass())
    assert waits(state, 1, bot_seats=(1,))
    state = GAME.play(state, 2, maniki.Pass())
    assert not waits(state, 1, bot_seats=(1,))
    # Among bots alone nobody waits, or a game of bots would never move.
    assert not waits(started(3), 1, bot_seats=(0, 1, 2))


def test_a_bot_waits_in_sealed_mode_for_the_people_yet_to_answer() -> None:
    state = started(2, mode="sealed")
    assert waits(state, 1, bot_seats=(1,))
    state = GAME.play(state, 0, maniki.Call(("KI",)))
    assert not waits(state, 1, bot_seats=(1,))


def test_random_calls_are_legal_and_reproducible() -> None:
    for step in itertools.islice(steps(GAME, 3, GAME.load_options({}, 3), "walk", Rng("w")), 200):
        state = step.state
        for seat in sorted(GAME.actors(state)):
            first = decide(state, "random", seat, bot_seats=(seat,))
            assert first == decide(state, "random", seat, bot_seats=(seat,))
            GAME.play(state, seat, first)  # never refused


def test_a_game_of_bots_ends() -> None:
    state = started(3)
    levels = ("random", "greedy", "strong")
    for _ in range(3000):
        actors = sorted(GAME.actors(state))
        if not actors:
            break
        ready = [seat for seat in actors if not waits(state, seat, bot_seats=(0, 1, 2))]
        seat = ready[0]
        state = GAME.play(state, seat, decide(state, levels[seat], seat, bot_seats=(0, 1, 2)))
    result = GAME.result(state)
    assert result is not None
    # Solvers win cards: the game ended by the deck running out of cards, not of patience.
    assert sum(result.scores) == len(maniki.ARRANGEMENTS)
