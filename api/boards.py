"""`GET /v1/games/{id}/board.svg`: a picture of the caller's view of the board."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response
from flask_smorest import Blueprint
from sqlmodel import Session

from api import auth
from api.errors import Problem
from api.games import SEAT, find, session
from api.schemas import StateArgs
from referee import render
from referee.store import reads

blp = Blueprint("boards", __name__, url_prefix="/v1", description="Pictures of the board")

SVG = "image/svg+xml"


def board_svg(
    game_id: str, at: int | None, seat_of: Callable[[Session, str], int | None] = auth.viewer
) -> str:
    """The board after move `at` (default: the latest) as the asking seat may see it."""
    with session() as db:
        game = find(db, game_id)
        seat = seat_of(db, game.id)
        if at is None:
            at = game.version
        if at > game.version:
            raise Problem(404, "not_found", f"the log holds {game.version} moves, not {at}")
        rules = reads.rules_of(game)
        state = reads.state_at(db, game, at)
        names = [s.name for s in reads.seats(db, game.id)]
    return render.render_svg(game.name, rules.view(state, seat), names)


@blp.route("/games/<game_id>/board.svg", methods=["GET"])
@blp.arguments(StateArgs, location="query")
@blp.alt_response(401, description="a bad token")
@blp.alt_response(404, description="no such game or move")
@blp.doc(
    security=SEAT,
    responses={
        "200": {
            "description": "the board as the caller may see it, after move `at`",
            "content": {SVG: {"schema": {"type": "string"}}},
        }
    },
)
def board(args: dict[str, Any], game_id: str) -> Response:
    """A picture (SVG) of the caller's view of the board after move `at` (default: latest)."""
    picture = board_svg(game_id, args.get("at"))
    return Response(picture, mimetype=SVG, headers={"Cache-Control": "private, no-cache"})
