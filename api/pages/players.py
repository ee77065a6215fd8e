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
from referee.i18n import N_, _, day_of, ngettext, number
from referee.render.rating_chart import Point, rating_chart
from referee.service.leaderboards import PAGE, leaderboard
from referee.service.profile_view import GameRating, RecentGame, player_profile
from referee.store.clock import parse_stamp

bp = Blueprint("players", __name__)

PLACES = {1: N_("1st"), 2: N_("2nd"), 3: N_("3rd")}
RESULTS = {"won": N_("Won"), "lost": N_("Lost"), "draw": N_("Shared win")}


def _title(name: str) -> str:
    try:
        return _(games.get(name).title)
    except KeyError:
        return name


def _day(stamp: str) -> str:
    return day_of(parse_stamp(stamp))


def hours_words(hours: float | None) -> str:
    """A median response time as a person says it: "40 minutes", "5 hours", "2.5 days"."""
    if hours is None:
        return _("no moves yet")
    if hours < 1:
        minutes = max(1, round(hours * 60))
        return ngettext("%(num)d minute", "%(num)d minutes", minutes) % {"num": minutes}
    if hours < 48:
        tenths = round(hours, 1)
        # "1.5 hours", "1,5 heure": the plural follows the whole number said.
        return ngettext("%(num)s hour", "%(num)s hours", int(tenths) if tenths != 1 else 1) % {
            "num": number(tenths)
        }
    days = round(hours / 24, 1)
    return ngettext("%(num)s day", "%(num)s days", int(days)) % {"num": number(days)}


def _chart(name: str, rating: GameRating) -> Markup | None:
    if not rating.history:
        return None
    points = [
        Point(parse_stamp(p.at).timestamp(), p.rating, p.deviation, p.provisional, _day(p.at))
        for p in rating.history
    ]
    title = _("%(name)s's rating at %(game)s, game by game") % {
        "name": name,
        "game": _title(rating.game),
    }
    first, last = _day(rating.history[0].at), _day(rating.history[-1].at)
    # Drawn here from numbers and escaped text alone: safe to put in the page as it is.
    return Markup(rating_chart(points, title, first, last))


def _recent(game: RecentGame) -> dict[str, Any]:
    place = _(PLACES[game.place]) if game.place in PLACES else _("%(num)dth") % {"num": game.place}
    return {
        "id": game.id,
        "title": _title(game.game),
        "result": _(RESULTS[game.result]),
        "won": game.result != "lost",
        "place": _("%(place)s of %(players)d") % {"place": place, "players": game.players}
        if game.place
        else "",
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
    return [(game.name, _(game.title)) for game in games.all_games()]


@bp.get("/ratings")
def ratings_index() -> str:
    return render_template("web/ratings.html", board=None, choices=_choices(), chosen=None)


@bp.get("/ratings/<game>")
def ratings(game: str) -> str:
    cursor = request.args.get("cursor") or None
    if cursor is not None and (len(cursor) > 400 or not cursor.isprintable()):
        raise Problem(422, "bad_request", _("This is not a place in the list that it gave."))
    board = leaderboard(referee(), game, cursor, PAGE)
    return render_template(
        "web/ratings.html",
        board=board,
        title=_title(board.game),
        choices=_choices(),
        chosen=board.game,
        first_page=cursor is None,
    )
