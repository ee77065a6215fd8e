"""`/v1/me/profile` and `/v1/me/blocks`: the name strangers see, and whom I do not meet."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player
from api.schemas.seeks import BlocksOut, ProfileIn, ProfileOut
from referee.service import profiles
from referee.service.players import MANAGE, READ

blp = Blueprint("profile", __name__, url_prefix="/v1/me", description="My public name and blocks")

WHO = {
    401: "unauthorized: no player token (rp_...) and no signed-in browser",
    403: "forbidden: a player token without the scope this needs",
}
NO_PLAYER = "not_found: no other player has this public name"


@blp.route("/profile", methods=["GET"])
@blp.response(200, ProfileOut)
@blp.doc(operationId="getProfile", **declared({**WHO, 422: BAD_QUERY}))
def get_profile() -> dict[str, Any]:
    """What other players see of me (my name), and the language and time zone the referee
    speaks to me in."""
    return asdict(profiles.profile(referee(), current_player(READ)))


@blp.route("/profile", methods=["PUT"])
@blp.arguments(ProfileIn())
@blp.response(200, ProfileOut)
@blp.doc(
    operationId="setProfile",
    **declared(
        {
            **WHO,
            409: "name_taken: another player holds this name (compared without case or width)",
            415: NOT_JSON,
            422: "bad_request: a name the public-name rule refuses, a language the referee "
            "does not speak, or no IANA time zone (`errors`)",
        }
    ),
)
def put_profile(body: dict[str, Any]) -> dict[str, Any]:
    """Change my profile: my public name (what other players see of me, never my
    address), my language, my time zone. Fields not given stay as they are."""
    chosen = profiles.set_profile(
        referee(),
        current_player(MANAGE),
        name=body.get("name"),
        language=body.get("language"),
        time_zone=body.get("time_zone"),
    )
    return asdict(chosen)


@blp.route("/blocks", methods=["GET"])
@blp.response(200, BlocksOut)
@blp.doc(operationId="listBlocks", **declared({**WHO, 422: BAD_QUERY}))
def get_blocks() -> dict[str, Any]:
    """The players I block: we see none of each other's open games and join none."""
    return {"blocks": profiles.blocks(referee(), current_player(READ))}


@blp.route("/blocks/<name>", methods=["PUT"])
@blp.response(200, BlocksOut)
@blp.doc(operationId="blockPlayer", **declared({**WHO, 404: NO_PLAYER, 422: BAD_QUERY}))
def put_block(name: str) -> dict[str, Any]:
    """Block a player by public name."""
    return {"blocks": profiles.block(referee(), current_player(MANAGE), name)}


@blp.route("/blocks/<name>", methods=["DELETE"])
@blp.response(200, BlocksOut)
@blp.doc(operationId="unblockPlayer", **declared({**WHO, 404: NO_PLAYER, 422: BAD_QUERY}))
def delete_block(name: str) -> dict[str, Any]:
    """Stop blocking a player."""
    return {"blocks": profiles.unblock(referee(), current_player(MANAGE), name)}
