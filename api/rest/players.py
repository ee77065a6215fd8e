"""`/v1/players/{name}` and `/v1/ratings/{game}`: a player's profile and a game's players
by rating, for anyone (`referee.service.profile_view`, `referee.service.leaderboards`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import BAD_QUERY, declared
from api.schemas.players import LeaderboardArgs, LeaderboardOut, PlayerOut
from referee import games
from referee.service.leaderboards import leaderboard
from referee.service.profile_view import player_profile

blp = Blueprint("players", __name__, url_prefix="/v1", description="Players and ratings")


@blp.route("/players/<name>", methods=["GET"])
@blp.response(200, PlayerOut)
@blp.doc(
    operationId="getPlayer",
    **declared({404: "not_found: no player has this public name", 422: BAD_QUERY}),
)
def player(name: str) -> dict[str, Any]:
    """A player's profile, by public name (in any case): ratings, how it plays, its last
    finished games."""
    found = player_profile(referee(), name)
    return {
        "name": found.name,
        "since": found.since,
        "ratings": {
            rating.game: {
                "rating": rating.rating,
                "deviation": rating.deviation,
                "games": rating.games,
                "wins": rating.wins,
                "provisional": rating.provisional,
            }
            for rating in found.ratings
        },
        "stats": asdict(found.stats),
        "recent": [asdict(game) for game in found.recent],
    }


# The games the referee knows: any other name is `422 unknown_game`.
GAME_PARAMETER = {"in": "path", "name": "game", "schema": {"type": "string", "enum": games.names()}}


@blp.route("/ratings/<game>", methods=["GET"], parameters=[GAME_PARAMETER])
@blp.arguments(LeaderboardArgs(), location="query")
@blp.response(200, LeaderboardOut)
@blp.doc(
    operationId="listRatings",
    **declared(
        {422: BAD_QUERY + "; unknown_game: no such game; bad_request: a cursor no page gave"}
    ),
)
def ratings(args: dict[str, Any], game: str) -> dict[str, Any]:
    """A game's players by rating, the highest first."""
    board = leaderboard(referee(), game, args.get("cursor"), args["limit"])
    return {
        "game": board.game,
        "players": [asdict(ranked) for ranked in board.players],
        "next_cursor": board.next_cursor,
    }
