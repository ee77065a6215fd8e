"""Each game's moves, options and new-game body as JSON Schema, for `/openapi.json` and
`GET /v1/rules`; and each game's rules as `GET /v1/rules` and the lobby describe them.

A game's move is one object schema per `type` (from `Game.move_fields`),
joined by a `oneOf` with a discriminator on `type`; `resign` is shared by
every game. The OpenAPI document holds them as components (`SubdivisionMove`,
`SubdivisionPlaceMove`, ...); `GET /v1/rules` gives the same schema inline.
The body of `POST /v1/games` is likewise one schema per game (`NewSubdivisionGame`,
...: its name, its player counts, its options) joined on `game`.
"""

from __future__ import annotations

from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow.openapi import OpenAPIConverter
from marshmallow import Schema, fields

from api.schemas.limits import MAX_DIGITS
from referee import bots, games
from referee.engine import JSON, Resign
from referee.games import AnyGame
from referee.replay import new_state

RESIGN = "ResignMove"
# Where a `$ref` finds a component of the OpenAPI document.
COMPONENTS = "#/components/schemas/"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def move_name(game: AnyGame) -> str:
    """The component name of a game's move, e.g. `MandalaStonesMove`."""
    return f"{_camel(game.name)}Move"


def _kind_name(game: AnyGame, kind: str) -> str:
    return f"{_camel(game.name)}{_camel(kind)}Move"


_LARGEST = 10**MAX_DIGITS - 1


# No NUL in any text (api/http/bodies.py): PostgreSQL's text cannot hold it.
_NO_NUL = "^[^\\u0000]*$"


def _bounded(described: Any) -> Any:
    """`described` with the bounds api/http/bodies.py puts on every integer and text made
    explicit."""
    if isinstance(described, list):
        return [_bounded(item) for item in described]
    if not isinstance(described, dict):
        return described
    bounded = {key: _bounded(value) for key, value in described.items()}
    if bounded.get("type") == "integer":
        bounded.setdefault("minimum", -_LARGEST)
        bounded.setdefault("maximum", _LARGEST)
    if bounded.get("type") == "string" and "enum" not in bounded:
        bounded.setdefault("pattern", _NO_NUL)
    return bounded


def _object(kind: str, described: JSON) -> JSON:
    """One kind of move: its `type`, then its own fields, and nothing else."""
    return {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [kind]},
            **_bounded(described["properties"]),
        },
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
            "oneOf": [{"$ref": COMPONENTS + name} for name, _ in kinds.values()],
            "discriminator": {
                "propertyName": "type",
                "mapping": {kind: COMPONENTS + name for kind, (name, _) in kinds.items()},
            },
        }
    return components


def any_move() -> JSON:
    """A move of any game (a `resign` fits all of them, hence `anyOf`)."""
    return {"anyOf": [{"$ref": COMPONENTS + move_name(game)} for game in games.all_games()]}


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


def _keys_said(self: OpenAPIConverter, field: fields.Field[Any], **_: Any) -> JSON:
    """A map whose field lists its keys (`properties` in its metadata) closes them:
    apispec would otherwise say that any key is taken, as values like the others."""
    if isinstance(field, fields.Dict) and "additionalProperties" in field.metadata:
        return {"additionalProperties": field.metadata["additionalProperties"]}
    return {}


_CONVERTER.add_attribute_function(_keys_said)  # type: ignore[no-untyped-call]


def option_schema(field: fields.Field[Any]) -> JSON:
    """One option as JSON Schema, with its default."""
    described: JSON = _bounded(dict(_CONVERTER.field2property(field)))
    if "oneOf" in described:
        # A field of its own kind (such as "off" or a list) says its type in
        # `oneOf`; apispec's guess of the type beside it would contradict it.
        described.pop("type", None)
    default = field.load_default
    described["default"] = default() if callable(default) else default
    return described


def option_schemas(game: AnyGame) -> dict[str, JSON]:
    """Each option of `game` as JSON Schema, by name."""
    return {name: option_schema(field) for name, field in game.options_schema().fields.items()}


def _hoisted(prefix: str, described: Any, components: dict[str, JSON]) -> Any:
    """`described` with each titled choice of a `oneOf` with a discriminator made a component
    of its own (`{prefix}{title}`, added to `components`), referred to and mapped by name.

    OpenAPI 3.0 maps a discriminator's values onto referenced schemas only; the
    rules (`GET /v1/rules`) keep them inline.
    """
    if isinstance(described, list):
        return [_hoisted(prefix, item, components) for item in described]
    if not isinstance(described, dict):
        return described
    hoisted = {key: _hoisted(prefix, value, components) for key, value in described.items()}
    choices = hoisted.get("oneOf", [])
    if "discriminator" not in hoisted or not all("title" in choice for choice in choices):
        return hoisted
    tag = hoisted["discriminator"]["propertyName"]
    mapping: dict[str, str] = {}
    for choice in choices:
        name = prefix + choice["title"]
        components[name] = choice
        (value,) = choice["properties"][tag]["enum"]
        mapping[value] = COMPONENTS + name
    hoisted["oneOf"] = [{"$ref": ref} for ref in mapping.values()]
    hoisted["discriminator"] = {"propertyName": tag, "mapping": mapping}
    return hoisted


