"""The last move marked on the board of all five games, in a real headless Chromium.

Against a real `referee serve` (the fixtures of test_web_browser.py): each
game is created and played a little through the API, then its page is
opened at 1280 px and at 390 px; the board must show the marks of the
last move, and none at move 0. Screenshots of each board go to the run's
folder under `var/artifacts/web/` (not committed), to be looked at.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser

from referee.games.maniki import shortest_solution
from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

# The Chromium, server and artifact folder of the browser tests, shared.
web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

API_KEY = {"X-API-Key": TEST_API_KEY}


def _api(service: Service, method: str, path: str, token: str = "", **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else API_KEY
    answer = requests.request(method, service.url + path, headers=headers, timeout=30, **kwargs)
    assert answer.ok, answer.text
    return answer.json()


def _move(service: Service, game_id: str, token: str, notation: str) -> None:
    _api(service, "POST", f"/v1/games/{game_id}/moves?wait=10", token, json={"notation": notation})


def _acting(service: Service, game_id: str) -> int:
    return int(_api(service, "GET", f"/v1/games/{game_id}")["to_act"][0])


def _legal(service: Service, game_id: str, token: str) -> list[str]:
    moves = _api(service, "GET", f"/v1/games/{game_id}/legal-moves", token)["moves"]
    return [m["notation"] for m in moves]


def _play_a_little(service: Service, game: str, game_id: str, tokens: list[str]) -> None:
    """A few moves, ending on one that shows what a move can do in the game."""
    chooser = random.Random(game)
    if game == "maniki":
        view = _api(service, "GET", f"/v1/games/{game_id}/state")["state"]
        _move(service, game_id, tokens[1], "pass")
        orders = shortest_solution(view["position"], view["target"])
        _move(service, game_id, tokens[0], " ".join(orders))
        return
    for _ in range(200 if game == "ice_palace" else 7):
        seat = _acting(service, game_id)
        summary = _api(service, "GET", f"/v1/games/{game_id}/state", tokens[seat])["state"]
        if game == "ice_palace" and summary["phase"] == "build":
            _move(service, game_id, tokens[seat], "build auto")
            return
        legal = _legal(service, game_id, tokens[seat])
        if game == "ice_palace" and len(summary["yard"]) < 5:
            legal = [m for m in legal if m != "pass"] or legal
        _move(service, game_id, tokens[seat], chooser.choice(legal))


@pytest.mark.parametrize(
    ("game", "players"),
    [("subdivision", 2), ("mandala", 3), ("ice_palace", 3), ("mandala_stones", 2), ("maniki", 3)],
)
def test_the_board_marks_the_last_move(
    web_service: Service, browser: Browser, artifacts: Path, game: str, players: int
) -> None:
    created = _api(
        web_service,
        "POST",
        "/v1/games",
        json={"game": game, "players": [{"name": n} for n in ["Ann", "Bob", "Cy"][:players]]},
    )
    game_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    _play_a_little(web_service, game, game_id, tokens)
    for phone in (False, True):
        page = pages.new_page(browser, phone=phone)
        page.goto(f"{web_service.url}/g/{game_id}?at=0")
        assert page.locator("svg .last").count() == 0
        page.goto(f"{web_service.url}/g/{game_id}")
        marks = page.locator("svg .last")
        assert marks.count() > 0
        assert marks.first.is_visible()
        width = 390 if phone else 1280
        page.locator("svg").first.screenshot(path=str(artifacts / f"last-{game}-{width}.png"))
        page.screenshot(path=str(artifacts / f"last-{game}-{width}-page.png"))
        page.context.close()
