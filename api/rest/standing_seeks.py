"""`/v1/me/standing-seeks`: the kinds of game I want to be in at all times
(`referee.service.standing_seeks`)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player
from api.schemas.rules import COMPONENTS, STANDING_SEEK
from api.schemas.seeks import StandingSeekIn, StandingSeekOut
from referee.service.players import PLAY, READ
from referee.service.standing_seeks import (
    MOST_STANDING,
    Standing,
    set_standing_seeks,
    standing_seeks,
)

blp = Blueprint("standing_seeks", __name__, url_prefix="/v1/me", description="My standing seeks")

# The body in the document: each standing seek's options and counts as its game's.
LISTED = {"type": "array", "items": {"$ref": COMPONENTS + STANDING_SEEK}, "maxItems": MOST_STANDING}
WHO = {
    401: "unauthorized: no player token (rp_...) and no signed-in browser",
    403: "forbidden: a player token without the scope this needs (`read`; `play` to change)",
}


@blp.route("/standing-seeks", methods=["GET"])
@blp.response(200, StandingSeekOut(many=True))
@blp.doc(operationId="getStandingSeeks", **declared({**WHO, 422: BAD_QUERY}))
def get() -> list[dict[str, Any]]:
    """The kinds of game the referee keeps me in, posting open games as needed."""
    return [shown(one) for one in standing_seeks(referee(), current_player(READ))]


@blp.route("/standing-seeks", methods=["PUT"])
@blp.arguments(StandingSeekIn(many=True))
@blp.response(200, StandingSeekOut(many=True))
@blp.doc(requestBody={"content": {"application/json": {"schema": LISTED}}})
@blp.doc(
    operationId="setStandingSeeks",
    **declared(
        {
            **WHO,
            400: "bad_json: the body is not JSON",
            409: "needs_name: choose a public name first",
            415: NOT_JSON,
            422: f"unknown_game, bad_players, bad_options, bad_request: a standing seek's "
            f"terms, as POST /v1/seeks reads them, or more than {MOST_STANDING} of them "
            "(`errors` per `<index>.<field>`)",
        }
    ),
)
def put(body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace my standing seeks: for each, the referee posts open games whenever those
    of it that are open or in play fall short of `count` (paused while I am away 14 days)."""
    wanted = [
        Standing(
            game=one["game"],
            count=one["count"],
            min_players=one["players"].get("min"),
            max_players=one["players"].get("max"),
            options=one["options"],
            deadline=one["deadline"],
        )
        for one in body
    ]
    return [shown(one) for one in set_standing_seeks(referee(), current_player(PLAY), wanted)]


def shown(one: Standing) -> dict[str, Any]:
    return {
        "game": one.game,
        "players": {"min": one.min_players, "max": one.max_players},
        "options": one.options,
        "deadline": one.deadline,
        "count": one.count,
    }
