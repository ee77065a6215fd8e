"""One stream for all my games: `GET /v1/me/events`, Server-Sent Events of a player's games.

An event when a game of the player starts or invites it, changes, asks it
to act, or ends (`referee.service.my_events` says which and what it
carries: public fields only, never a view). Each event's `id` is a mark
(microseconds since 1970, never going down); `Last-Event-ID` (or `since`,
for a first connection that already has a mark, such as the `/me` page
rendered at that moment) resumes: what changed after it comes at once.
The stream opens with an `id:` line alone, which fires no event in a
browser but gives a client its first mark to resume from.

The caller is a player token with the `read` scope, or a signed-in
browser; the stream ends at its first wake (an event, a keepalive) after
the token is revoked or the browser signed out. The stream holds a
thread, counted with the games' streams (`api/events.py`, the same 429
and 503), and never ends by itself otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from flask import Response, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from api import throttle
from api.context import referee
from api.errors import BAD_QUERY, Problem
from api.events import KEEPALIVE, busy, stream_errors
from api.following import NoRoom
from api.game_schemas import COMPONENTS
from api.me_auth import current_player, still_signed_in
from api.my_following import PlayerFollower, player_following
from referee.service.my_events import (
    KINDS,
    Standing,
    event_data,
    is_mark,
    kind_of,
    mark_now,
    resumed,
    standings,
)
from referee.service.players import READ

blp = Blueprint("my_events", __name__, url_prefix="/v1", description="Following all my games")

# The component of each event's `data` (registered by create_app).
PLAYER_EVENT = "PlayerEvent"
MAX_MARK = 20


class PlayerEventOut(Schema):
    """What each event of `GET /v1/me/events` carries as its JSON `data`."""

    game_id = fields.String(required=True)
    game = fields.String(required=True, metadata={"description": "the game's name (`mandala`)"})
    kind = fields.String(
        required=True,
        validate=validate.OneOf(KINDS),
        metadata={
            "description": "started: a new game of mine (invited: one that asks me to accept "
            "the referee's mail first); ended; your_turn: one of my seats must act; "
            "changed: anything else"
        },
    )
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "over"]))
    to_act = fields.List(fields.Integer(), required=True)
    my_turn = fields.Boolean(required=True)
    result = fields.Dict(required=True, allow_none=True)


def _mark_given() -> int | None:
    """The mark the client has: `Last-Event-ID` (an EventSource reconnecting), else
    `?since=`; None for neither; 400 for anything but a mark."""
    given = request.headers.get("Last-Event-ID", "").strip() or request.args.get("since", "")
    if given == "":
        return None
    well_formed = given.isascii() and given.isdigit() and len(given) <= MAX_MARK
    # A mark beyond any time a stream wrote (years ahead) is no earlier event's either.
    if not well_formed or not is_mark(int(given)):
        raise Problem(400, "bad_request", "Last-Event-ID and since must be an earlier event's id")
    return int(given)


def _event(mark: int, now: Standing, kind: str) -> bytes:
    text = json.dumps(event_data(now, kind), separators=(",", ":"), sort_keys=True)
    return f"id: {mark}\ndata: {text}\n\n".encode()


def _stream(
    follower: PlayerFollower,
    known: dict[str, Standing],
    after: int | None,
    keepalive: float,
    holds: Callable[[], bool],
) -> Iterator[bytes]:
    # Runs after the request's context has gone: it is handed what it needs.
    mark = mark_now(after or 0)
    if after is not None:
        for now, kind in resumed(known, after):
            yield _event(mark, now, kind)
    yield f"id: {mark}\n\n".encode()
    while True:
        news = follower.next(known, keepalive)
        # The token revoked or the browser signed out meanwhile: nothing more is told.
        if not holds():
            return
        if not news:
            # Also how a client that went away is noticed: this write fails.
            yield KEEPALIVE
            continue
        for now in news:
            mark = mark_now(mark)
            yield _event(mark, now, kind_of(now, new=now.game_id not in known))
            known[now.game_id] = now


_PARAMETERS = [
    {
        "in": "header",
        "name": "Last-Event-ID",
        "required": False,
        "schema": {"type": "string", "pattern": "^[0-9]{0,20}$"},
        "description": "the id of the last event the client has (empty: none)",
    },
    {
        "in": "query",
        "name": "since",
        "required": False,
        "schema": {"type": "string", "pattern": "^[0-9]{1,20}$"},
        "description": "as Last-Event-ID, for a first connection (the header wins)",
    },
]
_STREAM_DOC = {
    "security": [{"player": []}, {"session": []}],
    "parameters": _PARAMETERS,
    "responses": {
        "200": {
            "description": (
                "Server-Sent Events: first an `id:` line alone (the mark to resume from), "
                "then one event per change of one of my games, `id:` a mark, `data:` "
                "{game_id, game, kind, version, status, to_act, my_turn, result}; "
                "`: keepalive` comments between them"
            ),
            "content": {
                "text/event-stream": {
                    "schema": {
                        "type": "object",
                        "required": ["id"],
                        "properties": {
                            "id": {
                                "type": "string",
                                "pattern": "^[0-9]+$",
                                "description": "a mark: microseconds since 1970, UTC",
                            },
                            "event": {"type": "string", "enum": ["message"]},
                            "data": {
                                "type": "string",
                                "contentMediaType": "application/json",
                                "contentSchema": {"$ref": COMPONENTS + PLAYER_EVENT},
                            },
                        },
                    }
                }
            },
        },
    },
}
_ERRORS = stream_errors(
    {
        400: "bad_request: a Last-Event-ID or since that is not a mark",
        401: "unauthorized: neither a player token (rp_...) nor a signed-in browser",
        403: "forbidden: this player token's scopes do not include read",
        422: BAD_QUERY,
    }
)


@blp.route("/me/events", methods=["GET"])
@blp.doc(operationId="followMyGames", **_STREAM_DOC)
@blp.doc(responses=_ERRORS)
def my_events() -> Response:
    """Follow all my games: an event when one starts, changes, asks me to act or ends (stream)."""
    player = current_player(READ)
    after = _mark_given()
    hub = player_following(referee())
    try:
        follower = hub.admit(player.address, throttle.client())
    except NoRoom as full:
        return busy(full)
    try:
        # Read once admitted: a change made meanwhile is in this read or heard by the hub.
        known = standings(referee(), [player.address])[player.address]
        follower.offer(known)
    except Exception:
        follower.leave()
        raise
    response = Response(
        _stream(
            follower,
            dict(known),
            after,
            referee().settings.events_keepalive,
            still_signed_in(),
        ),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.call_on_close(follower.leave)
    return response
