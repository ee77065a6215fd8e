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

The streams of a process are told by its `GameHub` (`api/streams/hub.py`):
it reads each announced game once, and as the net compares the followed
games' versions in one query. Each version of a game is read once into a
`Change`, which encodes an event once per viewer (each seat, and
spectators) however many follow it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any

import flask
from flask import Response, request
from flask_smorest import Blueprint
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col, select

from api.http import seat_auth, throttle
from api.http.context import find, referee, session
from api.http.errors import BAD_QUERY, BAD_TOKEN, NO_GAME, SCOPE, Problem, declared, problem
from api.http.player_auth import still_signed_in
from api.schemas.events import GAME_EVENT, MESSAGE_EVENT
from api.schemas.rules import COMPONENTS
from api.streams.hub import Follower, Hub, NoRoom, PerProcess, Watch
from referee.games import AnyGame
from referee.replay import envelope
from referee.service import Referee, game_states, page_presence, table_talk
from referee.service.players import is_player_token
from referee.service.submitting import seat_holding
from referee.service.table_talk import Said
from referee.store import reads, rematches, table_messages
from referee.store.tables import Game, GameStatus

_log = logging.getLogger(__name__)

blp = Blueprint(
    "events", __name__, url_prefix="/v1/games", description="Following a game as it changes"
)

# Seconds a client turned away for want of room should wait before trying again.
RETRY_AFTER = 5
KEEPALIVE = b": keepalive\n\n"


class Change:
    """A game as one version left it, and its event as each viewer may see it: each
    version is read once, and its event encoded once per viewer (each seat, and
    spectators) however many follow it."""

    def __init__(
        self, game: Game, rules: AnyGame, state: Any, talk_seq: int = 0, rematch: str = ""
    ) -> None:
        self.game_id = game.id
        self.version = game.version
        self.status = game.status
        self.to_act = list(game.to_act)
        self.result = game.result
        self.rules = rules
        self.state = state
        # The game's latest message when it was read: a stream tells those after it.
        self.talk_seq = talk_seq
        # Where a finished game's rematch stands (`rematches.standing_keys`): a seat's page
        # is told when it moves ("" while the game runs, or nobody accepted).
        self.rematch = rematch
        self._events: dict[int | None, bytes] = {}
        self._lock = threading.Lock()

    @property
    def over(self) -> bool:
        return self.status == GameStatus.OVER

    def rematch_event(self) -> bytes:
        """The event of the rematch's standing, the same for every seat (no `id:`: the
        stream's ids are the game's versions)."""
        data = {"kind": "rematch", "game_id": self.game_id, "rematch": self.rematch}
        return f"data: {json.dumps(data, separators=(',', ':'), sort_keys=True)}\n\n".encode()

    def event(self, seat: int | None) -> bytes:
        """The Server-Sent Event for `seat` (None: a spectator), encoded once per viewer."""
        with self._lock:
            found = self._events.get(seat)
            if found is None:
                data = {
                    "game_id": self.game_id,
                    "version": self.version,
                    "status": self.status,
                    "to_act": self.to_act,
                    "result": self.result,
                    # Exactly what `GET .../state` shows this viewer: a
                    # spectator's view holds no hand, sealed move or seed.
                    "view": envelope(self.rules, self.state, self.version, seat),
                }
                text = json.dumps(data, separators=(",", ":"), sort_keys=True)
                found = f"id: {self.version}\ndata: {text}\n\n".encode()
                self._events[seat] = found
            return found


def read_change(db: Session, game: Game) -> Change:
    rules = reads.rules_of(game)
    talk_seq = table_messages.last_seq(db, game.id)
    rematch = (
        rematches.standing_keys(db, [game.id])[game.id] if game.status == GameStatus.OVER else ""
    )
    return Change(game, rules, game_states.state_at(db, game, game.version), talk_seq, rematch)


