"""A player's one stream of events (`GET /v1/me/events`): what each change of its games says.

Events carry no state: a game's id and name, its version, status, seats to
act, result, and whether one of the player's seats must act. All of it is
what a spectator of the game may see, so no event can show another seat's
hidden information; a client reads its seat's view from the game itself.

The player's open games (seeks) tell it things too (`referee.store.seek_told`):
`seek_invited` (a private seek invites it), `seek_started` (one it sat at
started: the event names the new game), `seek_withdrawn` and `seek_expired`.
Such an event carries the seek's id, its game, the game it started, and
public names: its creator's and those seated, never an address. It is keyed
apart from the games (`key_of`) and told once, when it happens.

A game's messages (`referee.service.table_talk`) tell each of its seats'
players too: `message`, keyed per game and seat, carrying the latest message
that seat may read (none of a seat it muted) and how many of the others' it
has not seen. Only the game's seats' players follow it (`talk_standings`
reads the seats their addresses hold), so no one else hears of one.

Each event's id is a *mark*: microseconds since 1970 (UTC) when the stream
wrote it, never lower than the one before. A client that comes back with
`Last-Event-ID: <mark>` is sent, at once, every game of its player that
changed after that mark less `RESUME_SLACK`: a change is stamped inside its
transaction and may be committed, and heard, a moment after a later one,
so a resume repeats the last minutes rather than miss such a change. Each
event names its game's version, which tells a repeat from news.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from referee.names import shown as shown_name
from referee.store import player_rows, seek_rows, seek_told, table_messages
from referee.store.clock import stamp
from referee.store.seek_told import SeekNews
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
# What an open game of mine tells me (`referee.store.seek_told`).
SEEK_KINDS = tuple(kind.value for kind in SeekNews)
# A seat of mine in a game was written a message (`referee.service.table_talk`).
MESSAGE = "message"
KINDS = (STARTED, INVITED, ENDED, YOUR_TURN, CHANGED, *SEEK_KINDS, MESSAGE)
# A seek's key among a player's followed items: never a game's id.
SEEK_KEY = "seek:"
# The key of a game's messages to one of my seats: `talk:<game id>:<seat>`.
TALK_KEY = "talk:"

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


@dataclass(frozen=True, slots=True)
class SeekStanding:
    """The latest an open game told a player: what and when, with its public names."""

    seek_id: str
    game: str
    kind: str
    at: str
    game_id: str | None
    by: str
    seated: tuple[str, ...]

    @property
    def updated_at(self) -> str:
        return self.at

    def newer_than(self, before: SeekStanding | None) -> bool:
        return before is None or self.at > before.at


@dataclass(frozen=True, slots=True)
class TalkStanding:
    """The latest message one of the player's seats may read in a game (none of a seat it
    muted), and how many of the others' it has not seen."""

    game_id: str
    game: str
    my_seat: int
    seq: int
    seat: int
    name: str
    text: str
    created_at: str
    unread: int

    @property
    def updated_at(self) -> str:
        return self.created_at

    def newer_than(self, before: TalkStanding | None) -> bool:
        return before is None or self.seq > before.seq


# What a player's stream follows: its games, what its open games told it, and the
# messages its seats are written.
Item = Standing | SeekStanding | TalkStanding


def key_of(item: Item) -> str:
    """An item's key in a player's followed items: a game's id, `seek:` and a seek's, or
    `talk:` and a game's and a seat's."""
    if isinstance(item, SeekStanding):
        return SEEK_KEY + item.seek_id
    if isinstance(item, TalkStanding):
        return f"{TALK_KEY}{item.game_id}:{item.my_seat}"
    return item.game_id


def is_newer(now: Item, before: Item | None) -> bool:
    """Whether `now` is news past `before`, the item of the same key the stream had."""
    if before is None:
        return True
    if isinstance(now, SeekStanding):
        return isinstance(before, SeekStanding) and now.newer_than(before)
    if isinstance(now, TalkStanding):
        return isinstance(before, TalkStanding) and now.newer_than(before)
    return isinstance(before, Standing) and now.newer_than(before)


def told_kind(now: Item, *, new: bool) -> str:
    """What an item's change says (`kind_of` for a game; a seek says what it told)."""
    if isinstance(now, TalkStanding):
        return MESSAGE
    return now.kind if isinstance(now, SeekStanding) else kind_of(now, new=new)


def data_of(now: Item, kind: str) -> dict[str, Any]:
    """The JSON `data` of an event of any sort."""
    if isinstance(now, TalkStanding):
        return {
            "kind": MESSAGE,
            "game_id": now.game_id,
            "game": now.game,
            "my_seat": now.my_seat,
            "seq": now.seq,
            "seat": now.seat,
            "name": now.name,
            "text": now.text,
            "created_at": now.created_at,
            "unread": now.unread,
        }
    if isinstance(now, SeekStanding):
        return {
            "kind": now.kind,
            "seek_id": now.seek_id,
            "game": now.game,
            "game_id": now.game_id,
            "by": now.by,
            "seated": list(now.seated),
        }
    return event_data(now, kind)


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


