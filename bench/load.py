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

Usage: uv run python bench/load.py [--seconds 5] [--threads 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.service import (
    PG_ADMIN,
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

    def errors(self) -> int:
        counts = [*self.moves["errors"].values(), *self.reads["errors"].values()]
        return sum(int(count) for count in counts)

    def lines(self) -> list[str]:
        out = []
        for name, run in (("moves (wrk, ?wait=10)", self.moves), ("GET state (wrk)", self.reads)):
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


def load(stack: Stack, seconds: float, threads: int, games_count: int) -> LoadResult:
    """Moves, then reads, with wrk against a running stack (warmed up first)."""
    saturate(move_sender(stack.url, new_games(stack.url, 8)), 4, 2.0)
    stack.drain()
    ready = new_games(stack.url, games_count)
    games = []
    ids = []
    played = []
    while not ready.empty():
        game = ready.get()
        played.append(game.id)
        moves = []
        while RULES.result(game.state) is None:
            token, move, game.state = game.next_move()
            moves.append(f"{{{_lua(token)}, {_lua(json.dumps({'move': move}))}}}")
        ids.append(_lua(game.id))
        games.append(f"{{id = {_lua(game.id)}, moves = {{{', '.join(moves)}}}}}")
    script = _SCRIPT % {"games": "{" + ",\n".join(games) + "}"}
    moves_run = _wrk(script, stack.url, threads, seconds, str(threads))
    stack.drain()
    reads_run = _wrk(_READS % {"ids": "{" + ", ".join(ids) + "}"}, stack.url, threads, seconds)
    url = PG_ADMIN.rsplit("/", 1)[0] + "/" + stack.database
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM submission WHERE status = 'accepted' AND game_id = ANY(%s)",
            (played,),
        )
        accepted = int(row.fetchone()[0])  # type: ignore[index]
    return LoadResult(moves_run, reads_run, accepted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--threads", type=int, default=8, help="wrk threads = connections")
    parser.add_argument("--workers", type=int, default=2, help="referee worker processes")
    parser.add_argument("--games", type=int, default=64)
    args = parser.parse_args()
    pool = os.cpu_count() or 1
    stack = start_stack(2, "prefork", pool, workers=args.workers)
    try:
        result = load(stack, args.seconds, args.threads, args.games)
    finally:
        stack.stop()
    print(f"stack: gunicorn x2, {args.workers} workers (prefork x{pool}), PostgreSQL, Redis")
    for line in result.lines():
        print(line)


if __name__ == "__main__":
    main()
