"""`Game.play_random` is `random_move` then `play`, whatever a game does to be cheaper.

Playouts (`referee.playout.steps`, the bots' searches) call it, so a game
that overrides it must draw the same numbers, make the same move, reach the
same state and refuse the same seats as the two calls it stands for; and a
game's own `random_playout` must play what the default loop of `play_random`
plays.
"""

from __future__ import annotations

import pytest

from referee import games
from referee.engine import BadOptions, Game, IllegalMove
from referee.games import AnyGame
from referee.playout import PlayoutTooLong, steps
from referee.rng import Rng

CASES = [(game, players) for game in games.all_games() for players in game.players]
IDS = [f"{game.name}-{players}p" for game, players in CASES]


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
def test_play_random_is_random_move_then_play(game: AnyGame, players: int) -> None:
    options = game.load_options({}, players)
    for played in steps(game, players, options, "play-random", Rng("chooser")):
        state = played.state
        for seat in sorted(game.actors(state)):
            drawn, again = Rng(f"{played.seat}:{seat}"), Rng(f"{played.seat}:{seat}")
            move, after = game.play_random(state, seat, drawn)
            expected = game.random_move(state, seat, again)
            assert move == expected
            assert game.state_to_json(after) == game.state_to_json(game.play(state, seat, move))
            assert drawn.word() == again.word()


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
def test_play_random_refuses_like_random_move(game: AnyGame, players: int) -> None:
    options = game.load_options({}, players)
    played = list(steps(game, players, options, "refusals", Rng("chooser")))
    for state in (played[0].state, played[-1].state):
        for seat in set(range(players)) - game.actors(state):
            with pytest.raises(IllegalMove) as refused:
                game.play_random(state, seat, Rng("x"))
            with pytest.raises(IllegalMove) as expected:
                game.random_move(state, seat, Rng("x"))
            assert refused.value.code == expected.value.code


def _taken(game: AnyGame, players: int, options: dict[str, str]) -> bool:
    try:
        game.load_options(options, players)
    except BadOptions:
        return False
    return True


# Each game that plays its own `random_playout`, at each player count with its default
# options, and with Subdivision's parks by player where that player count takes them.
OPTION_CASES = [
    (game, players, options)
    for game, players in CASES
    if type(game).random_playout is not Game.random_playout
    for options in ({}, {"parks": "players"})
    if _taken(game, players, options)
]


@pytest.mark.parametrize(
    ("game", "players", "options"),
    OPTION_CASES,
    ids=[
        f"{game.name}-{players}p-{'-'.join(o.values()) or 'default'}"
        for game, players, o in OPTION_CASES
    ],
)
def test_random_playout_is_the_default_loop(
    game: AnyGame, players: int, options: dict[str, str]
) -> None:
    """A game's own `random_playout` plays what `Game.random_playout` would, draw for draw."""
    loaded = game.load_options(options, players)
    start = game.start(players, loaded, Rng("start"))
    drawn, again = Rng("chooser"), Rng("chooser")
    played = list(game.random_playout(start, drawn))
    expected = list(Game.random_playout(game, start, again))
    assert [(p.seat, p.move) for p in played] == [(p.seat, p.move) for p in expected]
    assert [game.state_to_json(p.state) for p in played] == [
        game.state_to_json(p.state) for p in expected
    ]
    assert game.result(played[-1].state) == game.result(expected[-1].state)
    assert drawn.word() == again.word()


def test_a_playout_longer_than_its_limit_is_refused() -> None:
    game = games.get("subdivision")
    options = game.load_options({}, 2)
    moves = len(list(steps(game, 2, options, "limit", Rng("chooser"))))
    assert len(list(steps(game, 2, options, "limit", Rng("chooser"), limit=moves))) == moves
    with pytest.raises(PlayoutTooLong):
        list(steps(game, 2, options, "limit", Rng("chooser"), limit=moves - 1))