def seek_standings(
    referee: Referee,
    addresses: Collection[str],
    *,
    since: str | None = None,
    seek_ids: Collection[str] | None = None,
    game_ids: Collection[str] | None = None,
) -> dict[str, dict[str, SeekStanding]]:
    """What the open games told each address, by key (`key_of`): after `since` when
    given, and of `seek_ids` or the seeks that started `game_ids` when either is."""
    with referee.db.reading() as session:
        rows = seek_told.told(session, addresses, since=since, seek_ids=seek_ids, game_ids=game_ids)
        seated = seek_rows.seated_at(session, {row.seek_id for row in rows})
        everyone = {row.by_address for row in rows}
        everyone |= {address for listed in seated.values() for address in listed}
        names = player_rows.names_of(session, everyone)
    found: dict[str, dict[str, SeekStanding]] = {address: {} for address in addresses}
    for row in rows:
        standing = SeekStanding(
            seek_id=row.seek_id,
            game=row.game,
            kind=row.kind.value,
            at=row.at,
            game_id=row.game_id,
            by=names.get(row.by_address, ""),
            seated=tuple(names.get(address, "") for address in seated[row.seek_id]),
        )
        found.setdefault(row.address, {})[key_of(standing)] = standing
    return found


def followed(
    referee: Referee,
    addresses: Collection[str],
    *,
    heard: Collection[str] | None = None,
    since: str | None = None,
) -> dict[str, dict[str, Item]]:
    """Everything a player's stream follows, for each address, by key: its games and what
    its open games told it. `heard` (announced ids: games and seeks alike) and `since`
    narrow it as `standings` does."""
    games = standings(referee, addresses, game_ids=heard, since=since)
    seeks = seek_standings(referee, addresses, since=since, seek_ids=heard, game_ids=heard)
    talk = talk_standings(referee, addresses, game_ids=heard, since=since)
    found: dict[str, dict[str, Item]] = {}
    for address in {*games, *seeks, *talk}:
        found[address] = {
            **games.get(address, {}),
            **seeks.get(address, {}),
            **talk.get(address, {}),
        }
    return found


def talk_standings(
    referee: Referee,
    addresses: Collection[str],
    *,
    game_ids: Collection[str] | None = None,
    since: str | None = None,
) -> dict[str, dict[str, TalkStanding]]:
    """The latest message each address's seats may read, by key (`key_of`): of `game_ids`
    and written after `since` only, when given. Only a seat's own player is told."""
    with referee.db.reading() as session:
        rows = table_messages.latest_for(session, addresses, game_ids=game_ids, since=since)
        counts = {
            (row.game_id, row.seat): row.count
            for row in table_messages.unread(session, {(row.game_id, row.my_seat) for row in rows})
        }
    found: dict[str, dict[str, TalkStanding]] = {address: {} for address in addresses}
    for row in rows:
        standing = TalkStanding(
            game_id=row.game_id,
            game=row.game,
            my_seat=row.my_seat,
            seq=row.seq,
            seat=row.seat,
            name=shown_name(row.name) or f"Seat {row.seat}",
            text=row.text,
            created_at=row.created_at,
            unread=counts.get((row.game_id, row.my_seat), 0),
        )
        found.setdefault(row.address, {})[key_of(standing)] = standing
    return found


def is_mark(mark: int) -> bool:
    """Whether `mark` could be an event's id: no later than a day from now (another
    process's clock may be a little ahead); beyond that it names no time a stream wrote."""
    return mark <= mark_now() + MARK_AHEAD // timedelta(microseconds=1)


def mark_now(after: int = 0) -> int:
    """The mark of an event written now: microseconds since 1970, never below `after`."""
    return max(after, (datetime.now(UTC) - _EPOCH) // timedelta(microseconds=1))


def resumed(items: Mapping[str, Item], mark: int) -> list[tuple[Item, str]]:
    """What a client that has everything up to `mark` is sent at once, with each kind:
    the games changed, and what the open games told, after it (less the slack), oldest
    change first."""
    moment = _EPOCH + timedelta(microseconds=mark)
    since, then = stamp(moment - RESUME_SLACK), stamp(moment)
    changed = sorted(
        (item for item in items.values() if item.updated_at > since),
        key=lambda item: (item.updated_at, key_of(item)),
    )[-RESUME_MOST:]
    # New to the client: made after its mark (one made in the slack before it is told
    # as it stands, not as new again).
    return [
        (item, told_kind(item, new=isinstance(item, Standing) and item.created_at > then))
        for item in changed
    ]
