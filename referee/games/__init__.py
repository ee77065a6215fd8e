"""The registry of games, by the names used in the API, records and the CLI.

A new game joins by importing its module here and adding its `GAME` to
`_REGISTERED`; nothing else in the project names games (`referee.render`
finds the game's drawing module by the same name).
"""

from __future__ import annotations

from typing import Any

from referee.engine import Game
from referee.games import ice_palace, mandala, mandala_stones, maniki, subdivision

AnyGame = Game[Any, Any]

_REGISTERED: tuple[AnyGame, ...] = (
    ice_palace.GAME,
    mandala.GAME,
    mandala_stones.GAME,
    maniki.GAME,
    subdivision.GAME,
)

_GAMES: dict[str, AnyGame] = {game.name: game for game in _REGISTERED}


def get(name: str) -> AnyGame:
    """The game called `name`; `KeyError` naming the known games otherwise."""
    try:
        return _GAMES[name]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None


def names() -> list[str]:
    return sorted(_GAMES)


def all_games() -> list[AnyGame]:
    return [_GAMES[name] for name in names()]
