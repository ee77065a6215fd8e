"""`GET /v1/rules`: the games this referee knows, with their options and moves."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from api.schemas import RulesOut
from referee import games
from referee.engine import Resign
from referee.games import AnyGame
from referee.replay import new_state

blp = Blueprint("rules", __name__, url_prefix="/v1", description="The games and their rules")

# A public seed, only to start an example game whose first moves show the move JSON.
_EXAMPLE_SEED = "rules-example"

_TYPES = {
    fields.Boolean: "boolean",
    fields.Integer: "integer",
    fields.Float: "number",
    fields.String: "string",
    fields.List: "array",
    fields.Dict: "object",
}


def _option(field: fields.Field[Any]) -> dict[str, Any]:
    kind = next((name for cls, name in _TYPES.items() if isinstance(field, cls)), "string")
    described: dict[str, Any] = {"type": kind}
    default = field.load_default
    described["default"] = default() if callable(default) else default
    for check in field.validators:
        if isinstance(check, validate.OneOf):
            described["enum"] = list(check.choices)
        if isinstance(check, validate.Range):
            described["minimum"], described["maximum"] = check.min, check.max
    return described


def _options(schema: type[Schema]) -> dict[str, Any]:
    return {name: _option(field) for name, field in schema().fields.items()}


def _move_examples(game: AnyGame) -> list[dict[str, Any]]:
    players = game.players[0]
    state = new_state(game, _EXAMPLE_SEED, players, game.load_options({}, players))
    seat = min(game.actors(state))
    moves = [*game.legal_moves(state, seat)[:3], Resign()]
    return [{"move": game.move_to_json(m), "notation": game.notate(m)} for m in moves]


def describe(game: AnyGame) -> dict[str, Any]:
    options = _options(game.options_schema)
    return {
        "name": game.name,
        "title": game.title,
        "rules_version": game.rules_version,
        "players": list(game.players),
        "options": options,
        "defaults": {name: spec["default"] for name, spec in options.items()},
        "move_schema": {
            "type": "object",
            "required": ["type"],
            "description": "a move of this game as JSON; every game accepts {'type': 'resign'}",
            "examples": _move_examples(game),
        },
        "notation_help": game.notation_help,
    }


@blp.route("/rules")
@blp.response(200, RulesOut)
def rules() -> dict[str, Any]:
    """The games: names, player counts, options with defaults, moves, notation."""
    return {"games": [describe(game) for game in games.all_games()]}
