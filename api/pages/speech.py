"""Which language a page speaks and which zone it says times in, and the switch that
changes them.

The language: the signed-in player's, else the one this browser chose with the
switch (the `lang` cookie), else the best of `Accept-Language`, else English.
The zone: the signed-in player's, else the browser's own (the `tz` cookie its
script sets), else UTC. Choosing a language while signed in makes it the
player's, for its mail too.
"""

from __future__ import annotations

from flask import Blueprint, redirect, request
from werkzeug.wrappers.response import Response

from api.http.context import referee
from api.http.player_auth import signed_in
from api.pages.kit import check_csrf, secure_cookies
from referee.i18n import LANGUAGES, SOURCE_LANGUAGE, known_language, known_zone, speak
from referee.service import profiles

bp = Blueprint("speech", __name__)

LANGUAGE_COOKIE = "lang"
ZONE_COOKIE = "tz"
_YEAR = 365 * 24 * 3600


def from_accept_language() -> None:
    """Before any request: speak the best language `Accept-Language` asks for, in UTC."""
    speak(request.accept_languages.best_match(LANGUAGES, default=SOURCE_LANGUAGE))


def done(_error: BaseException | None = None) -> None:
    """After any request: back to the source language, in UTC."""
    speak(None)


def choose() -> None:
    """Before a page: speak the reader's language, in the reader's zone."""
    player = signed_in()
    language, zone = (None, None) if player is None else profiles.speech(referee(), player)
    language = language or known_language(request.cookies.get(LANGUAGE_COOKIE))
    # Werkzeug's parser weighs the q-values and lets `fr-FR` match `fr`.
    asked = request.accept_languages.best_match(LANGUAGES, default=SOURCE_LANGUAGE)
    zone = zone or request.cookies.get(ZONE_COOKIE)
    speak(language or asked, zone if known_zone(zone) else None)


def vary(response: Response) -> Response:
    """A page differs by the reader's language and zone: a cache must keep them apart."""
    response.vary.update(("Accept-Language", "Cookie"))
    return response


@bp.post("/language")
def switch() -> Response:
    """The switch on every page: this browser (and the player signed in) speaks the
    language chosen from now on; back to the page it was chosen on."""
    check_csrf()
    language = known_language(request.form.get("language"))
    back = request.form.get("next", "/")
    # Only a path of this site: the switch must not send anyone elsewhere.
    if not back.startswith("/") or back.startswith(("//", "/\\")):
        back = "/"
    response = redirect(back, code=303)
    if language is None:
        return response
    player = signed_in()
    if player is not None:
        profiles.set_profile(referee(), player, language=language)
    response.set_cookie(
        LANGUAGE_COOKIE,
        language,
        max_age=_YEAR,
        path="/",
        secure=secure_cookies(),
        httponly=True,
        samesite="Lax",
    )
    return response
