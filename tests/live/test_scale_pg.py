"""The big database's loader (bench/loader.py) at its smallest, and the periodic sweeps on
what it loads: the records check out, every sweep reads the due rows by index, and the
deadline sweep finds exactly the turns due.

A few hundred finished games and some running ones are loaded by COPY into a
PostgreSQL database of the module's own (ANALYZEd, as the loader leaves it).
The plans are held to index scans with sequential scans switched off for the
planner: at this size it would read the small tables whole, which proves
nothing, while a sequential scan that remains then has no index to use at
any size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from sqlmodel import col

from bench.loader import BUSY, Plan, fill
from referee.delivery import CHANNELS
from referee.queue import DELIVER, SWEEPS
from referee.service import Referee
from referee.service.jobs import JOBS
from referee.service.turn_clock import REMIND_AT
from referee.service.verification import check_afresh
from referee.store.clock import parse_stamp
from referee.store.tables import Address, Game, GameStatus
from tests.fixtures import migrated_referee

FINISHED, RUNNING = 200, 40
# The tables that grow with the history: a sweep must never read one whole.
HISTORY = {
    "game",
    "seat",
    "move",
    "submission",
    "snapshot",
    "outbox",
    "delivery",
    "rated_game",
    "verification",
    "inbound",
    "message",
    # Players: one for every few games.
    "address",
}
_SCANS = {"Index Scan", "Index Only Scan", "Bitmap Index Scan"}
_ZONES = ("Europe/Paris", "America/New_York", None)


@dataclass(frozen=True, slots=True)
class Loaded:
    referee: Referee
    plan: Plan
    written: dict[str, int]


@pytest.fixture(scope="module")
def loaded(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """The module's own database, loaded by bench/loader.py in this process."""
    referee = migrated_referee(pg_database, tmp_path_factory.mktemp("scale"))
    plan = Plan(FINISHED, RUNNING, datetime.now(UTC), busy=40)
    written = fill(pg_database, plan, processes=1)
    yield Loaded(referee, plan, written)
    referee.close()


def test_the_loaded_games_are_real_records_that_check_out(loaded: Loaded) -> None:
    written = loaded.written
    assert written["game"] == FINISHED + RUNNING
    assert written["rated_game"] == FINISHED
    # Every person's move came with its accepted submission.
    assert 0 < written["submission"] <= written["move"]
    assert written["delivery"] == written["outbox"] > 0
    with loaded.referee.db.reading() as session:
        statuses = session.execute(
            sa.select(Game.status, sa.func.count()).group_by(Game.status)
        ).all()
        names = session.execute(sa.select(sa.func.count(sa.distinct(Game.name)))).scalar_one()
    assert dict(statuses) == {GameStatus.OVER: FINISHED, GameStatus.ACTIVE: RUNNING}
    assert names == 5
    # A sample, as `referee db verify` checks each game: every game of five, all kinds.
    with loaded.referee.db.reading() as session:
        sample = session.execute(sa.select(Game).order_by(Game.id)).scalars().all()[::5]
        checked = {game.id: check_afresh(session, game) for game in sample}
    failed = {gid: c.problems for gid, c in checked.items() if not c.replay_matches}
    assert not failed
    assert all(outcome.chain_valid for outcome in checked.values())


