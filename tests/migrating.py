"""Moving a test's database to a given revision of the schema, up or down."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from referee.store import db
from referee.store.db import Database

MIGRATIONS = Path(db.__file__).resolve().parent / "migrations"


def migrate(database: Database, revision: str, down: bool = False) -> None:
    """Upgrade `database` to `revision` (or downgrade it, with `down`)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = database.engine
    (command.downgrade if down else command.upgrade)(config, revision)
