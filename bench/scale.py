"""A hundred thousand games: what the sweeps, a player's lists, reads and moves cost at two
sizes of history, and the bytes a move takes.

Run: `uv run python -m bench.scale [--sizes 1000,100000] [--requests 200] [--rate 100]
[--seconds 20] [--processes N] [--settle-load 1.0] [--settle-seconds 300] [--rounds 3]
[--warmup 1]`.

At each size, a fresh PostgreSQL database (on REFEREE_BENCH_PG, as
bench/service.py) is filled by bench/loader.py with that many finished games
and a tenth as many running, one player sitting in 500 of them. Once every
size is loaded and the machine has settled (a checkpoint, then the load
average back to `--settle-load`, waiting `--settle-seconds` at most), the
sizes are measured in turn, `--rounds` times, so that the machine's slow
moments fall on both sizes alike; each figure pools its rounds, after
`--warmup` rounds that are printed and not counted (a database just loaded
holds the load in its caches, not today's games). A round measures, in
this process: every periodic sweep (`referee.queue.SWEEPS`, each job run
`--repeats` times at the present moment, as the sweeps run); and through
the app's test client (the whole request without the network, as bench/me.py):
`/me` and `GET /v1/me/games` for the player with 500 games, the games list
(`GET /v1/games`, all and running), a running game's state (`GET
/v1/games/{id}/state`, a different game each request) and `GET
/v1/games/{id}/verify` of a finished game, a different one each time, never
checked before (the same games at every size: the loader makes game `n`
alike whatever the size). Last, a stack (gunicorn, one worker, Redis) on the
same database takes moves of new Subdivision games at `--rate` a second for
`--seconds` (bench/service.py's open loop): submit-to-decided p50 and p99,
and the bytes the tables and indexes of everything a move writes grew by,
divided by the moves. The table at the end sets each figure at the largest
size beside the smallest: the goal is within 1.5x (moves: p99 within 1.2x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from api import create_app
from api.http.player_auth import PLAYER_COOKIE
from bench.loader import BUSY, WRITTEN, Plan, fill, held_bytes, seed_of
from bench.me import timings
from bench.service import (
    drop_database,
    move_sender,
    new_games,
    offered,
    pg_admin,
    pg_database,
    start_stack,
)
from referee.delivery import CHANNELS
from referee.queue import DELIVER, SWEEPS
from referee.service import Referee
from referee.service.jobs import JOBS
from referee.service.players import MANAGE, PLAY, READ, open_session
from referee.service.players import Player as Signed
from referee.service.tokens import make_token
from referee.settings import Settings

BUSY_GAMES = 500
GOAL, MOVES_GOAL = 1.5, 1.2


@dataclass
class Figures:
    """One size's figures: each a list of milliseconds (or one value), by name."""

    size: int
    loaded_s: float = 0.0
    rows: int = 0
    timed: dict[str, list[float]] = field(default_factory=dict)
    bytes_per_move: float = 0.0
    bytes_by_table: dict[str, float] = field(default_factory=dict)
    held_per_move: float = 0.0
    load: float = 0.0


def _median_p99(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.99) - 1)]


def _sweeps(referee: Referee, repeats: int, figures: Figures) -> None:
    for task in SWEEPS:
        # The delivery sweep has each channel's due rows sent, each a job of its own.
        for channel in CHANNELS if task == DELIVER else [None]:
            taken = []
            for _ in range(repeats):
                started = time.perf_counter()
                JOBS[task](referee, *([channel] if channel else []))
                taken.append((time.perf_counter() - started) * 1000)
            label = task.removeprefix("referee.") + (f" {channel}" if channel else "")
            figures.timed[f"sweep {label}"] = taken


# A game's id as the API spells it (PostgreSQL holds it as a `uuid`).
HEX_ID = "replace(id::text, '-', '')"


def _sample(url: str, query: str, count: int) -> list[str]:
    with psycopg.connect(url) as connection:
        return [gid for (gid,) in connection.execute(query, (count,)).fetchall()]


def _requests(
    referee: Referee, settings: Settings, plan: Plan, round_number: int, args: Any, f: Figures
) -> None:
    app = create_app(settings, referee)
    client, browser = app.test_client(), app.test_client()
    browser.set_cookie(PLAYER_COOKIE, open_session(referee, BUSY))
    signed = Signed(BUSY, frozenset({READ, PLAY, MANAGE}))
    bearer = {"Authorization": f"Bearer {make_token(referee, signed, 'bench', [READ]).secret}"}
    count = args.requests
    for name, path, user, headers in (
        ("GET /me", "/me", browser, {}),
        ("GET /v1/me/games", "/v1/me/games", client, bearer),
        ("GET /v1/games", "/v1/games", client, {}),
        ("GET /v1/games?status=active", "/v1/games?status=active", client, {}),
    ):
        timings(user, path, headers, 5)
        f.timed[name] = timings(user, path, headers, count)[0]
    url = settings.database_url
    running = _sample(
        url, f"SELECT {HEX_ID} FROM game WHERE status = 'active' ORDER BY id LIMIT %s", count
    )
    f.timed["GET state"] = _each(client, [f"/v1/games/{gid}/state" for gid in running])
    # Finished games the loader made, the next ones each round: the same games at every
    # size, and each checked for the first time.
    first = round_number * count
    seeds = [seed_of(plan, n) for n in range(first, min(first + count, plan.finished))]
    with psycopg.connect(url) as connection:
        finished = [
            gid
            for (gid,) in connection.execute(
                f"SELECT {HEX_ID} FROM game WHERE seed = ANY(%s) ORDER BY id", (seeds,)
            ).fetchall()
        ]
    f.timed["GET verify"] = _each(client, [f"/v1/games/{gid}/verify" for gid in finished])


