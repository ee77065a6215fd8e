"""Every figure of the referee in one run, printed and written to a JSON file.

    uv run python -m bench.all [--quick] [--json var/bench/figures.json]

1. Rules: per game (fewest seats), random playouts/s and record replay time
   (bench/games.py).
2. Service, with 1 and then 2 worker processes behind gunicorn on a fresh
   PostgreSQL database and the machine's Redis (bench/service.py): the
   floor (insert a row, enqueue a no-op) and real moves, saturated and at
   fixed offered loads, with p50/p99 submit-to-decided latency; the memory
   (RSS) of each worker and of gunicorn afterwards.
3. Log length: a MaNiKi game under rules version 1 (kept for old games),
   whose two seats pass every card: version 1 never ends such a game
   (version 2 does, after a turn of the deck), so its log grows as long as
   wanted. At 10, 100, 1,000 and 10,000 moves: `GET state` (snapshot +
   tail), `GET state?at=N/2`, `GET verify` the first time at that version
   (chain and a full replay from the seed on the server) and again (read
   from the table that keeps it), and an offline replay of the record.
   The moves are decided in this process by the same `decide` of the service
   the workers run, which is quicker than over HTTP.
4. wrk against the 2-worker stack (bench/load.py): errors and latency.

`--quick` shortens every run (about 2 minutes) and stops the log at 1,000.
Figures depend on the machine and on what else runs on it: the JSON keeps
the machine's core count and load average beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from bench.games import figures_of
from bench.load import load
from bench.service import Run, Stack, _tree, compare, start_stack
from referee import games
from referee.replay import replay

ROOT = Path(__file__).resolve().parent.parent


def rules_figures(seconds: float, replays: int) -> list[dict[str, Any]]:
    rows = []
    print(f"{'game':16} {'seats':>5} {'playouts/s':>11} {'replay p50 ms':>14} {'moves':>6}")
    for game in games.all_games():
        players = min(game.players)
        row = figures_of(game, players, seconds, replays)
        rows.append(row)
        print(
            f"{game.name:16} {players:>5} {row['playouts_per_second']:>11.1f} "
            f"{row['replay_ms_p50']:>14.3f} {row['replay_moves']:>6}"
        )
    return rows


def _run_figures(run: Run) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "run": run.name,
        "per_second": round(run.per_second, 1),
        "ok": run.tally.ok,
        "failed": run.tally.failed,
    }
    if run.tally.latencies:
        p50, p99 = run.tally.percentiles_ms()
        figures["p50_ms"], figures["p99_ms"] = round(p50, 1), round(p99, 1)
    return figures


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB."""
    total = 0
    for member in _tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def service_figures(
    stack: Stack, seconds: float, rates: list[float], clients: int, rounds: int
) -> dict[str, Any]:
    comparison = compare(stack, seconds, rates, clients, rounds)
    memory = {
        "gunicorn_mb": rss_mb(stack.processes[0].pid),
        "workers_mb": [rss_mb(p.pid) for p in stack.processes[1:]],
    }
    print(f"memory (RSS): gunicorn {memory['gunicorn_mb']} MB, workers {memory['workers_mb']} MB")
    return {
        "runs": [_run_figures(run) for run in comparison.runs],
        "moves_over_floor": round(comparison.ratio, 3),
        "moves_over_floor_by_round": [round(ratio, 3) for ratio in comparison.ratios],
        "memory": memory,
    }


def _p50_ms(url: str, count: int) -> float:
    http = requests.Session()
    timings = []
    for _ in range(count):
        started = time.perf_counter()
        answer = http.get(url, timeout=60)
        timings.append(time.perf_counter() - started)
        answer.raise_for_status()
    return round(statistics.median(timings) * 1000, 2)


def log_growth(stack: Stack, lengths: list[int]) -> list[dict[str, Any]]:
    """GET state and replay cost of one MaNiKi game at each log length."""
    from bench.long_game import extend_long_game, new_long_game
    from referee.service import Referee
    from referee.settings import Settings
    from referee.store import records
    from referee.store.tables import Game

    referee = Referee(Settings(database_url=stack.database_url))
    game_id = new_long_game(referee)
    version = 0
    rows = []
    print(
        f"{'moves':>6} {'GET state':>10} {'state?at=N/2':>13} {'verify, new':>12}"
        f" {'verify, kept':>13} {'replay':>9}"
    )
    build_started = time.perf_counter()
    for length in lengths:
        extend_long_game(referee, game_id, version, length)
        version = length
        state_url = f"{stack.url}/v1/games/{game_id}/state"
        samples = 30 if length < 10_000 else 10
        with referee.db.reading() as session:
            game = session.get(Game, game_id)
            assert game is not None
            record = records.full_record(session, game)
        started = time.perf_counter()
        replay(record)
        replay_ms = round((time.perf_counter() - started) * 1000, 2)
        verify_url = f"{stack.url}/v1/games/{game_id}/verify"
        row = {
            "moves": length,
            "get_state_ms": _p50_ms(state_url, samples),
            "get_state_at_half_ms": _p50_ms(f"{state_url}?at={length // 2}", samples),
            # The first check of a version replays the log; later ones read what it kept.
            "get_verify_uncached_ms": _p50_ms(verify_url, 1),
            "get_verify_ms": _p50_ms(verify_url, samples),
            "replay_ms": replay_ms,
        }
        rows.append(row)
        print(
            f"{length:>6} {row['get_state_ms']:>8} ms {row['get_state_at_half_ms']:>10} ms"
            f" {row['get_verify_uncached_ms']:>9} ms {row['get_verify_ms']:>10} ms"
            f" {replay_ms:>6} ms"
        )
    building = time.perf_counter() - build_started
    print(
        f"(built {version} moves in-process through the service: {version / building:.0f} moves/s)"
    )
    referee.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, logs up to 1,000")
    parser.add_argument("--json", dest="json_path", default=str(ROOT / "var/bench/figures.json"))
    args = parser.parse_args()
    seconds = 2.0 if args.quick else 8.0
    rates = [20.0, 50.0] if args.quick else [20.0, 50.0, 100.0]
    lengths = [10, 100, 1000] if args.quick else [10, 100, 1000, 10_000]
    figures: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_start": os.getloadavg(),
        },
    }
    print("== rules (bench/games.py)")
    figures["games"] = rules_figures(0.5 if args.quick else 2.0, 50 if args.quick else 200)
    figures["service"] = {}
    pool = os.cpu_count() or 1
    for workers in (1, 2):
        print(f"== service: gunicorn x2, {workers} worker(s) (prefork x{pool}), PostgreSQL, Redis")
        stack = start_stack(2, "prefork", pool, workers=workers)
        try:
            figures["service"][f"{workers}_workers"] = service_figures(
                stack, seconds, rates, clients=16, rounds=1 if args.quick else 3
            )
            if workers == 2:
                print("== wrk (bench/load.py) against the same stack")
                result = load(stack, 3 if args.quick else 8, 8, 64 if args.quick else 160)
                for line in result.lines():
                    print(line)
                figures["wrk"] = {
                    "moves": result.moves,
                    "reads": result.reads,
                    "accepted_in_database": result.accepted_in_database,
                    "errors": result.errors(),
                }
                print("== log length (one MaNiKi game under rules v1, both seats passing)")
                figures["log_growth"] = log_growth(stack, lengths)
        finally:
            stack.stop()
    figures["machine"]["load_average_at_end"] = os.getloadavg()
    path = Path(args.json_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {path}")


if __name__ == "__main__":
    main()
