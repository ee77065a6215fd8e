"""`/v1/me/...`: the player asking (a player token, or a signed-in browser) and its games
and personal tokens."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player
from api.schemas.me import MeOut, MyGamesArgs, MyGamesOut, NewTokenIn, TokenMadeOut, TokensOut
from referee.service import refusals
from referee.service.my_games import my_games
from referee.service.players import MANAGE, READ
from referee.service.tokens import TokenShown, list_tokens, make_token, revoke_token

blp = Blueprint("me", __name__, url_prefix="/v1/me", description="The player asking: its games")

# A player token, or the session cookie of a signed-in browser (the pages').
AS_PLAYER: list[dict[str, list[str]]] = [{"player": []}, {"session": []}]
NOT_SIGNED_IN = "unauthorized: no player token or signed-in browser, or one revoked or expired"
NO_SCOPE = "forbidden: a player token without `read`"
NOT_A_BROWSER = "forbidden: a player token (tokens are made and revoked by a signed-in browser)"
# An id that is no row's id, whatever its form, is "not found" without asking the store.
_MAX_ID_DIGITS = 9


@blp.route("", methods=["GET"])
@blp.response(200, MeOut)
@blp.doc(
    operationId="getMe",
    security=AS_PLAYER,
    **declared({401: NOT_SIGNED_IN, 403: NO_SCOPE, 422: BAD_QUERY}),
)
def me() -> dict[str, Any]:
    """Who the token or the browser is: the player's address."""
    return {"email": current_player(READ).address}


@blp.route("/games", methods=["GET"])
@blp.arguments(MyGamesArgs(), location="query")
@blp.response(200, MyGamesOut)
@blp.doc(
    operationId="listMyGames",
    security=AS_PLAYER,
    **declared(
        {
            401: NOT_SIGNED_IN,
            403: NO_SCOPE,
            422: BAD_QUERY + "; a cursor this list did not give",
        }
    ),
)
def games(args: dict[str, Any]) -> dict[str, Any]:
    """Every game I hold a seat in: my turn first, then by deadline, then the newest.

    Pass `next_cursor` back as `cursor` for the next page.
    """
    found = my_games(
        referee(),
        current_player(READ),
        status=args.get("status"),
        my_turn=args.get("to_act") == "me",
        cursor=args.get("cursor"),
        limit=args["limit"],
    )
    return {
        "games": [
            {
                "id": row.id,
                "game": row.game,
                "status": row.status,
                "seats": [{"seat": s.seat, "name": s.name, "me": s.me} for s in row.seats],
                "to_act": row.to_act,
                "my_turn": row.my_turn,
                "deadline": row.deadline,
                "version": row.version,
                "updated_at": row.updated_at,
                "result": row.result,
            }
            for row in found.games
        ],
        "next_cursor": found.next_cursor,
    }


@blp.route("/tokens", methods=["GET"])
@blp.response(200, TokensOut)
@blp.doc(
    operationId="listMyTokens",
    security=[{"session": []}],
    **declared({401: NOT_SIGNED_IN, 403: NOT_A_BROWSER, 422: BAD_QUERY}),
)
def tokens() -> dict[str, Any]:
    """My personal tokens in force, oldest first, without their secrets."""
    return {"tokens": [_shown(t) for t in list_tokens(referee(), current_player(MANAGE))]}


@blp.route("/tokens", methods=["POST"])
@blp.arguments(NewTokenIn())
@blp.response(
    201,
    TokenMadeOut,
    headers={
        "Cache-Control": {
            "description": "`no-store`: the answer holds the token's secret",
            "schema": {"type": "string"},
        }
    },
)
@blp.doc(
    operationId="makeMyToken",
    security=[{"session": []}],
    **declared(
        {
            400: "bad_json: the body is not JSON",
            401: NOT_SIGNED_IN,
            403: NOT_A_BROWSER,
            415: NOT_JSON,
            422: "bad_request: a name not 1-100 printable characters, scopes not one or both "
            "of `read` and `play` (`errors`); or as many tokens held as one may",
        }
    ),
)
def make(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Make a personal token: its secret is in this answer and never shown again."""
    made = make_token(referee(), current_player(MANAGE), body["name"], body["scopes"])
    return {**_shown(made.token), "token": made.secret}, 201, {"Cache-Control": "no-store"}


@blp.route("/tokens/<token_id>", methods=["DELETE"])
@blp.response(204)
@blp.doc(
    operationId="revokeMyToken",
    security=[{"session": []}],
    **declared(
        {
            401: NOT_SIGNED_IN,
            403: NOT_A_BROWSER,
            404: "not_found: I hold no token in force with this id",
            422: BAD_QUERY,
        }
    ),
)
def revoke(token_id: str) -> tuple[str, int]:
    """Revoke one of my tokens: refused from the next request on, in every process."""
    player = current_player(MANAGE)
    if not (token_id.isascii() and token_id.isdigit() and len(token_id) <= _MAX_ID_DIGITS):
        raise refusals.NotFound("you hold no token with this id")
    revoke_token(referee(), player, int(token_id))
    return "", 204


def _shown(token: TokenShown) -> dict[str, Any]:
    return {
        "id": token.id,
        "name": token.name,
        "scopes": token.scopes,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
    }
