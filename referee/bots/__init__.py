"""Bots: players made of code that fill a seat, at levels from `random` up.

A bot is asked through `decide`, the one function that holds a game state:
it cuts the state down to what the seat sees (`Seen`) and hands only that
to the bot, so no level can peek at hands, bags or sealed answers. Bots are
pure like the rules: the same view, rng and budget give the same move.

Each game's module here says what its bots must know of it (a
`Knowledge`) and which levels it offers, weakest first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from referee.bots import mandala, mandala_stones
from referee.bots.knowledge import Seen
from referee.bots.levels import Bot, standard_levels
from referee.engine import JSON, Game
from referee.rng import Rng

_LEVELS: dict[str, Mapping[str, Bot]] = {
    known.game.name: standard_levels(known)
    for known in (mandala.KNOWLEDGE, mandala_stones.KNOWLEDGE)
}


def levels(game_name: str) -> tuple[str, ...]:
    """The bot levels a game offers, weakest first (none for an unknown game)."""
    return tuple(_LEVELS.get(game_name, {}))


def seen_by(game: Game[Any, Any], state: Any, seat: int, players: int, options: JSON) -> Seen:
    """What `seat` sees of `state`, which is all a bot is given."""
    return Seen(
        seat, game.view(state, seat), tuple(game.legal_moves(state, seat)), players, options
    )


def decide(
    game: Game[Any, Any],
    level: str,
    state: Any,
    seat: int,
    *,
    players: int,
    options: JSON,
    rng: Rng,
    seconds: float,
) -> Any:
    """The move the bot of `level` plays for `seat` in `state`.

    `KeyError` for a level the game does not offer.
    """
    bot = _LEVELS[game.name][level]
    return bot.choose(seen_by(game, state, seat, players, options), rng, seconds)
