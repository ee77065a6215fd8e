"""A player's list of games: `GET /v1/me/games` and the page `/me` for a player in 500 games.

Run: `uv run python -m bench.me [--games 500] [--others 1500] [--requests 300] [--only sqlite]`.

On SQLite (a fresh file) and on PostgreSQL (a fresh database on the server
of bench/service.py, REFEREE_BENCH_PG), the player's games are made with
the service's own `create_game` (half with a deadline, the player's seat
first in half of them, so that half are its turn), beside `--others` games
of other players. Then the app answers `GET /v1/me/games` (its first page
of 50, a page of 200, its turns alone), with a player token, and the
page `/me` to a signed-in browser (its session cookie), in this process
through Flask's test client: the whole request (the credential looked
up, the statements of `my_games`, sorting, JSON or HTML) without the network.
The goal: p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from flask.testing import FlaskClient

from api import create_app
from api.http.player_auth import PLAYER_COOKIE
from bench.service import drop_database, pg_admin, pg_database
from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import MANAGE, PLAY, READ, open_session
from referee.service.players import Player as Signed
from referee.service.tokens import make_token
from referee.settings import Settings

ADDRESS = "bench.player@example.org"
GOAL_MS = 50.0


def _games(referee: Referee, mine: int, others: int) -> None:
    for n in range(mine):
        me = Player("Me", ADDRESS)
        other = Player(f"Other {n}", f"other{n}@example.org")
        seats = [me, other] if n % 2 == 0 else [other, me]
        deadline = "72h" if n % 4 < 2 else None
        create_game(referee, NewGame("subdivision", seats, {}, deadline=deadline, trusted=True))
    for n in range(others):
        seats = [Player("A", f"a{n}@example.org"), Player("B", f"b{n}@example.org")]
        create_game(referee, NewGame("subdivision", seats, {}, trusted=True))


def timings(
    client: FlaskClient, path: str, headers: dict[str, str], count: int
) -> tuple[list[float], float]:
    """Each request's time (ms, sorted), and the CPU time of this process per request (ms):
    on a machine shared with other work, the second moves less than the first."""
    taken = []
    cpu = time.process_time()
    for _ in range(count):
        started = time.perf_counter()
        answer = client.get(path, headers=headers)
        taken.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.get_data(as_text=True)
    return sorted(taken), (time.process_time() - cpu) * 1000 / count


def measure(name: str, settings: Settings, args: argparse.Namespace) -> None:
    referee = Referee(settings)
    try:
        referee.db.upgrade()
        started = time.perf_counter()
        _games(referee, args.games, args.others)
        made = time.perf_counter() - started
        signed = Signed(ADDRESS, frozenset({READ, PLAY, MANAGE}))
        token = make_token(referee, signed, "bench", [READ]).secret
        print(f"== {name}: {args.games} games of the player's, {args.others} of others'", end="")
        print(f" (made in {made:.0f} s)")
        app = create_app(settings, referee)
        client, browser = app.test_client(), app.test_client()
        browser.set_cookie(PLAYER_COOKIE, open_session(referee, ADDRESS))
        bearer = {"Authorization": f"Bearer {token}"}
        for path, user, headers in (
            ("/v1/me/games", client, bearer),
            ("/v1/me/games?limit=200", client, bearer),
            ("/v1/me/games?to_act=me", client, bearer),
            ("/me", browser, {}),
        ):
            # A few first requests warm the connection pool and the caches up.
            timings(user, path, headers, 5)
            taken, cpu = timings(user, path, headers, args.requests)
            p50, p99 = statistics.median(taken), taken[int(len(taken) * 0.99) - 1]
            verdict = "meets" if p99 < GOAL_MS else "MISSES"
            print(
                f"  GET {path:24} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
                f"CPU {cpu:5.1f} ms/request  ({verdict} p99 < {GOAL_MS:.0f} ms)"
            )
        print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        referee.close()


@contextmanager
def fresh_sqlite() -> Iterator[Settings]:
    """Settings on a fresh SQLite file, without Redis."""
    with tempfile.TemporaryDirectory() as folder:
        yield Settings(
            database_url=f"sqlite:///{Path(folder) / 'referee.sqlite3'}",
            redis_url=None,
            mail_dir=str(Path(folder) / "mail-out"),
        )


@contextmanager
def fresh_postgresql(prefix: str = "referee_bench_me") -> Iterator[Settings]:
    """Settings on a fresh PostgreSQL database (dropped afterwards), without Redis."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with tempfile.TemporaryDirectory() as folder:
            yield Settings(
                database_url=pg_database(name),
                redis_url=None,
                mail_dir=str(Path(folder) / "mail-out"),
            )
    finally:
        drop_database(name)


def on_both(
    measured: Callable[[str, Settings, argparse.Namespace], None],
    args: argparse.Namespace,
    prefix: str = "referee_bench_me",
) -> None:
    """`measured` on a fresh SQLite file, then on a fresh PostgreSQL database named from
    `prefix`, or on the one of them `args.only` names."""
    if args.only in (None, "sqlite"):
        with fresh_sqlite() as settings:
            measured("SQLite", settings, args)
    if args.only in (None, "postgresql"):
        with fresh_postgresql(prefix) as settings:
            measured("PostgreSQL", settings, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500, help="games the player holds a seat in")
    parser.add_argument("--others", type=int, default=1500, help="games of other players")
    parser.add_argument("--requests", type=int, default=300, help="requests per figure")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    on_both(measure, parser.parse_args())


if __name__ == "__main__":
    main()
