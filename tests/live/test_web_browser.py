"""The game pages in a real headless Chromium, against a real `referee serve`.

Chromium driven by Playwright: the system's (Debian's `chromium`), else one
Playwright installed itself; missing, it is installed from Debian's packages
when the tests run as root with apt-get, and otherwise the run stops with
the line to type (tests/servers.py, `chromium`). It is never skipped.

One whole Mandala game is created in the lobby and played to its end
through the pages, each seat in its own browser profile (one clicking on
the board, the other with JavaScript off choosing among the move buttons),
each opening its personal link from another site as a
mail reader would; then the history is stepped through backwards. The
spectator's page source is checked for the seed while the game runs, and
an Ice Palace game's spectator page for the players' hands. The other four
games are played to their end through the API, and their pages looked at
for the score breakdown at both widths. Screenshots go to a folder of the
run's own under `var/artifacts/web/` (not committed).
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.servers import chromium
from tests.stacks import TEST_API_KEY, Service, base_env, start_server
from tests.tiers import starts_servers

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "web"
GAME_URL = re.compile(r".*/g/[0-9a-f]{32}$")
MAX_MOVES = 200


@pytest.fixture(scope="module")
@starts_servers
def web_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The embedded default (`referee serve` alone, SQLite, moves decided in-process).

    Its sweeper (pending submissions, mail, deadlines) runs hourly here: a mail
    delivery sweep in the embedded default can hold SQLite's write lock while
    it waits for that same lock (`referee/delivery/mail.py`), freezing
    the server for the 30 s busy timeout. Mail is tested in tests/mail.
    """
    tmp = tmp_path_factory.mktemp("web")
    # With an API key the lobby's games are a trusted client's: every seat's link is shown.
    env = base_env(
        DATABASE_URL=f"sqlite:///{tmp / 'referee.sqlite3'}",
        REFEREE_SWEEP_EVERY="3600",
        REFEREE_API_KEY=TEST_API_KEY,
    )
    url, server = start_server(env, tmp)
    service = Service(url, env["DATABASE_URL"], env, tmp, server)
    yield service
    service.stop()


@pytest.fixture(scope="module")
@starts_servers
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
@starts_servers
def browser(playwright: Playwright) -> Iterator[Browser]:
    executable = chromium(playwright.chromium.executable_path)
    # Playwright starts every browser on a fresh, empty profile directory of its own.
    launched = playwright.chromium.launch(executable_path=executable, args=FLAGS, timeout=60_000)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """A folder of this run's own, so that two runs at once never write over each other."""
    folder = ARTIFACTS / time.strftime(f"%Y%m%d-%H%M%S-{os.getpid()}")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def new_page(browser: Browser, phone: bool = False, script: bool = True) -> Page:
    size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 900}
    context: BrowserContext = browser.new_context(viewport=size, java_script_enabled=script)
    context.set_default_timeout(15_000)
    return context.new_page()


def open_from_mail(page: Page, link: str) -> None:
    """Follow a personal link from another site, as a click in a mail reader does."""
    page.set_content(f'<a id="go" href="{link}">your turn</a>')
    page.click("#go")
    page.wait_for_url(GAME_URL)


def create_in_lobby(page: Page, url: str, game: str, names: list[str]) -> list[str]:
    """Create a game through the lobby's form; the personal links it shows once."""
    page.goto(url + "/")
    page.click(f"a.button[href='/new/{game}']")
    for n, name in enumerate(names):
        page.fill(f"#name-{n}", name)
    page.fill("#api_key", TEST_API_KEY)
    page.click("text=Create the game")
    assert page.locator("h1").inner_text().endswith("is ready")
    return [page.input_value(f"#link-{n}") for n in range(len(names))]


def mandala_in_lobby(browser: Browser, url: str) -> tuple[list[str], str, list[str]]:
    """A game of Mandala for Ann and Bob made through the lobby: the seats' personal
    links, the game's id and the seats' tokens."""
    links = create_in_lobby(new_page(browser), url, "mandala", ["Ann", "Bob"])
    game_id = links[0].split("/g/", 1)[1].split("/", 1)[0]
    return links, game_id, [link.rsplit("/", 1)[1] for link in links]


