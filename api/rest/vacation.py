"""A player's vacation over REST: read it, set it, end it (`/v1/me/vacation`).

Reading needs a player token with `read` or a signed-in browser; changing
it needs a signed-in browser (`manage`), like a player's other settings.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player
from api.schemas.vacation import VacationIn, VacationOut, shown
from referee.service.players import MANAGE, READ
from referee.service.vacations import end_vacation, set_vacation, standing

blp = Blueprint(
    "vacation", __name__, url_prefix="/v1/me/vacation", description="A player's vacation"
)

WHO = {
    401: "unauthorized: no player token (rp_...) and no signed-in browser",
    403: "forbidden: a player token without the scope this needs",
}
REFUSED = (
    "vacation_refused: it would begin less than 24 hours before one of your deadlines, "
    "put more vacation days than the allowance in some 365 days in a row, or change the "
    "start of one under way"
)


@blp.route("", methods=["GET"])
@blp.response(200, VacationOut)
@blp.doc(operationId="getVacation", **declared({**WHO, 422: BAD_QUERY}))
def get_vacation() -> dict[str, Any]:
    """My vacation under way or planned, and the vacation days left.

    The days left are those that fit on any dates from today on.
    """
    return shown(standing(referee(), current_player(READ)))


@blp.route("", methods=["PUT"])
@blp.arguments(VacationIn())
@blp.response(200, VacationOut)
@blp.doc(
    operationId="setVacation",
    **declared({**WHO, 409: REFUSED, 415: NOT_JSON, 422: BAD_QUERY}),
)
def put_vacation(body: dict[str, Any]) -> dict[str, Any]:
    """Plan a vacation (replacing a planned one), or move the end of the one under way:
    while it lasts, my deadlines in every game stand still."""
    player = current_player(MANAGE)
    return shown(set_vacation(referee(), player, body["starts_at"], body["ends_at"]))


@blp.route("", methods=["DELETE"])
@blp.response(200, VacationOut)
@blp.doc(operationId="endVacation", **declared({**WHO, 422: BAD_QUERY}))
def delete_vacation() -> dict[str, Any]:
    """End my vacation now, or drop the planned one; my deadlines run again with the
    time they had left."""
    return shown(end_vacation(referee(), current_player(MANAGE)))
