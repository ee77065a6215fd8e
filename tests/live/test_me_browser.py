"""`/me` in a real headless Chromium against `referee serve`: it updates live, reads on a phone.

A signed-in browser (its session opened in the service, as the sign-in link
does, and set as its `player` cookie) opens `/me` with games in all three
lists; the opponent moves through the REST API, and the game moves from
"Waiting" to "Your turn" without a reload (a marker set in the page's
window survives). axe-core finds no serious violation; without JavaScript
the page lists the same games. Screenshots at 1280 and 390 px go to the
run's folder under `var/artifacts/web/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

ANN = "ann.browser@example.org"
MARKER = "window.mePageMarker"


def _api(url: str, method: str, path: str, token: str | None = None, **body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {"X-API-Key": TEST_API_KEY}
    answer = requests.request(method, url + path, headers=headers, json=body or None, timeout=30)
    assert answer.ok, answer.text
    return answer.json()


def _game(url: str, game: str, players: list[tuple[str, str | None]], **extra: Any) -> Any:
    people = [{"name": name, "email": email} for name, email in players]
    return _api(url, "POST", "/v1/games", game=game, players=people, **extra)


def _to_act(url: str, game_id: str) -> list[int]:
    return list(_api(url, "GET", f"/v1/games/{game_id}")["to_act"])


def _play(url: str, made: Any, seat: int) -> None:
    token = made["seats"][seat]["token"]
    legal = _api(url, "GET", f"/v1/games/{made['id']}/legal-moves", token)
    move = legal["moves"][0]["notation"]
    sent = _api(url, "POST", f"/v1/games/{made['id']}/moves?wait=10", token, notation=move)
    assert sent["submission"]["status"] == "accepted", sent


def _resign(url: str, made: Any, seat: int) -> None:
    token = made["seats"][seat]["token"]
    _api(url, "POST", f"/v1/games/{made['id']}/resign?wait=10", token)


def _signed_in(
    chromium: Browser,
    service: Service,
    phone: bool = False,
    script: bool = True,
    address: str = ANN,
) -> Page:
    referee = Referee(Settings(database_url=service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(referee, address)
    finally:
        referee.close()
    page = new_page(chromium, phone=phone, script=script)
    page.context.add_cookies([{"name": "player", "value": cookie, "url": service.url}])
    return page


def _in(page: Page, heading: str) -> list[str]:
    """The games listed under a heading of the page."""
    return list(
        page.eval_on_selector_all(
            f"#{heading}-heading ~ ul [data-game]", "rows => rows.map(row => row.dataset.game)"
        )
    )


def test_me_follows_my_games_live_and_reads_on_a_phone(
    web_service: Service,  # noqa: F811
    browser: Browser,  # noqa: F811
    artifacts: Path,  # noqa: F811
) -> None:
    url = web_service.url
    # My turn: a Subdivision due in 3 hours, a MaNiKi round (everyone answers at once).
    mine = _game(url, "subdivision", [("Ann", ANN), ("Bob", None)], deadline="3h")
    _game(url, "maniki", [("Ann", ANN), ("Bob", None)], deadline="30h")
    # Waiting: a Mandala where Bob is to act.
    waiting = _game(url, "mandala", [("Bob", None), ("Ann", ANN)], deadline="72h")
    if _to_act(url, waiting["id"]) == [1]:
        _play(url, waiting, 1)
    assert _to_act(url, waiting["id"]) == [0]
    still_waiting = _game(url, "subdivision", [("Bob", None), ("Ann", ANN)])
    # Finished: one won, one lost.
    _resign(url, _game(url, "subdivision", [("Ann", ANN), ("Cy", None)]), 1)
    _resign(url, _game(url, "mandala_stones", [("Eve", None), ("Ann", ANN)]), 1)
    # Another player's game is nowhere on the page.
    stranger = _game(url, "subdivision", [("Zed", "zed@example.org"), ("Bob", None)])

    pages = [_signed_in(browser, web_service), _signed_in(browser, web_service, phone=True)]
    for page in pages:
        page.goto(url + "/me")
        assert page.title().startswith("Your turn (2)")
        assert waiting["id"] in _in(page, "waiting") and waiting["id"] not in _in(page, "turn")
        assert mine["id"] in _in(page, "turn") and len(_in(page, "finished")) == 2
        assert stranger["id"] not in page.content()
        page.evaluate(f"() => {{ {MARKER} = 'still here'; }}")

    _play(url, waiting, 0)
    for page, width in zip(pages, (1280, 390), strict=True):
        page.wait_for_function(
            "id => document.querySelector(`#turn-heading ~ ul [data-game='${id}']`) !== null",
            arg=waiting["id"],
        )
        assert page.evaluate(f"() => {MARKER}") == "still here"
        assert _in(page, "waiting") == [still_waiting["id"]]
        assert page.title().startswith("Your turn (3)")
        href = page.get_attribute(f"[data-game='{waiting['id']}'] a.open", "href")
        assert href is not None and href.startswith(f"/g/{waiting['id']}/play/")
        # Nothing scrolls sideways on a phone.
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=artifacts / f"me-{width}.png", full_page=True)

    results = Axe().run(pages[0])
    serious = [
        (violation["id"], violation["help"])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]
    assert serious == []

    # A token made on the phone: its secret shown once, in a field that fits the screen.
    phone = pages[1]
    phone.fill("#token-name", "my phone's bot")
    phone.click("text=Make the token")
    secret = phone.input_value("#secret")
    assert secret.startswith("rp_")
    assert phone.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    phone.screenshot(path=artifacts / "me-token-390.png", full_page=True)
    phone.goto(url + "/me")
    assert secret not in phone.content() and "my phone's bot" in phone.inner_text("#tokens")

    # A player with no game yet is told what to do.
    newcomer = _signed_in(browser, web_service, phone=True, address="new.player@example.org")
    newcomer.goto(url + "/me")
    assert "Start a game from the lobby" in newcomer.inner_text("#my-games")
    newcomer.screenshot(path=artifacts / "me-empty-390.png", full_page=True)

    # Without JavaScript the page is as fresh as its load.
    plain = _signed_in(browser, web_service, script=False)
    plain.goto(url + "/me")
    assert waiting["id"] in _in(plain, "turn") and len(_in(plain, "turn")) == 3
