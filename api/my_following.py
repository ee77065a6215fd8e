"""The followers of players in this API process (`GET /v1/me/events`), and their reader.

As for games (`api/following.py`), a stream's thread only waits: one
thread per process reads what changed, once per change whatever the
number of streams, and wakes the streams of each player concerned. A
player's watch holds where each of its games stands (`Standing`); each
stream compares it with what it has told its client.

What it hears: the announcement of a change of a game (a move, a timeout)
and of a new game (`creating.create_game` announces it too), on the same
subscription as the games' followers (`referee.queue.listen_changes`).
The games announced since the reader last looked are read in one
statement among the followed players' seats: a change of a game of
theirs, or a new game that names one of them. As a net for
announcements missed (Redis away, a process that announces nothing), the
followed players' games changed lately are read again every `_RECHECK`
seconds however busy the server, and every second while no announcement
can arrive.

Streams count against the same bounds as the games' (`REFEREE_EVENTS_MAX`
per process, `REFEREE_EVENTS_PER_CLIENT` per client): both hold a thread.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta

from api.following import following
from referee.service import Referee
from referee.service.my_events import Standing, standings
from referee.store.clock import stamp

_log = logging.getLogger(__name__)

_RECHECK = 5.0
_POLL = 1.0
# How far back the net looks past its last look: a change is stamped inside its
# transaction, and may be committed a while after.
_NET_SLACK = timedelta(minutes=1)


class _PlayerWatch:
    """One followed player: where each of its games stands, and the condition streams wait on."""

    def __init__(self) -> None:
        self.latest: dict[str, Standing] = {}
        self.followers = 0
        self.changed = threading.Condition()

    def offer(self, fresh: dict[str, Standing]) -> None:
        with self.changed:
            newer = {
                game_id: now
                for game_id, now in fresh.items()
                if now.newer_than(self.latest.get(game_id))
            }
            if newer:
                self.latest.update(newer)
                self.changed.notify_all()


class PlayerFollower:
    """One stream's place among the followers of a player; `leave` gives it back."""

    def __init__(self, hub: PlayerFollowing, address: str, watch: _PlayerWatch, client: str):
        self.hub = hub
        self.address = address
        self.watch = watch
        self.client = client
        self.left = False

    def offer(self, fresh: dict[str, Standing]) -> None:
        """Where the player's games stand, as the stream's own request read them."""
        self.watch.offer(fresh)

    def next(self, known: dict[str, Standing], seconds: float) -> list[Standing]:
        """The games that changed past `known` (oldest change first), waiting up to
        `seconds` for one; none when nothing did."""
        watch = self.watch
        with watch.changed:
            news = watch.changed.wait_for(lambda: self._news(known), seconds)
        return sorted(news, key=lambda now: (now.updated_at, now.game_id))

    def _news(self, known: dict[str, Standing]) -> list[Standing]:
        latest = self.watch.latest.items()
        return [now for game_id, now in latest if now.newer_than(known.get(game_id))]

    def leave(self) -> None:
        self.hub.leave(self)


class PlayerFollowing:
    """Every followed player of this process, and the reader thread that keeps them told."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.watches: dict[str, _PlayerWatch] = {}
        # The games announced since the reader last looked.
        self.heard: set[str] = set()
        self.resync = False
        self.wake = threading.Event()
        self.last_net = datetime.now(UTC)
        referee.queue.listen_changes(self.hear)
        threading.Thread(target=self.run, name="referee-player-followers", daemon=True).start()

    def admit(self, address: str, client: str) -> PlayerFollower:
        """A place for one more stream of `address`'s games, for `client`; NoRoom when the
        process or that client holds as many streams (of games or players) as it may."""
        following(self.referee).take_place(client)
        with self.lock:
            watch = self.watches.get(address)
            if watch is None:
                watch = self.watches[address] = _PlayerWatch()
            watch.followers += 1
        return PlayerFollower(self, address, watch, client)

    def leave(self, follower: PlayerFollower) -> None:
        with self.lock:
            if follower.left:
                return
            follower.left = True
            watch = follower.watch
            watch.followers -= 1
            if watch.followers == 0 and self.watches.get(follower.address) is watch:
                del self.watches[follower.address]
        following(self.referee).give_place(follower.client)

    def hear(self, game_id: str | None) -> None:
        """An announcement (None: some may have been lost); the reader thread reads."""
        with self.lock:
            if not self.watches:
                return
            if game_id is None:
                self.resync = True
            else:
                self.heard.add(game_id)
        self.wake.set()

    def run(self) -> None:
        while True:
            queue = self.referee.queue
            woken = self.wake.wait(
                _POLL if queue.eager or not queue.hearing_changes() else _RECHECK
            )
            self.wake.clear()
            with self.lock:
                heard, self.heard = self.heard, set()
                resync, self.resync = self.resync, False
                followed = set(self.watches)
            if not followed:
                continue
            # The net also runs on a busy server, where announcements never let the wait
            # time out: what an announcement missed is found within `_RECHECK` seconds.
            due = datetime.now(UTC) - self.last_net >= timedelta(seconds=_RECHECK)
            try:
                self.read(followed, heard, net=resync or due or not woken)
            except Exception as error:
                # The database away: the streams wait, and the net looks again next time.
                _log.warning("could not read the followed players' games (%s)", error)
                with self.lock:
                    self.resync = True

    def read(self, followed: set[str], heard: set[str], net: bool) -> None:
        """Read the games announced (`heard`) among the followed players' seats, or with
        `net` every game of theirs changed since the last such look; tell their watches."""
        if net:
            moment = datetime.now(UTC)
            since = stamp(self.last_net - _NET_SLACK)
            found = standings(self.referee, followed, since=since)
            self.last_net = moment
        elif heard:
            found = standings(self.referee, followed, game_ids=heard)
        else:
            return
        for address, games in found.items():
            if not games:
                continue
            with self.lock:
                watch = self.watches.get(address)
            if watch is not None:
                watch.offer(games)


_hubs: dict[int, PlayerFollowing] = {}
_hubs_lock = threading.Lock()


def player_following(referee: Referee) -> PlayerFollowing:
    """The followers of `referee`'s players in this process: made on first use, and again
    in a forked child (which has the hub but not its thread)."""
    with _hubs_lock:
        hub = _hubs.get(id(referee))
        if hub is None or hub.pid != os.getpid():
            hub = _hubs[id(referee)] = PlayerFollowing(referee)
        return hub
