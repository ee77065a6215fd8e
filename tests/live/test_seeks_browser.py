"""Two players find each other through `/seeks` in a real headless Chromium against
`referee serve`, and play the game that starts.

Ann and Bob are players (each seated once in a game a trusted client made),
each signed in in a browser context of its own by a session opened in the
service, as the sign-in link does. Each chooses a public name on `/me`; Ann
posts a Subdivision open game from the `/seeks` form; Bob finds it on
`/seeks` and clicks Join, which fills it and starts the game; both open
their seats from the open game's page; Bob resigns; both pages, the open
game's and `/me`, show the game over. Screenshots of the pages at 1280 and
390 px go to the run's folder under `var/artifacts/web/`.
"""

from __future__ import annotations

import re
from pathlib import Path

import requests
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page

from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.live.test_web_browser import (  # noqa: F401 (fixtures, used by name)
    artifacts,
    browser,
    new_page,
    playwright,
    web_service,
)
from tests.stacks import TEST_API_KEY, Service

ANN, BOB = "ann.seeks@example.org", "bob.seeks@example.org"
SEEK_PAGE = re.compile(r".*/seeks/[0-9a-f]{32}$")
GAME_PAGE = re.compile(r".*/g/[0-9a-f]{32}$")


def _players(url: str, *addresses: str) -> None:
    """Make the addresses players: a trusted client (the API key) seats them in a game."""
    people = [{"name": f"P{n}", "email": address} for n, address in enumerate(addresses)]
    answer = requests.post(
        url + "/v1/games",
        headers={"X-API-Key": TEST_API_KEY},
        json={"game": "subdivision", "players": people},
        timeout=30,
    )
    assert answer.ok, answer.text


def _signed_in(chromium: Browser, service: Service, address: str, phone: bool = False) -> Page:
    referee = Referee(Settings(database_url=service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(referee, address)
    finally:
        referee.close()
    page = new_page(chromium, phone=phone)
    page.context.add_cookies([{"name": "player", "value": cookie, "url": service.url}])
    return page


def _name(page: Page, url: str, name: str) -> None:
    page.goto(url + "/me")
    page.fill("#public-name", name)
    page.click("#name button[type=submit]")
    assert page.locator("#current-name").inner_text() == f"You are {name}."


def _serious(page: Page) -> list[tuple[str, str]]:
    """What axe-core finds seriously wrong with the page for people using assistive technology."""
    found = Axe().run(page).response["violations"]
    return [(v["id"], v["help"]) for v in found if v["impact"] in ("serious", "critical")]


def _fits(page: Page) -> bool:
    """Nothing scrolls sideways (a phone's screen)."""
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"))


def test_two_players_find_each_other_on_seeks_and_play(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    _players(url, ANN, BOB)
    ann, bob = _signed_in(browser, web_service, ANN), _signed_in(browser, web_service, BOB)
    _name(ann, url, "Ann Seeker")
    _name(bob, url, "Bob Finder")

    # Ann posts from the form: Subdivision for two, three days a turn.
    ann.goto(url + "/seeks?game=subdivision")
    assert ann.input_value("#seek-game") == "subdivision"
    ann.select_option("#seek-deadline", "72h")
    ann.click("text=Post the open game")
    ann.wait_for_url(SEEK_PAGE)
    seek_id = ann.url.rsplit("/", 1)[1]
    assert "open: waiting for players" in ann.locator("#status").inner_text()
    assert ann.locator("text=Withdraw it").is_visible()
    ann.screenshot(path=artifacts / "seek-creator-1280.png", full_page=True)
    assert _serious(ann) == []

    # A stranger sees it and is offered the sign-in page.
    stranger = new_page(browser, phone=True)
    stranger.goto(f"{url}/seeks/{seek_id}")
    assert stranger.locator("a.sign-in-to-join").get_attribute("href") == "/me/sign-in"
    assert ANN not in stranger.content() and _fits(stranger)
    stranger.screenshot(path=artifacts / "seek-stranger-390.png", full_page=True)

    # Bob finds it in the list and joins with one click: the game starts.
    bob.goto(url + "/seeks")
    assert _serious(bob) == []
    row = bob.locator(f"li[data-seek='{seek_id}']")
    assert "Ann Seeker" in row.inner_text() and "3 days per turn" in row.inner_text()
    row.get_by_role("button", name=re.compile("^Join")).click()
    bob.wait_for_url(SEEK_PAGE)
    assert "started" in bob.locator("#status").inner_text()
    assert "Your game has begun" in bob.locator("#game").inner_text()

    # Each opens its seat from the open game's page and sees the other by public name.
    ann.reload()
    for page in (ann, bob):
        page.click("#game a")
        page.wait_for_url(GAME_PAGE)
        assert "in play" in page.locator("#status").inner_text()
        assert "Ann Seeker" in page.content() and "Bob Finder" in page.content()
    game_url = bob.url

    # Bob resigns: the game is over, and every page says so.
    bob.click("details.resign summary")
    bob.check("#confirm-resign")
    with bob.expect_navigation():
        bob.click("details.resign button[type=submit]")
    for page in (ann, bob):
        page.goto(game_url)
        status = page.locator("#status").inner_text()
        assert "finished" in status and "Won by Ann Seeker" in status
        page.goto(f"{url}/seeks/{seek_id}")
        assert "Your game is over" in page.locator("#game").inner_text()
        page.goto(url + "/me")
        assert page.locator("#finished-heading ~ ul [data-game]").count() == 1
    assert "You won" in ann.locator("#finished-heading ~ ul").inner_text()
    assert "You lost" in bob.locator("#finished-heading ~ ul").inner_text()
    # The open game left the list and Ann's open games.
    ann.goto(url + "/seeks")
    assert ann.locator(f"li[data-seek='{seek_id}']").count() == 0
