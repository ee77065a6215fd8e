"""The referee under faults, while scripted players keep submitting.

The stack is real and separate from the session's shared servers where a
fault would harm them: gunicorn (deploy/gunicorn.conf.py), two
`referee worker` processes, a fresh PostgreSQL database, a Redis (Valkey,
from the wheel tests/servers.py uses) of this test's own on another
loopback port, and the players' SMTP server (aiosmtpd). Players are
threads, one per game, playing over HTTP as any client would: `?wait=`,
an `Idempotency-Key` per move, and the same request again after any
error or an undecided answer.

Meanwhile the faults come round in a loop: a worker SIGKILLed (and
started again), Redis stopped and started (it keeps nothing on disk, so
its queued tasks are lost), every PostgreSQL connection of this database
killed with `pg_terminate_backend`, the SMTP server down and up. Hostile
webhooks throughout: one seat of some games has its webhook on a server
that trickles a header byte every 2 s and never answers, so each of its
deliveries runs into the deadline until the webhook is switched off. The
play is bounded (`PLAY_SECONDS`); the settling after it lasts while it makes progress.

Afterwards: every submission decided exactly once, every move the players
were told was accepted in the log at the place they were told, nothing in
the log that no player sent, every chain verifies, every state equals its
replay, every mail delivered once.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from referee import games
from referee.record import loads
from referee.replay import envelope, replay
from referee.rng import Rng
from tests.mailboxes import DOMAIN, Mailbox, mail_env
from tests.security.webhook_servers import SlowServer
from tests.servers import Redis, free_port, hex_id, pg_admin, private_redis
from tests.stacks import QUIET_WORKER, REFEREE, TEST_API_KEY, Process
from tests.tiers import starts_servers

pytestmark = pytest.mark.long

GUNICORN = str(Path(REFEREE).with_name("gunicorn"))
ROOT = Path(__file__).resolve().parent.parent.parent
RULES = games.get("subdivision")
# Parks given as options: the players know the start and choose moves locally.
OPTIONS = {"parks": "cells", "cells": ["a1", "c3", "f6", "d2", "b5", "e4"]}
GAMES = 8
PLAY_SECONDS = 45
# Settling goes on while what is left keeps changing (a loaded machine settles slowly):
# it stops when nothing changed for SETTLE_STALL_SECONDS, or after SETTLE_MOST_SECONDS.
SETTLE_STALL_SECONDS = 60
SETTLE_MOST_SECONDS = 900
# Games whose second seat's webhook is the trickling server.
HOSTILE_GAMES = 3


@dataclass
class Stack:
    url: str
    database: str
    env: dict[str, str]
    tmp: Path
    redis: Redis
    mailbox: Mailbox
    web: Process
    workers: list[Process] = field(default_factory=list)
    kills: int = 0

    def start_worker(self, slot: int) -> None:
        name = f"fault{slot}-{uuid.uuid4().hex[:6]}@%h"
        args = [REFEREE, "worker", "--loglevel", "INFO", "-n", name, *QUIET_WORKER]
        worker = Process(args, self.env, self.tmp / f"worker{slot}.log").start()
        if slot < len(self.workers):
            self.workers[slot] = worker
        else:
            self.workers.append(worker)


@pytest.fixture(scope="module")
@starts_servers
def stack(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("faults")
    redis = private_redis(tmp / "redis")
    redis.start()
    mailbox = Mailbox(free_port())
    mailbox.start()
    port = free_port()
    env = mail_env(pg_database, mailbox.port)
    env.update(
        # The trickling webhook server is on loopback; 3 s deadlines (mail_env),
        # switched off after 4 failures so that it is settled well within the run.
        REFEREE_WEBHOOK_ALLOW_PRIVATE="1",
        REFEREE_WEBHOOK_MAX_FAILURES="4",
        REDIS_URL=f"redis://127.0.0.1:{redis.port}/0",
        REFEREE_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY="2",
        REFEREE_ACCESS_LOG="",
    )
    subprocess.run([REFEREE, "db", "upgrade"], env=env, check=True, capture_output=True)
    web = Process(
        [GUNICORN, "-c", str(ROOT / "deploy/gunicorn.conf.py"), "api.wsgi:app"],
        {**env, "PYTHONPATH": str(ROOT)},
        tmp / "web.log",
    ).start()
    url = f"http://127.0.0.1:{port}"
    built = Stack(url, pg_database, env, tmp, redis, mailbox, web)
    try:
        # On a loaded machine gunicorn's workers take long to import the app.
        deadline = time.monotonic() + 180
        while True:
            try:
                if requests.get(url + "/v1/rules", timeout=10).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, web.output()
            time.sleep(0.2)
        built.start_worker(0)
        built.start_worker(1)
        # Play starts once both decide: on a loaded machine a start takes long.
        for worker in built.workers:
            worker.wait_ready()
        yield built
    finally:
        for worker in built.workers:
            worker.stop()
        web.stop()
        mailbox.stop()
        redis.stop()


@dataclass
class Player:
    """Plays one game to its end (or until time is up), retrying through every fault."""

    url: str
    game_id: str
    tokens: list[str]
    state: Any
    rng: Rng
    # (submission id, seq) of every move the server answered as accepted, in order.
    accepted: list[tuple[str, int]] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    # A move sent but not yet answered 201 when time ran out: (seat, move, key).
    unanswered: tuple[int, Any, str] | None = None

    def play(self, until: float) -> None:
        http = requests.Session()
        number = 0
        while RULES.result(self.state) is None and time.monotonic() < until:
            seat = min(RULES.actors(self.state))
            move = RULES.random_move(self.state, seat, self.rng)
            key = f"{self.game_id}-{number}"
            self.unanswered = (seat, move, key)
            while time.monotonic() < until:
                answer = self.send(http, seat, move, key)
                if answer is None:
                    time.sleep(0.2)
                    continue
                if answer.status_code == 201:
                    number += 1
                    break
                if answer.status_code in (202, 503) or answer.status_code >= 500:
                    time.sleep(0.2)
                    continue
                self.failures.append(f"{answer.status_code} {answer.text[:300]}")
                return

    def send(
        self, http: requests.Session, seat: int, move: Any, key: str
    ) -> requests.Response | None:
        """One try at a move; a 201 is taken into the player's log and state."""
        try:
            answer = http.post(
                f"{self.url}/v1/games/{self.game_id}/moves?wait=5",
                json={"move": RULES.move_to_json(move)},
                headers={"Authorization": f"Bearer {self.tokens[seat]}", "Idempotency-Key": key},
                timeout=30,
            )
        except requests.RequestException:
            self.statuses[0] += 1
            return None
        self.statuses[answer.status_code] += 1
        if answer.status_code == 201:
            submission = answer.json()["submission"]
            self.accepted.append((submission["id"], submission["seq"]))
            self.state = RULES.play(self.state, seat, move)
            self.unanswered = None
        return answer

    def ask_again(self) -> None:
        """After the play: learn the fate of a move left unanswered when time ran out,
        by sending it once more under its key (as a client that comes back would)."""
        if self.unanswered is not None:
            self.send(requests.Session(), *self.unanswered)


