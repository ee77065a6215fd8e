"""The links every mail carries for its recipient: accept the referee's mail, or stop it.

`/accept/<token>` and `/unsubscribe/<token>` name an address by an HMAC of
it (`keys.address_token`). A GET only shows a page with a button, since
mail scanners follow links; the POST acts. The unsubscribe POST is RFC
8058's one-click: it stops the address at once, asking nothing (mail
programs send it without a browser, so it needs no form token; the token
in the path is the proof).
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request

from api.http.context import referee
from api.http.errors import Problem, status_of
from api.pages import kit
from referee.service import consent
from referee.service.refusals import Refusal

bp = Blueprint("consent", __name__)


@bp.after_request
def _headers(response: Response) -> Response:
    # The path holds a secret: it must not leave in a Referer.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = kit.CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.errorhandler(Problem)
def _problem_page(error: Problem) -> tuple[str, int]:
    return render_template("web/error.html", status=error.status, detail=error.detail), error.status


@bp.errorhandler(Refusal)
def _refusal_page(refused: Refusal) -> tuple[str, int]:
    status = status_of(refused)
    return render_template("web/error.html", status=status, detail=refused.reason), status


@bp.get("/accept/<token>")
def ask_accept(token: str) -> str:
    consent.check_link(referee(), consent.ACCEPT, token)
    return render_template("web/consent.html", action="accept", done=False, path=request.path)


@bp.post("/accept/<token>")
def accept(token: str) -> str:
    consent.accept_address(referee(), token)
    return render_template("web/consent.html", action="accept", done=True, path=request.path)


@bp.get("/unsubscribe/<token>")
def ask_stop(token: str) -> str:
    consent.check_link(referee(), consent.STOP, token)
    return render_template("web/consent.html", action="stop", done=False, path=request.path)


@bp.post("/unsubscribe/<token>")
def stop(token: str) -> str:
    consent.stop_address(referee(), token)
    return render_template("web/consent.html", action="stop", done=True, path=request.path)
