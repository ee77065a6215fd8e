"""Following games over Server-Sent Events: 1,000 followers beside the move path.

Starts the stack of bench/service.py (a fresh PostgreSQL database, gunicorn
with gthread workers, one `referee worker`, the machine's Redis), with
REFEREE_EVENTS_MAX set so that each gunicorn process could hold every
follower (connections are not spread evenly between the processes) and
its threads sized to match (deploy/gunicorn.conf.py adds REFEREE_EVENTS_MAX
to REFEREE_THREADS).

1. Moves alone at an offered rate (`--rate`, open loop, `?wait=`): the
   baseline p50/p99, as bench/service.py measures them.
2. `--followers` streams opened on `--games` Subdivision games (two seats
   and the rest spectators per game) by a separate client process, an
   asyncio loop on raw sockets (one connection each, HTTP/1.1, chunked).
3. The same offered moves again while they follow. For every follower and
   every version made meanwhile: the time from the move's decision (its
   log row's stamp, written by the worker) to the first event the
   follower got at that version or later (versions may be skipped).
4. Memory (RSS) and threads and open descriptors of the gunicorn
   processes, before the followers and with them.

Usage: uv run python -m bench.events [--followers 1000] [--games 200] [--rate 50] [--seconds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from bench.service import Stack, Tally, move_sender, new_games, offered, start_stack

# (game id, seat token or None) per follower.
Plan = list[tuple[str, str | None]]
Sender = Callable[[Any, Tally], None]


# -- the followers' process -------------------------------------------------


async def _follow(
    host: str,
    port: int,
    game_id: str,
    token: str | None,
    index: int,
    heard: list[tuple[int, str, int, float]],
    statuses: dict[str, int],
    connected: asyncio.Event,
    counter: list[int],
) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        statuses["connect failed"] = statuses.get("connect failed", 0) + 1
        counter[0] += 1
        return
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = (
        f"GET /v1/games/{game_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Accept: text/event-stream\r\n{auth}\r\n"
    )
    writer.write(request.encode())
    try:
        await writer.drain()
        status = (await reader.readline()).split(b" ")[1].decode()
        chunked = False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower():
                chunked = True
        statuses[status] = statuses.get(status, 0) + 1
        counter[0] += 1
        if counter[0] == counter[1]:
            connected.set()
        if status != "200":
            return
        pending = b""
        while True:
            if chunked:
                size = int((await reader.readline()).split(b";")[0], 16)
                if size == 0:
                    return
                data = (await reader.readexactly(size + 2))[:-2]
            else:
                data = await reader.read(65536)
                if not data:
                    return
            received = time.time()
            pending += data
            while b"\n\n" in pending:
                block, pending = pending.split(b"\n\n", 1)
                if block.startswith(b"id: "):
                    version = int(block[4:].split(b"\n", 1)[0])
                    heard.append((index, game_id, version, received))
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
        statuses["broken"] = statuses.get("broken", 0) + 1
    finally:
        writer.close()


async def _followers(url: str, plan: Plan, ready: EventType, stop: EventType) -> dict[str, Any]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    heard: list[tuple[int, str, int, float]] = []
    statuses: dict[str, int] = {}
    connected = asyncio.Event()
    counter = [0, len(plan)]
    tasks = []
    for index, (game_id, token) in enumerate(plan):
        follow = _follow(host, port, game_id, token, index, heard, statuses, connected, counter)
        tasks.append(asyncio.create_task(follow))
        if index % 50 == 49:
            # Open them in waves: a burst of 1,000 connects overflows the listen backlog.
            await asyncio.sleep(0.05)
    await connected.wait()
    ready.set()
    while not stop.is_set():
        await asyncio.sleep(0.1)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {"heard": heard, "statuses": statuses}


def _run_followers(
    url: str, plan: Plan, ready: EventType, stop: EventType, out: Connection
) -> None:
    out.send(asyncio.run(_followers(url, plan, ready, stop)))


# -- the machine's side -----------------------------------------------------


def _status(pid: int) -> dict[str, int]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "Threads"):
            found[name] = int(value.split()[0])
    found["fds"] = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    return found


def web_processes(stack: Stack) -> str:
    """RSS, threads and open descriptors of gunicorn's master and each of its workers."""
    master = stack.processes[0].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    parts = []
    total = 0
    for pid in [master, *map(int, children)]:
        status = _status(pid)
        total += status["VmRSS"]
        parts.append(
            f"{pid}: {status['VmRSS'] / 1024:.0f} MB, {status['Threads']} threads,"
            f" {status['fds']} fds"
        )
    return f"gunicorn RSS {total / 1024:.0f} MB in all ({'; '.join(parts)})"


