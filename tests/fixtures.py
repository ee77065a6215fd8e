"""The fixtures every test module may ask for, in one place (a plugin of tests/conftest.py).

In-process: `referee` (the service on `app_settings`, a SQLite file of the
module's own, tasks run as they are enqueued), `app` (the referee's Flask
app over it) and `client` (its test client). A
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
Every database, queue, port and folder is the run's own. `pg_service` and
`mail_service` are shared by the modules one process runs one after the
other, emptied for each (`shared_stacks`, tests/shared_stacks.py); a module
whose tests stop or add processes starts a stack of its own instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api import create_app
from referee.i18n import speak
from referee.service import Referee
from referee.settings import Settings
from tests.mailboxes import MailService
from tests.security.webhook_servers import SlowServer
from tests.servers import own_pg_database
from tests.shared_stacks import SharedStacks
from tests.stacks import Service, base_env, start_server
from tests.tiers import starts_servers

# One test client sends many requests from one address: limits far above what it sends.
GENEROUS = "1000000/second"


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
        # A bot seated by a test thinks briefly, on this process's background thread.
        bot_seconds=0.05,
    )


@pytest.fixture(scope="module")
def referee(app_settings: Settings) -> Iterator[Referee]:
    """The service on `app_settings`, its database migrated; tasks run as they are enqueued."""
    made = Referee(app_settings)
    made.db.upgrade()
    yield made
    made.close()


@pytest.fixture
def fresh_referee(tmp_path: Path) -> Iterator[Referee]:
    """The service on a SQLite file of the test's own, migrated, with a mail folder and
    a fixed secret; tasks run as they are enqueued."""
    made = Referee(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'referee.sqlite3'}",
            mail_dir=str(tmp_path / "mail-out"),
            secret="a test secret",
            bot_seconds=0.05,
        )
    )
    made.db.upgrade()
    yield made
    made.close()


@pytest.fixture(scope="module")
def app(app_settings: Settings, referee: Referee) -> Flask:
    """The referee's app in this process on `app_settings`, over `referee`."""
    return create_app(app_settings, referee)


@pytest.fixture(scope="module")
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
@starts_servers
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database for one test module; dropped afterwards."""
    with own_pg_database(request.module.__name__.rsplit(".", 1)[-1]) as url:
        yield url


@pytest.fixture(autouse=True)
def in_english_and_utc() -> None:
    """Each test starts speaking English in UTC, as a new thread does: a test client's
    request that another test left open (a stream, a `with client:` block) may have
    left its reader's language on this thread."""
    speak(None)


def migrated_referee(url: str, folder: Path) -> Referee:
    """The service in this process on the database at `url`, migrated; mail to `folder`."""
    made = Referee(
        Settings(
            database_url=url,
            redis_url=None,
            mail_dir=str(folder / "mail-out"),
            secret="a test secret",
        )
    )
    made.db.upgrade()
    return made


@contextmanager
def referee_on_own_pg(tmp_path: Path, label: str) -> Iterator[Referee]:
    """The service on a PostgreSQL database of its own, migrated; dropped afterwards."""
    with own_pg_database(label) as url:
        made = migrated_referee(url, tmp_path)
        try:
            yield made
        finally:
            made.close()


# The kept stack (`shared_stacks`), while there is one; the test files of the
# session with a test that asks for it.
SHARED = pytest.StashKey[SharedStacks]()
ASKING = pytest.StashKey[set[Path]]()


@pytest.fixture(scope="session")
@starts_servers
def shared_stacks(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedStacks]:
    """The stack this process keeps for its next module asking for the same one
    (tests/shared_stacks.py)."""
    found = SharedStacks(tmp_path_factory)
    request.config.stash[SHARED] = found
    request.config.stash[ASKING] = {
        item.path
        for item in request.session.items
        if "shared_stacks" in getattr(item, "fixturenames", ())
    }
    yield found
    del request.config.stash[SHARED]
    found.close()


@pytest.fixture(scope="module")
@starts_servers
def pg_service(shared_stacks: SharedStacks) -> Service:
    """API server + one worker process, on PostgreSQL and Redis; shared with other
    modules, its database empty when the module begins."""
    return shared_stacks.pg_service()


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
def mail_service(shared_stacks: SharedStacks) -> MailService:
    """API, a worker, `referee mail-in` and the players' mail server, all real; shared
    with other modules, its database and mailbox empty when the module begins."""
    return shared_stacks.mail_service()


@pytest.fixture
@starts_servers
def slow() -> Iterator[SlowServer]:
    """A webhook server that takes each request and trickles a byte every 2 s, never answering."""
    found = SlowServer()
    yield found
    found.close()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a file's last test and its fixtures, stop the kept stack unless the next
    file asks for one."""
    shared = item.config.stash.get(SHARED, None)
    if shared is None or (nextitem is not None and nextitem.path == item.path):
        return
    if nextitem is None or nextitem.path not in item.config.stash[ASKING]:
        shared.close()
