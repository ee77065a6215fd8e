"""The page `/me/settings`: a signed-in player's form for how it is told (its language and
time zone among it), and its games to mute.

Forms carry the CSRF protections of every page (`kit.check_csrf`: SameSite
cookies, the Origin check, the double-submit form token); each answers
with a redirect back to the page (post/redirect/get), or the page again
with the reason when a setting is refused, holding what was typed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for
from werkzeug.wrappers.response import Response

from api.http.context import referee
from api.http.player_auth import current_player
from api.pages import kit
from api.pages.in_words import seat_words
from referee import games
from referee.i18n import _, known_language, known_zone
from referee.i18n import language as current_language
from referee.names import shown as shown_name
from referee.service import profiles, refusals
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

# The zones the time-zone field offers as one types (any IANA zone may be typed): a short
# list keeps the page light.
COMMON_ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Lisbon",
    "Europe/Paris",
    "Europe/Brussels",
    "Europe/Luxembourg",
    "Europe/Zurich",
    "Europe/Berlin",
    "Europe/Amsterdam",
    "Europe/Madrid",
    "Europe/Rome",
    "Europe/Vienna",
    "Europe/Warsaw",
    "Europe/Stockholm",
    "Europe/Helsinki",
    "Europe/Athens",
    "Europe/Istanbul",
    "Europe/Moscow",
    "Africa/Casablanca",
    "Africa/Algiers",
    "Africa/Tunis",
    "Africa/Dakar",
    "Africa/Abidjan",
    "Africa/Kinshasa",
    "Africa/Johannesburg",
    "Indian/Reunion",
    "Asia/Dubai",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Noumea",
    "Pacific/Tahiti",
    "Pacific/Auckland",
    "America/Montreal",
    "America/Toronto",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Guadeloupe",
    "America/Martinique",
    "America/Cayenne",
    "America/Sao_Paulo",
)


def shown(game: RunningGame) -> RunningGame:
    """A game's players' names as every page shows them (`names.shown`; `Seat N` when empty)."""
    names = [shown_name(name) or seat_words(seat) for seat, name in enumerate(game.names)]
    return replace(game, names=names)


def _page(
    player: Player,
    message: str | None = None,
    status: int = 200,
    typed: dict[str, Any] | None = None,
    zone_error: str | None = None,
) -> tuple[str, int]:
    """The page; `typed`: the form as it was sent, shown again when it was refused."""
    if typed is None:
        chosen: Any = settings_of(referee(), player).settings
        language, zone = profiles.speech(referee(), player)
        # Not chosen yet: the language the page speaks, and no zone (UTC).
        speech = {"language": language or current_language(), "time_zone": zone or ""}
    else:
        chosen, speech = typed, typed
    page = render_template(
        "web/me_settings.html",
        chosen=chosen,
        speech=speech,
        zones=COMMON_ZONES,
        zone_error=zone_error,
        games=[shown(game) for game in running_games(referee(), player)],
        kinds=[kind.value for kind in TurnMail],
        rules=[(rules.name, _(rules.title)) for rules in games.all_games()],
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
            return _("Each digest hour is a whole number from 0 to 23.")
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
    language = known_language(request.form.get("language")) or None
    zone = request.form.get("time_zone", "").strip()[:64]
    if zone and known_zone(zone) is None:
        # Nothing is saved, and the form comes back as it was typed, the zone marked.
        typed = {**changes, "language": language, "time_zone": zone}
        said = _(
            "“%(zone)s” is not a time zone: type one such as Europe/Paris or America/New_York."
        ) % {"zone": zone}
        return _page(player, _("Not saved: the time zone is not known."), 422, typed, said)
    try:
        change_settings(referee(), player, changes)
        profiles.set_profile(referee(), player, language=language, time_zone=zone or None)
    except refusals.BadRequest as refused:
        return _page(player, _("Not saved: %(reason)s.") % {"reason": refused.reason}, 422)
    return redirect(url_for(".settings_page", saved="1"), 303)


@bp.post("/me/settings/games/<game_id>/mute")
def mute(game_id: str) -> Response:
    kit.check_csrf()
    muted = request.form.get("muted") == "yes"
    mute_game(referee(), current_player(MANAGE), game_id, muted)
    return redirect(url_for(".settings_page") + f"#game-{game_id}", 303)