def decided_at(stack: Stack) -> dict[tuple[str, int], float]:
    """When each logged move was decided (the stamp the worker gave it), by game and version."""
    with psycopg.connect(stack.database_url) as connection:
        rows = connection.execute(
            "SELECT replace(game_id::text, '-', ''), seq, extract(epoch FROM created_at) FROM move"
        ).fetchall()
    return {(g, seq): float(at) for g, seq, at in rows}


def latencies(
    heard: list[tuple[int, str, int, float]],
    plan: Plan,
    decided: dict[tuple[str, int], float],
    since: float,
) -> tuple[list[float], int, int]:
    """Decision-to-event seconds per (follower, version decided after `since`); missed; skipped."""
    by_follower: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for index, _game, version, received in heard:
        by_follower[index].append((version, received))
    versions: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for (game_id, version), at in decided.items():
        if at >= since:
            versions[game_id].append((version, at))
    found, missed, skipped = [], 0, 0
    for index, (game_id, _token) in enumerate(plan):
        events = sorted(by_follower.get(index, []))
        got = {version for version, _ in events}
        for version, at in versions.get(game_id, []):
            first = next((received for v, received in events if v >= version), None)
            if first is None:
                missed += 1
                continue
            skipped += version not in got
            found.append(first - at)
    return found, missed, skipped


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    if not ordered:
        return "none"
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms,"
        f" max {ordered[-1] * 1000:.0f} ms"
    )


def measure(stack: Stack, moves: Sender, name: str, args: argparse.Namespace) -> str:
    """Moves at the offered rate: their latency, and the CPU each process tree spent per move."""
    before = stack.cpu()
    tally, elapsed = offered(moves, args.rate, args.seconds)
    used = [after - was for after, was in zip(stack.cpu(), before, strict=True)]
    api, *workers = (1000 * seconds / max(tally.ok, 1) for seconds in used)
    load = os.getloadavg()[0]
    return (
        f"{tally.line(name, elapsed)}  cpu/move: api {api:.1f} ms, worker {sum(workers):.1f} ms;"
        f" load {load:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--followers", type=int, default=1000)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50, help="moves/s offered")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    settings = {
        "REFEREE_EVENTS_MAX": str(args.followers),
        "REFEREE_THREADS": "16",
        "REFEREE_EVENTS_KEEPALIVE": "15",
    }
    stack = start_stack(args.web_workers, "prefork", 2, settings=settings)
    stop = multiprocessing.Event()
    follower_process = None
    try:
        print(
            f"stack: gunicorn x{args.web_workers} (gthread, 16 + {args.followers} threads each),"
            " one worker (prefork x2), PostgreSQL, Redis"
        )
        games_ready = new_games(stack.url, args.games)
        games = list(games_ready.queue)
        moves = move_sender(stack.url, games_ready)
        offered(moves, args.rate, 3)  # warm-up
        print(web_processes(stack))
        print(measure(stack, moves, f"moves alone, offered {args.rate:g}/s", args), flush=True)

        plan: Plan = []
        for n in range(args.followers):
            game = games[n % len(games)]
            turn = n // len(games)
            plan.append((game.id, game.tokens[turn] if turn < 2 else None))
        ready = multiprocessing.Event()
        receiver, sender = multiprocessing.Pipe(duplex=False)
        follower_process = multiprocessing.Process(
            target=_run_followers, args=(stack.url, plan, ready, stop, sender)
        )
        began = time.monotonic()
        follower_process.start()
        if not ready.wait(120):
            raise SystemExit("the followers did not all connect within 120 s")
        print(f"{args.followers} followers connected in {time.monotonic() - began:.1f} s")
        time.sleep(2)
        print(web_processes(stack))
        since = time.time()
        name = f"moves with followers, offered {args.rate:g}/s"
        print(measure(stack, moves, name, args), flush=True)
        time.sleep(3)  # the last events on their way
        print(web_processes(stack))
        stop.set()
        result = receiver.recv()
        follower_process.join(30)
        decided = decided_at(stack)
        found, missed, skipped = latencies(result["heard"], plan, decided, since)
        print(f"stream answers: {result['statuses']}")
        print(
            f"decision to event, {len(found)} (follower, move) pairs: {percentiles(found)};"
            f" missed {missed}, skipped (a later version came first) {skipped}"
        )
        within = sum(1 for value in found if value <= 1.0) / len(found) if found else 0.0
        print(f"within 1 s: {within:.2%} (goal: p99 within 1 s)")
    finally:
        stop.set()
        if follower_process is not None and follower_process.is_alive():
            follower_process.terminate()
        stack.stop()


if __name__ == "__main__":
    main()