def chaos(stack: Stack, until: float, log: list[str]) -> None:
    """The faults, in turn, until `until`."""
    admin_url = pg_admin()
    step = 0
    while time.monotonic() < until:
        time.sleep(2.5)
        kind = step % 4
        if kind == 0:
            slot = (step // 4) % 2
            stack.workers[slot].kill()
            stack.kills += 1
            log.append(f"SIGKILL worker {slot}")
            time.sleep(0.5)
            stack.start_worker(slot)
        elif kind == 1:
            stack.redis.kill()
            log.append("redis down")
            time.sleep(2)
            stack.redis.start()
            log.append("redis up")
        elif kind == 2:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                killed = admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (stack.database.rsplit("/", 1)[1],),
                ).fetchone()
            log.append(f"killed {killed[0] if killed else 0} PostgreSQL connections")
        else:
            stack.mailbox.stop()
            log.append("smtp down")
            time.sleep(3)
            stack.mailbox.start()
            log.append("smtp up")
        step += 1


def settle(database: str) -> tuple[int, int]:
    """Wait until nothing is pending or unsent, for as long as that keeps changing;
    returns what is left (submissions, outbox)."""
    start = changed = time.monotonic()
    last = (-1, -1)
    while True:
        with psycopg.connect(database) as connection:
            pending = connection.execute(
                "SELECT count(*) FROM submission WHERE status = 'pending'"
            ).fetchone()
            unsent = connection.execute(
                "SELECT count(*) FROM delivery WHERE status IN ('pending', 'sending')"
            ).fetchone()
        left = (pending[0] if pending else -1, unsent[0] if unsent else -1)
        now = time.monotonic()
        if left != last:
            last, changed = left, now
        if left == (0, 0):
            return left
        if now - changed > SETTLE_STALL_SECONDS or now - start > SETTLE_MOST_SECONDS:
            print(f"settling stopped after {now - start:.0f} s, {now - changed:.0f} s unchanged")
            return left
        time.sleep(0.5)


