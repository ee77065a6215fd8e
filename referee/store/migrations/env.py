"""Alembic's entry point: migrate the engine `referee.store.db.upgrade` hands over."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from referee.store import tables  # noqa: F401  (defines the tables)

connectable = context.config.attributes["engine"]

with connectable.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
