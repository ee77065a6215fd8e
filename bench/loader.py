"""A big database in minutes: finished and running games written into PostgreSQL by COPY.

Run: `uv run python -m bench.loader URL --finished 100000 --running 10000 [--busy 500]`
(URL: a migrated, empty database; `bench/scale.py` makes one and calls `fill`).

Every game is a real one: a random playout of one of the five games at one
of its player counts (the smaller counts more often, as people play them),
driven as the worker drives a game (a seat's move, then the moves the
referee records by itself, logged together under one stamp), hash-chained
from its seed's commitment, so that `referee db verify` checks it out. Each
person's move has its accepted submission; the notices are those deciding
writes (`notifying.after_moves`: invitations, turns, rounds, the end), each
with its mail delivery sent; snapshots every `SNAPSHOT_EVERY` moves; every
seat a player with an accepted address. Finished games end over the last two
years and are left as a referee that has run that long leaves them: taken in
by the ratings (`rated_game`, tallied into `player_totals`), and, once older
than `REFEREE_KEEP_DAYS`, trimmed (no cached state, snapshots, notices or
deliveries; `referee.service.trimming`). Running games have a deadline whose
turn started at a random point of it, so that their reminders and timeouts
fall due over the next days; those whose reminder time has passed by more
than a sweep's minute were reminded already.

The games are worked out in a pool of processes and written by the parent
with `COPY`, a few hundred games a transaction.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from referee import games
from referee.games import AnyGame
from referee.rng import Rng, commitment
from referee.service import notifying
from referee.service.deciding import with_forced_moves
from referee.service.tallying import Share, add_share, fresh_totals
from referee.store.appending import Logged, log_entries, outbox_row
from referee.store.clock import stamp
from referee.store.decision_rows import LockedGame, Reach
from referee.store.keys import hash_token
from referee.store.submissions import request_hash
from referee.store.tables import DUE_AT_ONCE, GameStatus, OutboxKind, Source, TimeoutPolicy

# Games a worker hands back at once, and games a transaction writes.
CHUNK = 25
PER_TRANSACTION = 400
# How long a finished game's cached rows are kept (the default of REFEREE_KEEP_DAYS).
KEEP_DAYS = 90
# Finished games ended over this many days before now.
HISTORY_DAYS = 730
# The turn's time of running games (s): a day, two, three, a week.
DEADLINES = (86_400, 172_800, 259_200, 604_800)
# The share of a turn's time after which its seats are reminded (`turn_clock.REMIND_AT`),
# and the sweep's period: a reminder due longer ago than that was sent.
REMIND_AT = 0.8
SWEEP_SECONDS = 60
# The player who sits in `busy` games (`/me` and `GET /v1/me/games` are measured for it).
BUSY = "busy.player@example.org"

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to load: how many games of each kind, among how many players, at what time."""

    finished: int
    running: int
    now: datetime
    # Games the busy player sits in (the first ones, finished and running alike).
    busy: int = 0
    players: int = 0
    salt: str = "bench"
    # Leave every row as deciding wrote it, as if no trim sweep had run yet.
    untrimmed: bool = False

    @property
    def player_count(self) -> int:
        """Players: about one for every three games, at least a hundred."""
        return self.players or max(100, (self.finished + self.running) // 3)


# The columns written, by table, in COPY's order (the rest take their defaults).
COLUMNS: dict[str, tuple[str, ...]] = {
    "game": (
        "id", "name", "rules_version", "options", "seed", "seed_commitment", "status",
        "version", "head_hash", "to_act", "result", "state", "created_at", "updated_at",
        "deadline_seconds", "on_timeout", "reminded_version", "timed_out_version", "trusted",
        "taken_in",
    ),
    "seat": ("game_id", "seat", "name", "email", "token_hash", "linked_at", "tallied"),
    "submission": (
        "id", "game_id", "seat", "move", "expected_version", "request_hash", "status", "seq",
        "created_at", "decided_at", "source", "seen_version",
    ),
    "move": ("game_id", "seq", "seat", "created_at", "hash", "notation", "source"),
    "snapshot": ("game_id", "version", "state"),
    "outbox": ("id", "game_id", "kind", "seat", "payload", "created_at"),
    "delivery": (
        "notice_id", "channel", "status", "attempts", "next_attempt_at", "done_at",
    ),
    "rated_game": ("game_id", "game", "counted", "finished_at", "applied_at", "tallied"),
}  # fmt: skip
# The hashes, which PostgreSQL holds as bytes (`referee.store.columns.HexDigest`).
DIGESTS = {"hash", "request_hash"}
# Each chunk of games numbers its notices from its own block of ids.
NOTICES_PER_CHUNK = 200_000
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _field(value: Any) -> str:
    """A value as COPY's text format spells it."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (dict, list)):
        value = json.dumps(value)
    return str(value).translate(_ESCAPES)


@dataclass(slots=True)
class Rows:
    """The rows of some games, as COPY's text by table, and what each finished game adds
    to its players' totals."""

    lines: dict[str, list[str]] = field(default_factory=dict)
    shares: list[tuple[str, Share]] = field(default_factory=list)
    games: int = 0
    next_notice: int = 1

    def add(self, table: str, row: Row) -> None:
        line = "\t".join(
            _field("\\x" + row[name] if name in DIGESTS else row[name]) for name in COLUMNS[table]
        )
        self.lines.setdefault(table, []).append(line + "\n")


def address(number: int) -> str:
    return f"player{number}@example.org"


def seed_of(plan: Plan, number: int) -> str:
    """Game `number`'s seed (so its playout, whatever the size loaded)."""
    return hashlib.sha256(f"{plan.salt}:seed:{number}".encode()).hexdigest()


def _kind(rng: random.Random) -> tuple[AnyGame, int]:
    rules = rng.choice(games.all_games())
    counts = rules.players
    # The smallest count half the time, the others share the rest.
    players = counts[0] if len(counts) == 1 or rng.random() < 0.5 else rng.choice(counts[1:])
    return rules, players


def chunk_rows(plan: Plan, start: int, stop: int) -> Rows:
    """The rows of games `start` to `stop` - 1 (of 0 to finished + running - 1: the
    first ones are finished), their notices numbered from their chunk's block."""
    rows = Rows(next_notice=1 + start // CHUNK * NOTICES_PER_CHUNK)
    for number in range(start, stop):
        _write_game(plan, number, rows)
        rows.games += 1
    return rows


def _chunk_rows(job: tuple[Plan, int, int]) -> Rows:
    return chunk_rows(*job)


@dataclass(slots=True)
class _Game:
    """One game as it is played out."""

    plan: Plan
    rules: AnyGame
    id: str
    seed: str
    players: list[str]
    rows: Rows
    reach: Reach
    keep_after: datetime
    version: int = 0
    head_hash: str = ""

    def notice(self, notice: Row, at: datetime) -> None:
        """A notice and its mail sent at once; none once trimmed."""
        if at < self.keep_after:
            return
        notice_id = self.rows.next_notice
        self.rows.next_notice += 1
        self.rows.add("outbox", {**notice, "id": notice_id})
        self.rows.add(
            "delivery",
            {
                "notice_id": notice_id,
                "channel": "mail",
                "status": "sent",
                "attempts": 1,
                "next_attempt_at": DUE_AT_ONCE,
                "lease_until": None,
                "done_at": stamp(at + timedelta(seconds=2)),
                "error": None,
            },
        )


def _write_game(plan: Plan, number: int, rows: Rows) -> None:
    rng = random.Random(f"{plan.salt}:{number}")
    rules, count = _kind(rng)
    finished = number < plan.finished
    seed = seed_of(plan, number)
    players = [address(n) for n in rng.sample(range(plan.player_count), count)]
    if number < plan.busy:
        players[number % count] = BUSY
    game_id = uuid.UUID(int=rng.getrandbits(128)).hex
    reach = Reach(count, frozenset(range(count)))
    keep_after = plan.now - timedelta(days=KEEP_DAYS if not plan.untrimmed else 100 * 365)
    game = _Game(plan, rules, game_id, seed, players, rows, reach, keep_after)
    game.head_hash = commitment(seed)
    decisions = _decisions(rules, count, seed, rng)
    if not finished:
        # Stop before the end, where some seat is to act.
        decisions = decisions[: rng.randrange(1, len(decisions))]
    deadline = rng.choice(DEADLINES) if not finished or rng.random() < 0.5 else None
    stamps = _stamps(plan, rng, len(decisions), deadline if not finished else None)
    trimmed = finished and stamps[-1] < keep_after
    _play(game, decisions, stamps, trimmed)
    ended = rules.result(decisions[-1][2]) is not None
    assert ended == finished, "a finished game ends, a running one does not"
    rows.add("game", _game_row(game, decisions[-1][2], stamps, deadline, trimmed))
    for seat, player in enumerate(players):
        rows.add(
            "seat",
            {
                "game_id": game_id,
                "seat": seat,
                "name": player.split("@")[0],
                "email": player,
                "token_hash": hash_token(f"{game_id}:{seat}"),
                "linked_at": stamp(stamps[0]),
                "tallied": finished,
            },
        )
    if finished:
        _taken_in(game, stamps, decisions)


def _game_row(
    game: _Game, state: Any, stamps: list[datetime], deadline: int | None, trimmed: bool
) -> Row:
    """The game's row after its last decision (`state`)."""
    rules, plan = game.rules, game.plan
    result = rules.result(state)
    finished = result is not None
    last = stamps[-1]
    # A reminder due longer ago than a sweep's period was sent.
    reminded = (
        deadline is not None
        and not finished
        and last + timedelta(seconds=REMIND_AT * deadline)
        < plan.now - timedelta(seconds=SWEEP_SECONDS)
    )
    return {
        "id": game.id,
        "name": rules.name,
        "rules_version": rules.rules_version,
        "options": rules.load_options({}, len(game.players)),
        "seed": game.seed,
        "seed_commitment": commitment(game.seed),
        "status": GameStatus.OVER if finished else GameStatus.ACTIVE,
        "version": game.version,
        "head_hash": game.head_hash,
        "to_act": sorted(rules.actors(state)),
        "result": None if result is None else result.to_json(),
        "state": None if trimmed else rules.state_to_json(state),
        "created_at": stamp(stamps[0]),
        "updated_at": stamp(last),
        "deadline_seconds": deadline,
        "on_timeout": TimeoutPolicy.RANDOM if deadline else None,
        "reminded_version": game.version if reminded else None,
        "timed_out_version": None,
        "trusted": True,
        "taken_in": finished,
    }


# A decision: the seat's move (None for the moves logged at the game's start), the
# moves logged for it (with the referee's own after it), the state after them, and
# the rounds decided before it.
Decision = tuple[Any, list[Logged], Any, int]


def _decisions(rules: AnyGame, players: int, seed: str, rng: random.Random) -> list[Decision]:
    """A random playout, as the decisions the worker logs."""
    from referee.replay import new_state

    chooser = Rng(f"{seed}:chooser:{rng.random()}")
    state = new_state(rules, seed, players, rules.load_options({}, players))
    rounds = rules.rounds_decided(state)
    logged: list[Logged] = []
    state = with_forced_moves(rules, state, logged)
    decisions: list[Decision] = [(None, logged, state, rounds)]
    while actors := rules.actors(state):
        seat = next(iter(actors)) if len(actors) == 1 else chooser.choice(sorted(actors))
        rounds = rules.rounds_decided(state)
        move, state = rules.play_random(state, seat, chooser)
        logged = [(seat, move, Source.REST)]
        state = with_forced_moves(rules, state, logged)
        decisions.append((seat, logged, state, rounds))
    return decisions


def _stamps(plan: Plan, rng: random.Random, count: int, turn: int | None) -> list[datetime]:
    """When each decision was logged: minutes to hours apart, the last of a finished game
    within the history, of a running one (`turn`: its turn's time) within its turn."""
    gaps = [timedelta(seconds=rng.uniform(60, 6 * 3600)) for _ in range(count - 1)]
    if turn is None:
        last = plan.now - timedelta(seconds=rng.uniform(3600, HISTORY_DAYS * 86_400))
    else:
        last = plan.now - timedelta(seconds=rng.uniform(0, turn * 0.999))
    moments = [last]
    for gap in reversed(gaps):
        moments.append(moments[-1] - gap)
    return moments[::-1]


def _play(game: _Game, decisions: list[Decision], stamps: list[datetime], trimmed: bool) -> None:
    rules, rows = game.rules, game.rows
    for seat, player in enumerate(game.players):
        invitation = {"name": player.split("@")[0], "email": player}
        game.notice(
            outbox_row(game.id, OutboxKind.INVITATION, seat, invitation, stamp(stamps[0])),
            stamps[0],
        )
    for (seat, logged, state, rounds), moment in zip(decisions, stamps, strict=True):
        at = stamp(moment)
        # A trimmed game's submissions went with its notices (`referee.trim`).
        if seat is not None and not trimmed:
            move_json = rules.move_to_json(logged[0][1])
            rows.add(
                "submission",
                {
                    "id": uuid.uuid5(uuid.UUID(game.id), str(game.version)).hex,
                    "game_id": game.id,
                    "seat": seat,
                    "move": move_json,
                    "expected_version": game.version,
                    "idempotency_key": None,
                    "request_hash": request_hash(move_json, game.version),
                    "status": "accepted",
                    "code": None,
                    "reason": None,
                    "seq": game.version + 1,
                    "created_at": stamp(moment - timedelta(milliseconds=40)),
                    "decided_at": at,
                    "source": Source.REST,
                    "seen_version": game.version,
                },
            )
        head = LockedGame(
            game.id, rules.name, rules.rules_version, {}, game.seed, "", game.version,
            game.head_hash, None,
        )  # fmt: skip
        appended = log_entries(head, rules, state, logged, at)
        for row in appended.moves:
            rows.add("move", row)
        if appended.snapshot is not None and not trimmed:
            snapshot = appended.snapshot
            rows.add("snapshot", snapshot)
        notices = notifying.after_moves(
            game.id,
            game.seed,
            rules,
            state,
            appended,
            rounds_before=rounds,
            reach=game.reach,
            stamp=at,
        )
        for notice in notices:
            game.notice(notice, moment)
        game.version = appended.game["version"]
        game.head_hash = appended.game["head_hash"]


def _taken_in(game: _Game, stamps: list[datetime], decisions: list[Decision]) -> None:
    """The ratings' row of a finished game (not counted: it came from no rated seek) and
    what it adds to each player's totals."""
    finished_at = stamp(stamps[-1])
    game.rows.add(
        "rated_game",
        {
            "game_id": game.id,
            "game": game.rules.name,
            "counted": False,
            "finished_at": finished_at,
            "applied_at": finished_at,
            "tallied": True,
        },
    )
    answers: dict[int, list[tuple[str, str]]] = {seat: [] for seat in range(len(game.players))}
    for (seat, _logged, _state, _rounds), asked, moved in zip(
        decisions[1:], stamps[:-1], stamps[1:], strict=True
    ):
        answers[seat].append((stamp(asked), stamp(moved)))
    for seat, player in enumerate(game.players):
        share = Share(0, 0, tuple(reversed(answers[seat])), (finished_at, game.id, (seat,)))
        game.rows.shares.append((player, share))


def _addresses(plan: Plan) -> Iterator[Row]:
    players = [address(n) for n in range(plan.player_count)]
    if plan.busy:
        players.append(BUSY)
    joined = stamp(plan.now - timedelta(days=HISTORY_DAYS + 30))
    for player in players:
        token = hashlib.sha256(f"{plan.salt}:{player}".encode()).hexdigest()
        name = player.split("@")[0]
        yield {
            "address": player,
            "state": "accepted",
            "accept_token": token,
            "stop_token": hashlib.sha256(token.encode()).hexdigest(),
            "created_at": joined,
            "invited_at": joined,
            "accepted_at": joined,
            "bounce_token": hashlib.sha256(f"bounce:{token}".encode()).hexdigest(),
            "bounces": 0,
            "turn_mail": "each",
            "reminders": True,
            "public_name": name[:24],
            "name_key": name,
            "seen_at": stamp(plan.now - timedelta(hours=1)),
        }


def _copy_rows(connection: psycopg.Connection[Any], table: str, rows: list[Row]) -> None:
    """COPY rows given as dicts (the players' rows, written once)."""
    if not rows:
        return
    listed = ", ".join(f'"{name}"' for name in rows[0])
    with connection.cursor().copy(f'COPY "{table}" ({listed}) FROM STDIN') as copy:
        for row in rows:
            copy.write_row(list(row.values()))


def _copy_lines(connection: psycopg.Connection[Any], rows: Rows, written: dict[str, int]) -> None:
    for table, columns in COLUMNS.items():
        lines = rows.lines.get(table)
        if not lines:
            continue
        listed = ", ".join(f'"{name}"' for name in columns)
        with connection.cursor().copy(f'COPY "{table}" ({listed}) FROM STDIN') as copy:
            copy.write("".join(lines))
        written[table] = written.get(table, 0) + len(lines)


def _secondary_indexes(connection: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """The indexes of the schema that no constraint holds: dropped while loading (building
    one at the end costs far less than keeping it up row by row), then made again."""
    found = connection.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
        "AND indexname NOT IN (SELECT conname FROM pg_constraint)"
    ).fetchall()
    return [(name, definition) for name, definition in found]


@contextmanager
def _pool(processes: int | None) -> Iterator[Callable[..., Iterator[Rows]]]:
    """`imap` of a pool of `processes`, or `map` in this process for one."""
    if processes == 1:
        yield map
        return
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        yield pool.imap


def fill(
    url: str,
    plan: Plan,
    processes: int | None = None,
    told: Callable[[int], None] = lambda _n: None,
) -> dict[str, int]:
    """Write `plan`'s games into the migrated, empty database at `url` (a libpq URL, of a
    superuser: foreign keys are not checked row by row while loading); how many rows each
    table got. `told` hears how many games are written so far."""
    total = plan.finished + plan.running
    jobs = [(plan, start, min(start + CHUNK, total)) for start in range(0, total, CHUNK)]
    totals: dict[str, Any] = {}
    written: dict[str, int] = {}
    with psycopg.connect(url) as connection:
        connection.execute("SET synchronous_commit = off")
        connection.execute("SET session_replication_role = replica")
        indexes = _secondary_indexes(connection)
        for name, _definition in indexes:
            connection.execute(f'DROP INDEX "{name}"')
        _copy_rows(connection, "address", list(_addresses(plan)))
        done = since_commit = highest = 0
        with _pool(processes) as worked:
            for rows in worked(_chunk_rows, jobs):
                _copy_lines(connection, rows, written)
                highest = max(highest, rows.next_notice)
                for player, share in rows.shares:
                    if player not in totals:
                        totals[player] = fresh_totals(player)
                    add_share(totals[player], share)
                done += rows.games
                since_commit += rows.games
                if since_commit >= PER_TRANSACTION:
                    connection.commit()
                    since_commit = 0
                    told(done)
        _copy_rows(connection, "player_totals", [_totals_row(held) for held in totals.values()])
        connection.execute("SELECT setval(pg_get_serial_sequence('outbox', 'id'), %s)", (highest,))
        for _name, definition in indexes:
            connection.execute(definition)
        connection.execute("SET session_replication_role = origin")
        connection.commit()
        connection.autocommit = True
        connection.execute("VACUUM ANALYZE")
    return written


def _totals_row(held: Any) -> Row:
    return {
        "address": held.address,
        "games_finished": held.games_finished,
        "timeouts": held.timeouts,
        "resigned": held.resigned,
        "answers": json.dumps(held.answers),
        "recent": json.dumps(held.recent),
    }


# What a move writes: its row, its submission, its game's row, snapshots, notices, deliveries.
WRITTEN = ("move", "submission", "game", "snapshot", "outbox", "delivery")


def held_bytes(url: str) -> dict[str, tuple[int, int]]:
    """The bytes of each table a move writes: its rows (with their TOAST) and its indexes."""
    with psycopg.connect(url) as connection:
        return {
            table: connection.execute(
                "SELECT pg_table_size(%s::regclass),"
                " pg_total_relation_size(%s::regclass) - pg_table_size(%s::regclass)",
                (table, table, table),
            ).fetchone()  # type: ignore[misc]
            for table in WRITTEN
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="a migrated, empty PostgreSQL database (libpq URL)")
    parser.add_argument("--finished", type=int, default=1000)
    parser.add_argument("--running", type=int, default=100)
    parser.add_argument("--busy", type=int, default=0, help="games of one busy player")
    parser.add_argument("--processes", type=int, default=os.cpu_count())
    parser.add_argument(
        "--untrimmed", action="store_true", help="every row as deciding wrote it, none trimmed"
    )
    args = parser.parse_args()
    plan = Plan(
        args.finished, args.running, datetime.now(UTC), busy=args.busy, untrimmed=args.untrimmed
    )
    started = time.perf_counter()
    written = fill(args.url, plan, args.processes)
    print(f"{sum(written.values()):,} rows in {time.perf_counter() - started:.0f} s: {written}")
    moves = written["move"]
    for table, (rows, indexes) in held_bytes(args.url).items():
        print(f"  {table:10} rows {rows / moves:6.0f} B a move, indexes {indexes / moves:6.0f} B")


if __name__ == "__main__":
    main()