def _plans(loaded: Loaded, statements: list[tuple[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each statement with the scans of history tables its plan makes other than by an
    index's condition or a partial index (whose rows are the due ones)."""
    engine = loaded.referee.db.engine
    found = []
    with engine.connect() as connection:
        indexes = connection.execute(
            sa.text("SELECT indexname, tablename, indexdef LIKE '% WHERE %' FROM pg_indexes")
        ).all()
        tables = {name: table for name, table, _partial in indexes}
        partial = {name for name, _table, is_partial in indexes if is_partial}
        raw = connection.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        cursor.execute("SET enable_seqscan = off")
        for statement, parameters in statements:
            cursor.execute("EXPLAIN (FORMAT JSON) " + statement, parameters)
            plan = cursor.fetchone()[0][0]["Plan"]
            found.append((statement, _wide_scans(plan, tables, partial)))
        cursor.execute("RESET enable_seqscan")
    return found


def _wide_scans(node: dict[str, Any], tables: dict[str, str], partial: set[str]) -> list[str]:
    wide = []
    table = node.get("Relation Name") or tables.get(node.get("Index Name", ""))
    if table in HISTORY:
        kind = node["Node Type"]
        if kind not in _SCANS and kind != "Bitmap Heap Scan":
            wide.append(f"{kind} on {table}")
        elif kind in _SCANS and "Index Cond" not in node and node["Index Name"] not in partial:
            wide.append(f"{kind} on {node['Index Name']} without a condition")
    for child in node.get("Plans", []):
        wide += _wide_scans(child, tables, partial)
    return wide


def test_every_periodic_sweep_reads_by_index(loaded: Loaded) -> None:
    # A few players take a digest, each in a zone of its own or none, at an hour of their
    # day half a day away: the digest sweep reads their zones and looks for whom it is due.
    with loaded.referee.db.transaction() as session:
        players = session.execute(
            sa.select(Address.address).order_by(Address.address).limit(len(_ZONES))
        ).scalars()
        for address, zone in zip(list(players), _ZONES, strict=True):
            later = (datetime.now(ZoneInfo(zone or "UTC")).hour + 12) % 24
            session.execute(
                sa.update(Address)
                .where(col(Address.address) == address)
                .values(turn_mail="digest", digest_hours=[later], time_zone=zone)
            )
    statements: list[tuple[str, Any]] = []

    def heard(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        verb = statement.lstrip().split(None, 1)[0].upper()
        if verb in {"SELECT", "WITH", "UPDATE", "DELETE"} and isinstance(parameters, dict):
            statements.append((statement, parameters))

    engine = loaded.referee.db.engine
    sa.event.listen(engine, "before_cursor_execute", heard)
    try:
        for task in SWEEPS:
            # The delivery sweep has each channel's due rows sent, each a job of its own.
            for argument in CHANNELS if task == DELIVER else [None]:
                JOBS[task](loaded.referee, *([argument] if argument else []))
    finally:
        sa.event.remove(engine, "before_cursor_execute", heard)
    assert statements
    assert any("address.time_zone IN" in statement for statement, _ in statements)
    wide = [(statement, scans) for statement, scans in _plans(loaded, statements) if scans]
    assert not wide, "\n\n".join(f"{scans}\n{statement}" for statement, scans in wide)


def test_the_deadline_sweep_finds_exactly_the_turns_due(loaded: Loaded) -> None:
    # A day on, some of the running games' reminders and timeouts are due.
    moment = loaded.plan.now + timedelta(days=1)
    with loaded.referee.db.reading() as session:
        running = session.execute(sa.select(Game).where(Game.status == GameStatus.ACTIVE)).scalars()
        due, remind = set(), set()
        for game in running:
            assert game.deadline_seconds is not None
            started = parse_stamp(game.updated_at)
            if started + timedelta(seconds=game.deadline_seconds) <= moment:
                due.add(game.id)
            elif (
                started + timedelta(seconds=game.deadline_seconds * REMIND_AT) <= moment
                and game.reminded_version != game.version
            ):
                remind.add(game.id)
    assert due and remind
    swept = JOBS["referee.deadlines"](loaded.referee, moment.isoformat())
    assert set(swept["timed_out"]) == due
    assert set(swept["reminded"]) == remind


def test_the_busy_player_sits_in_its_games(loaded: Loaded) -> None:
    with loaded.referee.db.reading() as session:
        seats = session.execute(
            sa.text("SELECT count(*) FROM seat WHERE email = :address"), {"address": BUSY}
        ).scalar_one()
    assert seats == 40