def test_a_whole_game_through_the_pages(
    web_service: Service, browser: Browser, artifacts: Path
) -> None:
    url = web_service.url
    host = new_page(browser)
    host.goto(url + "/")
    host.screenshot(path=artifacts / "lobby.png", full_page=True)
    host.click("a.button[href='/new/mandala']")
    host.screenshot(path=artifacts / "new-game.png", full_page=True)
    host.fill("#name-0", "Ann")
    host.fill("#name-1", "Bob")
    host.fill("#email-1", "bob@example.org")
    host.fill("#api_key", TEST_API_KEY)
    host.click("text=Create the game")
    host.screenshot(path=artifacts / "created.png", full_page=True)
    # What happened to each seat, under its name: with the API key both links are
    # shown, and Bob's is mailed to his address too.
    fates = host.locator(".seat-fate").all_inner_texts()
    assert fates == [
        "Link shown here: give it to them yourself.",
        "Link shown here, and mailed to their address too.",
    ]
    host.set_viewport_size({"width": 390, "height": 844})
    host.screenshot(path=artifacts / "created-390.png", full_page=True)
    assert host.evaluate("document.documentElement.scrollWidth") <= 390
    host.set_viewport_size({"width": 1280, "height": 900})
    links = [host.input_value(f"#link-{n}") for n in range(2)]
    host.click("#game-link")
    host.wait_for_url(GAME_URL)
    game_url = host.url
    game_id = game_url.rsplit("/", 1)[1]
    assert all(link.startswith(f"{url}/g/{game_id}/seat/") for link in links)
    assert "You are watching" in host.inner_text("#status")

    # Bob plays on a phone without JavaScript; the page needs none.
    seats = [new_page(browser), new_page(browser, phone=True, script=False)]
    for name, page, link in zip(("Ann", "Bob"), seats, links, strict=True):
        open_from_mail(page, link)
        assert page.url == game_url  # the token is gone from the address
        assert f"You are {name}" in page.inner_text("#status")
        assert link.rsplit("/", 1)[1] not in page.content()

    spectator_sources = []
    choose = random.Random(7)
    for played in range(MAX_MOVES):
        spectator_sources.append(host.content())
        summary = requests.get(f"{url}/v1/games/{game_id}", timeout=10).json()
        if summary["status"] == "over":
            break
        (seat,) = summary["to_act"]
        page = seats[seat]
        page.goto(game_url)
        if played == 0:
            page.screenshot(path=artifacts / "seat-to-move.png", full_page=True)
        if seat == 0:
            # With JavaScript: a pyramid on the board, then Play.
            targets = page.locator("#board svg [data-step]")
            assert targets.count() > 0, page.content()
            targets.nth(choose.randrange(targets.count())).click()
            page.click("#build-send:enabled")
        else:
            buttons = page.locator("button.move")
            assert buttons.count() > 0, page.content()
            buttons.nth(choose.randrange(buttons.count())).click()
        page.wait_for_url(re.compile(r".*\?sub=[0-9a-f]+$"))
        assert "was accepted as move" in page.inner_text("#answer")
        if played == 0:
            page.screenshot(path=artifacts / "seat-answer.png", full_page=True)
        host.goto(game_url)
    else:
        pytest.fail(f"the game did not end in {MAX_MOVES} moves")

    host.goto(game_url)
    total = played
    assert total > 0
    assert "finished" in host.inner_text("#status")
    seed = host.inner_text("#seed")
    assert len(seed) >= 16
    for source in spectator_sources[:-1]:
        assert seed not in source
    assert host.locator("#breakdown caption").count() == 2  # each seat's score counted
    host.screenshot(path=artifacts / "spectator-over.png", full_page=True)
    seats[1].goto(game_url)
    assert seats[1].locator("#breakdown").is_visible()  # a phone without JavaScript
    seats[1].screenshot(path=artifacts / "seat-phone-over.png", full_page=True)

    # Step back through the whole history, one move at a time.
    for at in range(total - 1, -1, -1):
        host.click("#prev")
        host.wait_for_url(re.compile(rf".*\?at={at}$"))
        where = host.inner_text("#where")
        assert where == (
            f"After move {at} of {total}" if at else f"Start, before move 1 of {total}"
        )
        assert host.locator("ol.log li[aria-current=step]").count() == 1
        if at == total // 2:
            host.screenshot(path=artifacts / "history.png", full_page=True)
    host.click("#next")
    assert host.inner_text("#where") == f"After move 1 of {total}"
    host.click("#latest")
    assert host.url == game_url