def _each(client: Any, paths: list[str]) -> list[float]:
    taken = []
    for path in paths:
        started = time.perf_counter()
        answer = client.get(path)
        taken.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, (path, answer.status_code)
    return sorted(taken)


def _sizes(url: str) -> dict[str, int]:
    return {table: rows + indexes for table, (rows, indexes) in held_bytes(url).items()}


@dataclass
class Loaded:
    """One size's database, loaded and kept for every round, and its figures."""

    name: str
    url: str
    plan: Plan
    figures: Figures
    # What the rounds' moves added: moves, and bytes by table.
    moves: int = 0
    grown: dict[str, int] = field(default_factory=dict)


def _moves(loaded: Loaded, args: Any) -> list[float]:
    """`--seconds` of moves at `--rate` on a stack over the size's database (kept after):
    their submit-to-decided milliseconds."""
    url = loaded.url
    before_moves = _move_count(url)
    before = _sizes(url)
    stack = start_stack(2, "prefork", os.cpu_count() or 1, database=loaded.name)
    try:
        games = new_games(stack.url, 32)
        offered(move_sender(stack.url, games), args.rate, min(3.0, args.seconds))
        stack.drain()
        tally, _elapsed = offered(move_sender(stack.url, games), args.rate, args.seconds)
        stack.drain()
        loaded.moves += _move_count(url) - before_moves
        after = _sizes(url)
        for table in WRITTEN:
            loaded.grown[table] = loaded.grown.get(table, 0) + after[table] - before[table]
    finally:
        stack.stop(drop=False)
    return [s * 1000 for s in tally.latencies]


