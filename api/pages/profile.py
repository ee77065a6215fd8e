"""The forms of `/me` about how strangers see the player: its public name, and the players
it blocks (`referee.service.profiles`).

Each form carries the pages' CSRF protections (`kit.check_csrf`) and answers
with a redirect back to its part of `/me`; a refused name or an unknown
player's name answers `/me` again with the reason beside the form, having
changed nothing.
"""

from __future__ import annotations

from flask import Blueprint, redirect, request, url_for
from werkzeug.wrappers.response import Response

from api.http.context import referee
from api.http.errors import status_of
from api.http.player_auth import current_player
from api.pages import kit
from api.pages.me import render
from referee.service import refusals
from referee.service.players import MANAGE
from referee.service.profiles import block, set_profile, unblock

bp = Blueprint("profile", __name__)

# What the form keeps of a typed name when it is shown again.
TYPED_MOST = 100


def _words(refused: refusals.Refusal) -> str:
    reason = refused.reason
    return reason[:1].upper() + reason[1:] + "."


@bp.post("/me/name")
def name() -> Response | tuple[str, int]:
    kit.check_csrf()
    player = current_player(MANAGE)
    chosen = request.form.get("name", "")
    try:
        set_profile(referee(), player, chosen)
    except (refusals.BadRequest, refusals.NameTaken) as refused:
        page = render(
            player, errors={"public_name": _words(refused)}, typed={"name": chosen[:TYPED_MOST]}
        )
        return page, status_of(refused)
    return redirect(url_for("pages.me.home", _anchor="name"), 303)


@bp.post("/me/blocks")
def add_block() -> Response | tuple[str, int]:
    kit.check_csrf()
    player = current_player(MANAGE)
    named = request.form.get("name", "").strip()
    try:
        block(referee(), player, named)
    except refusals.NotFound as refused:
        page = render(
            player, errors={"block": _words(refused)}, typed={"block": named[:TYPED_MOST]}
        )
        return page, status_of(refused)
    return redirect(url_for("pages.me.home", _anchor="blocks"), 303)


@bp.post("/me/blocks/remove")
def remove_block() -> Response:
    kit.check_csrf()
    unblock(referee(), current_player(MANAGE), request.form.get("name", ""))
    return redirect(url_for("pages.me.home", _anchor="blocks"), 303)
