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
from playwright.sync_api import Browser, Page, Request, expect

from tests.live.test_web_browser import (  # noqa: F401 (fixtures, used by name)
    artifacts,
    browser,
    mandala_in_lobby,
    new_page,
    open_from_mail,
    playwright,
    web_service,
)
from tests.stacks import TEST_API_KEY, Service

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


def newest_in_sight(page: Page, box: str, entries: str) -> bool:
    """Whether the last of `entries` (a selector) lies inside the scrolled box of id `box`."""
    return bool(
        page.evaluate(
            """([boxId, entries]) => {
              const box = document.getElementById(boxId).getBoundingClientRect();
              const items = document.querySelectorAll(entries);
              const last = items[items.length - 1].getBoundingClientRect();
              return last.top >= box.top - 1 && last.bottom <= box.bottom + 1;
            }""",
            [box, entries],
        )
    )


def newest_move_in_sight(page: Page) -> bool:
    """Whether the last entry of the move list lies inside its scrolled box."""
    return newest_in_sight(page, "log-scroll", "#log li")


def test_a_seat_page_follows_the_game_live(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    links, game_id, tokens = mandala_in_lobby(browser, url)
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
    _links, game_id, tokens = mandala_in_lobby(browser, url)
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


def _game_by_api(url: str, game: str) -> tuple[str, list[str]]:
    created = requests.post(
        f"{url}/v1/games",
        headers={"X-API-Key": TEST_API_KEY},
        json={"game": game, "players": [{"name": "Ann"}, {"name": "Bob"}]},
        timeout=30,
    )
    assert created.ok, created.text
    body = created.json()
    return body["id"], [seat["token"] for seat in body["seats"]]


def test_a_typed_move_that_cannot_be_read_and_an_old_answer(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    """A move typed that cannot be read comes back in its open field, quoted, by a
    redirect (a reload sends nothing); the answer to a move goes with the next move."""
    url = web_service.url
    game_id, tokens = _game_by_api(url, "subdivision")
    (mover,) = summary(url, game_id)["to_act"]
    pages = [new_page(browser), new_page(browser, phone=True)]
    for page, width in zip(pages, (1280, 390), strict=True):
        open_from_mail(page, f"{url}/g/{game_id}/seat/{tokens[mover]}")
        posted: list[str] = []

        def record(sent: Request, posted: list[str] = posted) -> None:
            posted.append(sent.method)

        page.on("request", record)
        # With the script, the move as text is folded under the board's builder.
        page.click("details.as-text summary")
        page.fill("#notation", "zzz top left")
        page.click("form.typed button[type=submit]")
        page.wait_for_url(f"{url}/g/{game_id}#your-move")
        alert = page.locator("#your-move #message")
        expect(alert).to_contain_text("Your move “zzz top left” was not played:")
        assert page.locator("details.as-text").evaluate("details => details.open")
        assert page.input_value("#notation") == "zzz top left"
        assert page.locator("#notation").evaluate("field => document.activeElement === field")
        page.screenshot(path=artifacts / f"typed-refused-{width}.png")
        assert posted.count("POST") == 1
        page.reload()
        assert posted.count("POST") == 1  # the reload sent nothing again
        assert page.locator("#message").count() == 0
        assert summary(url, game_id)["version"] == 0

    # Played by typing: its answer shows until the next move, then goes, live.
    desk = pages[0]
    legal = requests.get(
        f"{url}/v1/games/{game_id}/legal-moves", headers=bearer(tokens[mover]), timeout=10
    ).json()["moves"]
    desk.click("details.as-text summary")
    desk.fill("#notation", legal[0]["notation"])
    desk.click("form.typed button[type=submit]")
    desk.wait_for_url(lambda address: "sub=" in address)
    expect(desk.locator("#answer")).to_contain_text("was accepted as move 1")
    desk.evaluate(f"() => {{ {MARKER} = 'still here'; }}")
    play_by_api(url, game_id, tokens[1 - mover])
    expect(desk.locator("#game")).to_have_attribute("data-version", "2")
    assert desk.evaluate(f"() => {MARKER}") == "still here"
    assert desk.locator("#answer").count() == 0
    assert "sub=" not in desk.url
    desk.reload()
    assert desk.locator("#answer").count() == 0


def test_a_finished_games_rematch_follows_who_accepts_and_opens_the_new_game(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    """Bob accepts on his phone; Ann's page shows it as he does (her seat's stream);
    Ann accepts and goes to the new game, and Bob's page, waiting, opens his seat there."""
    url = web_service.url
    game_id, tokens = _game_by_api(url, "mandala")
    resigned = requests.post(
        f"{url}/v1/games/{game_id}/resign?wait=10", headers=bearer(tokens[1]), timeout=30
    )
    assert resigned.json()["submission"]["status"] == "accepted", resigned.text
    ann, bob = new_page(browser), new_page(browser, phone=True)
    for page, seat in ((ann, 0), (bob, 1)):
        open_from_mail(page, f"{url}/g/{game_id}/seat/{tokens[seat]}")
        expect(page.locator("#rematch-accept")).to_be_visible()
    ann.evaluate(f"() => {{ {MARKER} = 'still here'; }}")

    bob.click("#rematch-accept")
    expect(bob.locator("#rematch-mine")).to_be_visible()
    expect(ann.locator("#rematch")).to_contain_text("Accepted: Bob")
    assert ann.evaluate(f"() => {MARKER}") == "still here"  # told by the stream, in place
    expect(ann.locator("#rematch")).to_contain_text("Waiting for: Ann")
    ann.locator("#rematch").screenshot(path=artifacts / "rematch-live-1280.png")
    bob.screenshot(path=artifacts / "rematch-waiting-390.png", full_page=True)

    ann.click("#rematch-accept")
    ann.wait_for_url(lambda address: game_id not in address)
    rematch_id = ann.url.rsplit("/", 1)[1]
    bob.wait_for_url(f"{url}/g/{rematch_id}")
    for page, name, width in ((ann, "Ann", 1280), (bob, "Bob", 390)):
        expect(page.locator("#status")).to_contain_text(f"You are {name}.")
        page.screenshot(path=artifacts / f"rematch-opened-{width}.png")
