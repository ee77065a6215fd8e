"""The service's speed: accepted moves per second and submit-to-decided latency.

Starts its own stack on this machine: a fresh PostgreSQL database, gunicorn
(deploy/gunicorn.conf.py) and one `referee worker`, on the machine's Redis.
Beside the real move path it measures the floor in the same run: a bare
endpoint of the same server that inserts one row and enqueues a no-op task.

Two measurements of each:
- saturation: closed-loop clients sending as fast as they get answers, for
  the highest throughput, in alternating rounds (floor, moves, floor, ...);
  the throughput ratio is the median of the rounds' ratios;
- a fixed offered load (default 100 requests/s, open loop), for latency.

A move is sent with `?wait=` so its answer comes once the worker decided it:
the time to that answer is submit-to-decided. The players are Subdivision
games with their parks given as options, so the client knows the start
and picks its moves locally, adding no reads to the server's load.

Usage: uv run python bench/service.py [--seconds 6] [--rounds 3] [--rate 100] [--clients 16]
"""

from __future__ import annotations

import argparse
import itertools
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import redis
import requests

from referee import games
from referee.rng import Rng

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def pg_admin() -> str:
    """The PostgreSQL admin URL (REFEREE_BENCH_PG, read when used: the load test sets it)."""
    return os.environ.get("REFEREE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")


def pg_database(name: str) -> str:
    """The URL of database `name` on the admin URL's server."""
    return pg_admin().rsplit("/", 1)[0] + "/" + name


def redis_url() -> str:
    """The broker (REFEREE_BENCH_REDIS, read when used)."""
    return os.environ.get("REFEREE_BENCH_REDIS", "redis://127.0.0.1:6379/0")


OPTIONS = {"parks": "cells", "cells": ["a1", "c3", "f6", "d2", "b5", "e4"]}
RULES = games.get("subdivision")


@dataclass
class Game:
    """A game the client follows locally (its start is fixed by the options)."""

    id: str
    tokens: list[str]
    state: Any
    rng: Rng

    def next_move(self) -> tuple[str, dict[str, Any], Any]:
        seat = min(RULES.actors(self.state))
        move = RULES.random_move(self.state, seat, self.rng)
        return self.tokens[seat], RULES.move_to_json(move), RULES.play(self.state, seat, move)


