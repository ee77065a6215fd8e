"""Leaderboards and profiles at scale: 10,000 players and 100,000 finished rated games.

Run: `uv run python -m bench.ratings [--players 10000] [--games 100000] [--requests 300]
[--only sqlite|postgresql]`.

On SQLite (a fresh file) and on PostgreSQL (a fresh database on the server
of bench/service.py, REFEREE_BENCH_PG), the rows a long-lived server would
hold are written straight into the tables, in bulk: players with public
names; finished games of every game, 2 to 5 seats, each with a few moves
an hour or so apart and its `rated_game` row; each player's rating per game
and one `rating_change` per player per game; every move with its submission (one in fifty
a timeout); each player's totals, as the ratings' job leaves them. Then the app answers, in this
process through Flask's test client (the whole request without the network):
a leaderboard's first page of 50 and a page deep in it (`GET
/v1/ratings/{game}`, the page `/ratings/<game>`), and the profile of the
busiest players (`GET /v1/players/{name}`, the page `/p/<name>`). The goal:
p99 under 50 ms for each.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from api import create_app
from bench.me import on_both, timings
from referee import games
from referee.ratings import START
from referee.service import Referee
from referee.service.tallying import Share, add_share, fresh_totals
from referee.settings import Settings
from referee.store.clock import stamp
from referee.store.tables import (
    Address,
    Game,
    Move,
    PlayerTotals,
    RatedGame,
    Rating,
    RatingChange,
    Seat,
    Seek,
    Submission,
    core_table,
)

GOAL_MS = 50.0
MOVES_PER_GAME = 6
# Rows per INSERT: many at once, within what one statement may carry.
BATCH = 2000
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _name(number: int) -> str:
    return f"Player {number:05d}"


def _address(number: int) -> str:
    return f"p{number}@bench.example.org"


def _insert(connection: sa.Connection, model: type[Any], rows: list[dict[str, Any]]) -> None:
    table = core_table(model)
    for start in range(0, len(rows), BATCH):
        connection.execute(sa.insert(table), rows[start : start + BATCH])


def _players(connection: sa.Connection, count: int) -> None:
    _insert(
        connection,
        Address,
        [
            {
                "address": _address(n),
                "state": "accepted",
                "accept_token": f"a{n}",
                "stop_token": f"s{n}",
                "created_at": stamp(_EPOCH),
                "public_name": _name(n),
                "name_key": _name(n).casefold(),
                "turn_mail": "each",
                "reminders": True,
                "bounces": 0,
            }
            for n in range(count)
        ],
    )


def _moves(
    made: dict[type[Any], list[dict[str, Any]]],
    game_id: str,
    seats: int,
    begun: datetime,
    rng: random.Random,
) -> list[Share]:
    """A finished game's moves with their submissions; what they add to each seat's
    player's totals."""
    timeouts = [0] * seats
    answers: list[list[tuple[str, str]]] = [[] for _ in range(seats)]
    asked = stamp(begun)
    for move in range(1, MOVES_PER_GAME + 1):
        at = begun + timedelta(hours=move, minutes=rng.randrange(60))
        submission_id = f"{game_id[:24]}{move:08d}"
        # One move in fifty played by the referee when time ran out.
        source = "timeout" if rng.randrange(50) == 0 else "rest"
        timeouts[move % seats] += source == "timeout"
        answers[move % seats].append((asked, stamp(at)))
        asked = stamp(at)
        made[Submission].append(
            {
                "id": submission_id,
                "game_id": game_id,
                "seat": move % seats,
                "move": {},
                "request_hash": "r",
                "status": "accepted",
                "seq": move,
                "created_at": stamp(at),
                "decided_at": stamp(at),
                "source": source,
            }
        )
        made[Move].append(
            {
                "game_id": game_id,
                "seq": move,
                "seat": move % seats,
                "move": {},
                "notation": "x",
                "created_at": stamp(at),
                "hash": "h",
                "source": source,
            }
        )
    return [
        Share(timeouts[seat], 0, tuple(answers[seat]), ("", game_id, (seat,)))
        for seat in range(seats)
    ]


