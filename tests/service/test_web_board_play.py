"""Whole games played by clicking on the board alone, in a real headless Chromium.

Against a real `referee serve` (the fixtures of test_web_browser.py). One
seat plays in Chromium at 1280 px or at 390 px, by clicks on the targets
inside the board's `<svg>` and the one Play button under it: no typing and
no move buttons. The other seats play through the API; the browser's page
must follow them live (its event stream), mark their last move, and at the
end show the score breakdown. Screenshots mid-game and at the end, at both
widths, go to the run's folder under `var/artifacts/web/` (not committed).

Each game says how its browser seat chooses among the targets (`CLICKERS`)
and how the other seats move (`OPPONENTS`); by default a seeded random
choice, so a run can be repeated.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from tests.service import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

API_KEY = {"X-API-Key": TEST_API_KEY}
MAX_TURNS = 400
MAX_CLICKS = 80


@dataclass
class Table:
    """A game under test: its id, the seats' tokens and the browser's seat."""

    url: str
    game_id: str
    tokens: list[str]
    seat: int
    choose: random.Random
    notes: dict[str, Any] = field(default_factory=dict)

    def api(self, method: str, path: str, token: str = "", **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else API_KEY
        answer = requests.request(method, self.url + path, headers=headers, timeout=30, **kwargs)
        assert answer.ok, answer.text
        return answer.json()

    def summary(self) -> Any:
        return self.api("GET", f"/v1/games/{self.game_id}")

    def view(self, seat: int) -> Any:
        return self.api("GET", f"/v1/games/{self.game_id}/state", self.tokens[seat])["state"]

    def legal(self, seat: int) -> list[str]:
        found = self.api("GET", f"/v1/games/{self.game_id}/legal-moves", self.tokens[seat])
        return [move["notation"] for move in found["moves"]]

    def move(self, seat: int, notation: str) -> Any:
        return self.api(
            "POST",
            f"/v1/games/{self.game_id}/moves?wait=10",
            self.tokens[seat],
            json={"notation": notation},
        )


# How the browser's seat picks the next target: given the table and the
# targets' steps, the step to click, or None to press Play (offered only
# once the move so far can be sent).
Clicker = Callable[[Table, list[str], bool], str | None]
# How another seat moves by API: the notation it sends now.
Opponent = Callable[[Table, int], str]


def click_at_random(table: Table, steps: list[str], sendable: bool) -> str | None:
    """Any target; Play as soon as the move can be sent."""
    if sendable or not steps:
        return None
    return table.choose.choice(steps)


def any_legal_move(table: Table, seat: int) -> str:
    return table.choose.choice(table.legal(seat))


@dataclass(frozen=True)
class Setup:
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    clicker: Clicker = click_at_random
    opponent: Opponent = any_legal_move


def mandala_near(table: Table, steps: list[str], sendable: bool) -> str | None:
    """One of the nearest pyramids ahead, so that the game lasts past the mid screenshot."""
    if sendable or not steps:
        return None
    return table.choose.choice(sorted(steps, key=int)[:6])


def mandala_near_by_api(table: Table, seat: int) -> str:
    return table.choose.choice(table.legal(seat)[:6])


SETUPS: dict[str, Setup] = {
    "subdivision": Setup(players=2),
    "mandala": Setup(players=2, clicker=mandala_near, opponent=mandala_near_by_api),
}


def _targets(page: Page) -> list[str]:
    return page.locator("#board svg [data-step]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-step'))"
    )


def _play_my_turn(page: Page, table: Table, clicker: Clicker) -> str:
    """Build a move by clicks on the board and send it; its notation."""
    send = page.locator("#build-send")
    for taken in range(1, MAX_CLICKS + 1):
        steps = _targets(page)
        sendable = send.is_enabled()
        step = clicker(table, steps, sendable)
        if step is None:
            assert sendable, f"nothing to click and nothing to send: {page.content()[:2000]}"
            notation = page.locator("#built").input_value()
            send.click()
            page.wait_for_url(lambda url: "sub=" in url)
            return notation
        target = page.locator(f'#board svg [data-step="{step}"]')
        assert target.get_attribute("role") == "button"
        assert target.get_attribute("tabindex") == "0"
        assert target.get_attribute("aria-label")
        target.click()
        # The board is drawn again with the step taken: Undo is offered.
        expect(page.locator(f'#builder[data-taken="{taken}"]')).to_be_attached()
        expect(page.locator("#build-undo")).to_be_enabled()
    raise AssertionError(f"no move was made in {MAX_CLICKS} clicks")


def _wait_for_my_turn_or_end(page: Page) -> bool:
    """True when the page offers this seat a move, False when the game is over."""
    expect(page.locator("#builder:not([hidden]), #breakdown").first).to_be_visible(timeout=20_000)
    return page.locator("#builder:not([hidden])").count() > 0


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("game", sorted(SETUPS))
def test_a_whole_game_by_clicks_on_the_board(
    web_service: Service, browser: Browser, artifacts: Path, game: str, width: int
) -> None:
    setup = SETUPS[game]
    names = ["Ann", "Bob", "Cy", "Di"][: setup.players]
    created = requests.post(
        web_service.url + "/v1/games",
        headers=API_KEY,
        json={"game": game, "players": [{"name": n} for n in names], "options": setup.options},
        timeout=30,
    )
    assert created.ok, created.text
    body = created.json()
    table = Table(
        url=web_service.url,
        game_id=body["id"],
        tokens=[seat["token"] for seat in body["seats"]],
        seat=0,
        choose=random.Random(f"{game}-{width}"),
    )
    page = pages.new_page(browser, phone=width == 390)
    pages.open_from_mail(page, f"{web_service.url}/g/{table.game_id}/seat/{table.tokens[0]}")
    mine = 0
    for _ in range(MAX_TURNS):
        summary = table.summary()
        if summary["status"] == "over":
            break
        others = [seat for seat in summary["to_act"] if seat != table.seat]
        if table.seat not in summary["to_act"]:
            for seat in others:
                table.move(seat, setup.opponent(table, seat))
            continue
        assert _wait_for_my_turn_or_end(page)
        if mine == 0 and summary["version"] > 0:
            # The other seats' last move came live, and is marked on the board.
            assert page.locator("#board svg .last").count() > 0
        _play_my_turn(page, table, setup.clicker)
        mine += 1
        if mine == 3:
            page.screenshot(path=artifacts / f"clicks-{game}-{width}-mid.png", full_page=True)
        for seat in others:
            table.move(seat, setup.opponent(table, seat))
    else:
        pytest.fail(f"{game} did not end in {MAX_TURNS} turns")
    assert mine > 0
    assert not _wait_for_my_turn_or_end(page)
    expect(page.locator("#breakdown")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=artifacts / f"clicks-{game}-{width}-end.png", full_page=True)
    page.context.close()
