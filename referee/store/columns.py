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
from abc import ABCMeta, abstractmethod
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

from referee.store.clock import stamp

_HEX_ID = re.compile("[0-9a-f]{32}")


class _TextInCode(TypeDecorator[str], metaclass=ABCMeta):
    """Text to the code; on PostgreSQL held as `held_as`, converted both ways by
    `to_held` and `from_held`. Elsewhere the text itself (the `impl`)."""

    # SQLAlchemy reads `cache_ok` from each class's own body: every subclass says it.
    held_as: TypeEngine[Any]

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        held = self.held_as if _on_postgresql(dialect) else self.impl_instance
        return dialect.type_descriptor(held)

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is None or not _on_postgresql(dialect):
            return value
        return self.to_held(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None or not _on_postgresql(dialect):
            return None if value is None else str(value)
        return self.from_held(value)

    @abstractmethod
    def to_held(self, text: str) -> Any: ...

    @abstractmethod
    def from_held(self, value: Any) -> str: ...


def _on_postgresql(dialect: Dialect) -> bool:
    return dialect.name == "postgresql"


class HexId(_TextInCode):
    """An id of 32 hex digits (a game's, a submission's), a `uuid` in PostgreSQL.

    Text that is no id (a mistyped address, a guess) is bound as NULL, which
    equals nothing: asking for it finds no game, as with any other unknown id.
    """

    impl = sa.String(32)
    cache_ok = True
    held_as = postgresql.UUID(as_uuid=True)

    def to_held(self, text: str) -> uuid.UUID | None:
        # Exactly the ids SQLite's text would match: not another spelling of the uuid.
        return uuid.UUID(hex=text) if _HEX_ID.fullmatch(text) else None

    def from_held(self, value: Any) -> str:
        return value.hex if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).hex


class HexDigest(_TextInCode):
    """A SHA-256 digest: 64 hex digits to the code, 32 bytes in PostgreSQL."""

    impl = sa.String(64)
    cache_ok = True
    held_as = postgresql.BYTEA()

    def to_held(self, text: str) -> bytes:
        return bytes.fromhex(text)

    def from_held(self, value: Any) -> str:
        return bytes(value).hex()


class Stamp(_TextInCode):
    """A moment as `referee.store.clock.stamp` writes it (UTC, to the microsecond), a
    `timestamptz` in PostgreSQL: read back, it is the same text, so a move's hash,
    which covers its stamp, still checks out."""

    impl = sa.String(40)
    cache_ok = True
    held_as = postgresql.TIMESTAMP(timezone=True)

    def to_held(self, text: str) -> datetime:
        moment = datetime.fromisoformat(text)
        # A stamp without its zone is UTC's, as every stamp the referee writes.
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def from_held(self, value: Any) -> str:
        return stamp(value)
