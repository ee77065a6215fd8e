"""Table talk on the game page, in a real headless Chromium and `referee serve`: two seats
write to each other live, one at 1280 px and one at 390 px, while a spectator's page
shows none of it.

Each page's messages arrive through the page's own stream (a marker set in each window
survives: no navigation, no reload); a message half typed survives a move that updates
the page; what a player writes shows as text, never as markup or a link; the newest
message is in view; the phone's page never scrolls sideways. Screenshots at 1280 and
390 px go to the run's folder under `var/artifacts/web/`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import requests
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.live.test_web_browser import (  # noqa: F401 (fixtures, used by name)
    artifacts,
    browser,
    mandala_in_lobby,
    new_page,
    open_from_mail,
    playwright,
    web_service,
)
from tests.live.test_web_live import newest_in_sight, play_by_api, summary
from tests.stacks import TEST_API_KEY, Service

MARKER = "window.talkPageMarker"
HOSTILE = '<b>bold</b> <img src=x onerror="window.pwned=1"> https://evil.test www.evil.test'


def shot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=folder / name, full_page=True)


def serious_violations(page: Page) -> list[tuple[str, Any]]:
    """What axe-core finds serious or critical on the page as it is."""
    results = Axe().run(page)
    return [
        (violation["id"], [node["target"] for node in violation["nodes"]][:3])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


def messages(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("#talk-list p.said").all_inner_texts()]


def newest_message_in_sight(page: Page) -> bool:
    return newest_in_sight(page, "talk-scroll", "#talk-list li")


def say(page: Page, words: str, *, keys: bool = False) -> None:
    page.fill("#talk-text", words)
    if keys:
        page.press("#talk-text", "Control+Enter")
    else:
        page.click("#talk-send")
    expect(page.locator("#talk-text")).to_have_value("")


def test_two_seats_talk_live_beside_the_board(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    links, game_id, tokens = mandala_in_lobby(browser, url)
    ann, bob, spectator = new_page(browser), new_page(browser, phone=True), new_page(browser)
    open_from_mail(ann, links[0])
    open_from_mail(bob, links[1])
    spectator.goto(f"{url}/g/{game_id}")
    for page in (ann, bob, spectator):
        page.evaluate(f"() => {{ {MARKER} = 'still here'; }}")
    assert spectator.locator("#talk").count() == 0
    expect(ann.locator("#talk-empty")).to_be_visible()

    say(ann, "Good luck, Bob!")
    expect(bob.locator("#talk-list li")).to_have_count(1)
    assert messages(bob) == ["Good luck, Bob!"]
    say(bob, "Thanks Ann.\nYou too.", keys=True)
    expect(ann.locator("#talk-list li")).to_have_count(2)
    assert messages(ann) == ["Good luck, Bob!", "Thanks Ann.\nYou too."]
    assert ann.locator("#talk-list li").nth(1).locator(".who").inner_text() == "Bob"

    # What a player writes is text: no element, no link, nothing run.
    say(ann, HOSTILE)
    expect(bob.locator("#talk-list li")).to_have_count(3)
    assert messages(bob)[-1] == HOSTILE
    for page in (ann, bob):
        assert page.locator("#talk-list b, #talk-list img, #talk-list a").count() == 0
        assert page.evaluate("() => window.pwned") is None

    # A move updates the pages in place; Bob's draft and the talk stay as they were.
    bob.fill("#talk-text", "half a thought")
    (mover,) = summary(url, game_id)["to_act"]
    play_by_api(url, game_id, tokens[mover])
    version = summary(url, game_id)["version"]
    for page in (ann, bob, spectator):
        expect(page.locator("#game")).to_have_attribute("data-version", str(version))
        assert page.evaluate(f"() => {MARKER}") == "still here"
    expect(bob.locator("#talk-text")).to_have_value("half a thought")
    assert len(messages(bob)) == 3

    # Many messages later the newest is in view on both pages, and the phone never
    # scrolls sideways.
    for n in range(14):
        requests.post(
            f"{url}/v1/games/{game_id}/messages",
            json={"text": f"move {n}: " + "a rather long word " * (n % 3 + 1)},
            headers={"Authorization": f"Bearer {tokens[n % 2]}"},
            timeout=10,
        ).raise_for_status()
    say(bob, "the newest one, " + "unbroken" * 12)
    for page in (ann, bob):
        expect(page.locator("#talk-list li")).to_have_count(18)
        assert newest_message_in_sight(page)
    assert bob.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert spectator.locator("#talk").count() == 0
    assert "Good luck" not in spectator.content() and "newest one" not in spectator.content()

    assert serious_violations(ann) == [] and serious_violations(bob) == []
    shot(ann, artifacts, "talk-seat-1280.png")
    shot(bob, artifacts, "talk-seat-390.png")
    shot(spectator, artifacts, "talk-spectator-1280.png")
    bob.locator("#talk").screenshot(path=artifacts / "talk-box-390.png")
    # The note is the seat's alone, and survives a reload.
    ann.click("#note summary")
    ann.fill("#note-text", "Bob keeps blue stones")
    ann.click("#note-save")
    expect(ann.locator("#note-text")).to_have_value("Bob keeps blue stones")
    bob.reload()
    expect(bob.locator("#note-text")).to_have_value("")
    shot(ann, artifacts, "talk-note-1280.png")

    # Once the game is over its seats still talk live; the spectator's page stops following.
    # (The note's form and the reload were navigations: the marker is set again.)
    for page in (ann, bob):
        page.evaluate(f"() => {{ {MARKER} = 'still here'; }}")
    requests.post(
        f"{url}/v1/games/{game_id}/resign?wait=10",
        headers={"Authorization": f"Bearer {tokens[1]}"},
        timeout=30,
    ).raise_for_status()
    for page in (ann, bob, spectator):
        page.wait_for_function("() => document.getElementById('game').dataset.watch === 'no'")
        assert "finished" in page.inner_text("#status")
    say(bob, "well played, Ann")
    expect(ann.locator("#talk-list li")).to_have_count(19)
    assert messages(ann)[-1] == "well played, Ann"
    assert ann.evaluate(f"() => {MARKER}") == "still here"
    assert "well played" not in spectator.content()
    shot(ann, artifacts, "talk-over-1280.png")


def test_a_message_whose_read_failed_is_read_again(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
) -> None:
    url = web_service.url
    links, game_id, tokens = mandala_in_lobby(browser, url)
    ann = new_page(browser)
    open_from_mail(ann, links[0])
    failed: list[str] = []

    def fail_the_first(route: Any) -> None:
        if failed:
            route.continue_()
        else:
            failed.append(route.request.url)
            route.fulfill(status=503, body="busy")

    ann.route("**/messages?after=*", fail_the_first)
    requests.post(
        f"{url}/v1/games/{game_id}/messages",
        json={"text": "Are you there?"},
        headers={"Authorization": f"Bearer {tokens[1]}"},
        timeout=10,
    ).raise_for_status()
    # The stream told of it once; the read it made failed, and the page read again.
    expect(ann.locator("#talk-list li")).to_have_count(1, timeout=15_000)
    assert messages(ann) == ["Are you there?"] and len(failed) == 1


def test_my_games_mark_the_games_with_messages_unread(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    address = f"ann-{uuid.uuid4().hex[:8]}@example.org"
    made = requests.post(
        f"{url}/v1/games",
        json={
            "game": "subdivision",
            "players": [{"name": "Ann", "email": address}, {"name": "Bob"}],
        },
        headers={"X-API-Key": TEST_API_KEY},
        timeout=10,
    ).json()
    bob = made["seats"][1]["token"]
    for words in ("your move, Ann", "still there?"):
        requests.post(
            f"{url}/v1/games/{made['id']}/messages",
            json={"text": words},
            headers={"Authorization": f"Bearer {bob}"},
            timeout=10,
        ).raise_for_status()
    local = Referee(Settings(database_url=web_service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(local, address)
    finally:
        local.close()
    for phone in (False, True):
        page = new_page(browser, phone=phone)
        page.context.add_cookies([{"name": "player", "value": cookie, "url": url}])
        page.goto(f"{url}/me")
        row = page.locator(f"li[data-game='{made['id']}']")
        expect(row.locator(".badge.unread")).to_have_text("2 new messages")
        assert serious_violations(page) == []
        shot(page, artifacts, f"talk-me-{390 if phone else 1280}.png")
