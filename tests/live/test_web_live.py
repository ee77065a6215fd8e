"""A game page that follows its game live, in a real headless Chromium and `referee serve`.

The other seat moves through the API; the page open in the browser takes
the change from the game's event stream and updates in place (a marker set
in the page's window survives: no navigation, no reload), its title says
"Your turn", its move list shows the newest move. Then the other seat
resigns while this one is typing a move: the typed text stays. History
pages of the finished game say "looking back", never "in play". The
favicon answers. Screenshots at 1280 and 390 px go to the run's folder
under `var/artifacts/web/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests
from playwright.sync_api import Browser, Page, expect

from tests.live.test_web_browser import (  # noqa: F401 (fixtures, used by name)
    artifacts,
    browser,
    create_in_lobby,
    new_page,
    open_from_mail,
    playwright,
    web_service,
)
from tests.stacks import Service

# Enough moves that the move list overflows its box (it shows about a dozen).
MOVES_BEFORE = 16
MARKER = "window.livePageMarker"
# Records the notifications a page shows, and makes it look out of focus, as a
# page in a background tab is (a headless page always has the focus).
RECORD_NOTIFICATIONS = """
window.notified = [];
window.Notification = class extends window.Notification {
  constructor(title, options) { super(title, options); window.notified.push(title); }
};
document.hasFocus = () => false;
"""


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def summary(url: str, game_id: str) -> Any:
    answer = requests.get(f"{url}/v1/games/{game_id}", timeout=10)
    answer.raise_for_status()
    return answer.json()


def play_by_api(url: str, game_id: str, token: str) -> str:
    """The first legal move of the seat whose token this is (in Mandala the shortest step,
    so the game lasts), decided before returning; its notation."""
    legal = requests.get(
        f"{url}/v1/games/{game_id}/legal-moves", headers=bearer(token), timeout=10
    ).json()
    notation = str(legal["moves"][0]["notation"])
    sent = requests.post(
        f"{url}/v1/games/{game_id}/moves?wait=10",
        json={"notation": notation, "expected_version": legal["version"]},
        headers=bearer(token),
        timeout=30,
    )
    assert sent.json()["submission"]["status"] == "accepted", sent.text
    return notation


def newest_move_in_sight(page: Page) -> bool:
    """Whether the last entry of the move list lies inside its scrolled box."""
    return bool(
        page.evaluate(
            """() => {
              const box = document.getElementById("log-scroll").getBoundingClientRect();
              const items = document.querySelectorAll("#log li");
              const last = items[items.length - 1].getBoundingClientRect();
              return last.top >= box.top - 1 && last.bottom <= box.bottom + 1;
            }"""
        )
    )


def test_a_seat_page_follows_the_game_live(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    links = create_in_lobby(new_page(browser), url, "mandala", ["Ann", "Bob"])
    game_id = links[0].split("/g/", 1)[1].split("/", 1)[0]
    tokens = [link.rsplit("/", 1)[1] for link in links]
    names = ["Ann", "Bob"]
    for _ in range(MOVES_BEFORE):
        (mover,) = summary(url, game_id)["to_act"]
        play_by_api(url, game_id, tokens[mover])
    now = summary(url, game_id)
    assert now["status"] == "active"
    (mover,) = now["to_act"]
    waiter = 1 - mover

    pages = [new_page(browser), new_page(browser, phone=True)]
    for page in pages:
        page.context.grant_permissions(["notifications"], origin=url)
        page.context.add_init_script(RECORD_NOTIFICATIONS)
        open_from_mail(page, links[waiter])
        assert not page.title().startswith("Your turn")
        assert newest_move_in_sight(page)
        assert page.evaluate(
            "() => { const b = document.getElementById('log-scroll'); "
            "return b.scrollHeight > b.clientHeight; }"
        ), "the move list should overflow its box for this test to mean anything"
        page.evaluate(f"() => {{ {MARKER} = 'still here'; }}")
        assert page.locator("#notify").inner_text() == "Notify me when it is my turn"
    # Only the desk's player asks for notifications.
    pages[0].click("#notify")
    # The browser answers the permission request later: wait for the button to say so.
    expect(pages[0].locator("#notify")).to_have_text("Stop notifying me")

    notation = play_by_api(url, game_id, tokens[mover])
    version = now["version"] + 1
    for page, width in zip(pages, (1280, 390), strict=True):
        page.wait_for_function("() => document.title.startsWith('Your turn — ')")
        assert page.evaluate(f"() => {MARKER}") == "still here"
        assert page.get_attribute("#game", "data-version") == str(version)
        assert "Your turn" in page.inner_text("#status")
        assert page.locator("button.move").count() > 0
        last = page.locator("#log li").last
        assert last.get_attribute("value") == str(version)
        assert notation in last.inner_text() and names[mover] in last.inner_text()
        assert newest_move_in_sight(page)
        page.screenshot(path=artifacts / f"live-your-turn-{width}.png", full_page=True)
    assert pages[0].evaluate("() => window.notified") == [pages[0].title()]
    assert pages[1].evaluate("() => window.notified") == []

    # Typing a move when the game ends under it: what was typed is not thrown away.
    desk = pages[0]
    # With the script, the move as text is folded under the board's builder.
    desk.click("details.as-text summary")
    desk.fill("#notation", "half a mov")
    desk.focus("#notation")
    resigned = requests.post(
        f"{url}/v1/games/{game_id}/resign?wait=10", headers=bearer(tokens[mover]), timeout=30
    )
    assert resigned.json()["submission"]["status"] == "accepted", resigned.text
    for page in pages:
        page.wait_for_function("() => document.getElementById('game').dataset.watch === 'no'")
        assert page.evaluate(f"() => {MARKER}") == "still here"
        assert "finished" in page.inner_text("#status")
        assert not page.title().startswith("Your turn")
        assert not page.locator("#notify").is_visible()
    assert desk.input_value("#notation") == "half a mov"
    assert desk.locator("#notation").evaluate("field => document.activeElement === field")
    desk.screenshot(path=artifacts / "live-over-typed-1280.png", full_page=True)

    # Looking back through the finished game: history, never "in play".
    final = summary(url, game_id)["version"]
    for page, width in zip(pages, (1280, 390), strict=True):
        page.goto(f"{url}/g/{game_id}?at=3")
        status = page.inner_text("#status")
        assert "looking back" in status and f"Move 3 of {final}" in status
        assert "finished" in status
        assert page.locator("#status .badge").all_inner_texts() == ["looking back"]
        assert page.locator("#log-scroll li[aria-current=step]").is_visible()
        page.screenshot(path=artifacts / f"looking-back-{width}.png", full_page=True)


def test_the_favicon_answers(web_service: Service, browser: Browser) -> None:  # noqa: F811
    page = new_page(browser)
    page.goto(web_service.url + "/")
    icon = page.get_attribute("link[rel=icon]", "href")
    assert icon is not None
    linked = requests.get(web_service.url + icon, timeout=10)
    assert linked.status_code == 200
    assert linked.headers["Content-Type"].startswith("image/svg+xml")
    # Browsers ask for /favicon.ico of their own accord.
    asked = requests.get(web_service.url + "/favicon.ico", timeout=10)
    assert asked.status_code == 200 and asked.content == linked.content
    assert [hop.status_code for hop in asked.history] == [301]


def test_a_past_position_follows_the_game_and_keeps_its_board(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
) -> None:
    url = web_service.url
    links = create_in_lobby(new_page(browser), url, "mandala", ["Ann", "Bob"])
    game_id = links[0].split("/g/", 1)[1].split("/", 1)[0]
    tokens = [link.rsplit("/", 1)[1] for link in links]
    for _ in range(3):
        (mover,) = summary(url, game_id)["to_act"]
        play_by_api(url, game_id, tokens[mover])
    page = new_page(browser)
    page.goto(f"{url}/g/{game_id}?at=1")
    page.evaluate(f"() => {{ {MARKER} = 'still here'; }}")
    board = page.inner_html("#board")
    (mover,) = summary(url, game_id)["to_act"]
    play_by_api(url, game_id, tokens[mover])
    expect(page.locator("#status")).to_contain_text("Move 1 of 4")
    assert page.evaluate(f"() => {MARKER}") == "still here"  # updated in place
    assert page.url.endswith("?at=1")
    assert page.locator("#status .badge").all_inner_texts() == ["looking back"]
    assert page.inner_html("#board") == board
    assert page.locator("#log li").last.get_attribute("value") == "4"
