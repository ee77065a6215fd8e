"""The digest at scale: 10,000 players with 5 running games each, on SQLite and PostgreSQL.

Run: `uv run python bench/digest.py [--players N] [--games N] [--compose N]
[--backend sqlite|postgresql|both] [--json FILE]`.

Each backend gets a fresh database (a SQLite file in a temporary folder; a
new database on the PostgreSQL server of `REFEREE_BENCH_PG`, as the other
benches), filled set-based with `--players` players who take a digest at
one hour, each seated in `--games` running Subdivision games against a
seat without an address, three in five of them waiting for the player.
Then, on one process as one worker would:

- the digest run: `sweep_digests` at that hour, which writes one notice
  (with its mail delivery) per player listing its turns; timed whole, with
  the notices counted. Goal (issue): under 60 s for 10,000 players with 5 games each.
- composing: `--compose` of those notices built as the delivery worker
  builds them (`referee.service.delivering.content`) and rendered as mails,
  CPU per mail (p50, p90) and mails per second, separately from the run.

The same hour swept again writes nothing, which the bench checks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
import sqlalchemy as sa

from bench.service import drop_database, pg_admin, pg_database
from referee import games
from referee.delivery.channel import Consent
from referee.replay import new_state
from referee.rng import commitment
from referee.service import Referee
from referee.service.delivering import content
from referee.service.digests import sweep_digests
from referee.settings import Settings
from referee.store.clock import stamp
from referee.store.tables import (
    Address,
    AddressState,
    Game,
    GameStatus,
    Outbox,
    OutboxKind,
    Seat,
    TurnMail,
    core_table,
)

GOAL_SECONDS = 60.0
HOUR = datetime(2031, 5, 6, 7, 2, tzinfo=UTC)
RULES = games.get("subdivision")
OPTIONS = RULES.load_options({}, 2)
# Rows per INSERT while filling the database.
CHUNK = 5_000


@contextmanager
def database(backend: str) -> Iterator[str]:
    """A fresh, empty database URL of `backend`; dropped afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/digest.sqlite3"
        return
    name = f"referee_bench_digest_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_database(name)
    finally:
        drop_database(name)


def _token(purpose: str, index: int) -> str:
    return hashlib.sha256(f"{purpose}:{index}".encode()).hexdigest()[:40]


def fill(referee: Referee, players: int, per_player: int) -> None:
    """`players` digest players at HOUR, each in `per_player` running games (3 in 5 its turn)."""
    seed = "0" * 64
    state = RULES.state_to_json(new_state(RULES, seed, 2, OPTIONS))
    created = stamp(HOUR.replace(hour=1))
    addresses: list[dict[str, Any]] = []
    game_rows: list[dict[str, Any]] = []
    seat_rows: list[dict[str, Any]] = []
    for player in range(players):
        email = f"player{player}@players.test"
        addresses.append(
            {
                "address": email,
                "state": AddressState.ACCEPTED.value,
                "accept_token": _token("accept", player),
                "stop_token": _token("stop", player),
                "created_at": created,
                "turn_mail": TurnMail.DIGEST.value,
                "digest_hours": [HOUR.hour],
                "reminders": True,
                "bounces": 0,
            }
        )
        for number in range(per_player):
            game_id = uuid.uuid4().hex
            game_rows.append(
                {
                    "id": game_id,
                    "name": RULES.name,
                    "rules_version": RULES.rules_version,
                    "options": OPTIONS,
                    "seed": seed,
                    "seed_commitment": commitment(seed),
                    "status": GameStatus.ACTIVE.value,
                    "version": 0,
                    "head_hash": commitment(seed),
                    "to_act": [0] if number % 5 < 3 else [1],
                    "state": state,
                    "created_at": created,
                    "updated_at": created,
                    "deadline_seconds": 72 * 3600 if number % 2 else None,
                    "trusted": True,
                }
            )
            seat_rows.append(
                {"game_id": game_id, "seat": 0, "name": f"P{player}", "email": email}
                | {"token_hash": _token("seat", len(seat_rows))}
            )
            seat_rows.append(
                {"game_id": game_id, "seat": 1, "name": "Bot", "email": None}
                | {"token_hash": _token("seat", len(seat_rows))}
            )
    with referee.db.transaction() as session:
        connection = session.connection()
        for table, rows in (
            (Address, addresses),
            (Game, game_rows),
            (Seat, seat_rows),
        ):
            for start in range(0, len(rows), CHUNK):
                connection.execute(sa.insert(core_table(table)), rows[start : start + CHUNK])


def compose(referee: Referee, count: int) -> dict[str, Any]:
    """Build and render `count` digests as the delivery worker does; CPU ms per mail."""
    with referee.db.reading() as session:
        ids = list(
            session.connection()
            .execute(
                sa.select(core_table(Outbox).c.id)
                .where(core_table(Outbox).c.kind == OutboxKind.DIGEST.value)
                .order_by(core_table(Outbox).c.id)
                .limit(count)
            )
            .scalars()
        )
    consent = Consent(False, "accept", "stop")
    spent = []
    started = time.perf_counter()
    for notice_id in ids:
        cpu = time.thread_time()
        mail = content(referee, notice_id).mail("player@players.test", consent, None)
        bytes(mail)
        spent.append((time.thread_time() - cpu) * 1000)
    elapsed = time.perf_counter() - started
    quantiles = statistics.quantiles(spent, n=10) if len(spent) > 1 else spent * 9
    return {
        "mails": len(ids),
        "cpu_ms_p50": round(statistics.median(spent), 2),
        "cpu_ms_p90": round(quantiles[8], 2),
        "mails_per_second": round(len(ids) / elapsed, 1),
    }


def run(backend: str, players: int, per_player: int, composed: int) -> dict[str, Any]:
    with database(backend) as url:
        referee = Referee(Settings(database_url=url, secret="bench", mail_dir=tempfile.mkdtemp()))
        try:
            referee.db.upgrade()
            started = time.perf_counter()
            fill(referee, players, per_player)
            filled = time.perf_counter() - started
            started = time.perf_counter()
            written = sweep_digests(referee, HOUR)
            swept = time.perf_counter() - started
            again = sweep_digests(referee, HOUR.replace(minute=50))
            assert again == 0, f"the same hour wrote {again} digests again"
            found = {
                "backend": backend,
                "players": players,
                "games": players * per_player,
                "fill_seconds": round(filled, 1),
                "digests_written": written,
                "digest_run_seconds": round(swept, 2),
                "goal_seconds": GOAL_SECONDS,
                "compose": compose(referee, composed),
            }
        finally:
            referee.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=5, help="running games per player")
    parser.add_argument("--compose", type=int, default=1_000, help="digests to build as mails")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    runs = [run(backend, args.players, args.games, args.compose) for backend in backends]
    load = [round(load, 2) for load in os.getloadavg()]
    figures = {"cores": os.cpu_count(), "load_average": load, "runs": runs}
    for found in runs:
        made = found["compose"]
        print(
            f"{found['backend']:>10}: {found['players']} players, {found['games']} games; "
            f"digest run {found['digest_run_seconds']} s for {found['digests_written']} digests "
            f"(goal < {GOAL_SECONDS:.0f} s); composing {made['mails']} mails: "
            f"CPU p50 {made['cpu_ms_p50']} ms, p90 {made['cpu_ms_p90']} ms, "
            f"{made['mails_per_second']} mails/s (fill {found['fill_seconds']} s)"
        )
    print(f"load average {load} on {os.cpu_count()} cores")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=1)


if __name__ == "__main__":
    main()
