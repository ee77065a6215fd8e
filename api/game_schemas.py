"""Each game's moves and options as JSON Schema, for `/openapi.json` and `GET /v1/rules`.

A game's move is one object schema per `type` (from `Game.move_fields`),
joined by a `oneOf` with a discriminator on `type`; `resign` is shared by
every game. The OpenAPI document holds them as components (`SubdivisionMove`,
`SubdivisionPlaceMove`, ...); `GET /v1/rules` gives the same schema inline.
"""

from __future__ import annotations

from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import fields

from referee import games
from referee.engine import JSON
from referee.games import AnyGame

RESIGN = "ResignMove"
_REF = "#/components/schemas/"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def move_name(game: AnyGame) -> str:
    """The component name of a game's move, e.g. `MandalaStonesMove`."""
    return f"{_camel(game.name)}Move"


def _kind_name(game: AnyGame, kind: str) -> str:
    return f"{_camel(game.name)}{_camel(kind)}Move"


def _object(kind: str, described: JSON) -> JSON:
    """One kind of move: its `type`, then its own fields, and nothing else."""
    return {
        "type": "object",
        "properties": {"type": {"type": "string", "enum": [kind]}, **described["properties"]},
        "required": ["type", *described["required"]],
        "additionalProperties": False,
    }


_RESIGN_SCHEMA = _object("resign", {"properties": {}, "required": []})


def _kinds(game: AnyGame) -> dict[str, tuple[str, JSON]]:
    """type -> (component name, schema) for each move of `game`, resign last."""
    kinds = {
        kind: (_kind_name(game, kind), _object(kind, described))
        for kind, described in game.move_fields.items()
    }
    kinds["resign"] = (RESIGN, _RESIGN_SCHEMA)
    return kinds


def move_components() -> dict[str, JSON]:
    """Every game's move schemas, by component name, for the OpenAPI document."""
    components: dict[str, JSON] = {}
    for game in games.all_games():
        kinds = _kinds(game)
        for name, schema in kinds.values():
            components[name] = schema
        components[move_name(game)] = {
            "description": f"a move of {game.title} as JSON",
            "oneOf": [{"$ref": _REF + name} for name, _ in kinds.values()],
            "discriminator": {
                "propertyName": "type",
                "mapping": {kind: _REF + name for kind, (name, _) in kinds.items()},
            },
        }
    return components


def any_move() -> JSON:
    """A move of any game (a `resign` fits all of them, hence `anyOf`)."""
    return {"anyOf": [{"$ref": _REF + move_name(game)} for game in games.all_games()]}


def inline_move_schema(game: AnyGame) -> JSON:
    """The game's move schema with nothing left to look up, for `GET /v1/rules`."""
    return {
        "description": f"a move of {game.title} as JSON",
        "oneOf": [schema for _, schema in _kinds(game).values()],
        "discriminator": {"propertyName": "type"},
    }


# Options: marshmallow fields described by apispec, with nested schemas inlined
# (`schema_name_resolver` gives no name), so a rules entry holds everything.
_CONVERTER = OpenAPIConverter(
    openapi_version="3.0.3",
    schema_name_resolver=lambda schema: None,
    spec=APISpec(title="rules", version="1", openapi_version="3.0.3"),
)


def option_schema(field: fields.Field[Any]) -> JSON:
    """One option as JSON Schema, with its default."""
    described: JSON = dict(_CONVERTER.field2property(field))
    if "oneOf" in described:
        # A field of its own kind (such as "off" or a list) says its type in
        # `oneOf`; apispec's guess of the type beside it would contradict it.
        described.pop("type", None)
    default = field.load_default
    described["default"] = default() if callable(default) else default
    return described
