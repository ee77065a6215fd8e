"""The stacks that test modules run in one pytest process share (fixture `shared_stacks`).

Starting a stack (a database, `referee serve`, a worker with its two
children, for the mail tests `referee mail-in` and a mailbox) takes 20 to
40 s on a loaded machine, and most modules only play games on it. So the
process keeps the stack it started last and hands it to the next module
that asks for one with the same settings, made fresh: its database emptied
(`tests.stacks.empty`), its mailbox cleared, and the logs of its workers and
`mail-in` read from then on. Each module thus sees only its own games, mail
and log lines, as on a stack of its own.

One stack at a time is kept, and none while the process runs modules that
ask for none (`pytest_runtest_teardown` in tests/fixtures.py stops it): an
idle stack's worker still sweeps every second, which costs the modules
running meanwhile.

A module whose tests stop, kill or add a process, stop or stall the mailbox,
or change a setting of a running process, cannot share: it starts a stack of
its own (`tests.mailboxes.mail_stack`, `tests.stacks.pg_stack`).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace

import pytest

from tests.mailboxes import MailService, mail_stack
from tests.servers import own_pg_database
from tests.stacks import Service, empty, pg_stack

# What a kept stack was started with: its kind and its extra settings.
Key = tuple[str, tuple[tuple[str, str], ...]]


class SharedStacks:
    """At most one running stack, kept for the next module that asks for the same."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp_path_factory = tmp_path_factory
        self.key: Key | None = None
        self.kept: Service | MailService | None = None
        self.running = ExitStack()

    def pg_service(self) -> Service:
        """`referee serve` and a worker on PostgreSQL and Redis, made fresh."""
        kept = self._kept(("pg", ()))
        assert isinstance(kept, Service)
        self._refuse_stopped(kept.stopped())
        empty(kept)
        return kept.from_now()

    def mail_service(self, **extra: str) -> MailService:
        """The mail stack with `extra` settings (`mail_stack`), made fresh."""
        kept = self._kept(("mail", tuple(sorted(extra.items()))))
        assert isinstance(kept, MailService)
        inbound, mailbox = kept.inbound, kept.mailbox
        self._refuse_stopped(
            [
                *kept.service.stopped(),
                *(["mail-in"] if inbound.proc is None or inbound.proc.poll() is not None else []),
                *(["the mailbox"] if mailbox.controller is None or mailbox.stall else []),
            ]
        )
        empty(kept.service)
        # Emptying waited for the mail being sent: none of the last module's arrives now.
        with mailbox.lock:
            mailbox.messages.clear()
        return replace(kept, service=kept.service.from_now(), inbound=inbound.from_now())

    def _kept(self, key: Key) -> Service | MailService:
        """The stack started with `key`: the one kept, or a new one in its place."""
        if self.key != key:
            self.close()
            kind, settings = key
            database = self.running.enter_context(own_pg_database(f"shared_{kind}"))
            if kind == "pg":
                tmp = self.tmp_path_factory.mktemp("shared-pg")
                self.kept = self.running.enter_context(pg_stack(database, tmp))
            else:
                stack = mail_stack(database, self.tmp_path_factory, **dict(settings))
                self.kept = self.running.enter_context(stack)
            self.key = key
        assert self.kept is not None
        return self.kept

    def _refuse_stopped(self, stopped: list[str]) -> None:
        """Fail the module that asked, and let the next one have a new stack, if the
        last module left a process stopped (or the mailbox stalled)."""
        if stopped:
            self.close()
            raise AssertionError(
                f"the module before left the shared stack's {stopped} stopped or stalled: "
                "a module that does needs a stack of its own (tests/shared_stacks.py)"
            )

    def close(self) -> None:
        self.running.close()
        self.running = ExitStack()
        self.key = self.kept = None
