"""HTTP load from a real load generator (wrk) against gunicorn and workers on loopback.

wrk runs one connection per thread, so each thread's requests go one after
another. A thread plays its share of Subdivision games (parks given as
options, so the moves are known in advance and the Lua script only sends
them): every request is `POST .../moves?wait=10`, answered once a worker
decided the move, so wrk's latency is submit-to-decided and every answer
but 201 (accepted) is an error. A thread that runs out of moves reads
states instead. A second run reads `GET .../state` of those games.

Bounded: wrk stops after `seconds`, and the moves it can send are the
moves of the games written into its script.

`--engine python` sends the same requests from Python threads (one
keep-alive connection each) instead, for machines without wrk: the tests
(tests/live/test_http_load.py) use it, so they need nothing but the Python environment. It
costs the client more CPU than wrk, which on a small machine takes from
the server: its throughput figures read lower than wrk's.

Usage: uv run python bench/load.py [--seconds 5] [--threads 8] [--workers 2] [--engine wrk]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPConnection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from bench.service import (
    RULES,
    Stack,
    move_sender,
    new_games,
    saturate,
    start_stack,
)

_SCRIPT = """
local games = %(games)s
local all_threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(all_threads, thread)
end

function init(args)
  local nthreads = tonumber(args[1])
  mine = {}
  for i, g in ipairs(games) do
    if (i - 1) %% nthreads == id then table.insert(mine, g) end
  end
  gi, mi, accepted, moves, reads, pending, refused, failed = 1, 1, 0, 0, 0, 0, 0, 0
  last_was_move = false
end

