"""A player's page (`/p/<name>`) and a game's players by rating (`/ratings/<game>`), for
anyone: public names and figures, never an address.

The profile says the player's ratings per game (with a chart of each over
time, drawn on the server as SVG: `referee.render.rating_chart`), how it
plays (games, timeouts, resignations, how soon it answers) and its last
finished games, each linking its page. The list of a game's players pages
50 at a time; each name links its player's page (`kit.player`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request
from markupsafe import Markup

from api.http.context import referee
from api.http.errors import Problem
from referee import games
from referee.render.rating_chart import Point, rating_chart
from referee.service.leaderboards import PAGE, leaderboard
from referee.service.profile_view import GameRating, RecentGame, player_profile
from referee.store.clock import parse_stamp

bp = Blueprint("players", __name__)

PLACES = {1: "1st", 2: "2nd", 3: "3rd"}


def _title(name: str) -> str:
    try:
        return games.get(name).title
    except KeyError:
        return name


def _day(stamp: str) -> str:
    return parse_stamp(stamp).strftime("%Y-%m-%d")


def hours_words(hours: float | None) -> str:
    """A median response time as a person says it: "40 minutes", "5 hours", "2.5 days"."""
    if hours is None:
        return "no moves yet"
    if hours < 1:
        minutes = max(1, round(hours * 60))
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    if hours < 48:
        shown = f"{hours:.1f}".removesuffix(".0")
        return f"{shown} hour{'s' if shown != '1' else ''}"
    return f"{hours / 24:.1f}".removesuffix(".0") + " days"


def _chart(name: str, rating: GameRating) -> Markup | None:
    if not rating.history:
        return None
    points = [
        Point(parse_stamp(p.at).timestamp(), p.rating, p.deviation, p.provisional, _day(p.at))
        for p in rating.history
    ]
    title = f"{name}'s rating at {_title(rating.game)}, game by game"
    first, last = _day(rating.history[0].at), _day(rating.history[-1].at)
    # Drawn here from numbers and escaped text alone: safe to put in the page as it is.
    return Markup(rating_chart(points, title, first, last))


def _recent(game: RecentGame) -> dict[str, Any]:
    place = PLACES.get(game.place, f"{game.place}th")
    return {
        "id": game.id,
        "title": _title(game.game),
        "result": {"won": "Won", "lost": "Lost", "draw": "Shared win"}[game.result],
        "won": game.result != "lost",
        "place": f"{place} of {game.players}" if game.place else "",
        "finished": _day(game.finished_at),
        "finished_at": game.finished_at,
    }


@bp.get("/p/<name>")
def player(name: str) -> str:
    found = player_profile(referee(), name, history=True)
    return render_template(
        "web/player.html",
        player=found,
        since=_day(found.since),
        response=hours_words(found.stats.median_response_hours),
        ratings=[
            {
                "game": rating.game,
                "title": _title(rating.game),
                "rating": rating,
                "chart": _chart(found.name, rating),
            }
            for rating in found.ratings
        ],
        recent=[_recent(game) for game in found.recent],
    )


def _choices() -> list[tuple[str, str]]:
    return [(game.name, game.title) for game in games.all_games()]


@bp.get("/ratings")
def ratings_index() -> str:
    return render_template("web/ratings.html", board=None, choices=_choices(), chosen=None)


@bp.get("/ratings/<game>")
def ratings(game: str) -> str:
    cursor = request.args.get("cursor") or None
    if cursor is not None and (len(cursor) > 400 or not cursor.isprintable()):
        raise Problem(422, "bad_request", "This is not a place in the list that it gave.")
    board = leaderboard(referee(), game, cursor, PAGE)
    return render_template(
        "web/ratings.html",
        board=board,
        title=_title(board.game),
        choices=_choices(),
        chosen=board.game,
        first_page=cursor is None,
    )
