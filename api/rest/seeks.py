"""`/v1/seeks`: open games strangers can join (`referee.service.seeks`).

Anyone lists and reads public seeks; posting, joining, leaving,
withdrawing and starting need a signed-in browser or a player token with
`play`, and are counted per player (`REFEREE_RATE_SEEKS`).
"""

from __future__ import annotations

from typing import Any

from flask import url_for
from flask_smorest import Blueprint

from api.http import throttle
from api.http.context import referee
from api.http.errors import BAD_QUERY, NOT_JSON, declared
from api.http.player_auth import current_player, signed_in_or_token
from api.schemas.rules import COMPONENTS, NEW_SEEK
from api.schemas.seeks import NewSeekIn, SeekListArgs, SeekListOut, SeekOut
from referee.ratings import Shown
from referee.service.players import PLAY, Player
from referee.service.seeks import (
    NewSeek,
    SeekShown,
    get_seek,
    join_seek,
    leave_seek,
    list_seeks,
    post_seek,
    start_seek,
    withdraw_seek,
)

blp = Blueprint("seeks", __name__, url_prefix="/v1/seeks", description="Open games")

AS_PLAYER: list[dict[str, list[str]]] = [{"player": []}, {"session": []}]
WHO = {
    401: "unauthorized: no player token (rp_...) and no signed-in browser",
    403: "forbidden: a player token without `play`",
    429: "too_many_requests: more open games posted, joined or left than REFEREE_RATE_SEEKS",
}
NO_SEEK = "not_found: no open game with this id that you may see"
NOT_OPEN = "seek_started, seek_withdrawn, seek_expired: the open game no longer takes this"


def _acting() -> Player:
    player = current_player(PLAY)
    throttle.check("seeks", player.address)
    return player


