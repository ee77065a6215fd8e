"""Bots: players made of code that fill a seat, at levels from `random` up.

A bot is asked through `decide`, one of the two functions here that hold a
game state: they cut the state down to what the seat sees (`Seen`) and hand
only that to the bot, so no level can peek at hands, bags or sealed
answers. Bots are pure like the rules: the same view, rng and budget give
the same move.

Each game's module here says what its bots must know of it (a
`Knowledge`, or its own levels) and which levels it offers, weakest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from referee.bots import ice_palace, mandala, mandala_stones, maniki, subdivision
from referee.bots.knowledge import Seen
from referee.bots.levels import Bot, standard_levels
from referee.engine import JSON, Game
from referee.rng import Rng

_LEVELS: dict[str, Mapping[str, Bot]] = {
    **{
        known.game.name: standard_levels(known)
        for known in (
            ice_palace.KNOWLEDGE,
            mandala.KNOWLEDGE,
            mandala_stones.KNOWLEDGE,
            subdivision.KNOWLEDGE,
        )
    },
    "maniki": maniki.LEVELS,
}
# The bots of earlier rules versions whose play differs (their `Knowledge` plays by
# those rules): games and records of that version keep their bots' moves.
_EARLIER: dict[tuple[str, str], Mapping[str, Bot]] = {
    ("ice_palace", "2"): standard_levels(ice_palace.KNOWLEDGE_V2),
    ("ice_palace", "1"): standard_levels(ice_palace.KNOWLEDGE_V1),
}


def _levels_of(game: Game[Any, Any]) -> Mapping[str, Bot]:
    """The levels that play `game` under its rules version."""
    return _EARLIER.get((game.name, game.rules_version)) or _LEVELS[game.name]


def levels(game_name: str) -> tuple[str, ...]:
    """The bot levels a game offers, weakest first (none for an unknown game)."""
    return tuple(_LEVELS.get(game_name, {}))


def seen_by(
    game: Game[Any, Any],
    state: Any,
    seat: int,
    *,
    players: int,
    options: JSON,
    bots: Iterable[int] = (),
) -> Seen:
    """What `seat` sees of `state`, which is all a bot is given."""
    legal = tuple(game.legal_moves(state, seat))
    return Seen(seat, game.view(state, seat), legal, players, options, frozenset(bots))


def answer(
    game: Game[Any, Any],
    level: str,
    state: Any,
    seat: int,
    *,
    players: int,
    options: JSON,
    rng: Rng,
    seconds: float,
    bots: Iterable[int],
) -> Any | None:
    """The move the bot of `level` plays for `seat`, which may act in `state`,
    or None while it holds its move until others have moved (MaNiKi's, for
    the people in its round; `bots`: the seats bots play)."""
    seen = seen_by(game, state, seat, players=players, options=options, bots=bots)
    bot = _levels_of(game)[level]
    return None if bot.waits(seen) else bot.choose(seen, rng, seconds)


def holds(
    game: Game[Any, Any],
    level: str,
    state: Any,
    seat: int,
    *,
    players: int,
    options: JSON,
    bots: Iterable[int],
) -> bool:
    """Whether the bot of `level` holds its move for now, though `seat` may act (MaNiKi's,
    until the people in its round have answered; `bots`: the seats bots play)."""
    seen = seen_by(game, state, seat, players=players, options=options, bots=bots)
    return _levels_of(game)[level].waits(seen)


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
    bots: Iterable[int] = (),
) -> Any:
    """The move the bot of `level` plays for `seat` in `state`, now: what
    `answer` gives once the bot holds its move no longer.

    `KeyError` for a level the game does not offer.
    """
    seen = seen_by(game, state, seat, players=players, options=options, bots=bots)
    return _levels_of(game)[level].choose(seen, rng, seconds)
