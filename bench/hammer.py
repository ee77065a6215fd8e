"""Moves while strangers hammer the expensive reads: `verify` and the game pages.

    uv run python -m bench.hammer [--moves 10000] [--seconds 20] [--clients 32]

For each backend, PostgreSQL (gunicorn with its default 2 x cores processes
and one worker, on the machine's Redis) and the embedded default (`referee
serve` on a SQLite file, moves decided in-process):

1. one MaNiKi game of `--moves` moves is built in this process with the
   workers' own `deciding.decide` (rules version 1, whose seats can pass
   for ever, so the log grows as long as wanted);
2. `GET verify` of that game is timed uncached (its kept outcome deleted
   before each call) and cached;
3. for `--seconds`, `--clients` threads loop over `GET verify` and the game
   page (`/g/{id}` at random positions) of the long game, from a process
   of their own, while one player (this process) plays MaNiKi moves with
   `?wait=10` in games of its own (a new game when one ends). Printed: the
   hammer's requests and its 5xx, and the moves' count, 5xx and
   submit-to-answer p50/p99.

Goals: no 5xx; moves p99 under 100 ms on PostgreSQL, under 250 ms on SQLite.
The figures depend on what else the machine runs (its load average is printed).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

import requests
from sqlalchemy import delete

from bench.long_game import build_long_game
from bench.service import BIN, ROOT, start_stack
from referee.store.db import Database
from referee.store.tables import Verification


def verify_costs(url: str, database_url: str, game_id: str) -> dict[str, float]:
    """GET verify at the game's length: uncached (kept outcome dropped first) and cached, ms."""
    http = requests.Session()
    path = f"{url}/v1/games/{game_id}/verify"

    def timed(before: Callable[[], None]) -> float:
        before()
        started = time.perf_counter()
        http.get(path, timeout=120).raise_for_status()
        return (time.perf_counter() - started) * 1000

    database = Database(database_url)

    def drop() -> None:
        with database.transaction() as session:
            session.execute(delete(Verification))

    uncached = statistics.median(timed(drop) for _ in range(3))
    cached = statistics.median(timed(lambda: None) for _ in range(20))
    database.dispose()
    return {"verify_uncached_ms": round(uncached, 1), "verify_cached_ms": round(cached, 2)}


def warm_up(url: str) -> None:
    """Play a few moves first: the worker and the server's caches start before the timing."""
    http = requests.Session()
    players = [{"name": "a"}, {"name": "b"}]
    game = http.post(url + "/v1/games", json={"game": "maniki", "players": players}, timeout=60)
    for turn in range(6):
        token = game.json()["seats"][turn % 2]["token"]
        http.post(
            f"{url}/v1/games/{game.json()['id']}/moves?wait=30",
            json={"notation": "pass"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ).raise_for_status()


def hammer_reads(
    url: str, game_id: str, moves: int, seconds: float, clients: int, counted: Queue[dict[int, int]]
) -> None:
    """`clients` threads loop over `GET verify` and pages for `seconds`; their statuses, counted."""
    stop = time.monotonic() + seconds
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def count(status: int) -> None:
        with lock:
            statuses[status] = statuses.get(status, 0) + 1

    def reader(n: int) -> None:
        http = requests.Session()
        chooser = random.Random(n)
        while time.monotonic() < stop:
            if chooser.random() < 0.5:
                path = f"/v1/games/{game_id}/verify"
            else:
                path = f"/g/{game_id}?at={chooser.randrange(moves + 1)}"
            try:
                count(http.get(url + path, timeout=60).status_code)
            except requests.RequestException:
                count(0)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counted.put(statuses)


def hammer(url: str, game_id: str, moves: int, seconds: float, clients: int) -> dict[str, Any]:
    warm_up(url)
    # The hammer in a process of its own: its threads must not hold the player's
    # interpreter lock, or the player's timings would measure this client, not the service.
    context = multiprocessing.get_context("fork")
    counted: Queue[dict[int, int]] = context.Queue()
    readers = context.Process(
        target=hammer_reads, args=(url, game_id, moves, seconds, clients, counted)
    )
    readers.start()
    stop = time.monotonic() + seconds
    latencies: list[float] = []
    move_errors: list[int] = []
    http = requests.Session()
    game: dict[str, Any] | None = None
    turn = 0
    while time.monotonic() < stop:
        if game is None:
            players = [{"name": "a"}, {"name": "b"}]
            answer = http.post(
                url + "/v1/games", json={"game": "maniki", "players": players}, timeout=30
            )
            answer.raise_for_status()
            game, turn = answer.json(), 0
        token = game["seats"][turn % 2]["token"]
        started = time.perf_counter()
        answer = http.post(
            f"{url}/v1/games/{game['id']}/moves?wait=10",
            json={"notation": "pass"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status_code >= 500:
            move_errors.append(answer.status_code)
        elif answer.status_code == 201:
            latencies.append(elapsed)
            turn += 1
        else:  # the all-pass game ended (rules v2): start another
            game = None
    statuses = counted.get(timeout=120)
    readers.join(30)
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else float("nan")
    return {
        "reads": sum(statuses.values()),
        "reads_5xx_or_failed": sum(n for s, n in statuses.items() if s >= 500 or s == 0),
        "read_statuses": dict(sorted(statuses.items())),
        "moves": len(latencies),
        "moves_5xx": len(move_errors),
        "move_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "move_p99_ms": round(p99, 1),
    }


def report(name: str, figures: dict[str, Any]) -> None:
    print(f"== {name}")
    for key, value in figures.items():
        print(f"  {key}: {value}")


def on_postgresql(args: argparse.Namespace) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    stack = start_stack(2 * cores, "prefork", cores, workers=1)
    try:
        game_id = build_long_game(stack.database_url, args.moves)
        figures = verify_costs(stack.url, stack.database_url, game_id)
        figures |= hammer(stack.url, game_id, args.moves, args.seconds, args.clients)
        return figures
    finally:
        stack.stop()


def on_sqlite(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        database = f"sqlite:///{Path(folder) / 'referee.sqlite3'}"
        game_id = build_long_game(database, args.moves)
        port = 18_000 + os.getpid() % 1000
        # One client plays every move: its limits must not be what is measured.
        env = {
            **os.environ,
            "DATABASE_URL": database,
            "REFEREE_RATE_CREATE": "1000000/second",
            "REFEREE_RATE_MOVES": "1000000/second",
            "REFEREE_CLIENT_CONNECTIONS": "1000000",
            "REFEREE_EVENTS_PER_CLIENT": "100000",
        }
        env.pop("REDIS_URL", None)
        log = (Path(folder) / "serve.log").open("wb")
        server = subprocess.Popen(
            [BIN / "referee", "serve", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=log,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                try:
                    if requests.get(url + "/v1/rules", timeout=2).ok:
                        break
                except requests.RequestException:
                    time.sleep(0.2)
            figures = verify_costs(url, database, game_id)
            figures |= hammer(url, game_id, args.moves, args.seconds, args.clients)
            return figures
        finally:
            server.terminate()
            server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--only", choices=("postgresql", "sqlite"))
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()}")
    if args.only in (None, "postgresql"):
        report("PostgreSQL (gunicorn, 1 worker, Redis)", on_postgresql(args))
    if args.only in (None, "sqlite"):
        report("SQLite (referee serve, the embedded default)", on_sqlite(args))
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
