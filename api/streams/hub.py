"""The hubs of this API process's streams, and the places every stream takes.

A stream's request thread only waits: one thread per process and kind of
stream (a hub's reader) reads what changed, once per change whatever the
number of streams, and wakes the streams concerned. It hears of changes
from the worker's announcements (`referee.queue.listen_changes`: the one
Redis subscription of the process, or the decision itself in the embedded
default) and, as a net for what announcements miss (a change made while
Redis was away, or by a process that announces nothing), looks again
every `RECHECK` seconds, or every second while no announcement can arrive
(the embedded default, Redis down). Each kind says what it reads: a
game's stream in `api/streams/games.py`, a player's in `api/streams/players.py`.

Every stream holds a thread, so streams of every kind count against the
same bounds (`Places`): `REFEREE_EVENTS_MAX` per process,
`REFEREE_EVENTS_PER_CLIENT` per client.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from typing import Generic, TypeVar

from referee.service import Referee

# Seconds between looks while announcements arrive (a safety net), and while they
# cannot (the embedded default, or Redis down).
RECHECK = 5.0
POLL = 1.0

T = TypeVar("T")


class PerProcess(Generic[T]):
    """One `T` per Referee in this process: made on first use, and again in a forked
    child (which has its parent's, but not the thread that kept it)."""

    def __init__(self, make: Callable[[Referee], T]) -> None:
        self._make = make
        self._made: dict[int, tuple[int, T]] = {}
        self._lock = threading.Lock()

    def __call__(self, referee: Referee) -> T:
        with self._lock:
            found = self._made.get(id(referee))
            if found is None or found[0] != os.getpid():
                found = self._made[id(referee)] = (os.getpid(), self._make(referee))
            return found[1]


class NoRoom(Exception):
    """No place for one more stream: the process holds `REFEREE_EVENTS_MAX` streams,
    or (`for_client`) this client holds `REFEREE_EVENTS_PER_CLIENT` of them."""

    def __init__(self, for_client: bool) -> None:
        super().__init__()
        self.for_client = for_client


class Places:
    """The streams this process holds, in all and by client, against the settings' bounds."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self.lock = threading.Lock()
        self.count = 0
        self.by_client: Counter[str] = Counter()

    def take(self, client: str) -> None:
        """One more stream for `client` (its address); NoRoom when full."""
        chosen = self.referee.settings
        with self.lock:
            if self.count >= chosen.events_max:
                raise NoRoom(for_client=False)
            if self.by_client[client] >= chosen.events_per_client:
                raise NoRoom(for_client=True)
            self.count += 1
            self.by_client[client] += 1

    def give(self, client: str) -> None:
        with self.lock:
            self.count -= 1
            self.by_client[client] -= 1
            if self.by_client[client] <= 0:
                del self.by_client[client]


places = PerProcess(Places)


class Watch:
    """What the streams of one key (a game, a player) wait on: `changed`, notified when
    what they follow changes."""

    def __init__(self) -> None:
        self.followers = 0
        self.changed = threading.Condition()


W = TypeVar("W", bound=Watch)


class Follower(Generic[W]):
    """One stream's place among the followers of a key; `leave` gives it back (more than
    once is fine)."""

    def __init__(self, hub: Hub[W], key: str, watch: W, client: str) -> None:
        self.hub = hub
        self.key = key
        self.watch = watch
        self.client = client
        self.left = False

    def leave(self) -> None:
        self.hub.leave(self)


class Hub(ABC, Generic[W]):
    """The followed keys of one kind of stream in this process, each with its watch, and
    the reader thread that keeps them told. A subclass sets its own fields before
    calling `__init__`: the reader may hear at once."""

    def __init__(self, referee: Referee, thread: str) -> None:
        self.referee = referee
        self.lock = threading.Lock()
        self.watches: dict[str, W] = {}
        self.resync = False
        self.wake = threading.Event()
        referee.queue.listen_changes(self.hear)
        threading.Thread(target=self._run, name=thread, daemon=True).start()

    @abstractmethod
    def hear(self, game_id: str | None) -> None:
        """An announcement of a changed game (None: some may have been lost); the reader
        thread does the reading (`wake`)."""

    @abstractmethod
    def look(self, woken: bool) -> None:
        """Read what changed for the keys followed, and tell their watches; `woken`: by an
        announcement (else the wait ran out, and the net looks)."""

    @abstractmethod
    def missed(self, error: Exception) -> None:
        """The look failed (the database away): the streams wait, and hear at the next."""

    def admit(self, key: str, new_watch: Callable[[], W], client: str) -> W:
        """The watch of `key` with one more follower, for `client`; NoRoom when the process
        or that client holds as many streams (of any kind) as it may."""
        places(self.referee).take(client)
        with self.lock:
            watch = self.watches.get(key)
            if watch is None:
                watch = self.watches[key] = new_watch()
            watch.followers += 1
        return watch

    def leave(self, follower: Follower[W]) -> None:
        with self.lock:
            if follower.left:
                return
            follower.left = True
            watch = follower.watch
            watch.followers -= 1
            if watch.followers == 0 and self.watches.get(follower.key) is watch:
                del self.watches[follower.key]
        places(self.referee).give(follower.client)

    def _run(self) -> None:
        while True:
            queue = self.referee.queue
            woken = self.wake.wait(POLL if queue.eager or not queue.hearing_changes() else RECHECK)
            self.wake.clear()
            try:
                self.look(woken)
            except Exception as error:
                self.missed(error)