class Talk:
    """A message of the game as its stream tells it: to its seats alone, but those that
    muted its writer; its event is encoded once (the same for every seat)."""

    def __init__(self, game_id: str, said: Said) -> None:
        self.seq = said.message.seq
        self.muted_by = said.muted_by
        data = {"kind": "message", "game_id": game_id, **said.message.to_json()}
        text = json.dumps(data, separators=(",", ":"), sort_keys=True)
        # No `id:`: the stream's ids are the game's versions, which `Last-Event-ID` resumes.
        self.event = f"data: {text}\n\n".encode()

    def told_to(self, seat: int | None) -> bool:
        return seat is not None and seat not in self.muted_by


# The messages a watch keeps for its streams to catch up with (a stream behind by
# more reads them with `GET .../messages`).
KEPT_TALK = 100
# A message number no game reaches: what a stream that is told no message waits past.
NEVER = 2**62
# A rematch's standing no game has: a seat's page stream starts with it, so it tells the first.
UNTOLD = "?"


class _GameWatch(Watch):
    """One followed game: its latest change, and its latest messages."""

    def __init__(self, latest: Change) -> None:
        super().__init__()
        self.latest = latest
        self.talk: list[Talk] = []
        self.talk_seq = latest.talk_seq

    def offer(self, change: Change) -> None:
        with self.changed:
            latest = self.latest
            moved = change.version == latest.version and change.rematch != latest.rematch
            if change.version > latest.version or moved:
                self.latest = change
                self.changed.notify_all()

    def offer_talk(self, said: list[Talk]) -> None:
        with self.changed:
            fresh = [talk for talk in said if talk.seq > self.talk_seq]
            if fresh:
                self.talk = [*self.talk, *fresh][-KEPT_TALK:]
                self.talk_seq = fresh[-1].seq
                self.changed.notify_all()


class GameFollower(Follower[_GameWatch]):
    def next(
        self, after: int, talk_after: int, seconds: float, rematch: str | None = None
    ) -> tuple[Change | None, list[Talk]]:
        """The game's latest change if newer than version `after` (or, given `rematch`, if
        its rematch stands otherwise), and its messages after number `talk_after`, waiting
        up to `seconds` for either."""
        watch = self.watch

        def news(latest: Change) -> bool:
            return latest.version > after or (rematch is not None and latest.rematch != rematch)

        with watch.changed:
            watch.changed.wait_for(
                lambda: news(watch.latest) or watch.talk_seq > talk_after, seconds
            )
            latest = watch.latest
            said = [talk for talk in watch.talk if talk.seq > talk_after]
        return (latest if news(latest) else None), said