@dataclass
class Stack:
    url: str
    database: str
    queue: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def cpu(self) -> list[float]:
        """CPU seconds used so far by each process tree (gunicorn, the worker)."""
        tick = os.sysconf("SC_CLK_TCK")
        return [sum(_cpu_ticks(pid) for pid in _tree(p.pid)) / tick for p in self.processes]

    def drain(self) -> None:
        """Wait until the workers have taken every task (deciding, delivery and bots' queues),
        so runs do not queue behind each other."""
        broker = redis.Redis.from_url(redis_url())
        queues = [self.queue, f"{self.queue}.delivery", f"{self.queue}.bots"]
        deadline = time.monotonic() + 120
        while any(broker.llen(name) for name in queues) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)

    @property
    def database_url(self) -> str:
        return pg_database(self.database)

    def server_side(self) -> str:
        """Created-to-decided as the database saw it, for the moves."""
        with psycopg.connect(self.database_url) as connection:
            row = connection.execute(
                "SELECT percentile_cont(ARRAY[0.5, 0.99]) WITHIN GROUP (ORDER BY"
                " extract(epoch FROM decided_at::timestamptz - created_at::timestamptz))"
                " FROM submission WHERE decided_at IS NOT NULL"
            ).fetchone()
        if row is None or row[0] is None:
            return "no decided submissions"
        p50, p99 = (value * 1000 for value in row[0])
        return f"created to decided, in the database: p50 {p50:.1f} ms, p99 {p99:.1f} ms"

    def stop(self, drop: bool = True) -> None:
        """Stop its processes, forget its queues' keys in Redis (what its sweeps sent after
        the last run, the broker's bindings) and drop its database (`drop` false: keep it)."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        broker = redis.Redis.from_url(redis_url())
        for key in broker.scan_iter(f"*{self.queue}*"):
            broker.delete(key)
        if drop:
            drop_database(self.database)


def drop_database(name: str) -> None:
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _tree(pid: int) -> list[int]:
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            found.extend(_tree(int(child)))
    return found


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_stack(
    web_workers: int,
    pool: str,
    concurrency: int,
    workers: int = 1,
    settings: dict[str, str] | None = None,
    database: str | None = None,
) -> Stack:
    """gunicorn and `workers` worker processes on a fresh database (or on `database`);
    processes[0] is gunicorn.

    `settings` are more environment variables for every process.
    """
    name = database or f"referee_bench_{uuid.uuid4().hex[:8]}"
    if database is None:
        with psycopg.connect(pg_admin(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    port = free_port()
    queue_name = f"referee-bench-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": pg_database(name),
        "REDIS_URL": redis_url(),
        "REFEREE_QUEUE": queue_name,
        "REFEREE_BENCH_FLOOR": "1",
        "REFEREE_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": str(web_workers),
        "REFEREE_ACCESS_LOG": "",
        **(settings or {}),
        # One client sends every request: its limits must not be what is measured.
        "REFEREE_RATE_CREATE": "1000000/second",
        "REFEREE_RATE_MOVES": "1000000/second",
        "REFEREE_CLIENT_CONNECTIONS": "1000000",
        "REFEREE_EVENTS_PER_CLIENT": "100000",
    }
    stack = Stack(f"http://127.0.0.1:{port}", name, queue_name)
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / queue_name
    logs.mkdir()
    subprocess.run([BIN / "referee", "db", "upgrade"], env=env, check=True, capture_output=True)
    web: list[str | Path] = [BIN / "gunicorn", "-c", ROOT / "deploy/gunicorn.conf.py"]
    web.append("api.wsgi:app")
    worker: list[str | Path] = [BIN / "referee", "worker", "--pool", pool]
    worker += ["--concurrency", str(concurrency), "--loglevel", "WARNING"]
    commands = [web, *([*worker, "-n", f"bench{n}@%h"] for n in range(workers))]
    for n, command in enumerate(commands):
        out = (logs / f"{n}.log").open("wb")
        stack.processes.append(subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=out))
    deadline = time.monotonic() + 180  # a loaded machine imports slowly
    try:
        while time.monotonic() < deadline:
            try:
                if requests.get(stack.url + "/v1/rules", timeout=5).ok:
                    return stack
            except requests.RequestException:
                time.sleep(0.2)
    except BaseException:
        stack.stop()
        raise
    stack.stop()
    raise SystemExit(f"the server did not start; see {logs}")


_game_numbers = itertools.count()
# More games than a second of moves ends on this machine (a game lasts about 30
# moves): the fresh games made before each run of moves.
ENDED_A_SECOND = 12


def new_game(http: requests.Session, url: str) -> Game:
    body: dict[str, Any] = {
        "game": "subdivision",
        "players": [{"name": "a"}, {"name": "b"}],
        "options": OPTIONS,
    }
    answer = http.post(url + "/v1/games", json=body, timeout=30)
    if answer.status_code != 201:
        raise SystemExit(f"creating a game failed: {answer.status_code} {answer.text}")
    created = answer.json()
    options = RULES.load_options(OPTIONS, 2)
    state = RULES.start(2, options, Rng("parks are given"))
    tokens = [seat["token"] for seat in created["seats"]]
    return Game(created["id"], tokens, state, Rng(f"bench-{next(_game_numbers)}"))


def new_games(url: str, count: int) -> queue.Queue[Game]:
    ready: queue.Queue[Game] = queue.Queue()
    http = requests.Session()
    for _ in range(count):
        ready.put(new_game(http, url))
    return ready


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    ok: int = 0
    failed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, good: bool) -> None:
        with self.lock:
            if good:
                self.ok += 1
                self.latencies.append(seconds)
            else:
                self.failed += 1

    def percentiles_ms(self) -> tuple[float, float]:
        """p50 and p99 of the successful requests' latencies (some must have succeeded)."""
        ordered = sorted(self.latencies)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return statistics.median(ordered) * 1000, p99 * 1000

    def line(self, name: str, elapsed: float) -> str:
        if not self.latencies:
            return f"{name:34} nothing succeeded ({self.failed} failed)"
        p50, p99 = self.percentiles_ms()
        return (
            f"{name:34} {self.ok / elapsed:7.1f}/s  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms"
            f"  ({self.ok} ok, {self.failed} failed)"
        )


