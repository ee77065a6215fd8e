"""The referee's own processes for the service tier: `referee serve`, `referee worker`.

They are separate processes started here, talked to over HTTP and through
the broker, as a player's program would: nothing is mocked. The fixtures
that start them are in tests/fixtures.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import redis
import requests

from tests import servers
from tests.servers import free_port

REFEREE = str(Path(sys.executable).with_name("referee"))


# Celery's start-up exchanges with other workers (a second's wait each) that tests
# never need: a worker of a test's stack only takes that stack's queues.
QUIET_WORKER = ["--without-mingle", "--without-gossip"]

# The workers a worker of role "all" is: it decides, its children deliver and play bots.
ALL_ROLES = 3

# Every test client sends this key; stacks that set it as REFEREE_API_KEY
# treat the tests as a trusted client (their games mail seats at once).
TEST_API_KEY = "referee-test-key"


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    # The suites send many requests from one address; tests of the limits set small ones.
    env.update(REFEREE_RATE_CREATE="1000000/second", REFEREE_RATE_MOVES="1000000/second")
    env.update(REFEREE_CLIENT_CONNECTIONS="1000000", REFEREE_EVENTS_PER_CLIENT="100000")
    # A bot seated by a test thinks briefly.
    env.update(REFEREE_BOT_SECONDS="0.05")
    env.update(extra)
    return env


@dataclass
class Process:
    """A child process with its output in a file, stopped at the end of its fixture."""

    args: list[str]
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen[bytes] | None = field(default=None)
    # Where `output` starts reading the log: a stack shared by several test modules
    # shows each only what its processes wrote since the module began (`from_now`).
    since: int = 0

    def start(self) -> Process:
        handle = self.log.open("ab")
        # In its log's folder, so that what it writes by a relative path (the default
        # mail folder, say) is this run's own, not the checkout's.
        self.proc = subprocess.Popen(
            self.args, env=self.env, stdout=handle, stderr=handle, cwd=self.log.parent
        )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        servers.kill(self.proc)

    def stop(self) -> None:
        servers.stop(self.proc)

    def output(self) -> str:
        with self.log.open("rb") as handle:
            handle.seek(self.since)
            return handle.read().decode(errors="replace")

    def from_now(self) -> Process:
        """The same process, its `output` beginning with what it writes next."""
        return replace(self, since=self.log.stat().st_size)

    def wait_ready(self, workers: int = 1, seconds: float = 180) -> None:
        """Wait until `workers` Celery workers writing to this log say they are ready
        (on a loaded machine a worker takes long to start)."""
        deadline = time.monotonic() + seconds
        while self.output().count(" ready.") < workers:
            assert self.proc is not None and self.proc.poll() is None, self.output()
            assert time.monotonic() < deadline, f"waited {seconds} s:\n{self.output()}"
            time.sleep(0.1)


@dataclass
class Service:
    """A running referee: its base URL, database and the processes behind it."""

    url: str
    database_url: str
    env: dict[str, str]
    tmp: Path
    server: Process
    workers: list[Process] = field(default_factory=list)

    def start_worker(self, wait: bool = True) -> Process:
        """A worker of role "all", once it and its two children (delivery and
        bots) are ready: a test's first mail or bot move waits on all three.
        With `wait` false, at once: the caller starts something else meanwhile
        and then calls `wait_ready(workers=ALL_ROLES)` itself."""
        name = f"w{len(self.workers)}-{uuid.uuid4().hex[:6]}@%h"
        args = [REFEREE, "worker", "--pool", "solo", "--loglevel", "INFO", "-n", name]
        log = self.tmp / f"worker{len(self.workers)}.log"
        worker = Process([*args, *QUIET_WORKER], self.env, log).start()
        self.workers.append(worker)
        if wait:
            worker.wait_ready(workers=ALL_ROLES)
        return worker

    def stop(self, *beside: Process) -> None:
        """Stop the server, the workers and the processes `beside` them, all at once."""
        processes = (*self.workers, self.server, *beside)
        servers.stop(*(process.proc for process in processes))

    def from_now(self) -> Service:
        """The same running referee, its workers' logs beginning with what they write next.
        The server's log stays whole: what `referee serve` says as it starts is tested."""
        return replace(self, workers=[worker.from_now() for worker in self.workers])

    def stopped(self) -> list[str]:
        """The command lines of its processes that have ended."""
        return [
            " ".join(process.args)
            for process in (self.server, *self.workers)
            if process.proc is None or process.proc.poll() is not None
        ]


@contextmanager
def pg_stack(database: str, tmp: Path) -> Iterator[Service]:
    """`referee serve` and a worker on `database` and the run's Redis, stopped afterwards."""
    env = base_env(
        DATABASE_URL=database,
        REDIS_URL=servers.redis_url(),
        REFEREE_QUEUE=f"referee-test-{uuid.uuid4().hex[:8]}",
        REFEREE_SWEEP_EVERY="1",
        REFEREE_SWEEP_AFTER="2",
    )
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    try:
        service.start_worker()
        yield service
    finally:
        service.stop()


# How long a lock is waited for when a database is emptied: below PostgreSQL's
# deadlock_timeout (1 s), so that emptying gives way, and is tried again, before
# a transaction of the referee's waiting on it could be chosen to end a deadlock.
_EMPTYING_LOCK_WAIT = "500ms"


