"""The registry of games, by the names used in the API, records and the CLI.

A new game joins by importing its module here and adding its `GAME` to
`_REGISTERED`; nothing else in the project names games (`referee.render`
finds the game's drawing module by the same name).

A game's earlier rules versions are kept in `_EARLIER` only where a change
altered what a logged game means (its result): games begun and records
written under them must end and verify as they did.
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

_EARLIER: tuple[AnyGame, ...] = (
    ice_palace.GAME_V2,
    ice_palace.GAME_V1,
    mandala.GAME_V1,
    maniki.GAME_V1,
)

_GAMES: dict[str, AnyGame] = {game.name: game for game in _REGISTERED}
_VERSIONS: dict[tuple[str, str], AnyGame] = {
    (game.name, game.rules_version): game for game in (*_REGISTERED, *_EARLIER)
}


def get(name: str, rules_version: str | None = None) -> AnyGame:
    """The game called `name`, under its current rules or under `rules_version`.

    `KeyError` naming the known games, or the versions of this one, otherwise.
    """
    try:
        game = _GAMES[name]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None
    if rules_version is None:
        return game
    try:
        return _VERSIONS[name, rules_version]
    except KeyError:
        known = ", ".join(sorted(version for named, version in _VERSIONS if named == name))
        raise KeyError(
            f"{game.title} has no rules version {rules_version!r}; known versions: {known}"
        ) from None


def names() -> list[str]:
    return sorted(_GAMES)


def all_games() -> list[AnyGame]:
    return [_GAMES[name] for name in names()]
