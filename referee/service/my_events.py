"""A player's one stream of events (`GET /v1/me/events`): what each change of its games says.

Events carry no state: a game's id and name, its version, status, seats to
act, result, and whether one of the player's seats must act. All of it is
what a spectator of the game may see, so no event can show another seat's
hidden information; a client reads its seat's view from the game itself.

Each event's id is a *mark*: microseconds since 1970 (UTC) when the stream
wrote it, never lower than the one before. A client that comes back with
`Last-Event-ID: <mark>` is sent, at once, every game of its player that
changed after that mark less `RESUME_SLACK`: a change is stamped inside its
transaction and may be committed, and heard, a moment after a later one,
so a resume repeats the last minutes rather than miss such a change. Each
event names its game's version, which tells a repeat from news.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from referee.store.clock import stamp
from referee.store.standings import held
from referee.store.tables import GameStatus

if TYPE_CHECKING:
    from referee.service import Referee

# The kinds of event, one per change (the first that applies, in this order).
# A game of mine appeared: `started` where the referee mails my seat in full
# (the game was made by a trusted client, or my address accepted its mail),
# else `invited` (it asks me to accept first).
STARTED = "started"
INVITED = "invited"
ENDED = "ended"
YOUR_TURN = "your_turn"
CHANGED = "changed"
KINDS = (STARTED, INVITED, ENDED, YOUR_TURN, CHANGED)

RESUME_SLACK = timedelta(minutes=5)
# The most games a resume sends, the most recently changed: a player holds
# hundreds of games, and a client far behind reads `GET /v1/me/games` anyway.
RESUME_MOST = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# How far ahead of this process's clock a mark may be and still be taken as one.
MARK_AHEAD = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Standing:
    """Where one game of a player stands, as its stream compares and tells it."""

    game_id: str
    game: str
    version: int
    status: str
    to_act: tuple[int, ...]
    mine: tuple[int, ...]
    result: dict[str, Any] | None
    created_at: str
    updated_at: str
    # Whether the referee mails the player's seat in full (else it only invited it).
    in_full: bool

    @property
    def my_turn(self) -> bool:
        return self.status == GameStatus.ACTIVE and not set(self.mine).isdisjoint(self.to_act)

    def newer_than(self, before: Standing | None) -> bool:
        return before is None or self.version > before.version


def kind_of(now: Standing, *, new: bool) -> str:
    """What a change says: `new` when the game was not the player's before it."""
    if new:
        return STARTED if now.in_full else INVITED
    if now.status == GameStatus.OVER:
        return ENDED
    return YOUR_TURN if now.my_turn else CHANGED


def event_data(now: Standing, kind: str) -> dict[str, Any]:
    """The JSON `data` of an event: public fields of the game only, never a view."""
    return {
        "game_id": now.game_id,
        "game": now.game,
        "kind": kind,
        "version": now.version,
        "status": now.status,
        "to_act": list(now.to_act),
        "my_turn": now.my_turn,
        "result": now.result,
    }


def standings(
    referee: Referee,
    addresses: Collection[str],
    *,
    game_ids: Collection[str] | None = None,
    since: str | None = None,
) -> dict[str, dict[str, Standing]]:
    """The games each address (already normal) holds, by game id; one statement for all.
    `game_ids` and `since` (a stamp) narrow it to those games, and to what changed after."""
    with referee.db.reading() as session:
        rows = held(session, addresses, game_ids=game_ids, since=since)
    found: dict[str, dict[str, Standing]] = {address: {} for address in addresses}
    for row in rows:
        found.setdefault(row.address, {})[row.game_id] = Standing(
            game_id=row.game_id,
            game=row.name,
            version=row.version,
            status=row.status,
            to_act=row.to_act,
            mine=row.mine,
            result=row.result,
            created_at=row.created_at,
            updated_at=row.updated_at,
            in_full=row.trusted or row.accepted,
        )
    return found


def is_mark(mark: int) -> bool:
    """Whether `mark` could be an event's id: no later than a day from now (another
    process's clock may be a little ahead); beyond that it names no time a stream wrote."""
    return mark <= mark_now() + MARK_AHEAD // timedelta(microseconds=1)


def mark_now(after: int = 0) -> int:
    """The mark of an event written now: microseconds since 1970, never below `after`."""
    return max(after, (datetime.now(UTC) - _EPOCH) // timedelta(microseconds=1))


def resumed(games: dict[str, Standing], mark: int) -> list[tuple[Standing, str]]:
    """What a client that has everything up to `mark` is sent at once, with each kind:
    the games changed after it (less the slack), oldest change first."""
    moment = _EPOCH + timedelta(microseconds=mark)
    since, then = stamp(moment - RESUME_SLACK), stamp(moment)
    changed = sorted(
        (game for game in games.values() if game.updated_at > since),
        key=lambda game: (game.updated_at, game.game_id),
    )[-RESUME_MOST:]
    # New to the client: made after its mark (one made in the slack before it is told
    # as it stands, not as new again).
    return [(game, kind_of(game, new=game.created_at > then)) for game in changed]
