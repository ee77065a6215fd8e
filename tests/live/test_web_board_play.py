"""Whole games played by clicking on the board alone, in a real headless Chromium.

Against a real `referee serve` (the fixtures of test_web_browser.py). One
seat plays in Chromium at 1280 px, by clicks on the targets inside the
board's `<svg>` and the one Play button under it: no typing and no move
buttons; at 390 px it plays its first turns so, then by the API, and at
each step of those turns (390 x 844, the page unscrolled) every target of
the board lies above the move box, and Play inside it, on the first screen
(at 1280 px the move box, stuck to the window's bottom, is always in
sight). The
other seats play through the API; the browser's page must follow them
live (its event stream), mark their last move, and at the end show the
score breakdown. Every label on the board reads at 11 CSS px or more and
no page scrolls sideways, at both widths. Screenshots mid-game
and at the end go to the run's folder under `var/artifacts/web/` (not
committed).

Each game's `Setup` says how its browser seat chooses among the targets
(`clicker`) and how the other seats move (`opponent`); by default a seeded
random choice, so a run can be repeated.
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
from playwright.sync_api import Error as PlaywrightError

from referee.games.maniki import apply_orders, possible_orders, shortest_solution, shown_name
from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

pytestmark = pytest.mark.long

web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

API_KEY = {"X-API-Key": TEST_API_KEY}
MAX_TURNS = 400
MAX_CLICKS = 80
# The browser's seat's turns played by clicks at phone width; the rest go by the API.
PHONE_CLICKED_TURNS = 4


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

    def last_notation(self) -> str:
        version = self.summary()["version"]
        moves = self.api("GET", f"/v1/games/{self.game_id}/moves?after={version - 1}")["moves"]
        return str(moves[-1]["notation"])

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


def ice_palace_clicks(table: Table, steps: list[str], sendable: bool) -> str | None:
    """Place rather than pass (sometimes pass); build the first palace pyramid by
    pyramid, and let the referee build the later ones (one click)."""
    if sendable or not steps:
        return None
    if "auto" in steps:
        table.notes["builds"] = table.notes.get("builds", 0) + 1
        if table.notes["builds"] > 1:
            return "auto"
        steps = [step for step in steps if step != "auto"]
    placing = [step for step in steps if step != "pass"]
    if not placing or ("pass" in steps and table.choose.random() < 0.15):
        return "pass"
    return table.choose.choice(placing)


@dataclass(frozen=True)
class Setup:
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    clicker: Clicker = click_at_random
    opponent: Opponent = any_legal_move


def click_a_shortest_solution(table: Table, steps: list[str], sendable: bool) -> str | None:
    """MaNiKi: the orders of a shortest sequence to the card, one by one, then Play;
    on its second card the browser's seat clicks Pass instead."""
    if not sendable:
        # A new answer: the page offers the first orders and Pass.
        table.notes["answers"] = answers = table.notes.get("answers", 0) + 1
        view = table.view(table.seat)
        # Each sequence sent before (all but the pass) won its card: the move
        # played is the one clicked, also where the orders go by other names.
        sequences_sent = answers - 1 if answers <= 2 else answers - 2
        assert view["cards_won"][table.seat] == sequences_sent
        solution = shortest_solution(view["position"], view["target"], expert=view["expert"])
        table.notes["plan"] = ["pass"] if answers == 2 else list(solution)
    plan: list[str] = table.notes["plan"]
    if not plan:
        return None
    assert plan[0] in steps, (plan, steps)
    return plan.pop(0)


def answer_the_card(table: Table, seat: int) -> str:
    """MaNiKi by API: seat 1 answers right; seat 2 passes once, misses once, then answers right."""
    view = table.view(seat)
    position, target, expert = view["position"], view["target"], view["expert"]
    table.notes[f"turns of {seat}"] = turn = table.notes.get(f"turns of {seat}", 0) + 1
    if seat == 2 and turn == 1:
        return "pass"
    if seat == 2 and turn == 2:
        possible = possible_orders(position, expert=expert)
        orders: tuple[str, ...] = (
            next(o for o in possible if apply_orders(position, (o,)) != target),
        )
    else:
        orders = shortest_solution(position, target, expert=expert)
    # Written as the players of this game write the orders.
    return " ".join(shown_name(order, view["names"]) for order in orders)


