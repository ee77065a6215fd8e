"""The service layer: the referee's use cases, each written once.

Every entry point (the REST API and the game pages, mail-in, the Celery
tasks and sweeps, the CLI) builds one `Referee` from its process's settings
and calls the use cases with it: create a game (`creating`), submit a move
from any source (`submitting`), decide it (`deciding`), time out and remind
(`deadlines`), take a mail reply (`replies`), deliver the notices
(`delivering`), publish what was decided (`publishing`). A use case checks,
then saves in one transaction, then publishes after the commit, in that
order; what it refuses it raises as a `refusals.Refusal`. Entry points only
translate their input into a call and the answer into their output.
"""

from __future__ import annotations

import threading
from typing import Any

from referee.queue import Queue
from referee.settings import Settings
from referee.store import keys
from referee.store.db import Database


class Referee:
    """One process's referee: its settings, its database and its queue."""

    def __init__(self, chosen: Settings, db: Database | None = None) -> None:
        self.settings = chosen
        self.db = db or Database.of(chosen)
        self.queue = Queue(chosen, self.run_job)
        self._secret: list[bytes] = []
        self._secret_lock = threading.Lock()

    def secret(self) -> bytes:
        """`REFEREE_SECRET`, or the random one the database keeps (read once, it never changes)."""
        if self.settings.secret:
            return self.settings.secret.encode("utf-8")
        with self._secret_lock:
            if not self._secret:
                self._secret.append(keys.kept_secret(self.db))
            return self._secret[0]

    def run_job(self, name: str, args: tuple[Any, ...]) -> Any:
        """Run the job a task names, here (the embedded default, or a worker's task)."""
        from referee.service.jobs import JOBS

        return JOBS[name](self, *args)

    def close(self) -> None:
        """Let go of the database's connections."""
        self.db.dispose()
