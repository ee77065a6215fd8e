"""One stream for all my games: `GET /v1/me/events`, Server-Sent Events of a player's games.

An event when a game of the player starts or invites it, changes, asks it
to act, or ends, and when one of its open games invites it, starts, is
withdrawn or expires (`referee.service.my_events` says which and what each
carries: public fields and names only, never a view or an address). Each event's `id` is a mark
(microseconds since 1970, never going down); `Last-Event-ID` (or `since`,
for a first connection that already has a mark, such as the `/me` page
rendered at that moment) resumes: what changed after it comes at once.
The stream opens with an `id:` line alone, which fires no event in a
browser but gives a client its first mark to resume from.

The caller is a player token with the `read` scope, or a signed-in
browser; the stream ends at its first wake (an event, a keepalive) after
the token is revoked or the browser signed out. The stream holds a
thread, counted with the games' streams (`api/streams/games.py`, the same
429 and 503), and never ends by itself otherwise.

The streams of a process are told by its `PlayerHub` (`api/streams/hub.py`).
A player's watch holds where each of its games stands (`Standing`); each
stream compares it with what it has told its client. The hub hears the
announcement of a change of a game (a move, a timeout), of a new game
(`creating.create_game` announces it too) and of a seek that told its
players something (`seek_telling.published`), and reads what was announced
since it last looked among the followed players: a change of a game of
theirs, a new game that names one of them, a seek they sit at or are
invited to, or the seek that started an announced game. As
the net, the followed players' games changed lately are read again every
`RECHECK` seconds however busy the server, and every second while no
announcement can arrive.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

from flask import Response, request
from flask_smorest import Blueprint

from api.http import throttle
from api.http.context import referee
from api.http.errors import BAD_QUERY, Problem
from api.http.player_auth import current_player, still_signed_in
from api.schemas.events import PLAYER_EVENT
from api.schemas.rules import COMPONENTS
from api.streams.games import KEEPALIVE, busy, stream_errors
from api.streams.hub import RECHECK, Follower, Hub, NoRoom, PerProcess, Watch
from referee.service import Referee
from referee.service.my_events import (
    Item,
    data_of,
    is_mark,
    is_newer,
    key_of,
    mark_now,
    resumed,
    told_kind,
)
from referee.service.my_events import followed as followed_items
from referee.service.players import READ
from referee.store.clock import stamp

_log = logging.getLogger(__name__)

# How far back the net looks past its last look: a change is stamped inside its
# transaction, and may be committed a while after.
_NET_SLACK = timedelta(minutes=1)

blp = Blueprint(
    "my_events", __name__, url_prefix="/v1/me/events", description="Following all my games"
)

MAX_MARK = 20


class _PlayerWatch(Watch):
    """One followed player: where each of its games stands, and what its seeks told it."""

    def __init__(self) -> None:
        super().__init__()
        self.latest: dict[str, Item] = {}

    def offer(self, fresh: dict[str, Item]) -> None:
        with self.changed:
            newer = {key: now for key, now in fresh.items() if is_newer(now, self.latest.get(key))}
            if newer:
                self.latest.update(newer)
                self.changed.notify_all()


class PlayerFollower(Follower[_PlayerWatch]):
    def offer(self, fresh: dict[str, Item]) -> None:
        """Where the player's games stand, as the stream's own request read them."""
        self.watch.offer(fresh)

    def next(self, known: dict[str, Item], seconds: float) -> list[Item]:
        """The games that changed, and what the seeks told, past `known` (oldest change
        first), waiting up to `seconds` for one; none when nothing did."""
        watch = self.watch
        with watch.changed:
            news = watch.changed.wait_for(lambda: self._news(known), seconds)
        return sorted(news, key=lambda now: (now.updated_at, key_of(now)))

    def _news(self, known: dict[str, Item]) -> list[Item]:
        latest = self.watch.latest.items()
        return [now for key, now in latest if is_newer(now, known.get(key))]


class PlayerHub(Hub[_PlayerWatch]):
    """Every followed player of this process, by address. It reads the games announced
    among the followed players' seats, and as the net every game of theirs changed lately,
    every `RECHECK` seconds however busy the server."""

    def __init__(self, referee: Referee) -> None:
        # The games announced since the reader last looked.
        self.heard: set[str] = set()
        self.last_net = datetime.now(UTC)
        super().__init__(referee, "referee-player-followers")

    def follow(self, address: str, client: str) -> PlayerFollower:
        """A place for one more stream of `address`'s games, for `client`; NoRoom when the
        process or that client holds as many streams (of games or players) as it may."""
        return PlayerFollower(self, address, self.admit(address, _PlayerWatch, client), client)

    def hear(self, game_id: str | None) -> None:
        with self.lock:
            if not self.watches:
                return
            if game_id is None:
                self.resync = True
            else:
                self.heard.add(game_id)
        self.wake.set()

    def look(self, woken: bool) -> None:
        with self.lock:
            heard, self.heard = self.heard, set()
            resync, self.resync = self.resync, False
            followed = set(self.watches)
        if not followed:
            return
        # The net also runs on a busy server, where announcements never let the wait
        # time out: what an announcement missed is found within `RECHECK` seconds.
        due = datetime.now(UTC) - self.last_net >= timedelta(seconds=RECHECK)
        self.read(followed, heard, net=resync or due or not woken)

    def missed(self, error: Exception) -> None:
        # The net looks again next time.
        _log.warning("could not read the followed players' games (%s)", error)
        with self.lock:
            self.resync = True

    def read(self, followed: set[str], heard: set[str], net: bool) -> None:
        """Read the games announced (`heard`) among the followed players' seats, or with
        `net` every game of theirs changed since the last such look; tell their watches."""
        if net:
            moment = datetime.now(UTC)
            since = stamp(self.last_net - _NET_SLACK)
            found = followed_items(self.referee, followed, since=since)
            self.last_net = moment
        elif heard:
            found = followed_items(self.referee, followed, heard=heard)
        else:
            return
        for address, games in found.items():
            if not games:
                continue
            with self.lock:
                watch = self.watches.get(address)
            if watch is not None:
                watch.offer(games)


player_hub = PerProcess(PlayerHub)


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


def _event(mark: int, now: Item, kind: str) -> bytes:
    text = json.dumps(data_of(now, kind), separators=(",", ":"), sort_keys=True)
    return f"id: {mark}\ndata: {text}\n\n".encode()


def _stream(
    follower: PlayerFollower,
    known: dict[str, Item],
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
            key = key_of(now)
            yield _event(mark, now, told_kind(now, new=key not in known))
            known[key] = now


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
                "{game_id, game, kind, version, status, to_act, my_turn, result}, and one "
                "when an open game of mine invites me, starts, is withdrawn or expires, "
                "`data:` {kind, seek_id, game, game_id, by, seated}; "
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


@blp.route("", methods=["GET"])
@blp.doc(operationId="followMyGames", **_STREAM_DOC)
@blp.doc(responses=_ERRORS)
def my_events() -> Response:
    """Follow all my games and open games: an event when one starts, changes or ends (stream).

    A game of mine: when it starts, changes, asks me to act or ends. An open game
    (seek): when it invites me, or one I sit at starts, is withdrawn or expires."""
    player = current_player(READ)
    after = _mark_given()
    hub = player_hub(referee())
    try:
        follower = hub.follow(player.address, throttle.client())
    except NoRoom as full:
        return busy(full)
    try:
        # Read once admitted: a change made meanwhile is in this read or heard by the hub.
        known = followed_items(referee(), [player.address]).get(player.address, {})
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
