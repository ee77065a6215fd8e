"""The page `/me/vacation`: a signed-in player's vacation, its allowance, a form to set
one and a button to end it.

Its forms are protected as the game pages' are (`kit.check_csrf`: the
browser's Origin and the double-submit form token); the player is the one
the session cookie signs in. Times typed without an offset are in the reader's zone
(the player's, else the browser's, else UTC), as the page says.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, make_response, render_template, request, url_for

from api.http.context import referee
from api.http.errors import Problem, status_of
from api.http.player_auth import signed_in
from api.pages import kit
from api.schemas.vacation import shown
from referee.i18n import _, when, zone
from referee.service import refusals
from referee.service.players import MANAGE, Player
from referee.service.vacations import end_vacation, set_vacation, standing

bp = Blueprint("vacation", __name__)

MAX_TIME = 40


def _player() -> Player:
    player = signed_in()
    if player is None:
        raise Problem(401, "unauthorized", _("Sign in first: ask for a link by mail on /me."))
    player.require(MANAGE)
    return player


def _page(player: Player, message: str | None = None, typed: dict[str, str] | None = None) -> str:
    said = shown(standing(referee(), player))
    vacation = said.get("vacation")
    if vacation:
        # The times in words, in the reader's zone; the machine-readable ones stay UTC.
        vacation = dict(vacation)
        for key in ("starts", "ends"):
            vacation[key] = when(datetime.fromisoformat(vacation[f"{key}_at"]))
        said["vacation"] = vacation
    return render_template(
        "web/vacation.html",
        address=player.address,
        message=message,
        typed=typed or {},
        zone_name=zone().key,
        **said,
    )


def _time(form: dict[str, str], name: str) -> datetime | None:
    """A time typed in the form (a browser's `datetime-local`, in the reader's zone), or
    None when empty."""
    text = form.get(name, "").strip()
    if not text:
        return None
    try:
        if len(text) > MAX_TIME:
            raise ValueError(text)
        found = datetime.fromisoformat(text)
        return (
            found.replace(tzinfo=zone()).astimezone(UTC)
            if found.tzinfo is None
            else found.astimezone(UTC)
        )
    except (ValueError, OverflowError):
        raise refusals.BadRequest(
            _("%(name)r is not a time such as 2026-12-20T08:00") % {"name": name},
            errors={name: ["bad"]},
        ) from None


@bp.get("/me/vacation")
def page() -> str:
    return _page(_player())


@bp.post("/me/vacation")
def set_it() -> Response | tuple[str, int]:
    kit.check_csrf()
    player = _player()
    form: dict[str, Any] = {key: str(value) for key, value in request.form.items()}
    typed = {name: form.get(name, "")[:MAX_TIME] for name in ("from", "until")}
    try:
        until = _time(form, "until")
        if until is None:
            raise refusals.BadRequest(_("say until when"), errors={"until": ["missing"]})
        set_vacation(referee(), player, _time(form, "from"), until)
    except (refusals.BadRequest, refusals.VacationRefused) as refused:
        return _page(player, refused.reason, typed), status_of(refused)
    return _back()


@bp.post("/me/vacation/end")
def end_it() -> Response:
    kit.check_csrf()
    end_vacation(referee(), _player())
    return _back()


def _back() -> Response:
    response = make_response("", 303)
    response.headers["Location"] = url_for(".page")
    return response