def move_sender(
    url: str, games_ready: queue.Queue[Game], fresh: queue.Queue[Game] | None = None
) -> Callable[[requests.Session, Tally], None]:
    """Sends one move of a game that is ready; a game that ended is replaced by one
    from `fresh`, made before the run, so that making games is not measured as moves
    (one made here, measured, only when `fresh` ran out)."""
    fresh = fresh or queue.Queue()

    def send(http: requests.Session, tally: Tally) -> None:
        game = games_ready.get()
        token, move, after = game.next_move()
        start = time.perf_counter()
        answer = http.post(
            f"{url}/v1/games/{game.id}/moves?wait=10",
            json={"move": move},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        tally.add(time.perf_counter() - start, answer.status_code == 201)
        if answer.status_code == 201:
            game.state = after
        if RULES.result(game.state) is None:
            games_ready.put(game)
            return
        # A game that ended is replaced, so no client ever waits for one.
        try:
            games_ready.put(fresh.get_nowait())
        except queue.Empty:
            games_ready.put(new_game(http, url))

    return send


def floor_sender(url: str, game_id: str) -> Callable[[requests.Session, Tally], None]:
    def send(http: requests.Session, tally: Tally) -> None:
        start = time.perf_counter()
        answer = http.post(f"{url}/bench/floor/{game_id}", timeout=30)
        tally.add(time.perf_counter() - start, answer.status_code == 202)

    return send


def saturate(
    send: Callable[[requests.Session, Tally], None], clients: int, seconds: float
) -> tuple[Tally, float]:
    tally = Tally()
    stop = time.monotonic() + seconds

    def loop() -> None:
        http = requests.Session()
        while time.monotonic() < stop:
            send(http, tally)

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    begin = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally, time.monotonic() - begin


def offered(
    send: Callable[[requests.Session, Tally], None], rate: float, seconds: float
) -> tuple[Tally, float]:
    """Open loop: one request every 1/rate seconds, whatever the answers' pace."""
    tally = Tally()
    ticks: queue.Queue[float | None] = queue.Queue()
    local = threading.local()

    def work() -> None:
        while ticks.get() is not None:
            if not hasattr(local, "http"):
                local.http = requests.Session()
            send(local.http, tally)

    pool = [threading.Thread(target=work) for _ in range(48)]
    for thread in pool:
        thread.start()
    begin = time.monotonic()
    count = int(rate * seconds)
    for n in range(count):
        delay = begin + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        ticks.put(time.monotonic())
    for _ in pool:
        ticks.put(None)
    for thread in pool:
        thread.join()
    return tally, time.monotonic() - begin


@dataclass
class Run:
    """One measured run: what it was, its answers, and the CPU each process tree used."""

    name: str
    tally: Tally
    elapsed: float
    cpu_seconds: list[float]

    @property
    def per_second(self) -> float:
        return self.tally.ok / self.elapsed

    def line(self) -> str:
        line = self.tally.line(self.name, self.elapsed)
        if self.tally.ok:
            api, *workers = (1000 * seconds / self.tally.ok for seconds in self.cpu_seconds)
            line += f"  cpu/req: api {api:.1f} ms, workers {sum(workers):.1f} ms"
        return line


@dataclass
class Comparison:
    runs: list[Run]
    # moves/floor throughput of each saturated round, in order.
    ratios: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def line(self) -> str:
        each = ", ".join(f"{ratio:.0%}" for ratio in self.ratios)
        return (
            f"moves/floor throughput: {self.ratio:.0%}, the median of the rounds' ({each})"
            " (goal: at least 75%)"
        )


def compare(
    stack: Stack, seconds: float, rates: list[float], clients: int, rounds: int
) -> Comparison:
    """The floor and real moves, saturated in alternating rounds, then at each offered rate.

    The machine's speed drifts between runs of a few seconds (other tenants,
    caches, the database's housekeeping), so the throughput ratio is taken
    per round, from two runs made one right after the other, and the median
    of the rounds is the figure.
    """
    games_ready = new_games(stack.url, 300)
    fresh: queue.Queue[Game] = queue.Queue()
    moves = move_sender(stack.url, games_ready, fresh)
    floor = floor_sender(stack.url, games_ready.queue[0].id)
    # Warm both paths up, long enough for most games to have been seen by
    # the server's processes (each keeps the seat tokens of the games it saw).
    saturate(floor, clients, 1)
    saturate(moves, clients, 3)
    plan: list[tuple[str, Callable[[], tuple[Tally, float]]]] = []
    for _ in range(rounds):
        plan.append(("floor, saturated", lambda: saturate(floor, clients, seconds)))
        plan.append(("moves, saturated", lambda: saturate(moves, clients, seconds)))
    for rate in rates:
        plan.append((f"floor, offered {rate:g}/s", partial(offered, floor, rate, seconds)))
        plan.append((f"moves, offered {rate:g}/s", partial(offered, moves, rate, seconds)))
    runs = []
    http = requests.Session()
    for name, measure in plan:
        while name.startswith("moves") and fresh.qsize() < seconds * ENDED_A_SECOND:
            fresh.put(new_game(http, stack.url))
        stack.drain()
        before = stack.cpu()
        tally, elapsed = measure()
        stack.drain()
        used = [after - was for after, was in zip(stack.cpu(), before, strict=True)]
        runs.append(Run(name, tally, elapsed, used))
        print(runs[-1].line(), flush=True)
    saturated = runs[: 2 * rounds]
    ratios = [
        moves_run.per_second / floor_run.per_second if floor_run.per_second else 0.0
        for floor_run, moves_run in zip(saturated[::2], saturated[1::2], strict=True)
    ]
    comparison = Comparison(runs, ratios)
    print(comparison.line())
    return comparison


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="saturated floor/moves rounds")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument(
        "--concurrency", type=int, default=os.cpu_count() or 1, help="worker pool size"
    )
    parser.add_argument("--pool", default="prefork", choices=["prefork", "solo", "threads"])
    args = parser.parse_args()
    stack = start_stack(args.web_workers, args.pool, args.concurrency)
    try:
        print(
            f"stack: gunicorn x{args.web_workers}, one worker ({args.pool} x{args.concurrency}),"
            " PostgreSQL, Redis"
        )
        compare(stack, args.seconds, [args.rate], args.clients, args.rounds)
        print(stack.server_side())
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