NEW_GAME = "NewGame"


# A seat is a person's (no `bot`) or a bot's (no `email`), never both.
_PERSON_OR_BOT = [
    {"properties": {"bot": {"nullable": True, "enum": [None]}}},
    {"properties": {"email": {"nullable": True, "enum": [None]}}},
]


def _seat_of(game_name: str, seat: JSON) -> JSON:
    """A player entry of a game: `bot` one of the game's bot levels (then no `email`),
    absent where it has none."""
    levels = bots.levels(game_name)
    if "$ref" in seat or "properties" not in seat:
        return seat
    properties = dict(seat["properties"])
    if not levels:
        properties.pop("bot", None)
        return {**seat, "properties": properties}
    bot = {key: value for key, value in properties["bot"].items() if not key.endswith("Length")}
    properties["bot"] = {**bot, "enum": [*levels, None]}
    return {**seat, "properties": properties, "anyOf": _PERSON_OR_BOT}


def new_game_components(body: type[Schema]) -> dict[str, JSON]:
    """The body of `POST /v1/games` per game, from `body`'s fields, by component name.

    What a body may hold depends on the game it names: its player counts and
    its options, which are refused as unknown or of the wrong type just as
    the schema says. (Some games check options against each other and the
    player count too, `bad_options`; a schema cannot say all of that.)
    """
    shared: JSON = _CONVERTER.schema2jsonschema(body)  # type: ignore[no-untyped-call]
    components: dict[str, JSON] = {}
    mapping: dict[str, str] = {}
    for game in games.all_games():
        fewest, most = min(game.players), max(game.players)
        assert game.players == tuple(range(fewest, most + 1)), "player counts are a range"
        options = f"{_camel(game.name)}Options"
        components[options] = {
            "type": "object",
            "description": f"the options of {game.title}; defaults fill in what is left out",
            "properties": _hoisted(_camel(game.name), option_schemas(game), components),
            "additionalProperties": False,
        }
        properties = dict(shared["properties"])
        properties["game"] = {"type": "string", "enum": [game.name]}
        properties["players"] = {
            **properties["players"],
            "minItems": fewest,
            "maxItems": most,
            "items": _seat_of(game.name, properties["players"]["items"]),
        }
        properties["options"] = {"$ref": COMPONENTS + options}
        name = f"New{_camel(game.name)}Game"
        components[name] = {
            **shared,
            "description": f"a new game of {game.title}",
            "properties": properties,
        }
        mapping[game.name] = COMPONENTS + name
    components[NEW_GAME] = {
        "description": "a new game: the schema of the game named in `game`",
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "game", "mapping": mapping},
    }
    return components


NEW_SEEK = "NewSeek"
STANDING_SEEK = "StandingSeek"


def new_seek_components(
    body: type[Schema] | Schema, named: str = NEW_SEEK, what: str = "an open game"
) -> dict[str, JSON]:
    """The body of `POST /v1/seeks` per game, by component name: its player counts
    within the game's, its bot levels, and its options the game's own (the components
    `new_game_components` names, which the document must hold too). `named` and `what`
    name another body of a seek's terms so (a standing seek's: `StandingSeek`)."""
    shared: JSON = _CONVERTER.schema2jsonschema(body)  # type: ignore[no-untyped-call]
    components: dict[str, JSON] = {}
    mapping: dict[str, str] = {}
    for game in games.all_games():
        counts = {"type": "integer", "minimum": min(game.players), "maximum": max(game.players)}
        properties = dict(shared["properties"])
        properties["game"] = {"type": "string", "enum": [game.name]}
        players = properties["players"]
        properties["players"] = {**players, "properties": {"min": counts, "max": counts}}
        if "bots" in properties:
            levels = [*bots.levels(game.name), None]
            properties["bots"] = {**properties["bots"], "enum": levels}
        properties["options"] = {"$ref": f"{COMPONENTS}{_camel(game.name)}Options"}
        name = named.replace("Seek", f"{_camel(game.name)}Seek")
        components[name] = {
            **shared,
            "description": f"{what} of {game.title}",
            "properties": properties,
        }
        mapping[game.name] = COMPONENTS + name
    components[named] = {
        "description": f"{what}: the schema of the game named in `game`",
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "game", "mapping": mapping},
    }
    return components


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


class RuleOut(Schema):
    name = fields.String(required=True)
    title = fields.String(required=True)
    rules_version = fields.String(required=True)
    players = fields.List(fields.Integer(), required=True)
    options = fields.Dict(required=True, metadata={"description": "JSON-ish schema of options"})
    defaults = fields.Dict(required=True)
    move_schema = fields.Dict(required=True)
    notation_help = fields.String(required=True)
    bots = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "the levels of the bots that may fill a seat, weakest first"},
    )


class RulesOut(Schema):
    games = fields.List(fields.Nested(RuleOut), required=True)
