"""A bot never sees more than its seat: two states that look the same to the
seat give the same move, at every level of every game, for the same seed.

The second state is another deal of what the seat cannot see (the game's
own `Knowledge.sample`, which each game's tests check against the view);
in MaNiKi, the deck's order after the card. Then `decide` on either state
must agree, so nothing hidden can have steered the bot.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
from typing import Any

import pytest

from referee import bots, games
from referee.playout import steps
from referee.rng import Rng

PLAYERS = {"ice_palace": 3, "mandala": 2, "maniki": 3, "mandala_stones": 2, "subdivision": 2}
CASES = [(name, level) for name in games.names() for level in bots.levels(name)]


def another_deal(name: str, state: Any, seat: int, options: dict[str, Any]) -> Any:
    """A state that looks the same as `state` to `seat`, differing where it can."""
    game = games.get(name)
    if name == "maniki":
        deck = state.deck
        return dataclasses.replace(state, deck=(deck[0], *reversed(deck[1:])))
    knowledge = importlib.import_module(f"referee.bots.{name}").KNOWLEDGE
    seen = bots.seen_by(game, state, seat, players=PLAYERS[name], options=options)
    return knowledge.sample(seen, Rng("another deal"))


def test_every_game_has_the_three_levels() -> None:
    for name in games.names():
        assert {"random", "greedy", "strong"} <= set(bots.levels(name)), name


@pytest.mark.parametrize(("name", "level"), CASES)
def test_states_that_look_the_same_get_the_same_move(name: str, level: str) -> None:
    game = games.get(name)
    players = PLAYERS[name]
    options = game.load_options({}, players)
    played = steps(game, players, options, f"seat-view-{name}", Rng("chooser"))
    compared = 0
    for step in itertools.islice(played, 0, 60, 7):
        for seat in sorted(game.actors(step.state)):
            other = another_deal(name, step.state, seat, options)
            assert game.view(other, seat) == game.view(step.state, seat)
            moves = [
                bots.decide(
                    game,
                    level,
                    state,
                    seat,
                    players=players,
                    options=options,
                    rng=Rng(f"{name}:{seat}"),
                    seconds=0.02,
                )
                for state in (step.state, other)
            ]
            assert moves[0] == moves[1]
            compared += 1
    assert compared