def _games(connection: sa.Connection, players: int, count: int, rng: random.Random) -> None:
    """`count` finished games, each with its seats, moves, seek and rating rows, the players
    chosen so that some play far more than others (as on a real server)."""
    names = [game.name for game in games.all_games()]
    skills: dict[tuple[int, str], tuple[float, float, int, int, int]] = {}
    totals: dict[int, PlayerTotals] = {}
    made: dict[type[Any], list[dict[str, Any]]] = {
        model: [] for model in (Game, Seat, Submission, Move, Seek, RatedGame, RatingChange)
    }
    for seq in range(1, count + 1):
        name = names[seq % len(names)]
        rules = games.get(name)
        seats = rng.choice([n for n in rules.players if n <= 5])
        # Squared: the first players play most (the busiest some 3% of all games).
        chosen: set[int] = set()
        while len(chosen) < seats:
            chosen.add(int(players * rng.random() ** 2))
        table = sorted(chosen)
        game_id = uuid.UUID(int=rng.getrandbits(128)).hex
        begun = _EPOCH + timedelta(minutes=30 * seq)
        ended = begun + timedelta(hours=MOVES_PER_GAME)
        made[Game].append(
            {
                "id": game_id,
                "name": name,
                "rules_version": rules.rules_version,
                "options": {},
                "seed": "s",
                "seed_commitment": "c",
                "status": "over",
                "version": MOVES_PER_GAME,
                "head_hash": "h",
                "to_act": [],
                "result": {"scores": list(range(seats)), "winners": [seats - 1]},
                "created_at": stamp(begun),
                "updated_at": stamp(ended),
                "trusted": True,
                # Its `rated_game` row below: the ratings took it in.
                "taken_in": True,
            }
        )
        for number, player in enumerate(table):
            made[Seat].append(
                {
                    "game_id": game_id,
                    "seat": number,
                    "name": _name(player),
                    "email": _address(player),
                    "token_hash": "t",
                    "webhook_failures": 0,
                    "webhook_generation": 0,
                    "tallied": True,
                }
            )
        moved = _moves(made, game_id, seats, begun, rng)
        made[Seek].append(
            {
                "id": uuid.UUID(int=rng.getrandbits(128)).hex,
                "game": name,
                "min_players": seats,
                "max_players": seats,
                "options": {},
                "rated": True,
                "by_address": _address(table[0]),
                "private": False,
                "status": "started",
                "created_at": stamp(begun),
                "expires_at": stamp(begun + timedelta(days=14)),
                "game_id": game_id,
                "bot_seats_open": 0,
            }
        )
        made[RatedGame].append(
            {
                "seq": seq,
                "game_id": game_id,
                "game": name,
                "counted": True,
                "finished_at": stamp(ended),
                "applied_at": stamp(ended),
                "tallied": True,
            }
        )
        # Each player's totals, as the ratings' job leaves them.
        for number, player in enumerate(table):
            share = replace(moved[number], recent=(stamp(ended), game_id, (number,)))
            if player not in totals:
                totals[player] = fresh_totals(_address(player))
            add_share(totals[player], share)
        for number, player in enumerate(table):
            mu, sigma, played, wins, _ = skills.get(
                (player, name), (START.mu, START.sigma, 0, 0, 0)
            )
            after = (mu + rng.uniform(-1, 1), max(1.0, sigma * 0.97))
            won = int(number == seats - 1)
            skills[(player, name)] = (*after, played + 1, wins + won, seq)
            made[RatingChange].append(
                {
                    "seq": seq,
                    "address": _address(player),
                    "game": name,
                    "seat": number,
                    "rank": seats - number,
                    "mu_before": mu,
                    "sigma_before": sigma,
                    "mu_after": after[0],
                    "sigma_after": after[1],
                    "at": stamp(ended),
                }
            )
    for model in (Game, Seat, Submission, Move, Seek, RatedGame, RatingChange):
        _insert(connection, model, made[model])
    _insert(connection, PlayerTotals, [row.model_dump() for row in totals.values()])
    _insert(
        connection,
        Rating,
        [
            {
                "address": _address(player),
                "game": name,
                "mu": mu,
                "sigma": sigma,
                "games": played,
                "wins": wins,
                "last_seq": last,
            }
            for (player, name), (mu, sigma, played, wins, last) in skills.items()
        ],
    )


def measure(name: str, settings: Settings, args: argparse.Namespace) -> None:
    referee = Referee(settings)
    try:
        referee.db.upgrade()
        started = time.perf_counter()
        with referee.db.engine.begin() as connection:
            _players(connection, args.players)
            _games(connection, args.players, args.games, random.Random(1))
        if referee.db.dialect == "postgresql":
            # As autovacuum would soon: without statistics the planner scans whole tables.
            with referee.db.engine.connect() as connection:
                connection.execute(sa.text("ANALYZE"))
                connection.commit()
        made = time.perf_counter() - started
        print(f"== {name}: {args.players} players, {args.games} finished games (made in ", end="")
        print(f"{made:.0f} s)")
        client = create_app(settings, referee).test_client()
        deep = client.get("/v1/ratings/ice_palace?limit=50").get_json()
        for _ in range(20):
            if deep["next_cursor"] is None:
                break
            cursor = quote(deep["next_cursor"])
            deep = client.get(f"/v1/ratings/ice_palace?limit=50&cursor={cursor}").get_json()
        busiest = quote(_name(0))
        paths = [
            "/v1/ratings/ice_palace",
            "/v1/ratings/subdivision",
            f"/v1/ratings/ice_palace?cursor={quote(deep['next_cursor'] or '')}"
            if deep["next_cursor"]
            else "/v1/ratings/mandala",
            "/ratings/ice_palace",
            f"/v1/players/{busiest}",
            f"/v1/players/{quote(_name(args.players // 2))}",
            f"/p/{busiest}",
        ]
        for path in paths:
            # A few first requests warm the connection pool and the caches up.
            timings(client, path, {}, 5)
            taken, cpu = timings(client, path, {}, args.requests)
            p50, p99 = statistics.median(taken), taken[int(len(taken) * 0.99) - 1]
            verdict = "meets" if p99 < GOAL_MS else "MISSES"
            print(
                f"  GET {path[:46]:46} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
                f"CPU {cpu:5.1f} ms/request  ({verdict} p99 < {GOAL_MS:.0f} ms)"
            )
        print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        referee.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=100_000, help="finished rated games")
    parser.add_argument("--requests", type=int, default=300, help="requests per figure")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    on_both(measure, parser.parse_args(), "referee_bench_ratings")


if __name__ == "__main__":
    main()
