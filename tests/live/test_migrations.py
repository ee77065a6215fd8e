"""Migration 0009 moves each outbox row's channel columns into delivery rows, and back.

Run on PostgreSQL and on SQLite (where Alembic copies tables to drop columns):
a database at 0008 gets outbox rows in the old shape, in each state a row
could be in, and is upgraded to the head, downgraded and upgraded again.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from referee.store.columns import Stamp
from referee.store.db import Database
from tests.migrating import migrate

GAME = "6" * 32
AT = "2026-01-01T00:00:00.000000+00:00"
LATER = "2026-01-01T00:01:00.000000+00:00"
# Seat 0 has an address, 1 a webhook, 2 both, 3 neither.
SEATS = [
    ("a@players.test", None),
    (None, "https://hooks.example/1"),
    ("c@players.test", "https://hooks.example/2"),
    (None, None),
]
# (seat, status, attempts, lease_until, mail_at, hook_at, error,
#  hook_attempts, hook_lease_until, hook_error) of each row in the old shape.
OLD_ROWS = {
    "pending": (0, "pending", 0, None, None, None, None, 0, None, None),
    "mailed, webhook to retry": (2, "pending", 1, None, AT, None, None, 1, None, "503"),
    "both done": (2, "sent", 1, None, AT, LATER, None, 1, None, None),
    "mail given up": (0, "failed", 25, None, None, AT, "refused", 0, None, None),
    "nowhere to go": (3, "sent", 1, None, AT, AT, None, 0, None, None),
    "webhook given up": (1, "sent", 1, None, AT, LATER, None, 25, None, "given up after 25: x"),
    "mail being sent": (0, "sending", 2, LATER, None, AT, None, 0, None, None),
    "webhook removed": (2, "sent", 1, None, AT, LATER, None, 0, None, "the webhook was removed"),
}
# What each becomes: {channel: (status, attempts, lease_until, done_at, error)}.
DELIVERIES = {
    "pending": {"mail": ("pending", 0, None, None, None)},
    "mailed, webhook to retry": {
        "mail": ("sent", 1, None, AT, None),
        "webhook": ("pending", 1, None, None, "503"),
    },
    "both done": {"mail": ("sent", 1, None, AT, None), "webhook": ("sent", 1, None, LATER, None)},
    "mail given up": {"mail": ("failed", 25, None, AT, "refused")},
    "nowhere to go": {},
    "webhook given up": {"webhook": ("failed", 25, None, LATER, "given up after 25: x")},
    "mail being sent": {"mail": ("sending", 2, LATER, None, None)},
    "webhook removed": {
        "mail": ("sent", 1, None, AT, None),
        "webhook": ("skipped", 0, None, LATER, "the webhook was removed"),
    },
}


# The seat's columns as revision 0008 has them (the model's later ones, with their
# defaults, would be written too).
_SEAT_AT_0008 = sa.table(
    "seat",
    *(sa.column(name) for name in ("game_id", "seat", "name", "email", "token_hash")),
    sa.column("webhook_url"),
)

# And the game's (without `taken_in`, which 0025 adds).
_GAME_COLUMNS = ("id", "name", "rules_version", "seed", "seed_commitment", "status", "version")
_GAME_AT_0008 = sa.table(
    "game",
    *(sa.column(name) for name in _GAME_COLUMNS),
    *(sa.column(name) for name in ("head_hash", "created_at", "updated_at", "trusted")),
    sa.column("options", sa.JSON),
    sa.column("to_act", sa.JSON),
)


def write_old_rows(connection: sa.Connection) -> dict[str, int]:
    connection.execute(
        sa.insert(_GAME_AT_0008).values(
            id=GAME,
            name="subdivision",
            rules_version="1",
            options={},
            seed="s",
            seed_commitment="c",
            status="active",
            version=0,
            head_hash="c",
            to_act=[0],
            created_at=AT,
            updated_at=AT,
            trusted=True,
        )
    )
    for number, (email, hook) in enumerate(SEATS):
        connection.execute(
            sa.insert(_SEAT_AT_0008).values(
                game_id=GAME,
                seat=number,
                name=f"p{number}",
                email=email,
                token_hash="t",
                webhook_url=hook,
            )
        )
    ids = {}
    for name, row in OLD_ROWS.items():
        values = dict(
            zip(
                (
                    "seat",
                    "status",
                    "attempts",
                    "lease_until",
                    "mail_at",
                    "hook_at",
                    "error",
                    "hook_attempts",
                    "hook_lease_until",
                    "hook_error",
                ),
                row,
                strict=True,
            )
        )
        ids[name] = connection.execute(
            sa.text(
                "INSERT INTO outbox (game_id, kind, seat, payload, created_at, sent_at, status,"
                " attempts, next_attempt_at, lease_until, mail_at, hook_at, error,"
                " hook_attempts, hook_lease_until, hook_error) VALUES (:game, 'your_turn', :seat,"
                " '{}', :at, NULL, :status, :attempts, '', :lease_until, :mail_at, :hook_at,"
                " :error, :hook_attempts, :hook_lease_until, :hook_error) RETURNING id"
            ),
            {"game": GAME, "at": AT, **values},
        ).scalar_one()
    return ids


Found = dict[str, dict[str, tuple[object, ...]]]


def deliveries(connection: sa.Connection, ids: dict[str, int]) -> Found:
    """Each old row's deliveries: {channel: (status, attempts, lease_until, done_at, error)}."""
    found: Found = {name: {} for name in ids}
    by_id = {notice: name for name, notice in ids.items()}
    # Stamps as the referee reads them (PostgreSQL holds them as `timestamptz` since 0028).
    query = sa.text(
        "SELECT notice_id, channel, status, attempts, lease_until, done_at, error FROM delivery"
    ).columns(
        *(sa.column(name) for name in ("notice_id", "channel", "status", "attempts")),
        sa.column("lease_until", Stamp()),
        sa.column("done_at", Stamp()),
        sa.column("error"),
    )
    for row in connection.execute(query):
        found[by_id[row.notice_id]][row.channel] = tuple(row[2:])
    return found


def moved_over_and_back(database: Database) -> None:
    migrate(database, "0008")
    with database.engine.begin() as connection:
        ids = write_old_rows(connection)
    migrate(database, "head")
    with database.engine.connect() as connection:
        assert deliveries(connection, ids) == DELIVERIES
        columns = {c["name"] for c in sa.inspect(connection).get_columns("outbox")}
    assert columns == {"id", "game_id", "kind", "seat", "payload", "created_at"}
    migrate(database, "0008", down=True)
    with database.engine.connect() as connection:
        back = {
            row.id: (row.status, row.mail_at is not None, row.hook_at is not None)
            for row in connection.execute(
                sa.text("SELECT id, status, mail_at, hook_at FROM outbox")
            )
        }
    assert back[ids["pending"]] == ("pending", False, True)
    assert back[ids["mailed, webhook to retry"]] == ("pending", True, False)
    assert back[ids["both done"]] == ("sent", True, True)
    assert back[ids["mail given up"]][0] == "failed"
    migrate(database, "head")


def moved_over_and_back_on(url: str) -> None:
    database = Database(url)
    try:
        moved_over_and_back(database)
    finally:
        database.dispose()


def test_delivery_rows_are_moved_over_on_sqlite(tmp_path: Path) -> None:
    moved_over_and_back_on(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_delivery_rows_are_moved_over_on_postgresql(pg_database: str) -> None:
    moved_over_and_back_on(pg_database)