def mandala_near(table: Table, steps: list[str], sendable: bool) -> str | None:
    """One of the nearest pyramids ahead, so that the game lasts past the mid screenshot."""
    if sendable or not steps:
        return None
    return table.choose.choice(sorted(steps, key=int)[:6])


def mandala_near_by_api(table: Table, seat: int) -> str:
    return table.choose.choice(table.legal(seat)[:6])


SETUPS: dict[str, Setup] = {
    "subdivision": Setup(players=2),
    # A small mandala whose hands space is soon covered: a short game to its end.
    "mandala_stones": Setup(
        players=2,
        options={"mandala_board": {"spaces": 20, "bonuses": {"5": 1, "10": 2}, "hands": {"2": 8}}},
    ),
    # The race: the browser's seat and seat 1 win a card each turn, so the 24
    # cards go in about ten turns of the browser's seat. With the Crazy Circus
    # names (the swap is SO, the blue climb NI) and in expert mode (no swap).
    "maniki": Setup(
        players=3,
        options={"names": "crazy_circus", "expert": True},
        clicker=click_a_shortest_solution,
        opponent=answer_the_card,
    ),
    "ice_palace": Setup(players=3, clicker=ice_palace_clicks),
    "mandala": Setup(players=2, clicker=mandala_near, opponent=mandala_near_by_api),
}


def _targets(page: Page) -> list[str]:
    return page.locator("#board svg [data-step]").evaluate_all(
        "els => els.map(e => e.getAttribute('data-step'))"
    )


