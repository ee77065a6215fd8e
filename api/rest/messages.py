"""Table talk over REST: a game's messages between its seats, mutes and private notes.

Only the game's seats (a seat token, or a player token as the player's seat)
read or write any of it: a spectator, another game's seat or a stranger is
`403 not_a_seat`.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http import seat_auth
from api.http.context import referee
from api.http.errors import BAD_QUERY, NO_GAME, NOT_JSON, declared
from api.schemas.messages import (
    MessageIn,
    MessageOut,
    MessagesArgs,
    MessagesOut,
    MutesOut,
    NoteIn,
    NoteOut,
)
from referee.service import table_talk
from referee.talk_text import MESSAGE_LONGEST

blp = Blueprint(
    "messages",
    __name__,
    url_prefix="/v1/games",
    description="Table talk: messages between a game's seats, mutes and private notes",
)

NOT_A_SEAT = (
    "not_a_seat: no token, or a seat or player token that is not a seat of this game "
    "(a spectator, another game's seat, a stranger); forbidden: a player token without "
    "the scope this needs (`read` to see, `play` to write)"
)
_BAD_TOKEN = "unauthorized: a header that is not `Bearer <token>`, or a revoked player token"
_SEAT_ONLY = {401: _BAD_TOKEN, 403: NOT_A_SEAT, 404: NO_GAME}


@blp.route("/<game_id>/messages", methods=["POST"])
@blp.arguments(MessageIn())
@blp.response(201, MessageOut)
@blp.doc(
    operationId="postMessage",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            **_SEAT_ONLY,
            400: "bad_json: the body is not JSON",
            415: NOT_JSON,
            422: f"{BAD_QUERY}; bad_message: nothing shown once trimmed, or more than "
            f"{MESSAGE_LONGEST} characters",
            429: f"too_many_messages: this seat wrote {table_talk.PER_HOUR} messages in the "
            "last hour (`Retry-After`)",
        }
    ),
)
def post(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Write a message to the game's other seats (plain text)."""
    said = table_talk.post_message(referee(), game_id, seat_auth.caller(), body["text"], via="api")
    return said.to_json()


@blp.route("/<game_id>/messages", methods=["GET"])
@blp.arguments(MessagesArgs(), location="query")
@blp.response(200, MessagesOut)
@blp.doc(
    operationId="listMessages",
    security=seat_auth.AS_SEAT,
    **declared({**_SEAT_ONLY, 422: BAD_QUERY}),
)
def listed(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The game's messages after number `after`, as the caller's seat sees them; those
    returned count as seen by the seat."""
    seat = seat_auth.caller()
    found = table_talk.messages(referee(), game_id, seat, args.get("after", 0))
    if found:
        table_talk.mark_seen(referee(), game_id, seat, found[-1].seq)
    return {
        "messages": [said.to_json() for said in found],
        "muted": list(table_talk.muted(referee(), game_id, seat)),
    }


_MUTE_DOC = {
    "security": seat_auth.AS_SEAT,
    "parameters": seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            **_SEAT_ONLY,
            422: f"{BAD_QUERY}; bad_request: not another seat of this game",
        }
    ),
}


@blp.route("/<game_id>/mutes/<int:other>", methods=["PUT"])
@blp.response(200, MutesOut)
@blp.doc(operationId="muteSeat", **_MUTE_DOC)
def mute(game_id: str, other: int) -> dict[str, Any]:
    """Hide another seat's messages from the caller's seat (again: no change)."""
    seat = seat_auth.caller()
    return {"muted": list(table_talk.set_mute(referee(), game_id, seat, other, on=True))}


@blp.route("/<game_id>/mutes/<int:other>", methods=["DELETE"])
@blp.response(200, MutesOut)
@blp.doc(operationId="unmuteSeat", **_MUTE_DOC)
def unmute(game_id: str, other: int) -> dict[str, Any]:
    """Show another seat's messages to the caller's seat again."""
    seat = seat_auth.caller()
    return {"muted": list(table_talk.set_mute(referee(), game_id, seat, other, on=False))}


def _note(found: table_talk.Note) -> dict[str, Any]:
    return {"text": found.text, "updated_at": found.updated_at}


@blp.route("/<game_id>/note", methods=["GET"])
@blp.response(200, NoteOut)
@blp.doc(
    operationId="getNote",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared({**_SEAT_ONLY, 422: BAD_QUERY}),
)
def get_note(game_id: str) -> dict[str, Any]:
    """The caller's seat's private note on the game: no one else reads it."""
    return _note(table_talk.note(referee(), game_id, seat_auth.caller()))


@blp.route("/<game_id>/note", methods=["PUT"])
@blp.arguments(NoteIn())
@blp.response(200, NoteOut)
@blp.doc(
    operationId="putNote",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            **_SEAT_ONLY,
            400: "bad_json: the body is not JSON",
            415: NOT_JSON,
            422: f"{BAD_QUERY}; bad_message: a note over 4000 characters",
        }
    ),
)
def put_note(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Keep the caller's seat's private note on the game (empty: delete it)."""
    return _note(table_talk.set_note(referee(), game_id, seat_auth.caller(), body["text"]))
