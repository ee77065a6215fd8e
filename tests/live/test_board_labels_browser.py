"""Every label of every board fits its box, in a real Chromium at 1280 and 390 px.

Against a real `referee serve` (the fixtures of test_web_browser.py). A game of
each kind at its most players, with bots and names of ordinary length, is
played a few random moves in; then a spectator's page and the acting seat's
page (and its board once a first step of a move is taken: the preview, with
its size or colour buttons) are measured in the browser, with whatever font
it draws them in. No text of the board may reach out of the rectangle it is
written in (the smallest one drawn before it around its anchor: a player's
card, a button, a band) nor out of the picture; and none may be cut with an
ellipsis: a bot's seat says so (`Bot 2 (random)`) and a name is whole.
Screenshots go to the run's folder under `var/artifacts/web/`.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from referee import games
from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

API_KEY = {"X-API-Key": TEST_API_KEY}
# Persons and bots by turns: names as people give them, the longest 11 letters.
SEATS: list[dict[str, Any]] = [
    {"name": "Maximiliane"},
    {"name": "Bot 2", "bot": "random"},
    {"name": "Anna-Lena"},
    {"name": "Gus", "bot": "random"},
    {"name": "Zoé Łukasz"},
    {"name": "Bot 6", "bot": "random"},
]
MOVES = 5

# Each text of the board that spills out of its box or the picture, or is cut.
SPILLS = """svg => {
  const view = svg.viewBox.baseVal;
  // Boxes: every rectangle (a card, a band, a button's ring, a mark's halo).
  const boxes = Array.from(svg.querySelectorAll('rect'));
  const found = [];
  for (const text of svg.querySelectorAll('text')) {
    if (!text.textContent.trim()) continue;
    const box = text.getBBox();
    const x = parseFloat(text.getAttribute('x')), y = parseFloat(text.getAttribute('y'));
    let around = {x: view.x, y: view.y, w: view.width, h: view.height};
    for (const r of boxes) {
      if (!(r.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
      const [rx, ry] = [r.x.baseVal.value, r.y.baseVal.value];
      const [rw, rh] = [r.width.baseVal.value, r.height.baseVal.value];
      if (x >= rx && x <= rx + rw && y >= ry && y <= ry + rh && rw * rh < around.w * around.h) {
        around = {x: rx, y: ry, w: rw, h: rh};
      }
    }
    const spills = box.x < around.x - 0.5 || box.y < around.y - 0.5
      || box.x + box.width > around.x + around.w + 0.5
      || box.y + box.height > around.y + around.h + 0.5;
    if (spills || text.textContent.includes('\\u2026')) {
      found.push({text: text.textContent, spills,
                  text_box: [box.x, box.y, box.width, box.height].map(Math.round),
                  its_box: [around.x, around.y, around.w, around.h].map(Math.round)});
    }
  }
  return found;
}"""


def _api(service: Service, method: str, path: str, token: str = "", **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else API_KEY
    answer = requests.request(method, service.url + path, headers=headers, timeout=30, **kwargs)
    assert answer.ok, answer.text
    return answer.json()


def _a_game_some_moves_in(service: Service, game: str) -> tuple[str, list[str | None], int]:
    """A game with bots among its players, `MOVES` random moves of the persons in (the
    bots answer by themselves); its id, the seats' tokens and a person's seat to act."""
    players = SEATS[: games.get(game).players[-1]]
    created = _api(service, "POST", "/v1/games", json={"game": game, "players": players})
    game_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    choose = random.Random(game)
    moved = 0
    for _ in range(600):
        summary = _api(service, "GET", f"/v1/games/{game_id}")
        persons = [seat for seat in summary["to_act"] if tokens[seat] is not None]
        if summary["status"] == "over":
            pytest.fail(f"{game} ended within {moved} moves")
        if persons and moved == MOVES:
            return game_id, tokens, persons[0]
        if not persons:
            time.sleep(0.05)  # a bot's turn: it plays by itself
            continue
        token = str(tokens[persons[0]])
        legal = _api(service, "GET", f"/v1/games/{game_id}/legal-moves", token)["moves"]
        # Among the first few: Mandala's short steps, so that the game lasts.
        notation = choose.choice([m["notation"] for m in legal][:3])
        _api(
            service,
            "POST",
            f"/v1/games/{game_id}/moves?wait=10",
            token,
            json={"notation": notation},
        )
        moved += 1
    pytest.fail(f"{game}: the bots never handed the turn back")


def _fits(page: Page, where: str) -> None:
    spills = page.locator("#board svg").evaluate(SPILLS)
    assert spills == [], where


@pytest.fixture(scope="module")
def tables() -> dict[str, tuple[str, list[str | None], int]]:
    """Each game's table, played once for both widths."""
    return {}


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("game", games.names())
def test_every_board_label_fits_its_box_uncut(
    web_service: Service,
    browser: Browser,
    artifacts: Path,
    tables: dict[str, tuple[str, list[str | None], int]],
    game: str,
    width: int,
) -> None:
    if game not in tables:
        tables[game] = _a_game_some_moves_in(web_service, game)
    game_id, tokens, acting = tables[game]
    watching = pages.new_page(browser, phone=width == 390)
    watching.goto(f"{web_service.url}/g/{game_id}")
    _fits(watching, f"{game} at {width} px, watching")
    watching.screenshot(path=artifacts / f"labels-{game}-{width}.png", full_page=True)
    watching.context.close()

    seat = pages.new_page(browser, phone=width == 390)
    pages.open_from_mail(seat, f"{web_service.url}/g/{game_id}/seat/{tokens[acting]}")
    expect(seat.locator("#builder")).to_be_visible()
    _fits(seat, f"{game} at {width} px, its seat to act")
    seat.locator("#board svg [data-step]").first.click()
    expect(seat.locator('#builder[data-taken="1"]')).to_be_attached()
    _fits(seat, f"{game} at {width} px, a first step taken")
    seat.screenshot(path=artifacts / f"labels-{game}-{width}-step.png", full_page=True)
    seat.context.close()
