"""The Celery worker: the one writer that decides every move."""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
from contextlib import suppress
from typing import Any

from celery import signals

from referee.service import Referee
from workers import tasks

# One process per core (Celery's prefork default): once deciding became a
# handful of Core statements, threads spent more on contending for the GIL
# than on waiting for the database. bench/service.py on 2 cores: 2 processes
# gave 49% of the floor's throughput, 8 threads 29-33%, 4 processes 39%.
DEFAULT_POOL = ["--pool", "prefork"]


# The roles a worker of role "all" starts as its children, each a worker of its own.
CHILD_ROLES = ("deliver", "bots")


def queues(referee: Referee, role: str) -> list[str]:
    """The queues a worker of `role` consumes: deciding, delivery, the bots' moves, or
    all three ("all")."""
    chosen = referee.settings
    return {
        "decide": [chosen.queue],
        "deliver": [chosen.delivery_queue],
        "bots": [chosen.bots_queue],
        "all": [chosen.queue, chosen.delivery_queue, chosen.bots_queue],
    }[role]


def run(referee: Referee, argv: list[str], role: str = "all") -> None:
    """Start a worker with Celery's own command-line arguments, on `role`'s queues.

    Delivery has its own queue so that a slow mail server or webhook never
    takes a process that decides moves, and so have the bots, which think
    for seconds over a move. A Celery worker has one pool for all its
    queues, so role "all" is three workers: this process decides, and two
    children (`deliver` and `bots`, same arguments, their names prefixed),
    forked before Celery starts, deliver and play the bots' seats. Forked,
    they start at once and share the modules this process has imported:
    started as programs of their own, each took seconds of CPU to import
    them again. The children stop when this process stops, and die when it
    is killed: a child that outlived a killed worker would finish its mail
    after the lease had handed the row to another worker, and the mail
    would go twice.
    """
    app = tasks.register(referee)
    pool = any(arg in ("-P", "--pool") or arg.startswith("--pool=") for arg in argv)
    given = any(arg in ("-Q", "--queues") or arg.startswith("--queues=") for arg in argv)
    if role == "all" and not given:
        role, argv = _fork_children(referee, argv)

    @signals.worker_process_init.connect(weak=False)
    def fresh_connections(**_kwargs: Any) -> None:
        # A forked pool process must not share its parent's database connections.
        referee.db.forget_connections()

    @signals.worker_ready.connect(weak=False)
    def ready(**_kwargs: Any) -> None:
        # Delivery and bots workers leave the sweeps to those that decide.
        if referee.queue.sweeps_in_workers() and role not in CHILD_ROLES:
            referee.queue.start_sweeper()

    chosen = [] if given else ["--queues", ",".join(queues(referee, role))]
    app.worker_main(["worker", *([] if pool else DEFAULT_POOL), *chosen, *argv])


def _fork_children(referee: Referee, argv: list[str]) -> tuple[str, list[str]]:
    """Fork a worker of each of `CHILD_ROLES`: the role and arguments this process goes
    on with ("decide" in the parent)."""
    parent = os.getpid()
    children: list[int] = []
    for role in CHILD_ROLES:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _die_with_parent(parent)
            # Its parent's pooled connections are the parent's to use and close.
            referee.db.forget_connections()
            return role, _renamed(argv, role)
        children.append(pid)

    @signals.worker_shutting_down.connect(weak=False)
    def stop_with_me(**_kwargs: Any) -> None:
        # At once, so that the three shut down together rather than one after another.
        _stop_children(children, wait=False)

    atexit.register(_stop_children, children)
    return "decide", argv


def _renamed(argv: list[str], role: str) -> list[str]:
    """`argv` with the worker's name (`-n`, `--hostname`) prefixed by the child's role."""
    prefix = {"deliver": "delivery", "bots": "bots"}[role]
    renamed, named = [], False
    for index, arg in enumerate(argv):
        if index > 0 and argv[index - 1] in ("-n", "--hostname"):
            arg, named = f"{prefix}-{arg}", True
        elif arg.startswith("--hostname="):
            arg, named = f"--hostname={prefix}-" + arg.split("=", 1)[1], True
        renamed.append(arg)
    if not named:
        renamed += ["--hostname", f"{prefix}@%h"]
    return renamed


# The children asked to stop already: a second SIGTERM would cut a warm shutdown short.
_told: set[int] = set()


def _stop_children(children: list[int], wait: bool = True) -> None:
    """Let each child finish its task and stop; at the parent's normal exit, wait for
    them too, since the parent's death would kill them."""
    for pid in children:
        if pid not in _told:
            _told.add(pid)
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    if wait:
        for pid in children:
            with suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _die_with_parent(parent: int) -> None:
    """In a child: ask Linux for SIGKILL when the parent dies, and end now if it
    already has."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the child ends at the parent's normal exit (atexit)
    if os.getppid() != parent:
        os._exit(0)


def run_beat(referee: Referee, argv: list[str]) -> None:
    """Start Celery beat, which sends the periodic sweeps (`REFEREE_SWEEPS=beat`)."""
    tasks.register(referee).start(["beat", *argv])
