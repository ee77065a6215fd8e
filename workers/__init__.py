"""The Celery worker: the one writer that decides every move."""

from __future__ import annotations

import atexit
import ctypes
import signal
import subprocess
import sys
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
    child processes (`--role deliver` and `--role bots`, same arguments),
    started once this one is ready, deliver and play the bots' seats. The
    children stop when this process stops, and die when it is killed: a
    child that outlived a killed worker would finish its mail after the
    lease had handed the row to another worker, and the mail would go twice.
    """
    app = tasks.register(referee)
    pool = any(arg in ("-P", "--pool") or arg.startswith("--pool=") for arg in argv)
    given = any(arg in ("-Q", "--queues") or arg.startswith("--queues=") for arg in argv)
    child = [argv] if role == "all" and not given else []
    role = "decide" if child else role

    @signals.worker_process_init.connect(weak=False)
    def fresh_connections(**_kwargs: Any) -> None:
        # A forked pool process must not share its parent's database connections.
        referee.db.dispose()

    @signals.worker_ready.connect(weak=False)
    def ready(**_kwargs: Any) -> None:
        # Delivery and bots workers leave the sweeps to those that decide.
        if referee.queue.sweeps_in_workers() and role not in CHILD_ROLES:
            referee.queue.start_sweeper()
        # Started only now, so that their start does not slow the deciding one's.
        for argv in child:
            for child_role in CHILD_ROLES:
                _start_child(argv, child_role)

    chosen = [] if given else ["--queues", ",".join(queues(referee, role))]
    app.worker_main(["worker", *([] if pool else DEFAULT_POOL), *chosen, *argv])


def _start_child(argv: list[str], role: str) -> None:
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
    command = [sys.executable, "-m", "referee", "worker", "--role", role, *renamed]
    child = subprocess.Popen(command, preexec_fn=_die_with_parent)
    atexit.register(_stop_child, child)


def _stop_child(child: subprocess.Popen[bytes]) -> None:
    """At the parent's normal exit: let the child finish its task and stop, and wait
    for it, since the parent's death would kill it."""
    child.terminate()
    child.wait()


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGKILL when the parent dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the child ends at the parent's normal exit (atexit)


def run_beat(referee: Referee, argv: list[str]) -> None:
    """Start Celery beat, which sends the periodic sweeps (`REFEREE_SWEEPS=beat`)."""
    tasks.register(referee).start(["beat", *argv])