def test_the_spectator_never_sees_a_hand(
    web_service: Service, browser: Browser, artifacts: Path
) -> None:
    host = new_page(browser)
    links = create_in_lobby(host, web_service.url, "ice_palace", ["Ann", "Bob", "Cy"])
    ann = new_page(browser)
    open_from_mail(ann, links[0])
    hand = re.search(
        r"hand: ([A-Z][a-z](?: [A-Z][a-z])*)", ann.text_content("pre.text-board") or ""
    )
    assert hand is not None and 'data-place="hand"' in ann.content()
    ann.screenshot(path=artifacts / "ice-palace-seat.png", full_page=True)
    host.goto(ann.url)
    source = host.content()
    assert "You are watching" in host.inner_text("#status")
    assert hand.group(0) not in source and 'data-place="hand"' not in source
    assert "(hidden)" in source
    host.screenshot(path=artifacts / "ice-palace-spectator.png", full_page=True)


def play_out_by_api(url: str, game: str, names: list[str], choose: random.Random) -> str:
    """A game created and played to its end by random legal moves through the API: its id."""
    created = requests.post(
        f"{url}/v1/games",
        json={"game": game, "players": [{"name": name} for name in names]},
        headers={"X-API-Key": TEST_API_KEY},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    tokens = [seat["token"] for seat in created.json()["seats"]]
    for _ in range(MAX_MOVES * 3):
        summary = requests.get(f"{url}/v1/games/{game_id}", timeout=10).json()
        if summary["status"] == "over":
            return str(game_id)
        auth = {"Authorization": f"Bearer {tokens[choose.choice(summary['to_act'])]}"}
        legal = requests.get(f"{url}/v1/games/{game_id}/legal-moves", headers=auth, timeout=10)
        move = choose.choice(legal.json()["moves"])["move"]
        sent = requests.post(
            f"{url}/v1/games/{game_id}/moves?wait=10",
            json={"move": move, "expected_version": summary["version"]},
            headers=auth,
            timeout=20,
        )
        assert sent.status_code == 201, sent.text
    pytest.fail(f"the {game} game did not end in {MAX_MOVES * 3} moves")


@pytest.mark.parametrize(
    ("game", "names"),
    [
        ("subdivision", ["Ann", "Bob"]),
        ("mandala_stones", ["Ann", "Bob"]),
        ("ice_palace", ["Ann", "Bob", "Cy"]),
        ("maniki", ["Ann", "Bob"]),
    ],
)
def test_the_end_shows_each_seats_score_line_by_line(
    web_service: Service, browser: Browser, artifacts: Path, game: str, names: list[str]
) -> None:
    url = web_service.url
    game_id = play_out_by_api(url, game, names, random.Random(game))
    scores = requests.get(f"{url}/v1/games/{game_id}", timeout=10).json()["result"]["scores"]
    for phone in (False, True):
        page = new_page(browser, phone=phone)
        page.goto(f"{url}/g/{game_id}")
        section = page.locator("#breakdown")
        assert section.is_visible()
        totals = section.locator("td.total").all_inner_texts()
        assert [int(total) for total in totals] == scores
        assert section.locator("caption").all_inner_texts()[0].startswith(names[0])
        # Nothing on the page runs wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        width = 390 if phone else 1280
        page.screenshot(path=artifacts / f"{game}-over-{width}.png", full_page=True)
        section.screenshot(path=artifacts / f"{game}-breakdown-{width}.png")
        page.context.close()
