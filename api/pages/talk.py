"""A game page's table talk: the messages beside the board, the form that writes one,
mutes, and the seat's private note (`/g/<id>/messages`, `/g/<id>/mutes/<seat>`,
`/g/<id>/note`).

Only a browser holding one of the game's seats (its cookie) sees or sends any of it;
a spectator's page shows no trace of it. The forms work without JavaScript (each
answers with a redirect to the page); the page's script follows the game's stream and
reads new messages with `GET /g/<id>/messages?after=N` (JSON), which marks them seen.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, Response, jsonify, make_response, request, url_for

from api.http import errors
from api.http.context import referee
from api.http.errors import Problem, status_of
from api.http.seat_auth import cookie_token
from api.pages.kit import JSONish, check_csrf, whole_number
from referee.i18n import _, when
from referee.service import refusals, table_talk
from referee.service.submitting import SeatToken
from referee.service.table_talk import MessageShown, Table
from referee.store.clock import parse_stamp
from referee.talk_text import MESSAGE_LONGEST, NOTE_LONGEST, SENT_LONGEST

bp = Blueprint("talk", __name__)

# The latest messages a page shows: older ones are read by API.
SHOWN = 100


def shown_message(said: MessageShown) -> JSONish:
    """A message as the page and its script show it (text escaped where it is put)."""
    return {
        **said.to_json(),
        # When, in the reader's zone and language, the zone named.
        "at": when(parse_stamp(said.created_at), datetime.now(UTC)),
    }


def talk_context(game_id: str, seat: int | None) -> JSONish | None:
    """The table talk of this browser's seat's page (None for a spectator); what it shows
    counts as seen."""
    if seat is None:
        return None
    found: Table = table_talk.table(referee(), game_id, seat, SHOWN)
    if found.messages:
        table_talk.mark_seen(referee(), game_id, seat, found.messages[-1].seq)
    return {
        "messages": [shown_message(said) for said in found.messages],
        "last": found.messages[-1].seq if found.messages else 0,
        "others": [
            {"seat": other, "name": name, "muted": other in found.muted}
            for other, name in enumerate(found.names)
            if other != seat
        ],
        "note": found.note.text,
        "note_at": when(parse_stamp(found.note.updated_at), datetime.now(UTC))
        if found.note.updated_at
        else "",
        "longest": MESSAGE_LONGEST,
        "note_longest": NOTE_LONGEST,
    }


def _seat() -> SeatToken:
    return SeatToken(cookie_token())


def _back(game_id: str, place: str) -> Response:
    response = make_response("", 303)
    response.headers["Location"] = url_for("pages.game.game", game_id=game_id) + "#" + place
    return response


def _wants_json() -> bool:
    return request.accept_mimetypes.best == "application/json"


@bp.post("/g/<game_id>/messages")
def post(game_id: str) -> Response | tuple[Response, int]:
    """This browser's seat writes a message; a script's request gets it back as JSON."""
    check_csrf()
    text = request.form.get("text", "")[:SENT_LONGEST]
    try:
        said = table_talk.post_message(referee(), game_id, _seat(), text, via="page")
    except refusals.NotFound:
        raise
    except refusals.Refusal as refused:
        if _wants_json():
            # The script shows the detail beside the form, and keeps what was typed.
            return errors.from_refusal(refused), status_of(refused)
        answer = errors.from_refusal(refused)
        raise Problem(
            status_of(refused),
            refused.code,
            _("Your message was not sent: %(reason)s.") % {"reason": refused.reason},
            headers={k: v for k, v in answer.headers.items() if k == "Retry-After"},
        ) from None
    if _wants_json():
        return jsonify(shown_message(said)), 201
    return _back(game_id, "talk")


@bp.get("/g/<game_id>/messages")
def listed(game_id: str) -> Response:
    """The messages after `?after=N` for the page's script (JSON); they count as seen."""
    raw = request.args.get("after", "0")
    if not whole_number(raw):
        raise Problem(400, "bad_request", _("'after' is a message number"))
    try:
        found = table_talk.messages(referee(), game_id, _seat(), int(raw))
    except refusals.Refusal as refused:
        # Only a script asks: its refusals are problem+json, as the board's are.
        return errors.from_refusal(refused)
    if found:
        table_talk.mark_seen(referee(), game_id, _seat(), found[-1].seq)
    return jsonify({"messages": [shown_message(said) for said in found]})


@bp.post("/g/<game_id>/mutes/<int:other>")
def mute(game_id: str, other: int) -> Response:
    """This browser's seat mutes (`on=yes`) or unmutes another seat's messages."""
    check_csrf()
    on = request.form.get("on") == "yes"
    table_talk.set_mute(referee(), game_id, _seat(), other, on=on)
    return _back(game_id, "talk")


@bp.post("/g/<game_id>/note")
def note(game_id: str) -> Response:
    """This browser's seat keeps its private note on the game."""
    check_csrf()
    text = request.form.get("text", "")[:SENT_LONGEST]
    table_talk.set_note(referee(), game_id, _seat(), text)
    return _back(game_id, "note")
