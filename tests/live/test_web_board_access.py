"""The board's controls for keyboards, screen readers and slow phones, in a real Chromium.

Against a real `referee serve` (the fixtures of test_web_browser.py):

- axe-core (the engine of Lighthouse's accessibility audit) finds no serious
  or critical violation on a seat's game page of each game, targets included:
  names, roles, focus order, contrast;
- a Subdivision move is built and sent with the keyboard alone (Tab to the
  board, Enter on targets and on Play);
- the arrow keys step through the history, and the badge says so;
- the game page, its script and its styles together weigh under 150 KB.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import requests
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from referee import games
from referee.games.maniki import shortest_solution
from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

API_KEY = {"X-API-Key": TEST_API_KEY}
PAGE_WEIGHT = 150_000
PLAYERS = {"subdivision": 2, "mandala": 2, "ice_palace": 3, "maniki": 2, "mandala_stones": 2}


def _api(service: Service, method: str, path: str, token: str = "", **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else API_KEY
    answer = requests.request(method, service.url + path, headers=headers, timeout=30, **kwargs)
    assert answer.ok, answer.text
    return answer.json()


def _new_game(service: Service, game: str) -> tuple[str, list[str]]:
    names = ["Ann", "Bob", "Cy"][: PLAYERS[game]]
    created = _api(
        service, "POST", "/v1/games", json={"game": game, "players": [{"name": n} for n in names]}
    )
    return created["id"], [seat["token"] for seat in created["seats"]]


def _play_randomly(service: Service, game_id: str, tokens: list[str], moves: int) -> None:
    chooser = random.Random(game_id)
    for _ in range(moves):
        summary = _api(service, "GET", f"/v1/games/{game_id}")
        seat = summary["to_act"][0]
        legal = _api(service, "GET", f"/v1/games/{game_id}/legal-moves", tokens[seat])["moves"]
        # Among the first few: Mandala's short steps, so that the game lasts.
        notation = chooser.choice([m["notation"] for m in legal][:3])
        _api(
            service,
            "POST",
            f"/v1/games/{game_id}/moves?wait=10",
            tokens[seat],
            json={"notation": notation},
        )


def _seat_page(
    service: Service, browser: Browser, game_id: str, token: str, phone: bool = False
) -> Page:
    page = pages.new_page(browser, phone=phone)
    pages.open_from_mail(page, f"{service.url}/g/{game_id}/seat/{token}")
    return page


@pytest.mark.parametrize("game", games.names())
def test_no_serious_accessibility_violation_on_a_seats_page(
    web_service: Service, browser: Browser, game: str
) -> None:
    game_id, tokens = _new_game(web_service, game)
    acting = _api(web_service, "GET", f"/v1/games/{game_id}")["to_act"][0]
    page = _seat_page(web_service, browser, game_id, tokens[acting])
    expect(page.locator("#builder")).to_be_visible()
    results = Axe().run(page)
    serious = [
        (violation["id"], [node["target"] for node in violation["nodes"]][:3])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]
    assert serious == []
    page.context.close()


def test_a_move_is_built_and_sent_with_the_keyboard_alone(
    web_service: Service, browser: Browser
) -> None:
    game_id, tokens = _new_game(web_service, "subdivision")
    page = _seat_page(web_service, browser, game_id, tokens[0])
    expect(page.locator("#builder")).to_be_visible()
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.hasAttribute('data-step')"):
            break
    else:
        pytest.fail("Tab never reached a target on the board")
    taken = 0
    while not page.locator("#build-send").is_enabled():
        page.keyboard.press("Enter")
        taken += 1
        expect(page.locator(f'#builder[data-taken="{taken}"]')).to_be_attached()
    # With the move whole, the focus is on Play.
    expect(page.locator("#build-send")).to_be_focused()
    notation = page.locator("#built").input_value()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*\?sub=[0-9a-f]+$"))
    expect(page.locator("#answer")).to_contain_text(f"Your move {notation} was accepted")
    page.context.close()


def test_the_arrow_keys_step_through_the_history(web_service: Service, browser: Browser) -> None:
    game_id, tokens = _new_game(web_service, "subdivision")
    _play_randomly(web_service, game_id, tokens, 3)
    page = pages.new_page(browser)
    page.goto(f"{web_service.url}/g/{game_id}")
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(r".*\?at=2$"))
    expect(page.locator("#status .badge")).to_have_text("looking back")
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(r".*\?at=1$"))
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(r".*\?at=2$"))
    expect(page.locator("#where")).to_have_text("After move 2 of 3")
    page.context.close()


@pytest.mark.parametrize("game", games.names())
def test_the_game_page_with_its_script_and_styles_weighs_under_150_kb(
    web_service: Service, game: str
) -> None:
    """The bytes a seat's browser fetches for its page mid-game: the page (the board,
    its targets and the move list inline), then its scripts (the game's, and the one
    that tells the browser's zone) and its styles."""
    game_id, tokens = _new_game(web_service, game)
    _play_randomly(web_service, game_id, tokens, 6)
    acting = _api(web_service, "GET", f"/v1/games/{game_id}")["to_act"][0]
    browser_like = requests.Session()
    browser_like.get(f"{web_service.url}/g/{game_id}/seat/{tokens[acting]}", timeout=30)
    page = browser_like.get(f"{web_service.url}/g/{game_id}", timeout=30)
    assert 'id="builder"' in page.text and "data-step=" in page.text
    assets = re.findall(r'<(?:script src|link rel="stylesheet" href)="([^"]+)"', page.text)
    assert sorted(assets) == ["/assets/game.js", "/assets/web.css", "/assets/zone.js"]
    weights = {"page": len(page.content)}
    for asset in assets:
        weights[asset] = len(browser_like.get(web_service.url + asset, timeout=30).content)
    assert sum(weights.values()) < PAGE_WEIGHT, weights


def test_a_half_built_move_is_dropped_when_the_game_moves_on(
    web_service: Service, browser: Browser
) -> None:
    """A MaNiKi sequence half built when another seat wins the card is not carried over."""
    game_id, tokens = _new_game(web_service, "maniki")
    page = _seat_page(web_service, browser, game_id, tokens[0])
    expect(page.locator("#builder")).to_be_visible()
    page.locator("#board svg [data-step]:not([data-step=pass])").first.click()
    expect(page.locator('#builder[data-taken="1"]')).to_be_attached()
    view = _api(web_service, "GET", f"/v1/games/{game_id}/state", tokens[1])["state"]
    orders = " ".join(shortest_solution(view["position"], view["target"]))
    _api(
        web_service,
        "POST",
        f"/v1/games/{game_id}/moves?wait=10",
        tokens[1],
        json={"notation": orders},
    )
    expect(page.locator("#build-prompt")).to_have_text("The game moved on: start your move again.")
    expect(page.locator("#build-send")).to_be_disabled()
    assert page.locator("#built").input_value() == ""
    # Seat 1's answer to the same card before it is decided leaves a half-built move alone.
    page.locator("#board svg [data-step]:not([data-step=pass])").first.click()
    expect(page.locator('#builder[data-taken="1"]')).to_be_attached()
    _api(
        web_service,
        "POST",
        f"/v1/games/{game_id}/moves?wait=10",
        tokens[1],
        json={"notation": "pass"},
    )
    expect(page.locator("#game")).to_have_attribute("data-version", "2")
    expect(page.locator("#build-send")).to_be_enabled()
    page.context.close()
