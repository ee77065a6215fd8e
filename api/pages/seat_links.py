"""A seat's personal link and a mail's play-now link: how a browser comes to hold a seat.

The personal link `/g/<id>/seat/<token>` carries the seat's secret once:
its answer stores the token in an HttpOnly, SameSite=Strict cookie scoped to
`/g/<id>` and sends the browser on to the clean game URL. The token never
appears in a page, a script or a later URL; that one answer is sent with
`Referrer-Policy: no-referrer`, and the access logs show the link with its
token cut out (`kit.redact`).
That hop is a tiny page with a meta refresh, not a 303: a browser does
not send a Strict cookie on a redirect that began on another site (a
mail reader), so the first game page would otherwise show a spectator's view.
A mail's play-now link `/g/<id>/play/<token>` (`referee.service.play_now`)
hands the browser its seat the same way: same cookie, same hop, same
referrer policy, its token cut out of the logs too.
"""

from __future__ import annotations

from flask import Blueprint, Response, make_response, render_template, url_for
from sqlmodel import Session

from api.http.context import find, referee, session
from api.http.errors import Problem
from api.http.seat_auth import MAX_TOKEN, SEAT_COOKIE, cookie_token
from api.pages.kit import check_csrf, forget_cookie, secure_cookies
from referee.i18n import N_, _
from referee.names import shown as shown_name
from referee.service.play_now import open_seat
from referee.service.submitting import seat_holding
from referee.store import reads

bp = Blueprint("seat_links", __name__)

SEAT_COOKIE_DAYS = 180


def _seat_cookie_path(game_id: str) -> str:
    return url_for("pages.game.game", game_id=game_id)


def cookie_seat(db: Session, game_id: str) -> int | None:
    """The seat whose token this browser holds for this game, if any."""
    token = cookie_token()
    return None if token is None else seat_holding(db, game_id, token)


NO_SEAT_HERE = N_("This browser holds no seat of this game: open your personal link first.")


@bp.get("/g/<game_id>/seat/<token>")
def seat(game_id: str, token: str) -> Response:
    with session() as db:
        game = find(db, game_id)
        number = seat_holding(db, game.id, token) if len(token) <= MAX_TOKEN else None
        seats = reads.seats(db, game.id)
        name = next((shown_name(s.name) for s in seats if s.seat == number), None)
    if number is None:
        raise Problem(404, "not_found", _("This personal link is not a seat of this game."))
    target = url_for("pages.game.game", game_id=game.id)
    response = make_response(render_template("web/opening.html", target=target, name=name))
    return with_seat_cookie(response, game.id, token)


@bp.get("/g/<game_id>/play/<token>")
def play(game_id: str, token: str) -> Response:
    """A mail's play-now link: the browser gets the seat by the personal link's hop."""
    opened = open_seat(referee(), game_id, token)
    target = url_for("pages.game.game", game_id=opened.game_id)
    name = shown_name(opened.name)
    response = make_response(render_template("web/opening.html", target=target, name=name))
    return with_seat_cookie(response, opened.game_id, opened.token)


def with_seat_cookie(response: Response, game_id: str, token: str) -> Response:
    """`response`, storing the seat's token for the pages of that game alone."""
    response.set_cookie(
        SEAT_COOKIE,
        token,
        max_age=SEAT_COOKIE_DAYS * 24 * 3600,
        path=_seat_cookie_path(game_id),
        httponly=True,
        samesite="Strict",
        secure=secure_cookies(),
    )
    return response


@bp.post("/g/<game_id>/leave")
def leave(game_id: str) -> Response:
    check_csrf()
    response = make_response("", 303)
    response.headers["Location"] = url_for("pages.game.game", game_id=game_id)
    return without_seat_cookie(response, game_id)


def without_seat_cookie(response: Response, game_id: str) -> Response:
    """`response`, making the browser forget the seat it holds of that game, if any."""
    return forget_cookie(response, SEAT_COOKIE, _seat_cookie_path(game_id))