-- wrk may build a request it never sends, so a move is only passed once
-- answered; a 202 or 5xx answer sends it again under the same Idempotency-Key.
function request()
  while gi <= #mine and mi > #mine[gi].moves do gi, mi = gi + 1, 1 end
  if gi > #mine then
    last_was_move = false
    return wrk.format("GET", "/v1/games/" .. mine[1 + (reads %% #mine)].id .. "/state")
  end
  last_was_move = true
  local m = mine[gi].moves[mi]
  return wrk.format("POST", "/v1/games/" .. mine[gi].id .. "/moves?wait=10",
    {["Authorization"] = "Bearer " .. m[1], ["Content-Type"] = "application/json",
     ["Idempotency-Key"] = "move-" .. mi}, m[2])
end

function response(status, headers, body)
  if not last_was_move then
    reads = reads + 1
    return
  end
  moves = moves + 1
  if status == 201 then accepted = accepted + 1
  elseif status == 202 then pending = pending + 1
  elseif status < 500 then refused = refused + 1
  else failed = failed + 1 end
  if status == 201 or (status >= 400 and status < 500) then mi = mi + 1 end
end

function done(summary, latency, requests)
  local n = {moves = 0, accepted = 0, pending = 0, refused = 0, failed = 0}
  for _, t in ipairs(all_threads) do
    for k, v in pairs(n) do n[k] = v + t:get(k) end
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %%d, "duration_us": %%d, "moves": %%d, "accepted": %%d,' ..
    ' "pending": %%d, "refused": %%d, "failed": %%d,' ..
    ' "errors": {"connect": %%d, "read": %%d, "write": %%d, "status": %%d, "timeout": %%d},' ..
    ' "latency_ms": {"p50": %%.3f, "p90": %%.3f, "p99": %%.3f, "max": %%.3f}}\\n',
    summary.requests, summary.duration, n.moves, n.accepted, n.pending, n.refused, n.failed,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
"""

_READS = """
local ids = %(ids)s
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", "/v1/games/" .. ids[1 + (n %% #ids)] .. "/state")
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %%d, "duration_us": %%d,' ..
    ' "errors": {"connect": %%d, "read": %%d, "write": %%d, "status": %%d, "timeout": %%d},' ..
    ' "latency_ms": {"p50": %%.3f, "p90": %%.3f, "p99": %%.3f, "max": %%.3f}}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
"""


def _lua(value: str) -> str:
    """A Lua string literal (long brackets need no escaping of JSON)."""
    assert "]==]" not in value
    return f"[==[{value}]==]"


def wrk_path() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    return found


@dataclass
class LoadResult:
    moves: dict[str, Any]
    reads: dict[str, Any]
    accepted_in_database: int
    engine: str = "wrk"

    def errors(self) -> int:
        counts = [*self.moves["errors"].values(), *self.reads["errors"].values()]
        return sum(int(count) for count in counts)

    def lines(self) -> list[str]:
        out = []
        runs = (
            (f"moves ({self.engine}, ?wait=10)", self.moves),
            (f"GET state ({self.engine})", self.reads),
        )
        for name, run in runs:
            seconds = run["duration_us"] / 1e6
            lat = run["latency_ms"]
            errors = sum(run["errors"].values())
            out.append(
                f"{name:24} {run['requests'] / seconds:7.1f} req/s  p50 {lat['p50']:6.1f} ms"
                f"  p99 {lat['p99']:6.1f} ms  max {lat['max']:6.1f} ms  errors {errors}"
            )
        out.append(
            f"moves answered {self.moves['moves']}: 201 {self.moves['accepted']},"
            f" 202 {self.moves['pending']}, 4xx {self.moves['refused']},"
            f" 5xx {self.moves['failed']}; accepted in the database {self.accepted_in_database}"
        )
        return out


def _wrk(script: str, url: str, threads: int, seconds: float, *args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        done = subprocess.run(
            [
                wrk_path(),
                f"-t{threads}",
                f"-c{threads}",
                f"-d{seconds:g}s",
                "--timeout",
                "15s",
                "-s",
                handle.name,
                url,
                "--",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=True,
        )
    finally:
        Path(handle.name).unlink()
    for line in done.stdout.splitlines():
        if line.startswith("WRK_JSON "):
            found: dict[str, Any] = json.loads(line.removeprefix("WRK_JSON "))
            return found
    raise RuntimeError("wrk printed no figures:\n" + done.stdout + done.stderr)


@dataclass
class _Tally:
    """One Python client thread's counts, as the wrk scripts keep them."""

    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("connect", "read", "write", "status", "timeout"), 0)
    )
    moves: int = 0
    accepted: int = 0
    pending: int = 0
    refused: int = 0
    failed: int = 0


# A request: (method, path, headers, body); the answer's status, or None on a broken connection.
Request = tuple[str, str, dict[str, str], bytes | None]


def _python_run(
    url: str,
    threads: int,
    seconds: float,
    next_request: Callable[[int, _Tally], Request],
    answered: Callable[[int, _Tally, Request, int], None],
) -> dict[str, Any]:
    """`threads` keep-alive connections sending requests one after another for `seconds`."""
    where = urlsplit(url)
    tallies = [_Tally() for _ in range(threads)]
    started = time.monotonic()
    until = started + seconds

    def client(n: int) -> None:
        tally = tallies[n]
        connection: HTTPConnection | None = None
        while time.monotonic() < until:
            request = next_request(n, tally)
            method, path, headers, body = request
            if connection is None:
                connection = HTTPConnection(where.hostname or "", where.port, timeout=15)
            sent = time.monotonic()
            try:
                connection.request(method, path, body=body, headers=headers)
                answer = connection.getresponse()
                answer.read()
            except TimeoutError:
                tally.errors["timeout"] += 1
                connection.close()
                connection = None
                continue
            except ConnectionRefusedError:
                tally.errors["connect"] += 1
                connection = None
                time.sleep(0.05)
                continue
            except OSError:
                tally.errors["read"] += 1
                connection.close()
                connection = None
                continue
            tally.latencies.append(time.monotonic() - sent)
            if answer.status >= 400:
                tally.errors["status"] += 1
            answered(n, tally, request, answer.status)
        if connection is not None:
            connection.close()

    workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    latencies = sorted(t for tally in tallies for t in tally.latencies)

    def percentile(p: float) -> float:
        if not latencies:
            return 0.0
        return 1000 * latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))]

    run: dict[str, Any] = {
        "requests": len(latencies),
        "duration_us": int(elapsed * 1e6),
        "errors": {k: sum(t.errors[k] for t in tallies) for k in tallies[0].errors},
        "latency_ms": {
            "p50": percentile(50),
            "p90": percentile(90),
            "p99": percentile(99),
            "max": 1000 * latencies[-1] if latencies else 0.0,
        },
    }
    for key in ("moves", "accepted", "pending", "refused", "failed"):
        run[key] = sum(getattr(t, key) for t in tallies)
    return run


