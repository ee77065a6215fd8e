"""Signing in with a real headless Chromium against the embedded default (`referee serve`
alone: SQLite, the sign-in job on its background thread, mail written as files).

A player asks on the form, the link is taken from the mail, opened in a
fresh browser profile from another site (as a click in a mail reader), and
its "Sign in" button pressed: that browser is signed in, the one that asked
is not, and signing out ends it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests.servers import chromium
from tests.service.test_web_browser import FLAGS
from tests.stacks import TEST_API_KEY, Client, Service, base_env, start_server
from tests.tiers import starts_servers

ANN = "ann@browser.test"
LINK = re.compile(r"https?://[^\s\"<>]+/me/sign-in/[A-Za-z0-9_-]+")


@pytest.fixture(scope="module")
@starts_servers
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("sign-in")
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp / 'referee.sqlite3'}",
        REFEREE_API_KEY=TEST_API_KEY,
        REFEREE_MAIL_DIR=str(tmp / "mail-out"),
    )
    url, server = start_server(env, tmp)
    found = Service(url, env["DATABASE_URL"], env, tmp, server)
    yield found
    found.stop()


@pytest.fixture(scope="module")
@starts_servers
def browser() -> Iterator[Browser]:
    with sync_playwright() as driver:
        yield _launch(driver)


def _launch(driver: Playwright) -> Browser:
    executable = chromium(driver.chromium.executable_path)
    return driver.chromium.launch(executable_path=executable, args=FLAGS, timeout=60_000)


def _fresh(browser: Browser) -> Page:
    """A page in a browser profile of its own (no cookies)."""
    context = browser.new_context()
    context.set_default_timeout(15_000)
    return context.new_page()


def _sign_in_link(folder: Path, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in folder.glob("*.eml") if folder.exists() else []:
            mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
            assert isinstance(mail, EmailMessage)
            if mail["X-Referee-Kind"] == "sign_in" and ANN in str(mail["To"]):
                body = mail.get_body(("plain",))
                assert body is not None
                found = LINK.search(str(body.get_content()))  # type: ignore[attr-defined]
                assert found is not None
                return found.group(0)
        time.sleep(0.1)
    raise AssertionError("no sign-in mail")


def test_ask_follow_the_mailed_link_and_sign_in(service: Service, browser: Browser) -> None:
    url = service.url
    players = [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": "bob@browser.test"}]
    assert Client(url).post("/v1/games", {"game": "mandala", "players": players}).ok

    asking = _fresh(browser)
    asking.goto(url + "/me/sign-in")
    asking.fill("#email", ANN)
    asking.click("#ask")
    assert asking.locator("h1").inner_text() == "Check your mail"

    link = _sign_in_link(service.tmp / "mail-out")
    reader = _fresh(browser)
    # Followed from another site, as a click in a mail reader is.
    reader.set_content(f'<a id="go" href="{link}">Sign in</a>')
    reader.click("#go")
    reader.wait_for_url(link)
    reader.click("#sign-in")
    reader.wait_for_url(url + "/me")
    reader.goto(url + "/me/sign-in")
    assert reader.locator("#signed-in-as").inner_text() == ANN
    cookie = next(c for c in reader.context.cookies() if c["name"] == "player")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/"

    # The browser that asked is not signed in; the spent link signs in no one else.
    asking.goto(url + "/me/sign-in")
    assert asking.locator("#signed-in-as").count() == 0
    asking.goto(link)
    assert "not valid" in asking.locator("h1").inner_text()

    reader.click("#sign-out")
    reader.wait_for_url(url + "/me/sign-in")
    assert reader.locator("#signed-in-as").count() == 0
    assert not [c for c in reader.context.cookies() if c["name"] == "player"]
