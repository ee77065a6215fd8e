"""`GET /v1/rules`: the games this referee knows, with their options and moves."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.errors import BAD_QUERY, declared
from api.schemas.rules import RulesOut, describe
from referee import games

blp = Blueprint("rules", __name__, url_prefix="/v1/rules", description="The games and their rules")


@blp.route("")
@blp.response(200, RulesOut)
@blp.doc(operationId="getRules", **declared({422: BAD_QUERY}))
def rules() -> dict[str, Any]:
    """The games: names, player counts, options with defaults, moves, notation."""
    return {"games": [describe(game) for game in games.all_games()]}