class GameHub(Hub[_GameWatch]):
    """Every follower of this process, by game. It reads the games announced, and as the
    net compares the followed games' versions in one query."""

    def __init__(self, referee: Referee) -> None:
        self.hinted: set[str] = set()
        super().__init__(referee, "referee-followers")

    def follow(self, now: Change, client: str) -> GameFollower:
        """A place for one more follower of `now`'s game, for `client` (its address);
        NoRoom when the process or that client holds as many streams as it may."""
        watch = self.admit(now.game_id, lambda: _GameWatch(now), client)
        watch.offer(now)
        return GameFollower(self, now.game_id, watch, client)

    def hear(self, game_id: str | None) -> None:
        with self.lock:
            if game_id is None:
                self.resync = True
            elif game_id in self.watches:
                self.hinted.add(game_id)
            else:
                return
        self.wake.set()

    def look(self, woken: bool) -> None:
        with self.lock:
            hinted, self.hinted = self.hinted, set()
            resync, self.resync = self.resync, False
            followed = {
                name: (watch.latest.version, watch.talk_seq) for name, watch in self.watches.items()
            }
            # The finished games followed (by their seats' pages), with their rematch's standing.
            finished = {
                name: watch.latest.rematch
                for name, watch in self.watches.items()
                if watch.latest.over
            }
        if not followed:
            return
        if resync or not woken:
            hinted |= self.moved(followed, finished)
        self.refresh({name: followed[name][1] for name in hinted & followed.keys()})

    def missed(self, error: Exception) -> None:
        _log.warning("could not read the followed games (%s)", error)

    def moved(
        self, followed: dict[str, tuple[int, int]], finished: dict[str, str] | None = None
    ) -> set[str]:
        """The followed games whose version, or latest message, is past the one their
        followers have, or (of the `finished` ones) whose rematch stands otherwise: two
        queries, and two more while finished games are followed."""
        with self.referee.db.reading() as db:
            rows = db.exec(
                select(Game.id, Game.version).where(col(Game.id).in_(list(followed)))
            ).all()
            talk = table_messages.last_seqs(db, followed)
            standing = rematches.standing_keys(db, finished) if finished else {}
        moved = {game_id for game_id, version in rows if version > followed[game_id][0]}
        moved |= {game_id for game_id, key in standing.items() if key != (finished or {})[game_id]}
        return moved | {game_id for game_id, seq in talk.items() if seq > followed[game_id][1]}

    def refresh(self, talk_after: dict[str, int]) -> None:
        """Read the games of `talk_after` again, and their messages after the number it
        gives each; tell their watches."""
        wanted = sorted(talk_after)
        if not wanted:
            return
        with self.referee.db.reading() as db:
            found = db.exec(select(Game).where(col(Game.id).in_(wanted))).all()
            changes = [read_change(db, game) for game in found]
        said = table_talk.said_after(self.referee, talk_after)
        for change in changes:
            with self.lock:
                watch = self.watches.get(change.game_id)
            if watch is not None:
                watch.offer_talk(
                    [Talk(change.game_id, one) for one in said.get(change.game_id, [])]
                )
                watch.offer(change)


game_hub = PerProcess(GameHub)


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
    follower: GameFollower,
    seat: int | None,
    now: Change,
    after: int | None,
    keepalive: float,
    holds: Callable[[], bool] | None = None,
    past_end: bool = False,
    beat: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """The stream's bytes; it ends after the event of a finished game, unless `past_end`
    (a seat's page, whose players may still talk). `beat` is called as it goes on,
    at each event or keepalive: its seat's page is still open."""
    # Runs after the request's context has gone: it is handed what it needs.
    # A client that has the current version gets only what comes next; one
    # that is behind (or names a version that never was) gets it at once.
    sent = now.version if after == now.version else -1
    # A spectator is never woken by a message: not even a keepalive's timing tells of one.
    talk_sent = now.talk_seq if seat is not None else NEVER
    # A seat's page is told where the rematch stands once the game is over: at once (the
    # page may be older than the stream), and at each change.
    rematch_sent = UNTOLD if past_end else None
    while True:
        if beat is not None:
            beat()
        change, said = follower.next(sent, talk_sent, keepalive, rematch_sent)
        # Followed with a player token, revoked meanwhile: the seat's view is told no more.
        if holds is not None and not holds():
            return
        if change is None and not said:
            # Also how a client that went away is noticed: this write fails.
            yield KEEPALIVE
            continue
        for talk in said:
            talk_sent = talk.seq
            if talk.told_to(seat):
                yield talk.event
        if change is None:
            continue
        sent, rematch_sent = yield from _changed(change, seat, sent, rematch_sent)
        if change.over and not past_end:
            return


def _changed(
    change: Change, seat: int | None, sent: int, rematch_sent: str | None
) -> Generator[bytes, None, tuple[int, str | None]]:
    """The events a change of the game tells the stream, and what it has told since."""
    if change.version != sent:
        yield change.event(seat)
        sent = change.version
    if rematch_sent is not None and change.rematch != rematch_sent:
        if change.over:
            yield change.rematch_event()
        rematch_sent = change.rematch
    return sent, rematch_sent


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