def empty(service: Service, seconds: float = 60) -> None:
    """Delete every row of the referee's tables in the service's database (its
    migrations' mark and its server-wide `setting` rows stay), and the rate limits'
    counts it keeps in Redis: what a fresh database and queue would hold, for the
    processes already running on them. The settings stay because each process reads
    them once: a process that had not yet read the kept secret would otherwise make a
    new one, unlike the others', in the middle of the next module.

    A delivery being sent is waited for first, so that no mail or webhook of the
    rows deleted arrives afterwards: the delivery table is locked, then none may be
    `sending`. The sequences go on (a worker keeps what it built by row id).
    """
    deadline = time.monotonic() + seconds
    with psycopg.connect(service.database_url, autocommit=True) as conn:
        tables = [
            f'"{name}"'
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables"
                " WHERE schemaname = current_schema()"
                " AND tablename NOT IN ('alembic_version', 'setting')"
            )
        ]
        while not _emptied(conn, tables):
            assert time.monotonic() < deadline, f"a delivery was still being sent after {seconds} s"
            time.sleep(0.1)
    limits = redis.Redis.from_url(service.env["REDIS_URL"])
    for key in limits.scan_iter(f"referee-limits-{service.env['REFEREE_QUEUE']}:*"):
        limits.delete(key)


def _emptied(conn: psycopg.Connection[Any], tables: list[str]) -> bool:
    """Empty `tables` if no delivery is being sent; whether it did."""
    try:
        with conn.transaction():
            conn.execute(f"SET LOCAL lock_timeout = '{_EMPTYING_LOCK_WAIT}'")
            conn.execute("LOCK TABLE delivery IN ACCESS EXCLUSIVE MODE")
            if conn.execute("SELECT 1 FROM delivery WHERE status = 'sending'").fetchone():
                return False
            conn.execute(f"TRUNCATE {', '.join(tables)}")
            return True
    except psycopg.errors.LockNotAvailable:
        return False


def start_server(env: dict[str, str], tmp: Path) -> tuple[str, Process]:
    """`referee serve` on a free port; on another if the port was taken before it bound."""
    for _ in range(5):
        port = free_port()
        server = Process([REFEREE, "serve", "--port", str(port)], env, tmp / "server.log").start()
        url = f"http://127.0.0.1:{port}"
        if _serving(url, server):
            return url, server
        if "address already in use" not in server.output().lower():
            break
    server.kill()
    raise AssertionError("the server did not start:\n" + server.output())


def either_stack(request: Any, tmp: Path, settings: dict[str, str]) -> Service:
    """`referee serve` with `settings`: on PostgreSQL with Redis and a worker when the
    fixture's param is "redis" (`request`: a pytest FixtureRequest), else on the
    embedded default, a SQLite file in `tmp`. The caller stops it."""
    if request.param == "redis":
        database = request.getfixturevalue("pg_database")
        env = base_env(
            DATABASE_URL=database,
            REDIS_URL=servers.redis_url(),
            REFEREE_QUEUE=f"referee-test-{uuid.uuid4().hex[:8]}",
            **settings,
        )
    else:
        database = f"sqlite:///{tmp / 'referee.sqlite3'}"
        env = base_env(DATABASE_URL=database, **settings)
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    if request.param == "redis":
        service.start_worker()
    return service


def _serving(url: str, server: Process) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/v1/rules", timeout=2).ok:
                return True
        except requests.ConnectionError:
            pass
        if server.proc is None or server.proc.poll() is not None:
            return False
        time.sleep(0.2)
    return False


class Client:
    """A referee client speaking only HTTP, as any player's program would."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()
        self.http.headers["X-API-Key"] = TEST_API_KEY

    @staticmethod
    def auth(token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str, token: str | None = None, **params: Any) -> requests.Response:
        return self.http.get(self.url + path, headers=self.auth(token), params=params, timeout=60)

    def post(
        self, path: str, body: Any, token: str | None = None, headers: dict[str, str] | None = None
    ) -> requests.Response:
        return self.http.post(
            self.url + path,
            json=body,
            headers={**self.auth(token), **(headers or {})},
            timeout=60,
        )

    def create(self, game: str, players: int, **options: Any) -> dict[str, Any]:
        body = {"game": game, "players": [{"name": f"p{i}"} for i in range(players)]}
        if options:
            body["options"] = options
        answer = self.post("/v1/games", body)
        assert answer.status_code == 201, answer.text
        created: dict[str, Any] = answer.json()
        return created

    def move(
        self, game_id: str, token: str, body: dict[str, Any], wait: float = 20, **headers: str
    ) -> requests.Response:
        return self.http.post(
            f"{self.url}/v1/games/{game_id}/moves",
            params={"wait": wait},
            json=body,
            headers={**self.auth(token), **headers},
            timeout=60,
        )

    def wait_decided(self, submission_id: str, token: str, seconds: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            found: dict[str, Any] = self.get(f"/v1/submissions/{submission_id}", token).json()[
                "submission"
            ]
            if found["status"] != "pending" or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


Found = TypeVar("Found")


def wait_for(check: Callable[[], Found], seconds: float = 60) -> Found:
    """`check()`'s first true answer, asked every fifth of a second: what a live test
    waits for the service's workers and threads to do."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"nothing after {seconds} s")
