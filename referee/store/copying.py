"""A whole database copied, table by table, into an empty one of the same schema: how a
referee started on SQLite moves to PostgreSQL.

Rows go through the tables' own types (JSON, booleans, text stamps), so
each database stores them its own way and reads them back alike. Tables
are copied parents first (`MetaData.sorted_tables`), in batches of their
primary key's order, and PostgreSQL's identity sequences are moved past
the highest copied key so that new rows do not collide with copied ones.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

# Rows read and written at once.
BATCH = 2000


def tables() -> list[sa.Table]:
    """Every table of the schema, parents before the tables that point at them."""
    return list(SQLModel.metadata.sorted_tables)


def rows_held(engine: Engine) -> dict[str, int]:
    """How many rows each table holds."""
    counted = {table.name: sa.select(sa.func.count()).select_from(table) for table in tables()}
    with engine.connect() as connection:
        return {name: connection.execute(query).scalar_one() for name, query in counted.items()}


def copy_all(
    source: Engine, target: Engine, told: Callable[[str, int], None] = lambda _t, _n: None
) -> dict[str, int]:
    """Copy every table's rows from `source` into `target` in one transaction of the
    target's; how many rows each table got. `told` hears each table once copied."""
    copied = {}
    with source.connect() as reading, target.begin() as writing:
        for table in tables():
            copied[table.name] = _copy_table(reading, writing, table)
            told(table.name, copied[table.name])
        if writing.dialect.name == "postgresql":
            _move_sequences(writing)
    return copied


def _copy_table(reading: Connection, writing: Connection, table: sa.Table) -> int:
    order = list(table.primary_key.columns) or list(table.columns)
    result = reading.execution_options(stream_results=True).execute(
        sa.select(table).order_by(*order)
    )
    count = 0
    rows = result.mappings()
    while batch := rows.fetchmany(BATCH):
        writing.execute(sa.insert(table), [dict(row) for row in batch])
        count += len(batch)
    return count


def _move_sequences(writing: Connection) -> None:
    """Set each serial key's sequence past the highest key copied."""
    for table in tables():
        for column in table.primary_key.columns:
            if not isinstance(column.type, sa.Integer):
                continue
            sequence = writing.execute(
                sa.select(sa.func.pg_get_serial_sequence(table.name, column.name))
            ).scalar_one()
            highest = writing.execute(sa.select(sa.func.max(column))).scalar_one()
            if sequence is not None and highest is not None:
                writing.execute(sa.select(sa.func.setval(sequence, highest)))