def test_faults_lose_and_duplicate_nothing(stack: Stack) -> None:
    http = requests.Session()
    http.headers["X-API-Key"] = TEST_API_KEY
    players = []
    slow = SlowServer()
    for n in range(GAMES):
        body: dict[str, Any] = {
            "game": "subdivision",
            "players": [
                {"name": f"p{n}{side}", "email": f"p{n}{side}@players.test"} for side in "ab"
            ],
            "options": OPTIONS,
        }
        created = http.post(stack.url + "/v1/games", json=body, timeout=30).json()
        state = RULES.start(2, RULES.load_options(OPTIONS, 2), Rng("parks are given"))
        tokens = [seat["token"] for seat in created["seats"]]
        players.append(Player(stack.url, created["id"], tokens, state, Rng(f"fault-{n}")))
        if n < HOSTILE_GAMES:
            hooked = http.put(
                f"{stack.url}/v1/games/{created['id']}/webhook",
                json={"url": slow.url},
                headers={"Authorization": f"Bearer {tokens[1]}"},
                timeout=30,
            )
            assert hooked.status_code == 200, hooked.text

    until = time.monotonic() + PLAY_SECONDS
    log: list[str] = []
    threads = [threading.Thread(target=p.play, args=(until,)) for p in players]
    for thread in threads:
        thread.start()
    chaos_until = until - 5
    chaos_thread = threading.Thread(target=chaos, args=(stack, chaos_until, log))
    chaos_thread.start()
    for thread in threads:
        thread.join()
    chaos_thread.join()
    left = settle(stack.database)
    for player in players:
        player.ask_again()
    slow.close()
    statuses = sum((p.statuses for p in players), Counter())
    moves = sum(len(p.accepted) for p in players)
    finished = sum(RULES.result(p.state) is not None for p in players)
    print(f"\nfaults: {log}\nanswers: {dict(statuses)}; {moves} moves, {finished} games over")
    print(f"hostile webhook: {len(slow.accepted)} connections held, {len(slow.left)} cut")

    assert len([e for e in log if e.startswith("SIGKILL")]) >= 2, log
    assert "redis up" in log and "smtp up" in log, log
    assert [f for p in players for f in p.failures] == []
    assert statuses[500] == 0, statuses
    assert moves >= GAMES * 5, "the players got too little done to show anything"
    assert slow.accepted, "the hostile webhook was never called"
    if left != (0, 0):
        with psycopg.connect(stack.database) as connection:
            stuck = connection.execute(
                "SELECT d.id, o.kind, d.channel, d.status, d.attempts, d.next_attempt_at,"
                " d.lease_until, d.error FROM delivery d JOIN outbox o ON o.id = d.notice_id"
                " WHERE d.status IN ('pending', 'sending')"
            ).fetchall()
        raise AssertionError(f"left (pending, unsent) once settling stopped: {left} {stuck}")

    with psycopg.connect(stack.database) as connection:
        # Every submission decided exactly once: an accepted one names the move it
        # made (its seat's, from its source), a refused one none.
        rows = connection.execute(
            "SELECT s.id, s.status, s.seq, s.seat = m.seat AND s.source = m.source"
            " FROM submission s LEFT JOIN move m ON m.game_id = s.game_id AND m.seq = s.seq"
        ).fetchall()
        for sid, status, seq, its_move in rows:
            if status == "accepted":
                assert its_move, (sid, seq)
            else:
                assert status == "rejected" and seq is None, (sid, status, seq)
        # Each game's moves but those the referee recorded by itself, by the submission
        # naming each: none without one, none named twice.
        logged = {
            game_id: [
                sid
                for (sid,) in connection.execute(
                    f"SELECT {hex_id('s.id')} FROM move m"
                    " LEFT JOIN submission s ON s.game_id = m.game_id AND s.seq = m.seq"
                    " WHERE m.game_id = %s AND m.source <> 'forced' ORDER BY m.seq, s.id",
                    (game_id,),
                )
            ]
            for game_id in (p.game_id for p in players)
        }
        outbox = connection.execute(
            f"SELECT o.id, {hex_id('o.game_id')}, d.status FROM outbox o"
            " JOIN delivery d ON d.notice_id = o.id AND d.channel = 'mail'"
        ).fetchall()

    for player in players:
        # The log holds exactly the moves the player was told were accepted,
        # in that order: none lost, none twice, none that nobody sent.
        assert logged[player.game_id] == [sid for sid, _ in player.accepted]
        assert [seq for _, seq in player.accepted] == list(range(1, len(player.accepted) + 1))
        checked = http.get(f"{stack.url}/v1/games/{player.game_id}/verify", timeout=60).json()
        assert checked["chain_valid"] and checked["replay_matches"], checked
        assert checked["problems"] == [], checked
        state = http.get(f"{stack.url}/v1/games/{player.game_id}/state", timeout=60).json()
        assert state["version"] == len(player.accepted)
        if checked["seed"] is not None:
            assert checked["seed_matches"]
            text = http.get(f"{stack.url}/v1/games/{player.game_id}/log.jsonl", timeout=60).text
            replayed = replay(loads(text))
            version = len(replayed.states) - 1
            assert envelope(replayed.game, replayed.final, version, None) == state

    # Every notice told, and told again only after a kill. A seat's notices that
    # waited together go out as one mail, under the first one's Message-ID, naming
    # each notice in X-Referee-Notices (and its kind in X-Referee-Kinds). A notice told
    # twice is the documented gap (a worker killed between the server's 250 and its
    # note of it): the next worker sends the mail again, perhaps beside newer notices
    # under another first notice's Message-ID, and readers drop the numbers they have
    # seen. It can only follow a SIGKILL: at most one mail per process of the killed
    # worker's pool (the default: one per core), each of which may be mid-send.
    assert all(status == "sent" for _, _, status in outbox)
    expected = {(row_id, game_id) for row_id, game_id, _ in outbox}
    told: Counter[tuple[int, str]] = Counter()
    again = 0
    for message in stack.mailbox.messages:
        game_id = str(message.mail["X-Referee-Game"])
        numbers = [int(n) for n in str(message.mail["X-Referee-Notices"]).split()]
        assert len(numbers) == len(str(message.mail["X-Referee-Kinds"]).split())
        assert str(message.mail["Message-ID"]) == f"<referee.{numbers[0]}.{game_id}@{DOMAIN}>"
        again += any(told[number, game_id] for number in numbers)
        told.update((number, game_id) for number in numbers)
    assert set(told) == expected
    print(f"notices: {len(expected)}, in {len(stack.mailbox.messages)} mails, {again} told again")
    assert again <= stack.kills * (os.cpu_count() or 1)
