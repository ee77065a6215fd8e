"""Connecting to the database the settings name (`DATABASE_URL`), and migrating it.

Without `DATABASE_URL` the referee keeps a local SQLite file (WAL mode),
which is all the embedded default needs. With a `postgresql://` URL it uses
PostgreSQL through psycopg 3. Every write transaction takes the database's
lock on the game it changes: `SELECT ... FOR UPDATE` on PostgreSQL, and on
SQLite `BEGIN IMMEDIATE`, which takes the one write lock the file has.
Sessions that only read (`reading`) begin deferred on SQLite: in WAL mode
they read a snapshot beside the writer, so a slow page or `verify` never
holds up a move, nor waits for one.

PostgreSQL's pool holds at most `Settings.pool_size` connections per
process (`REFEREE_DB_POOL`); a request that finds them all busy waits for
one (up to 30 s, then 503). Every web process and worker process holds a
pool of its own, so their sum must stay below the server's
`max_connections` (100 by default): see docs/operations.md, "Database
connections".
"""

from __future__ import annotations

import select
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, exc
from sqlmodel import Session

from referee.settings import Settings

_MIGRATIONS = Path(__file__).resolve().parent / "migrations"

# The execution option that marks a reading session's connections.
_READING = "referee_reading"


def database_url(url: str) -> str:
    """The SQLAlchemy URL of a `DATABASE_URL`, with psycopg 3 chosen for PostgreSQL."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" below decide how transactions start.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: Any) -> None:
        reads_only = connection.get_execution_options().get(_READING, False)
        connection.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")


def _postgresql_setup(engine: Engine) -> None:
    @event.listens_for(engine, "checkout")
    def checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        # A pooled connection the server dropped (a restart, a failover, an
        # idle-connection killer) is replaced here instead of failing the
        # statement that first uses it. The server says goodbye before it
        # closes, so an idle connection with anything to read is one it
        # dropped: a look at the socket costs microseconds where
        # `pool_pre_ping`'s `SELECT 1` cost a round trip per checkout.
        if dbapi_connection.closed or _readable(dbapi_connection.fileno()):
            raise exc.DisconnectionError("the server closed this pooled connection")


def _readable(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


class Database:
    """One database's engine and its sessions; each process builds one from its settings."""

    def __init__(self, url: str, pool_size: int = 5) -> None:
        self.url = database_url(url)
        if self.url.startswith("sqlite"):
            self.engine = create_engine(
                self.url, connect_args={"check_same_thread": False, "timeout": 30}
            )
            _sqlite_setup(self.engine)
        else:
            # No overflow: the pool's size is the most this process ever holds.
            self.engine = create_engine(self.url, pool_size=pool_size, max_overflow=0)
            _postgresql_setup(self.engine)
        self._reading = self.engine.execution_options(**{_READING: True})
        self._autocommit = (
            self.engine
            if self.url.startswith("sqlite")
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )

    @classmethod
    def of(cls, chosen: Settings) -> Database:
        """The database `chosen` names (`DATABASE_URL`), pooled as they say."""
        return cls(chosen.database_url, chosen.pool_size)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def transaction(self) -> AbstractContextManager[Session]:
        """A session whose work is committed at the end, or rolled back on error."""
        return _committed(self.engine)

    def one_write(self) -> AbstractContextManager[Session]:
        """A session for work that writes at most one statement and only reads besides.

        On PostgreSQL each statement commits on its own: a transaction's BEGIN and
        COMMIT would be two more round trips, and at READ COMMITTED the statements
        of one transaction each read their own snapshot anyway, so nothing is lost;
        but an error after the write no longer takes it back, so the write comes last.
        On SQLite it is a `transaction`.
        """
        return _committed(self._autocommit)

    def reading(self) -> Session:
        """A session for reads alone: on SQLite it takes no write lock (BEGIN, not IMMEDIATE).

        Never write in it: a deferred SQLite transaction that tries to write
        while another holds the lock fails at once instead of waiting.
        """
        return Session(self._reading, expire_on_commit=False)

    def upgrade(self) -> None:
        """Bring the database's schema up to date (Alembic `upgrade head`)."""
        # Imported here: Alembic is a sixth of the import time of a process that
        # never migrates (a worker).
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        config.attributes["engine"] = self.engine
        command.upgrade(config, "head")

    def dispose(self) -> None:
        """Close every pooled connection (when done with the database)."""
        self.engine.dispose()

    def forget_connections(self) -> None:
        """In a process just forked: drop the pooled connections, which are the parent's,
        without closing them (closing would end them for the parent too)."""
        self.engine.dispose(close=False)


@contextmanager
def _committed(bind: Engine) -> Iterator[Session]:
    """A session on `bind` committed at the end, or rolled back on error."""
    with Session(bind, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