_STREAM_DOC = {
    "security": seat_auth.AS_SEAT_OR_SPECTATOR,
    "parameters": [
        {
            "in": "header",
            "name": "Last-Event-ID",
            "required": False,
            "schema": {"type": "string", "pattern": "^[0-9]{0,12}$"},
            "description": "the version of the last event the client has (empty: none)",
        },
        *seat_auth.SEAT_PARAMETERS,
    ],
    "responses": {
        "200": {
            "description": (
                "Server-Sent Events: one per change of the game, `id:` its version, "
                "`data:` {game_id, version, status, to_act, result, view}; to a seat, one "
                "per message of the game's seats (none of a seat it muted), without `id:`, "
                "`data:` {kind: message, game_id, seq, seat, name, text, created_at}; "
                "`: keepalive` comments between them; the stream ends after the event "
                "of a finished game"
            ),
            "content": {
                "text/event-stream": {
                    # Each event: its fields as Server-Sent Events name them.
                    "schema": {
                        "type": "object",
                        "required": ["data"],
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
                                "contentSchema": {
                                    "oneOf": [
                                        {"$ref": COMPONENTS + GAME_EVENT},
                                        {"$ref": COMPONENTS + MESSAGE_EVENT},
                                    ]
                                },
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


@blp.route("/<game_id>/events", methods=["GET"])
@blp.doc(operationId="followGame", **_STREAM_DOC)
@blp.doc(responses=_ERRORS)
def events(game_id: str) -> Response:
    """Follow the game: an event at each change, as the caller may see it, and each message
    of its seats to a seat (stream)."""
    token = seat_auth.bearer()
    holds = still_signed_in() if token is not None and is_player_token(token) else None
    return _follow(game_id, seat_auth.viewer, holds)


# The game page's own stream (`/g/<id>/events`, beside the page, outside the document): the
# same, as the seat whose cookie the browser holds (scoped to the page's path, which the
# API's stream never gets), or a spectator's.
page_bp = flask.Blueprint("game_page_events", __name__)


def _cookie_seat(db: Session, game_id: str) -> int | None:
    token = seat_auth.cookie_token()
    return None if token is None else seat_holding(db, game_id, token)


@page_bp.get("/g/<game_id>/events")
def page_events(game_id: str) -> Response:
    """The game page's stream: as `GET /v1/games/{id}/events` for the browser's seat, which
    it goes on telling of messages once the game is over."""
    return _follow(game_id, _cookie_seat, None, talk_past_end=True, page=True)


def _page_open(serving: Referee, game_id: str, seat: int | None) -> Callable[[], None] | None:
    """What a seat's page stream calls as it goes on: the seat's page is open, so a turn
    answered there soon is not mailed too (`referee.service.page_presence`)."""
    if seat is None:
        return None

    def beat() -> None:
        try:
            page_presence.seen(serving, game_id, seat)
        except OperationalError as error:
            # The stream goes on without the mark: at worst a turn mail goes out.
            _log.warning("could not mark the page of game %s open (%s)", game_id, error)

    return beat


def _follow(
    game_id: str,
    seat_of: Callable[[Session, str], int | None],
    holds: Callable[[], bool] | None,
    talk_past_end: bool = False,
    page: bool = False,
) -> Response:
    after = _last_event_id()
    with session() as db:
        game = find(db, game_id)
        seat = seat_of(db, game.id)
        now = read_change(db, game)
    past_end = talk_past_end and seat is not None
    if now.over and after is not None and after >= now.version and not past_end:
        # Nothing will follow; 204 also tells an EventSource not to reconnect.
        return Response(status=204)
    try:
        follower = game_hub(referee()).follow(now, throttle.client())
    except NoRoom as full:
        return busy(full)
    keepalive = referee().settings.events_keepalive
    beat = _page_open(referee(), game.id, seat) if page and not now.over else None
    response = Response(
        _stream(follower, seat, now, after, keepalive, holds, past_end, beat),
        mimetype="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            # A buffering proxy (nginx) must pass each event on at once.
            "X-Accel-Buffering": "no",
        },
    )
    response.call_on_close(follower.leave)
    return response
