"""A player's vacation over REST: read it, set it, end it (`/v1/me/vacation`).

Reading needs a player token with `read` or a signed-in browser; changing
it needs a signed-in browser (`manage`), like a player's other settings.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.context import referee
from api.errors import BAD_QUERY, NOT_JSON, declared
from api.me_auth import current_player
from api.vacation_schemas import VacationIn, VacationOut
from referee.service.players import MANAGE, READ
from referee.service.vacations import Standing, end_vacation, set_vacation, standing
from referee.store.clock import stamp

blp = Blueprint("vacation", __name__, url_prefix="/v1", description="A player's vacation")

WHO = {
    401: "unauthorized: no player token (rp_...) and no signed-in browser",
    403: "forbidden: a player token without the scope this needs",
}
REFUSED = (
    "vacation_refused: it would begin less than 24 hours before one of your deadlines, "
    "put more vacation days than the allowance in some 365 days in a row, or change the "
    "start of one under way"
)


def shown(found: Standing) -> dict[str, Any]:
    """A player's vacation and allowance as the API and the page give them."""
    away = found.vacation
    return {
        "vacation": None
        if away is None
        else {
            "starts_at": stamp(away.starts_at),
            "ends_at": stamp(away.ends_at),
            "ongoing": away.ongoing,
            "days": away.days,
        },
        "allowance": found.allowance,
        "days_left": found.days_left,
    }


@blp.route("/me/vacation", methods=["GET"])
@blp.response(200, VacationOut)
@blp.doc(operationId="getVacation", **declared({**WHO, 422: BAD_QUERY}))
def get_vacation() -> dict[str, Any]:
    """My vacation under way or planned, and the vacation days left: those that fit on any
    dates from today on."""
    return shown(standing(referee(), current_player(READ)))


@blp.route("/me/vacation", methods=["PUT"])
@blp.arguments(VacationIn)
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


@blp.route("/me/vacation", methods=["DELETE"])
@blp.response(200, VacationOut)
@blp.doc(operationId="endVacation", **declared({**WHO, 422: BAD_QUERY}))
def delete_vacation() -> dict[str, Any]:
    """End my vacation now, or drop the planned one; my deadlines run again with the
    time they had left."""
    return shown(end_vacation(referee(), current_player(MANAGE)))
