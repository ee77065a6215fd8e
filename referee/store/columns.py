"""Column types that PostgreSQL holds in fewer bytes than the text the code reads.

Every move writes a game's id, a hash and a stamp, several times over (its row,
its key, its submission, its notices). As text they are 33, 65 and 33 bytes; in
PostgreSQL's own types 16, 33 and 8. The code keeps reading and writing text
(a game's id as 32 hex digits, a hash as 64, a stamp as `referee.store.clock.stamp`
writes it), so records, hashes and answers do not change by a byte. SQLite keeps
the text as before: the embedded default is not where a history's bytes count,
and its files need no migration.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from referee.store.clock import stamp

_HEX_ID = re.compile("[0-9a-f]{32}")


def _on_postgresql(dialect: Dialect) -> bool:
    return dialect.name == "postgresql"


class HexId(TypeDecorator[str]):
    """An id of 32 hex digits (a game's, a submission's), a `uuid` in PostgreSQL.

    Text that is no id (a mistyped address, a guess) is bound as NULL, which
    equals nothing: asking for it finds no game, as with any other unknown id.
    """

    impl = sa.String(32)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if _on_postgresql(dialect):
            return dialect.type_descriptor(postgresql.UUID(as_uuid=True))
        return dialect.type_descriptor(sa.String(32))

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is None or not _on_postgresql(dialect):
            return value
        # Exactly the ids SQLite's text would match: not another spelling of the uuid.
        return uuid.UUID(hex=value) if _HEX_ID.fullmatch(value) else None

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None or not _on_postgresql(dialect):
            return None if value is None else str(value)
        return value.hex if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).hex


class HexDigest(TypeDecorator[str]):
    """A SHA-256 digest: 64 hex digits to the code, 32 bytes in PostgreSQL."""

    impl = sa.String(64)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if _on_postgresql(dialect):
            return dialect.type_descriptor(postgresql.BYTEA())
        return dialect.type_descriptor(sa.String(64))

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is None or not _on_postgresql(dialect):
            return value
        return bytes.fromhex(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None or not _on_postgresql(dialect):
            return None if value is None else str(value)
        return bytes(value).hex()


class Stamp(TypeDecorator[str]):
    """A moment as `referee.store.clock.stamp` writes it (UTC, to the microsecond), a
    `timestamptz` in PostgreSQL: read back, it is the same text, so a move's hash,
    which covers its stamp, still checks out."""

    impl = sa.String(40)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if _on_postgresql(dialect):
            return dialect.type_descriptor(postgresql.TIMESTAMP(timezone=True))
        return dialect.type_descriptor(sa.String(40))

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is None or not _on_postgresql(dialect):
            return value
        moment = datetime.fromisoformat(value)
        # A stamp without its zone is UTC's, as every stamp the referee writes.
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None or not _on_postgresql(dialect):
            return None if value is None else str(value)
        return stamp(value)
