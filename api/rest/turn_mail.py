"""How a player is told, over REST: `/v1/me/settings` and muting one of its games.

A player token (`read`) may read the settings; changing them, and muting,
needs a signed-in browser's session (the page `/me/settings` does it too).
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player
from api.schemas.turn_mail import TurnMailIn, TurnMailOut
from referee.service.players import MANAGE, READ
from referee.service.turn_mail import Told, change_settings, mute_game, settings_of

blp = Blueprint(
    "turn_mail", __name__, url_prefix="/v1/me", description="How a player is told of its games"
)

NOT_SIGNED_IN = "unauthorized: no player token or signed-in browser (or not a valid one)"
NOT_ALLOWED = "forbidden: a player token; changing how you are told needs a signed-in browser"


def shown(told: Told) -> dict[str, Any]:
    chosen = told.settings
    return {
        "turn_mail": chosen.turn_mail.value,
        "digest_hours": list(chosen.digest_hours),
        "reminders": chosen.reminders,
        "seek_news": list(chosen.seek_news),
        "muted": told.muted,
    }


@blp.route("/settings", methods=["GET"])
@blp.response(200, TurnMailOut)
@blp.doc(
    operationId="getMySettings",
    **declared({401: NOT_SIGNED_IN, 403: NOT_ALLOWED, 422: BAD_QUERY}),
)
def get_settings() -> dict[str, Any]:
    """How you are told: turn mail, digest hours, reminders, new open games, muted games."""
    return shown(settings_of(referee(), current_player(READ)))


@blp.route("/settings", methods=["PUT"])
@blp.arguments(TurnMailIn())
@blp.response(200, TurnMailOut)
@blp.doc(
    operationId="putMySettings",
    **declared(
        {
            400: "bad_json: the body is not JSON",
            401: NOT_SIGNED_IN,
            403: NOT_ALLOWED,
            404: "not_found: the referee never mailed this address",
            415: NOT_JSON,
            422: BAD_QUERY,
        }
    ),
)
def put_settings(changes: dict[str, Any]) -> dict[str, Any]:
    """Change how you are told; the settings left out keep their values."""
    return shown(change_settings(referee(), current_player(MANAGE), changes))


_MUTE_ERRORS = {
    401: NOT_SIGNED_IN,
    403: NOT_ALLOWED,
    404: "not_found: you hold no seat in a game with this id",
    422: BAD_QUERY,
}


@blp.route("/games/<game_id>/mute", methods=["PUT"])
@blp.response(204)
@blp.doc(operationId="muteMyGame", **declared(_MUTE_ERRORS))
def mute(game_id: str) -> Response:
    """Mute one of your games for you alone: no turn, reminder or game-over mail,
    and it is left out of your digest. Its other players are told as before."""
    mute_game(referee(), current_player(MANAGE), game_id, True)
    return Response(status=204)


@blp.route("/games/<game_id>/mute", methods=["DELETE"])
@blp.response(204)
@blp.doc(operationId="unmuteMyGame", **declared(_MUTE_ERRORS))
def unmute(game_id: str) -> Response:
    """Unmute one of your games."""
    mute_game(referee(), current_player(MANAGE), game_id, False)
    return Response(status=204)