def _python_moves(
    url: str, plays: list[tuple[str, list[tuple[str, str]]]], threads: int, seconds: float
) -> dict[str, Any]:
    """The moves script's requests: each thread its share of the games, then reads."""
    mine = [plays[n::threads] for n in range(threads)]
    place = [[0, 0] for _ in range(threads)]  # game index, move index
    reads = [0] * threads

    def next_request(n: int, tally: _Tally) -> Request:
        games, at = mine[n], place[n]
        while at[0] < len(games) and at[1] >= len(games[at[0]][1]):
            at[0], at[1] = at[0] + 1, 0
        if at[0] >= len(games):
            game_id = (games or plays)[reads[n] % len(games or plays)][0]
            return ("GET", f"/v1/games/{game_id}/state", {}, None)
        game_id, moves = games[at[0]]
        token, body = moves[at[1]]
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"move-{at[1] + 1}",
        }
        return ("POST", f"/v1/games/{game_id}/moves?wait=10", headers, body.encode())

    def answered(n: int, tally: _Tally, request: Request, status: int) -> None:
        if request[0] == "GET":
            reads[n] += 1
            return
        tally.moves += 1
        if status == 201:
            tally.accepted += 1
        elif status == 202:
            tally.pending += 1
        elif status < 500:
            tally.refused += 1
        else:
            tally.failed += 1
        if status == 201 or 400 <= status < 500:
            place[n][1] += 1

    return _python_run(url, threads, seconds, next_request, answered)


def _python_reads(url: str, ids: list[str], threads: int, seconds: float) -> dict[str, Any]:
    counts = list(range(threads))

    def next_request(n: int, tally: _Tally) -> Request:
        counts[n] += threads
        return ("GET", f"/v1/games/{ids[counts[n] % len(ids)]}/state", {}, None)

    run = _python_run(url, threads, seconds, next_request, lambda *_: None)
    for key in ("moves", "accepted", "pending", "refused", "failed"):
        del run[key]
    return run


def default_engine() -> str:
    return "wrk" if shutil.which("wrk") else "python"


def load(
    stack: Stack, seconds: float, threads: int, games_count: int, engine: str | None = None
) -> LoadResult:
    """Moves, then reads, with wrk (or Python threads) against a running stack (warmed up first)."""
    engine = engine or default_engine()
    assert engine in ("wrk", "python"), engine
    saturate(move_sender(stack.url, new_games(stack.url, 8)), 4, 2.0)
    stack.drain()
    ready = new_games(stack.url, games_count)
    plays: list[tuple[str, list[tuple[str, str]]]] = []
    while not ready.empty():
        game = ready.get()
        moves = []
        while RULES.result(game.state) is None:
            token, move, game.state = game.next_move()
            moves.append((token, json.dumps({"move": move})))
        plays.append((game.id, moves))
    played = [game_id for game_id, _ in plays]
    if engine == "python":
        moves_run = _python_moves(stack.url, plays, threads, seconds)
        stack.drain()
        reads_run = _python_reads(stack.url, played, threads, seconds)
    else:
        games = []
        for game_id, moves in plays:
            listed = ", ".join(f"{{{_lua(token)}, {_lua(body)}}}" for token, body in moves)
            games.append(f"{{id = {_lua(game_id)}, moves = {{{listed}}}}}")
        script = _SCRIPT % {"games": "{" + ",\n".join(games) + "}"}
        moves_run = _wrk(script, stack.url, threads, seconds, str(threads))
        stack.drain()
        ids = ", ".join(_lua(game_id) for game_id in played)
        reads_run = _wrk(_READS % {"ids": "{" + ids + "}"}, stack.url, threads, seconds)
    with psycopg.connect(stack.database_url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM submission WHERE status = 'accepted'"
            " AND game_id = ANY(%s::uuid[])",
            (played,),
        )
        accepted = int(row.fetchone()[0])  # type: ignore[index]
    return LoadResult(moves_run, reads_run, accepted, engine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--threads", type=int, default=8, help="wrk threads = connections")
    parser.add_argument("--workers", type=int, default=2, help="referee worker processes")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument(
        "--engine", choices=["wrk", "python"], default=default_engine(), help="the load generator"
    )
    args = parser.parse_args()
    pool = os.cpu_count() or 1
    stack = start_stack(2, "prefork", pool, workers=args.workers)
    try:
        result = load(stack, args.seconds, args.threads, args.games, args.engine)
    finally:
        stack.stop()
    print(f"stack: gunicorn x2, {args.workers} workers (prefork x{pool}), PostgreSQL, Redis")
    for line in result.lines():
        print(line)


if __name__ == "__main__":
    main()
