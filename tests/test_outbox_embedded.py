"""The outbox on the embedded default (SQLite): delivering never waits on itself.

On SQLite every transaction takes the file's one write lock, so delivery
must close its reading session before it marks a row; otherwise the
sweeper blocks its own thread for the busy timeout and freezes the server.
"""

from __future__ import annotations

from pathlib import Path

from sqlmodel import col, select

from referee import games
from referee.store import creation, db
from referee.store.db import transaction
from referee.store.tables import Outbox
from tests.configured import settings_with
from workers import notify


def test_rows_for_seats_without_mail_or_webhook_are_settled_at_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'referee.sqlite3'}"
    mail_dir = str(tmp_path / "mail-out")
    with settings_with(database_url=url, mail_dir=mail_dir, smtp_url=None):
        finished, statuses = _create_and_deliver()
    assert statuses and 0 < finished <= len(statuses)
    assert set(statuses) == {"sent"}
    assert not (tmp_path / "mail-out").exists() or not any((tmp_path / "mail-out").iterdir())


def _create_and_deliver() -> tuple[int, list[str]]:
    db.upgrade()
    rules = games.get("subdivision")
    with transaction() as session:
        options = rules.load_options({}, 2)
        created = creation.create_game(session, rules, [("Ann", None), ("Bob", None)], options)
        game_id = created.game.id
    try:
        finished = notify.deliver_due()
        with transaction() as session:
            statuses = session.exec(
                select(Outbox.status).where(col(Outbox.game_id) == game_id)
            ).all()
    finally:
        db.dispose()
    return finished, list(statuses)
