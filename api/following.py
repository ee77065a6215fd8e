"""The followers of games in this API process (`GET .../events`), and the reader that tells them.

A follower's request thread only waits: one thread per process (the
reader) reads the games that changed, once per change whatever the number
of their followers, and wakes the followers of each. It hears of changes
from the worker's announcements (`referee.queue.listen_changes`: the one
Redis subscription of the process, or the decision itself in the embedded
default) and, as a net for what announcements miss (a change made while
Redis was away, or by a process that announces nothing), compares the
followed games' versions in one query every `_RECHECK` seconds, or every
second while no announcement can arrive (the embedded default, Redis down).

Each version of a game is read once into a `Change`, which encodes an
event once per viewer (each seat, and spectators) however many follow it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, col, select

from referee.games import AnyGame
from referee.replay import envelope
from referee.service import Referee, game_states
from referee.store import reads
from referee.store.tables import Game, GameStatus

_log = logging.getLogger(__name__)

# Seconds between version checks while announcements arrive (a safety net),
# and while they cannot (the embedded default, or Redis down).
_RECHECK = 5.0
_POLL = 1.0


class Change:
    """A game as one version left it, and its event as each viewer may see it."""

    def __init__(self, game: Game, rules: AnyGame, state: Any) -> None:
        self.game_id = game.id
        self.version = game.version
        self.status = game.status
        self.to_act = list(game.to_act)
        self.result = game.result
        self.rules = rules
        self.state = state
        self._events: dict[int | None, bytes] = {}
        self._lock = threading.Lock()

    @property
    def over(self) -> bool:
        return self.status == GameStatus.OVER

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
    return Change(game, rules, game_states.state_at(db, game, game.version))


class _Watch:
    """One followed game: its latest change, and the condition its followers wait on."""

    def __init__(self, latest: Change) -> None:
        self.latest = latest
        self.followers = 0
        self.changed = threading.Condition()

    def offer(self, change: Change) -> None:
        with self.changed:
            if change.version > self.latest.version:
                self.latest = change
                self.changed.notify_all()


class NoRoom(Exception):
    """No place for one more follower: the process holds `REFEREE_EVENTS_MAX` streams,
    or (`for_client`) this client holds `REFEREE_EVENTS_PER_CLIENT` of them."""

    def __init__(self, for_client: bool) -> None:
        super().__init__()
        self.for_client = for_client


class Follower:
    """One stream's place among the followers; `leave` gives it back (more than once is fine)."""

    def __init__(self, hub: Following, watch: _Watch, client: str) -> None:
        self.hub = hub
        self.watch = watch
        self.client = client
        self.left = False

    def next(self, after: int, seconds: float) -> Change | None:
        """The game's latest change if newer than version `after`, waiting up to `seconds`."""
        watch = self.watch
        with watch.changed:
            watch.changed.wait_for(lambda: watch.latest.version > after, seconds)
            latest = watch.latest
        return latest if latest.version > after else None

    def leave(self) -> None:
        self.hub.leave(self)


class Following:
    """Every follower of this process, by game, and the reader thread that keeps them told."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.watches: dict[str, _Watch] = {}
        self.count = 0
        self.by_client: Counter[str] = Counter()
        self.hinted: set[str] = set()
        self.resync = False
        self.wake = threading.Event()
        referee.queue.listen_changes(self.hear)
        threading.Thread(target=self.run, name="referee-followers", daemon=True).start()

    def admit(self, now: Change, client: str) -> Follower:
        """A place for one more follower of `now`'s game, for `client` (its address);
        NoRoom when the process or that client holds as many as it may."""
        with self.lock:
            self._take_place(client)
            watch = self.watches.get(now.game_id)
            if watch is None:
                watch = self.watches[now.game_id] = _Watch(now)
            watch.followers += 1
        watch.offer(now)
        return Follower(self, watch, client)

    def leave(self, follower: Follower) -> None:
        with self.lock:
            if follower.left:
                return
            follower.left = True
            self._give_place(follower.client)
            watch = follower.watch
            watch.followers -= 1
            if watch.followers == 0 and self.watches.get(watch.latest.game_id) is watch:
                del self.watches[watch.latest.game_id]

    def take_place(self, client: str) -> None:
        """Count one more stream of another kind (a player's, `api/my_following.py`) against
        the same bounds, since it holds a thread as a game's does; NoRoom when full."""
        with self.lock:
            self._take_place(client)

    def give_place(self, client: str) -> None:
        with self.lock:
            self._give_place(client)

    def _take_place(self, client: str) -> None:
        chosen = self.referee.settings
        if self.count >= chosen.events_max:
            raise NoRoom(for_client=False)
        if self.by_client[client] >= chosen.events_per_client:
            raise NoRoom(for_client=True)
        self.count += 1
        self.by_client[client] += 1

    def _give_place(self, client: str) -> None:
        self.count -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]

    def hear(self, game_id: str | None) -> None:
        """An announcement (None: some may have been lost); the reader thread does the reading."""
        with self.lock:
            if game_id is None:
                self.resync = True
            elif game_id in self.watches:
                self.hinted.add(game_id)
            else:
                return
        self.wake.set()

    def run(self) -> None:
        while True:
            queue = self.referee.queue
            woken = self.wake.wait(
                _POLL if queue.eager or not queue.hearing_changes() else _RECHECK
            )
            self.wake.clear()
            with self.lock:
                hinted, self.hinted = self.hinted, set()
                resync, self.resync = self.resync, False
                followed = {name: watch.latest.version for name, watch in self.watches.items()}
            if not followed:
                continue
            try:
                if resync or not woken:
                    hinted |= self.moved(followed)
                self.refresh(hinted & followed.keys())
            except Exception as error:
                # The database away: the followers wait, and hear at the next check.
                _log.warning("could not read the followed games (%s)", error)

    def moved(self, followed: dict[str, int]) -> set[str]:
        """The followed games whose version is past the one their followers have: one query."""
        with self.referee.db.reading() as db:
            rows = db.exec(
                select(Game.id, Game.version).where(col(Game.id).in_(list(followed)))
            ).all()
        return {game_id for game_id, version in rows if version > followed[game_id]}

    def refresh(self, game_ids: Iterable[str]) -> None:
        wanted = sorted(game_ids)
        if not wanted:
            return
        with self.referee.db.reading() as db:
            found = db.exec(select(Game).where(col(Game.id).in_(wanted))).all()
            changes = [read_change(db, game) for game in found]
        for change in changes:
            with self.lock:
                watch = self.watches.get(change.game_id)
            if watch is not None:
                watch.offer(change)


_hubs: dict[int, Following] = {}
_hubs_lock = threading.Lock()


def following(referee: Referee) -> Following:
    """The followers of `referee`'s games in this process: made on first use, and again
    in a forked child (which has the hub but not its thread)."""
    with _hubs_lock:
        hub = _hubs.get(id(referee))
        if hub is None or hub.pid != os.getpid():
            hub = _hubs[id(referee)] = Following(referee)
        return hub
