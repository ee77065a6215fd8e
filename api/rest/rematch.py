"""Rematch over REST: a finished game played again when every seat accepts."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http import seat_auth
from api.http.context import find, referee, session
from api.http.errors import BAD_QUERY, NO_GAME, NO_SEAT, SCOPE, declared
from api.schemas.rematch import RematchAcceptedOut, RematchOut
from referee.service.rematching import Rematch, accept_rematch, rematch_of, rematch_seat
from referee.service.submitting import PlayerSeat

blp = Blueprint(
    "rematch", __name__, url_prefix="/v1/games", description="Rematch of a finished game"
)


def _shown(standing: Rematch) -> dict[str, Any]:
    return {
        "seats": standing.seats,
        "accepted": list(standing.accepted),
        "waiting_for": list(standing.waiting_for),
        "game_id": standing.game_id,
    }


@blp.route("/<game_id>/rematch", methods=["GET"])
@blp.response(200, RematchOut)
@blp.doc(operationId="getRematch", **declared({404: NO_GAME, 422: BAD_QUERY}))
def get_rematch(game_id: str) -> dict[str, Any]:
    """Which seats accepted a rematch of this game, and the new game once all have."""
    with session() as db:
        return _shown(rematch_of(db, find(db, game_id)))


@blp.route("/<game_id>/rematch", methods=["POST"])
@blp.response(200, RematchAcceptedOut)
@blp.doc(
    operationId="acceptRematch",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            401: NO_SEAT,
            403: SCOPE,
            404: NO_GAME,
            409: "still_in_play: a rematch is offered once the game is over",
            422: BAD_QUERY,
        }
    ),
)
def post_rematch(game_id: str) -> dict[str, Any]:
    """The caller's seat accepts a rematch (again: no change); the last to accept starts it.

    The new game has the same game, players, options and deadline, and a new
    seed; each seat is told as for a new game. The answer carries the
    caller's seat token in it once it started (a seat token's caller alone: a
    player token is never turned into a seat token, which its revocation
    would not stop).
    """
    seat = seat_auth.caller()
    standing = accept_rematch(referee(), game_id, seat)
    token = None
    if standing.game_id is not None and not isinstance(seat, PlayerSeat):
        token = rematch_seat(referee(), game_id, seat)[1]
    return {**_shown(standing), "token": token}
