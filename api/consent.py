"""The links every mail carries for its recipient: accept the referee's mail, or stop it.

`/accept/<token>` and `/unsubscribe/<token>` name an address by an HMAC of
it (`keys.address_token`). A GET only shows a page with a button, since
mail scanners follow links; the POST acts. The unsubscribe POST is RFC
8058's one-click: it stops the address at once, asking nothing (mail
programs send it without a browser, so it needs no form token; the token
in the path is the proof).
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, render_template, request
from sqlmodel import Session

from api import web
from api.errors import Problem
from referee.queue import deliver_soon
from referee.store import addresses
from referee.store.db import transaction
from referee.store.tables import Address

bp = Blueprint("consent", __name__, template_folder="templates")

_log = logging.getLogger(__name__)


@bp.after_request
def _headers(response: Response) -> Response:
    # The path holds a secret: it must not leave in a Referer.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = web.CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.errorhandler(Problem)
def _problem_page(error: Problem) -> tuple[str, int]:
    return render_template("web/error.html", status=error.status, detail=error.detail), error.status


def _address_in(db: Session, purpose: str, token: str) -> Address:
    """The address a link's token names; a 404 page for any other token."""
    found = addresses.by_token(db, purpose, token)
    if found is None:
        raise Problem(404, "not_found", "This link is not valid (or no longer).")
    return found


def _address(purpose: str, token: str) -> Address:
    with transaction() as db:
        return _address_in(db, purpose, token)


@bp.get("/accept/<token>")
def ask_accept(token: str) -> str:
    _address("accept", token)
    return render_template("web/consent.html", action="accept", done=False, path=request.path)


@bp.post("/accept/<token>")
def accept(token: str) -> str:
    with transaction() as db:
        fresh = addresses.accept(db, _address_in(db, "accept", token))
    if fresh:
        try:
            deliver_soon()
        except Exception:
            # The delivery sweep sends the invitations once the broker is back.
            _log.exception("could not enqueue delivery after an acceptance")
    return render_template("web/consent.html", action="accept", done=True, path=request.path)


@bp.get("/unsubscribe/<token>")
def ask_stop(token: str) -> str:
    _address("stop", token)
    return render_template("web/consent.html", action="stop", done=False, path=request.path)


@bp.post("/unsubscribe/<token>")
def stop(token: str) -> str:
    with transaction() as db:
        addresses.stop(db, _address_in(db, "stop", token))
    return render_template("web/consent.html", action="stop", done=True, path=request.path)
