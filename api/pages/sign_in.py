"""Signing in with a browser: ask for a link, follow it, press "Sign in"; and sign out.

`/me/sign-in` asks for a link by mail (the same page follows whatever the
address), or shows who the browser is signed in as. The mailed link
`/me/sign-in/<token>` only shows a page with a button: mail scanners
(Outlook Safe Links, Gmail) open the links of a mail before its reader
does, so a GET must not spend it; the button's POST does, and sets the
session cookie `player` (HttpOnly, SameSite=Lax, Path=/, Secure behind
https). That page holds the token in its URL, so it is sent with
`Referrer-Policy: no-referrer`, and access logs show it cut out
(`kit.redact`). Every form carries the pages' CSRF protections
(`kit.check_csrf`): the button's too, so no other site can sign a browser
in as someone else.
"""

from __future__ import annotations

from flask import Blueprint, Response, make_response, redirect, render_template, request, url_for

from api.http.context import referee
from api.http.errors import status_of
from api.http.player_auth import PLAYER_COOKIE, signed_in
from api.pages import kit
from api.pages.seat_links import without_seat_cookie
from api.schemas.sign_in import SignInIn
from referee.i18n import _
from referee.service import players, refusals, signing_in

bp = Blueprint("sign_in", __name__)

# Where a browser goes once signed in: the player's home (its own page, `/me`).
HOME = "/me"


@bp.errorhandler(refusals.SignInLinkNotValid)
def _link_not_valid(refused: refusals.SignInLinkNotValid) -> tuple[str, int]:
    page = render_template("web/sign_in_link.html", valid=False, detail=refused.reason)
    return page, status_of(refused)


@bp.get("/me/sign-in")
def ask() -> str:
    player = signed_in()
    return render_template(
        "web/sign_in.html", player=None if player is None else player.address, asked=False
    )


@bp.post("/me/sign-in")
def asked() -> tuple[str, int]:
    kit.check_csrf()
    email = request.form.get("email", "").strip()
    problem = _email_problem(email)
    if problem is not None:
        page = render_template("web/sign_in.html", player=None, asked=False, problem=problem)
        return page, 422
    signing_in.ask_sign_in(referee(), email)
    page = render_template(
        "web/sign_in.html",
        player=None,
        asked=True,
        minutes=signing_in.LINK_MINUTES,
        every=signing_in.EVERY_MINUTES,
    )
    return page, 200


def _email_problem(email: str) -> str | None:
    """What is wrong with a typed address, as the REST request's schema says: only what
    no address could have, so it tells nothing of any address."""
    if not email:
        return _("Type your mail address.")
    if SignInIn().validate({"email": email}):
        return _("This is not a mail address.")
    return None


@bp.get("/me/sign-in/<token>")
def link(token: str) -> str:
    signing_in.check_link(referee(), token)
    return render_template("web/sign_in_link.html", valid=True, path=request.path)


@bp.post("/me/sign-in/<token>")
def spend(token: str) -> Response:
    kit.check_csrf(referrerless=True)
    cookie = signing_in.redeem(referee(), token)
    response = make_response(redirect(HOME, 303))
    response.set_cookie(
        PLAYER_COOKIE,
        cookie,
        max_age=players.SESSION_DAYS * 24 * 3600,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=kit.secure_cookies(),
    )
    return response


@bp.post("/me/sign-out")
def sign_out() -> Response:
    kit.check_csrf()
    games = players.sign_out(referee(), request.cookies.get(PLAYER_COOKIE))
    response = make_response(redirect(url_for(".ask"), 303))
    response.delete_cookie(
        PLAYER_COOKIE, path="/", httponly=True, samesite="Lax", secure=kit.secure_cookies()
    )
    # The seats its play-now links gave this browser go with the player.
    for game_id in games:
        without_seat_cookie(response, game_id)
    return response