def _move_count(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT count(*) FROM move").fetchone()
    assert row is not None
    return int(row[0])


def _settle(url: str, load: float, most: float) -> None:
    """Let the database write the load out before anything is timed: a checkpoint, then
    a wait (at most `most` seconds) for the machine's load average to fall to `load`.
    Timed right after a big load, PostgreSQL's background writing is timed too, and a
    figure at 100,000 games would tell the machine rather than the history."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CHECKPOINT")
    while os.getloadavg()[0] > load and time.perf_counter() - started < most:
        time.sleep(5)
    print(
        f"  settled for {time.perf_counter() - started:.0f} s:"
        f" load average {os.getloadavg()[0]:.1f}"
    )


def load(size: int, args: Any) -> Loaded:
    """A fresh database holding `size` finished games and a tenth as many running."""
    figures = Figures(size)
    name = f"referee_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg_database(name)
    plan = Plan(size, size // 10, datetime.now(UTC), busy=BUSY_GAMES)
    with _referee(url) as (referee, _settings):
        referee.db.upgrade()
    started = time.perf_counter()
    written = fill(url, plan, args.processes, _progress(size))
    figures.loaded_s = time.perf_counter() - started
    figures.rows = sum(written.values())
    figures.held_per_move = sum(_sizes(url).values()) / written["move"]
    print(
        f"== {size:,} finished + {size // 10:,} running games: {figures.rows:,} rows"
        f" in {figures.loaded_s:.0f} s; {written['move']:,} moves,"
        f" {figures.held_per_move:.0f} B a move held"
    )
    return Loaded(name, url, plan, figures)


@contextmanager
def _referee(url: str) -> Iterator[tuple[Referee, Settings]]:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            database_url=url, redis_url=None, mail_dir=str(Path(folder) / "mail-out")
        )
        referee = Referee(settings)
        try:
            yield referee, settings
        finally:
            referee.close()


def measure(loaded: Loaded, round_number: int, args: Any, counted: bool = True) -> None:
    """One round at one size: every figure measured once more, added to its figures if
    the round is `counted` (not a warm-up)."""
    _settle(loaded.url, args.settle_load, args.round_settle_seconds)
    taken = Figures(loaded.figures.size)
    with _referee(loaded.url) as (referee, settings):
        _sweeps(referee, args.repeats, taken)
        _requests(referee, settings, loaded.plan, round_number, args, taken)
    taken.timed["move submit-to-decided"] = _moves(loaded, args)
    kind = "round" if counted else "warm-up round, not counted"
    print(f"-- {kind} {round_number + 1}, {loaded.figures.size:,} games")
    _print(taken)
    if not counted:
        return
    for label, values in taken.timed.items():
        loaded.figures.timed.setdefault(label, []).extend(values)


def _print(figures: Figures) -> None:
    for label, values in figures.timed.items():
        p50, p99 = _median_p99(values)
        best = min(values)
        print(f"  {label:34} best {best:8.2f} ms  p50 {p50:8.2f} ms  p99 {p99:8.2f} ms")


def _finish(loaded: Loaded) -> Figures:
    """The size's figures over all rounds, printed."""
    figures = loaded.figures
    figures.bytes_by_table = {t: b / loaded.moves for t, b in loaded.grown.items()}
    figures.bytes_per_move = sum(figures.bytes_by_table.values())
    figures.load = os.getloadavg()[0]
    print(f"== {figures.size:,} games, every round together")
    _print(figures)
    print(f"  bytes a move writes: {figures.bytes_per_move:.0f} B ", end="")
    print("(" + ", ".join(f"{t} {b:.0f}" for t, b in figures.bytes_by_table.items()) + ")")
    print(f"  load average {figures.load:.1f} on {os.cpu_count()} cores")
    return figures


def run(sizes: list[int], args: Any) -> list[Figures]:
    """Load every size, then measure them in turn, round after round: a size measured
    only while the machine was busier (the hour, a neighbour, the writing after a load)
    would compare the machine's moments, not the sizes. Odd rounds take the sizes in
    the other order, so that neither is always measured right after the other's moves.
    The first `--warmup` rounds are printed, not counted: a server that has run for a
    while holds today's rows in its caches, one just loaded holds the load's."""
    loaded: list[Loaded] = []
    try:
        for size in sizes:
            loaded.append(load(size, args))
        for each in loaded:
            _settle(each.url, args.settle_load, args.settle_seconds)
        for round_number in range(args.warmup + args.rounds):
            for each in loaded if round_number % 2 == 0 else reversed(loaded):
                measure(each, round_number, args, counted=round_number >= args.warmup)
        return [_finish(each) for each in loaded]
    finally:
        for each in loaded:
            drop_database(each.name)


def _progress(size: int) -> Callable[[int], None]:
    step = max(size // 10, 400)
    last = [0]

    def told(done: int) -> None:
        if done - last[0] >= step:
            last[0] = done
            print(f"  ... {done:,} games written", flush=True)

    return told


def compare(small: Figures, large: Figures) -> list[str]:
    """The table: each figure at both sizes, the ratio, and the goal. A sweep is compared
    by its best run (on a shared machine the others mostly measure the neighbours), a
    request by its median, moves by their p99."""
    lines = [
        f"| figure | {small.size:,} games (ms) | {large.size:,} games (ms) | ratio | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label in small.timed:
        kind = "p99" if label.startswith("move") else "best" if label.startswith("sweep") else "p50"
        a, b = _figure(small.timed[label], kind), _figure(large.timed[label], kind)
        goal = MOVES_GOAL if kind == "p99" else GOAL
        verdict = "meets" if b <= a * goal else "MISSES"
        lines.append(
            f"| {label} ({kind}) | {a:.2f} | {b:.2f} | {b / a:.2f}x | {verdict} <= {goal}x |"
        )
    return lines


def _figure(values: list[float], kind: str) -> float:
    p50, p99 = _median_p99(values)
    return {"best": min(values), "p50": p50, "p99": p99}[kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000", help="finished games, comma-separated")
    parser.add_argument("--requests", type=int, default=200, help="requests per figure")
    parser.add_argument("--repeats", type=int, default=7, help="runs of each sweep")
    parser.add_argument("--rate", type=float, default=100.0, help="moves a second")
    parser.add_argument("--seconds", type=float, default=20.0, help="of moves at the rate")
    parser.add_argument("--processes", type=int, default=os.cpu_count())
    parser.add_argument(
        "--settle-load", type=float, default=1.0, help="load average to wait for after a load"
    )
    parser.add_argument("--settle-seconds", type=float, default=300.0, help="longest wait for it")
    parser.add_argument("--rounds", type=int, default=3, help="of every figure at every size")
    parser.add_argument("--warmup", type=int, default=1, help="rounds first, not counted")
    parser.add_argument(
        "--round-settle-seconds", type=float, default=60.0, help="longest wait before a round"
    )
    parser.add_argument("--json", default="var/bench/scale.json")
    parser.add_argument(
        "--table", help="only print the table of earlier runs' JSON (files, comma-separated)"
    )
    args = parser.parse_args()
    if args.table:
        held = [
            figures
            for name in args.table.split(",")
            for figures in json.loads(Path(name).read_text(encoding="utf-8"))
        ]
        print("\n".join(compare(Figures(**held[0]), Figures(**held[-1]))))
        return
    results = run([int(size) for size in args.sizes.split(",")], args)
    if len(results) > 1:
        print("\n".join(compare(results[0], results[-1])))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(
        json.dumps([vars(figures) for figures in results], indent=1), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
