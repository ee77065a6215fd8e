"""`GET /v1/rules`: the games this referee knows, with their options and moves."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.errors import BAD_QUERY, declared
from api.schemas.rules import RulesOut, inline_move_schema, option_schemas
from referee import bots, games
from referee.engine import Resign
from referee.games import AnyGame
from referee.replay import new_state

blp = Blueprint("rules", __name__, url_prefix="/v1/rules", description="The games and their rules")

# A public seed, only to start an example game whose first moves show the move JSON.
_EXAMPLE_SEED = "rules-example"


def _move_examples(game: AnyGame) -> list[dict[str, Any]]:
    players = game.players[0]
    state = new_state(game, _EXAMPLE_SEED, players, game.load_options({}, players))
    seat = min(game.actors(state))
    moves = [*game.legal_moves(state, seat)[:3], Resign()]
    return [{"move": game.move_to_json(m), "notation": game.notate(m)} for m in moves]


def describe(game: AnyGame) -> dict[str, Any]:
    options = option_schemas(game)
    return {
        "name": game.name,
        "title": game.title,
        "rules_version": game.rules_version,
        "players": list(game.players),
        "options": options,
        "defaults": {name: spec["default"] for name, spec in options.items()},
        "move_schema": {**inline_move_schema(game), "examples": _move_examples(game)},
        "notation_help": game.notation_help,
        "bots": list(bots.levels(game.name)),
    }


@blp.route("")
@blp.response(200, RulesOut)
@blp.doc(operationId="getRules", **declared({422: BAD_QUERY}))
def rules() -> dict[str, Any]:
    """The games: names, player counts, options with defaults, moves, notation."""
    return {"games": [describe(game) for game in games.all_games()]}
