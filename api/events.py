"""Following a game without polling: `GET /v1/games/{id}/events`, a stream of Server-Sent Events.

One event per change of the game (its version), with the version as the
event's `id`, so that a client that reconnects with `Last-Event-ID` gets
the current state again only if it is behind. Versions in between may be
skipped: an event always carries the whole view at its version, never a
difference. The stream ends after the event of a finished game.

Each open stream holds one thread of its API process (gunicorn's gthread
workers, `referee serve`), while it waits and while it writes, and no
database connection; `REFEREE_EVENTS_MAX` bounds them per process, beyond
which the answer is 503 with `Retry-After`, and `REFEREE_EVENTS_PER_CLIENT`
those of one client (its address, as for rate limits), beyond which it is 429.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, request
from flask_smorest import Blueprint

from api import auth, throttle
from api.context import find, referee, session
from api.errors import BAD_QUERY, BAD_TOKEN, NO_GAME, SCOPE, Problem, declared, problem
from api.following import Change, Follower, NoRoom, following, read_change
from api.game_schemas import COMPONENTS
from api.games import SEAT
from api.me_auth import still_signed_in
from referee.service.players import is_player_token

blp = Blueprint("events", __name__, url_prefix="/v1", description="Following a game as it changes")

# Seconds a client turned away for want of room should wait before trying again.
RETRY_AFTER = 5
KEEPALIVE = b": keepalive\n\n"


def _last_event_id() -> int | None:
    """The version the client last had (`Last-Event-ID`), or None; 400 for anything but a number."""
    given = request.headers.get("Last-Event-ID")
    if given is None or given.strip() == "":
        return None
    text = given.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise Problem(400, "bad_request", "Last-Event-ID must be the version of an earlier event")
    return int(text)


def _stream(
    follower: Follower,
    seat: int | None,
    now: Change,
    after: int | None,
    keepalive: float,
    holds: Callable[[], bool] | None = None,
) -> Iterator[bytes]:
    # Runs after the request's context has gone: it is handed what it needs.
    # A client that has the current version gets only what comes next; one
    # that is behind (or names a version that never was) gets it at once.
    sent = now.version if after == now.version else -1
    while True:
        change = follower.next(sent, keepalive)
        # Followed with a player token, revoked meanwhile: the seat's view is told no more.
        if holds is not None and not holds():
            return
        if change is None:
            # Also how a client that went away is noticed: this write fails.
            yield KEEPALIVE
            continue
        yield change.event(seat)
        sent = change.version
        if change.over:
            return


def busy(full: NoRoom) -> Response:
    """The answer to a stream turned away for want of room (a player's stream too)."""
    answer = (
        problem(
            429,
            "too_many_streams",
            "this address follows as many games as it may at once; close a stream first",
        )
        if full.for_client
        else problem(
            503,
            "too_many_followers",
            "this server follows as many games as it may; try again soon",
        )
    )
    answer.headers["Retry-After"] = str(RETRY_AFTER)
    return answer


# The component of each event's `data` (registered by create_app).
GAME_EVENT = "GameEvent"
_STREAM_DOC = {
    "security": SEAT,
    "parameters": [
        {
            "in": "header",
            "name": "Last-Event-ID",
            "required": False,
            "schema": {"type": "string", "pattern": "^[0-9]{0,12}$"},
            "description": "the version of the last event the client has (empty: none)",
        },
        *auth.SEAT_PARAMETERS,
    ],
    "responses": {
        "200": {
            "description": (
                "Server-Sent Events: one per change of the game, `id:` its version, "
                "`data:` {game_id, version, status, to_act, result, view}; "
                "`: keepalive` comments between them; the stream ends after the event "
                "of a finished game"
            ),
            "content": {
                "text/event-stream": {
                    # Each event: its fields as Server-Sent Events name them.
                    "schema": {
                        "type": "object",
                        "required": ["id", "data"],
                        "properties": {
                            "id": {
                                "type": "string",
                                "pattern": "^[0-9]+$",
                                "description": "the game's version",
                            },
                            "event": {"type": "string", "enum": ["message"]},
                            "data": {
                                "type": "string",
                                "contentMediaType": "application/json",
                                "contentSchema": {"$ref": COMPONENTS + GAME_EVENT},
                            },
                        },
                    }
                }
            },
        },
        "204": {"description": "the game is over and the client has its last version"},
    },
}


def stream_errors(described: dict[int, str]) -> dict[Any, Any]:
    """The documented errors of an event stream: `described`, and the 429 and 503 of a
    server without room (a player's stream too), with `Retry-After`."""
    errors: dict[Any, Any] = declared(
        {
            **described,
            429: "too_many_streams: this client holds as many event streams as it may; "
            "close one, or retry after `Retry-After` seconds",
            503: "too_many_followers: this server follows as many games as it may; "
            "retry after `Retry-After` seconds",
        }
    )["responses"]
    retry = {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}
    errors[429]["headers"] = errors[503]["headers"] = retry
    return errors


_ERRORS = stream_errors(
    {
        400: "bad_request: a Last-Event-ID that is not a version",
        401: BAD_TOKEN,
        403: SCOPE,
        404: NO_GAME,
        422: BAD_QUERY,
    }
)


@blp.route("/games/<game_id>/events", methods=["GET"])
@blp.doc(operationId="followGame", **_STREAM_DOC)
@blp.doc(responses=_ERRORS)
def events(game_id: str) -> Response:
    """Follow the game: an event at each change, as the caller may see it (stream)."""
    after = _last_event_id()
    with session() as db:
        game = find(db, game_id)
        seat = auth.viewer(db, game.id)
        now = read_change(db, game)
    token = auth.bearer()
    holds = still_signed_in() if token is not None and is_player_token(token) else None
    if now.over and after is not None and after >= now.version:
        # Nothing will follow; 204 also tells an EventSource not to reconnect.
        return Response(status=204)
    try:
        follower = following(referee()).admit(now, throttle.client())
    except NoRoom as full:
        return busy(full)
    response = Response(
        _stream(follower, seat, now, after, referee().settings.events_keepalive, holds),
        mimetype="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            # A buffering proxy (nginx) must pass each event on at once.
            "X-Accel-Buffering": "no",
        },
    )
    response.call_on_close(follower.leave)
    return response
