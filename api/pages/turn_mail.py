"""The page `/me/settings`: a signed-in player's form for how it is told, and its games to mute.

Forms carry the CSRF protections of every page (`kit.check_csrf`: SameSite
cookies, the Origin check, the double-submit form token); each answers
with a redirect back to the page (post/redirect/get), or the page again
with the reason when a setting is refused.
"""

from __future__ import annotations

from dataclasses import replace

from flask import Blueprint, redirect, render_template, request, url_for
from werkzeug.wrappers.response import Response

from api.http.context import referee
from api.http.player_auth import current_player
from api.pages import kit
from referee import games
from referee.names import shown as shown_name
from referee.service import refusals
from referee.service.players import MANAGE, Player
from referee.service.turn_mail import (
    RunningGame,
    change_settings,
    mute_game,
    running_games,
    settings_of,
)
from referee.store.tables import TurnMail

bp = Blueprint("turn_mail", __name__)


def shown(game: RunningGame) -> RunningGame:
    """A game's players' names as every page shows them (`names.shown`; `Seat N` when empty)."""
    names = [shown_name(name) or f"Player {seat + 1}" for seat, name in enumerate(game.names)]
    return replace(game, names=names)


def _page(player: Player, message: str | None = None, status: int = 200) -> tuple[str, int]:
    told = settings_of(referee(), player)
    page = render_template(
        "web/me_settings.html",
        chosen=told.settings,
        games=[shown(game) for game in running_games(referee(), player)],
        kinds=[kind.value for kind in TurnMail],
        rules=[(rules.name, rules.title) for rules in games.all_games()],
        message=message,
        saved=request.args.get("saved") == "1",
    )
    return page, status


@bp.get("/me/settings")
def settings_page() -> tuple[str, int]:
    return _page(current_player(MANAGE))


def _form_hours() -> list[int] | str:
    """The hours ticked on the form, or what is wrong with them."""
    hours = []
    for given in request.form.getlist("hour"):
        if not kit.whole_number(given):
            return "Each digest hour is a whole number from 0 to 23."
        hours.append(int(given))
    return hours


@bp.post("/me/settings")
def save_settings() -> Response | tuple[str, int]:
    kit.check_csrf()
    player = current_player(MANAGE)
    hours = _form_hours()
    if isinstance(hours, str):
        return _page(player, hours, 422)
    changes = {
        "turn_mail": request.form.get("turn_mail", ""),
        "digest_hours": hours,
        "reminders": request.form.get("reminders") == "on",
        "seek_news": request.form.getlist("seek_news"),
    }
    try:
        change_settings(referee(), player, changes)
    except refusals.BadRequest as refused:
        return _page(player, f"Not saved: {refused.reason}.", 422)
    return redirect(url_for(".settings_page", saved="1"), 303)


@bp.post("/me/settings/games/<game_id>/mute")
def mute(game_id: str) -> Response:
    kit.check_csrf()
    muted = request.form.get("muted") == "yes"
    mute_game(referee(), current_player(MANAGE), game_id, muted)
    return redirect(url_for(".settings_page") + f"#game-{game_id}", 303)