@blp.route("", methods=["POST"])
@blp.arguments(NewSeekIn())
@blp.response(201, SeekOut)
@blp.doc(requestBody={"content": {"application/json": {"schema": {"$ref": COMPONENTS + NEW_SEEK}}}})
@blp.doc(
    operationId="postSeek",
    security=AS_PLAYER,
    **declared(
        {
            **WHO,
            400: "bad_json: the body is not JSON",
            409: "needs_name: choose a public name first; too_many_seeks: "
            "REFEREE_SEEKS_PER_PLAYER open already; blocked: an invited player blocks you",
            415: NOT_JSON,
            422: "unknown_game, bad_players, bad_options, bad_request: the body's content "
            "(`errors` per field)",
        }
    ),
)
def post(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Post an open game: I take its first seat, and it starts when `max` have joined."""
    counts = body["players"]
    new = NewSeek(
        game=body["game"],
        min_players=counts.get("min"),
        max_players=counts.get("max"),
        options=body["options"],
        deadline=body["deadline"],
        on_timeout=body["on_timeout"],
        rated=body["rated"],
        bots=body["bots"],
        invite=tuple(body["invite"]),
        rating_min=body["rating"].get("min"),
        rating_max=body["rating"].get("max"),
    )
    seek = post_seek(referee(), _acting(), new)
    return shown(seek), 201, {"Location": link(seek.id)}


@blp.route("", methods=["GET"])
@blp.arguments(SeekListArgs(), location="query")
@blp.response(200, SeekListOut)
@blp.doc(operationId="listSeeks", **declared({422: BAD_QUERY + "; unknown_game"}))
def index(args: dict[str, Any]) -> dict[str, Any]:
    """Open public games one may join, newest first (a signed-in player's list leaves
    out those of players it blocks or is blocked by)."""
    viewer = signed_in_or_token()
    page = list_seeks(
        referee(),
        viewer.address if viewer else None,
        args.get("game"),
        args.get("cursor"),
        args["limit"],
    )
    return {"seeks": [shown(seek) for seek in page.seeks], "next_cursor": page.next_cursor}


@blp.route("/<seek_id>", methods=["GET"])
@blp.response(200, SeekOut)
@blp.doc(operationId="getSeek", **declared({404: NO_SEEK, 422: BAD_QUERY}))
def one(seek_id: str) -> dict[str, Any]:
    """One open game (a private one only for its players and those it invites)."""
    viewer = signed_in_or_token()
    return shown(get_seek(referee(), seek_id, viewer.address if viewer else None))


def _acted(operation: str, conflicts: str) -> dict[str, Any]:
    return {
        "operationId": operation,
        "security": AS_PLAYER,
        **declared({**WHO, 404: NO_SEEK, 409: conflicts, 422: BAD_QUERY}),
    }


@blp.route("/<seek_id>/join", methods=["POST"])
@blp.response(200, SeekOut)
@blp.doc(
    **_acted(
        "joinSeek",
        f"{NOT_OPEN}; needs_name, already_joined, seek_full, not_invited, blocked, "
        "rating_out_of_range",
    )
)
def join(seek_id: str) -> dict[str, Any]:
    """Take a seat; the join that fills the game starts it (`status: started`, `game_id`).

    Once the creator started it with bots, a join takes one of the bots' seats over
    (the lowest-numbered left): the player's at once, or after the bot's turn under way.
    """
    return shown(join_seek(referee(), _acting(), seek_id))


@blp.route("/<seek_id>/join", methods=["DELETE"])
@blp.response(200, SeekOut)
@blp.doc(**_acted("leaveSeek", f"{NOT_OPEN}; not_joined, creator_stays"))
def leave(seek_id: str) -> dict[str, Any]:
    """Give up my seat at an open game that has not started."""
    return shown(leave_seek(referee(), _acting(), seek_id))


@blp.route("/<seek_id>", methods=["DELETE"])
@blp.response(200, SeekOut)
@blp.doc(**_acted("withdrawSeek", f"{NOT_OPEN}; not_your_seek"))
def withdraw(seek_id: str) -> dict[str, Any]:
    """Withdraw my open game (those seated are told); one started with bots stops
    taking players."""
    return shown(withdraw_seek(referee(), current_player(PLAY), seek_id))


@blp.route("/<seek_id>/start", methods=["POST"])
@blp.response(200, SeekOut)
@blp.doc(**_acted("startSeek", f"{NOT_OPEN}; not_your_seek, too_few_seated"))
def start(seek_id: str) -> dict[str, Any]:
    """Start my open game now: with those seated (at least `min`), or with bots in the
    empty seats where it names a bot level."""
    return shown(start_seek(referee(), current_player(PLAY), seek_id))


def link(seek_id: str) -> str:
    """The open game's own page (`/seeks/<id>`), the one to share."""
    return url_for("pages.seeks.seek", seek_id=seek_id)


def rated(name: str, rating: Shown | None) -> dict[str, Any]:
    """A player of a seek: its name, and its rating at the seek's game (null: none yet)."""
    if rating is None:
        return {"name": name, "rating": None, "provisional": True}
    return {"name": name, "rating": rating.rating, "provisional": rating.provisional}


def shown(seek: SeekShown) -> dict[str, Any]:
    return {
        "id": seek.id,
        "game": seek.game,
        "players": {"min": seek.min_players, "max": seek.max_players},
        "options": seek.options,
        "deadline": None if seek.deadline_seconds is None else f"{seek.deadline_seconds}s",
        "on_timeout": seek.on_timeout,
        "rated": seek.rated,
        "bots": seek.bots,
        "by": rated(seek.by, seek.by_rating),
        "seated": [
            rated(name, rating)
            for name, rating in zip(seek.seated, seek.seated_ratings, strict=True)
        ],
        "rating": {"min": seek.rating_min, "max": seek.rating_max},
        "status": seek.status,
        "private": seek.private,
        "invited": list(seek.invited),
        "open_seats": seek.open_seats,
        "game_id": seek.game_id,
        "link": link(seek.id),
        "created_at": seek.created_at,
        "expires_at": seek.expires_at,
    }
