"""`GET /v1/games/{id}/board.svg`: a picture of the caller's view of the board."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response
from flask_smorest import Blueprint
from sqlmodel import Session

from api.http import seat_auth
from api.http.context import find, session
from api.http.errors import BAD_QUERY, BAD_TOKEN, SCOPE, Problem, declared
from api.http.expensive import BUSY, taking_turns
from api.http.media import SVG, negotiated, text_response
from api.rest.games import SEAT
from api.schemas.games import StateArgs
from referee import render
from referee.service import game_states
from referee.store import reads

# The picture holds player names: opened on its own, it runs no script, loads
# nothing and is a sandboxed origin of its own (its inline styles still apply).
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

blp = Blueprint("boards", __name__, url_prefix="/v1/games", description="Pictures of the board")


def board_svg(
    game_id: str, at: int | None, seat_of: Callable[[Session, str], int | None] = seat_auth.viewer
) -> str:
    """The board after move `at` (default: the latest) as the asking seat may see it,
    with what move `at` changed marked."""
    with session() as db:
        game = find(db, game_id)
        seat = seat_of(db, game.id)
        if at is None:
            at = game.version
        if at > game.version:
            raise Problem(404, "not_found", f"the log holds {game.version} moves, not {at}")
        rules = reads.rules_of(game)
        state, previous = game_states.state_and_previous(db, game, at)
        names = [s.name for s in reads.seats(db, game.id)]
    # The last move is marked by comparing with the same seat's view a move earlier.
    before = None if previous is None else rules.view(previous, seat)
    return render.render_svg(game.name, rules.view(state, seat), names, before)


@blp.route("/<game_id>/board.svg", methods=["GET"])
@blp.arguments(StateArgs(), location="query")
@blp.doc(
    operationId="getBoardSvg",
    security=SEAT,
    **declared(
        {
            401: BAD_TOKEN,
            403: SCOPE,
            404: "not_found: no such game, or `at` beyond the log",
            422: BAD_QUERY,
            503: BUSY,
        }
    ),
)
@blp.doc(responses={200: text_response("the board as the caller may see it, after move `at`", SVG)})
@taking_turns
def board(args: dict[str, Any], game_id: str) -> Response:
    """A picture (SVG) of the caller's view of the board after move `at` (default: latest)."""
    picture = board_svg(game_id, args.get("at"))
    return Response(
        picture,
        mimetype=negotiated(SVG),
        headers={"Cache-Control": "private, no-cache", "Content-Security-Policy": SVG_CSP},
    )