# Where the board's targets and the move box sit on the screen, the page unscrolled.
ON_SCREEN = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  return {
    scrolled: window.scrollY,
    height: window.innerHeight,
    targets: Array.from(document.querySelectorAll('#board svg [data-step]')).map(box),
    builder: box(document.getElementById('builder')),
    play: box(document.getElementById('build-send')),
  };
}"""


def _on_the_first_screen(page: Page) -> None:
    """Every target of the board and Play lie on the first screen, no scrolling: the
    targets above the move box (which sticks to the window's bottom), Play inside it."""
    seen = page.evaluate(ON_SCREEN)
    assert seen["scrolled"] == 0, seen
    top, bottom = seen["builder"]
    assert top >= 0 and bottom <= seen["height"], seen
    assert top <= seen["play"][0] and seen["play"][1] <= bottom, seen
    assert seen["targets"], seen
    for target in seen["targets"]:
        assert target[0] >= 0 and target[1] <= top, (target, seen)


def _play_in_sight(page: Page) -> None:
    """Wherever the page is scrolled, the move box and its Play are in the window."""
    seen = page.evaluate(ON_SCREEN)
    top, bottom = seen["builder"]
    assert top >= 0 and bottom <= seen["height"], seen


def _play_my_turn(page: Page, table: Table, clicker: Clicker, phone: bool = False) -> str:
    """Build a move by clicks on the board and send it; its notation. On a phone, the
    targets of each step and Play must be on the first screen."""
    send = page.locator("#build-send")
    for taken in range(1, MAX_CLICKS + 1):
        steps = _targets(page)
        if phone and steps:
            _on_the_first_screen(page)
        elif steps:
            _play_in_sight(page)
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


# The smallest text of the board as shown, in CSS px: its font size times the
# picture's scale on the screen.
SMALLEST_TEXT = """() => Math.min(...Array.from(document.querySelectorAll('#board svg text'))
  .filter(t => t.textContent.trim())
  .map(t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a))"""


def _legible(page: Page, width: int) -> None:
    """Every label of the board reads at 11 CSS px or more, and nothing scrolls sideways."""
    assert page.evaluate(SMALLEST_TEXT) >= 10.95
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# Each entry of the move list: its number, and how its text is laid out (a block starts
# on the number's line, however many lines it wraps onto).
LOG_ENTRIES = """() => Array.from(document.querySelectorAll('#log li')).map(li =>
  [li.value, getComputedStyle(li.querySelector('a')).display])"""


def _one_entry_a_move(page: Page, version: int) -> None:
    """The move list gives each move one numbered entry, however long its notation (an Ice
    Palace build wraps inside its entry, its number on the first line)."""
    entries = page.evaluate(LOG_ENTRIES)
    numbers = [number for number, _ in entries]
    assert numbers == list(range(numbers[0], version + 1)), numbers
    assert {display for _, display in entries} == {"block"}


def _wait_for_my_turn_or_end(page: Page) -> bool:
    """True when the page offers this seat a move, False when the game is over."""
    expect(page.locator("#builder:not([hidden]), #breakdown").first).to_be_visible(timeout=20_000)
    return page.locator("#builder:not([hidden])").count() > 0


def _others_move(table: Table, setup: Setup, others: list[int]) -> None:
    """The other seats move by API, each that is still to act when its turn comes
    (in MaNiKi a move before it may have decided the card, or ended the game)."""
    for seat in others:
        if seat in table.summary()["to_act"]:
            table.move(seat, setup.opponent(table, seat))


@pytest.mark.parametrize("game", sorted(SETUPS))
def test_a_whole_game_by_clicks_on_the_board(
    web_service: Service, browser: Browser, artifacts: Path, game: str
) -> None:
    _play(web_service, browser, artifacts, game, 1280, clicked_turns=MAX_TURNS)


@pytest.mark.parametrize("game", sorted(SETUPS))
def test_a_game_on_a_phone_by_clicks_and_followed_to_its_end(
    web_service: Service, browser: Browser, artifacts: Path, game: str
) -> None:
    """At 390 px the browser's seat plays its first turns by clicks, then by
    the API (the whole game by clicks is the test above, at 1280 px): the page
    follows every move to the end and its breakdown."""
    _play(web_service, browser, artifacts, game, 390, clicked_turns=PHONE_CLICKED_TURNS)


def _play(
    web_service: Service,
    browser: Browser,
    artifacts: Path,
    game: str,
    width: int,
    clicked_turns: int,
) -> None:
    setup = SETUPS[game]
    names = ["Ann", "Bob", "Cy", "Di"][: setup.players]
    created = requests.post(
        web_service.url + "/v1/games",
        headers=API_KEY,
        json={
            "game": game,
            "players": [{"name": n} for n in names],
            "options": setup.options,
            # On a phone the deadline's line is on the first screen too.
            **({"deadline": "72h"} if width == 390 else {}),
        },
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
            _others_move(table, setup, others)
            continue
        # Where the browser's seat is still to act after its own move (MaNiKi's
        # next card), the page must first catch up with the other seats' moves.
        expect(page.locator(f'#game[data-version="{summary["version"]}"]')).to_be_attached()
        if mine == clicked_turns:
            table.move(table.seat, setup.opponent(table, table.seat))
            _others_move(table, setup, others)
            continue
        assert _wait_for_my_turn_or_end(page)
        if mine == 0 and summary["version"] > 0 and table.last_notation() != "pass":
            # The other seats' last move came live, and is marked on the board
            # (an Ice Palace pass changes nothing there to mark).
            assert page.locator("#board svg .last").count() > 0
        if mine == 0:
            # The first screen, the page unscrolled: the status, the board and its move box.
            page.screenshot(path=artifacts / f"clicks-{game}-{width}-first-screen.png")
        _play_my_turn(page, table, setup.clicker, phone=width == 390)
        mine += 1
        if mine == 3:
            _legible(page, width)
            page.screenshot(path=artifacts / f"clicks-{game}-{width}-mid.png", full_page=True)
        _others_move(table, setup, others)
    else:
        pytest.fail(f"{game} did not end in {MAX_TURNS} turns")
    assert mine > 0
    # The page has followed the game to its last move (sent by the API at 390 px).
    final = table.summary()["version"]
    expect(page.locator(f'#game[data-version="{final}"]')).to_be_attached()
    assert not _wait_for_my_turn_or_end(page)
    expect(page.locator("#breakdown")).to_be_visible()
    _legible(page, width)
    _one_entry_a_move(page, final)
    _screenshot_of_log(page, artifacts / f"log-{game}-{width}.png")
    page.screenshot(path=artifacts / f"clicks-{game}-{width}-end.png", full_page=True)
    page.context.close()


def _screenshot_of_log(page: Page, path: Path) -> None:
    """The move list's picture. A late piece of news (the end's) may draw the page anew
    while the picture waits for the list to stand still: then the new list's."""
    for attempt in range(3):
        try:
            page.locator("#log-scroll").screenshot(path=path)
            return
        except PlaywrightError:
            if attempt == 2:
                raise
