"""The fixtures every test module may ask for, in one place (a plugin of tests/conftest.py).

In-process: `app` (the referee's Flask app on `app_settings`, a SQLite file
of the module's own, tasks run eagerly) and `client` (its test client). A
module changes settings by overriding `app_settings`, asking for the one
here:

    @pytest.fixture(scope="module")
    def app_settings(app_settings: Settings) -> Settings:
        return replace(app_settings, public_url="https://play.example.org")

Real servers (each declared `@starts_servers`, which puts its users in the
service tier, tests/tiers.py): a fresh PostgreSQL database per module
(`pg_database`), `referee serve` with a worker on PostgreSQL and Redis
(`pg_service`) or alone on SQLite (`embedded_service`), the mail stack
(`mail_service`), and a webhook server that never answers (`slow`).
Every database, queue, port and folder is the run's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient

from api import create_app
from referee import queue, settings
from referee.settings import Settings
from referee.store import db
from tests.mailboxes import MailService, mail_stack
from tests.security.webhook_servers import SlowServer
from tests.servers import pg_admin, redis_url
from tests.stacks import Service, base_env, start_server
from tests.tiers import starts_servers

# One test client sends many requests from one address: limits far above what it sends.
GENEROUS = "1000000/second"


@pytest.fixture(scope="session", autouse=True)
def process_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings of this process outside any `app`: a database and mail folder of the
    run's own. Code that reads the process's settings after its app has gone (the
    followers' thread an in-process app leaves running, api/following.py) would
    otherwise make ./referee.sqlite3 in the checkout. Kept to the process's end, when
    that thread stops: it is still running after the session."""
    folder = tmp_path_factory.mktemp("process")
    chosen = Settings(
        database_url=f"sqlite:///{folder / 'referee.sqlite3'}", mail_dir=str(folder / "mail-out")
    )
    return settings.use(chosen)


@pytest.fixture(scope="module")
def app_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The in-process app's settings: a SQLite file and a mail folder of the module's own,
    no broker, no environment read."""
    folder = tmp_path_factory.mktemp("app")
    return Settings(
        database_url=f"sqlite:///{folder / 'referee.sqlite3'}",
        redis_url=None,
        mail_dir=str(folder / "mail-out"),
        rate_create=GENEROUS,
        rate_moves=GENEROUS,
    )


@pytest.fixture(scope="module")
def app(app_settings: Settings) -> Iterator[Flask]:
    """The referee's app in this process on `app_settings`, its database migrated,
    its tasks run eagerly."""
    before = settings.active()
    try:
        with pytest.MonkeyPatch.context() as patch:
            # create_app also makes them the process's settings, which the store reads.
            built = create_app(app_settings)
            patch.setitem(queue.app.conf, "task_always_eager", True)
            db.upgrade()
            yield built
    finally:
        settings.use(before)


@pytest.fixture(scope="module")
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
@starts_servers
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database for one test module; dropped afterwards."""
    name = f"referee_{request.module.__name__.rsplit('.', 1)[-1]}_{uuid.uuid4().hex[:8]}"
    admin_url = pg_admin()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = admin_url.rsplit("/", 1)[0] + "/" + name
    yield url
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
@starts_servers
def pg_service(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """API server + one worker process, on PostgreSQL and Redis."""
    tmp = tmp_path_factory.mktemp("pg")
    env = base_env(
        DATABASE_URL=pg_database,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"referee-test-{uuid.uuid4().hex[:8]}",
        REFEREE_SWEEP_EVERY="1",
        REFEREE_SWEEP_AFTER="2",
    )
    url, server = start_server(env, tmp)
    service = Service(url, pg_database, env, tmp, server)
    service.start_worker()
    yield service
    service.stop()


@pytest.fixture(scope="module")
@starts_servers
def embedded_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The embedded default: `referee serve` alone, SQLite file, tasks in-process."""
    tmp = tmp_path_factory.mktemp("embedded")
    database = f"sqlite:///{tmp / 'referee.sqlite3'}"
    env = base_env(DATABASE_URL=database)
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    yield service
    service.stop()


@pytest.fixture(scope="module")
@starts_servers
def mail_service(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MailService]:
    """API, a worker, `referee mail-in` and the players' mail server, all real."""
    with mail_stack(pg_database, tmp_path_factory) as found:
        yield found


@pytest.fixture
@starts_servers
def slow() -> Iterator[SlowServer]:
    """A webhook server that takes each request and trickles a byte every 2 s, never answering."""
    found = SlowServer()
    yield found
    found.close()
