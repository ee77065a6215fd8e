"""The lobby's game cards and the rules pages in a real Chromium, at 1280 and 390 px.

Against a real `referee serve` (the fixtures of test_web_browser.py): every card
shows its picture (loaded, not broken), its line, players and length, and its
links; nothing on the lobby or a rules page spills out of its card or scrolls
the page sideways; the rules page's links inside it lead to its headings, and its
French version is a link away; no serious accessibility violation (axe-core);
past 50 games, "Older games" shows the next ones. Screenshots go to the run's folder
under `var/artifacts/web/`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from api.pages.lobby import LOBBY_GAMES
from referee import games
from referee.render import showcase
from tests.live import test_web_browser as pages
from tests.stacks import TEST_API_KEY, Service

web_service = pages.web_service
playwright = pages.playwright
browser = pages.browser
artifacts = pages.artifacts

# The elements of each card that reach out of it, and pictures not drawn.
CARDS_SPILL = """() => Array.from(document.querySelectorAll('.game-card')).flatMap(card => {
  const box = card.getBoundingClientRect();
  return Array.from(card.querySelectorAll('*')).filter(e => {
    const r = e.getBoundingClientRect();
    return r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5);
  }).map(e => card.id + ' ' + e.tagName + ' ' + e.textContent.slice(0, 40));
})"""
BROKEN_PICTURES = """() => Array.from(document.querySelectorAll('img.game-picture'))
  .filter(img => !img.complete || img.naturalWidth === 0).map(img => img.src)"""


def _serious(page: Page) -> list[object]:
    results = Axe().run(page)
    return [
        (violation["id"], [node["target"] for node in violation["nodes"]][:3])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_lobby_sells_every_game_at_both_widths(
    web_service: Service, browser: Browser, artifacts: Path, width: int
) -> None:
    page = pages.new_page(browser, phone=width == 390)
    page.goto(web_service.url + "/")
    for rules in games.all_games():
        card = page.locator(f"#card-{rules.name}")
        expect(card.locator("img.game-picture")).to_be_visible()
        expect(card.locator("h3")).to_have_text(rules.title)
        expect(card.locator(".game-line")).to_have_text(showcase.showcase(rules.name).line)
        expect(card.locator(".game-facts")).to_contain_text(showcase.length_words(rules.name))
        expect(card.locator(f'a[href="/rules/{rules.name}"]')).to_be_visible()
        expect(card.locator(f'a.button[href="/new/{rules.name}"]')).to_be_visible()
    page.wait_for_load_state("load")
    assert page.evaluate(BROKEN_PICTURES) == []
    assert page.evaluate(CARDS_SPILL) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert _serious(page) == []
    page.screenshot(path=artifacts / f"lobby-cards-{width}.png", full_page=True)
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_rules_page_is_reached_from_the_lobby_and_reads_at_both_widths(
    web_service: Service, browser: Browser, artifacts: Path, width: int
) -> None:
    page = pages.new_page(browser, phone=width == 390)
    page.goto(web_service.url + "/")
    page.click('#card-ice_palace a[href="/rules/ice_palace"]')
    expect(page.locator("h1")).to_have_text("Rules of Ice Palace")
    page.screenshot(path=artifacts / f"rules-ice_palace-{width}-top.png")
    expect(page.locator("article.rules h2").first).to_be_visible()
    expect(page.locator("img.game-picture")).to_be_visible()
    assert page.evaluate(BROKEN_PICTURES) == []
    # A link inside the page goes to its heading.
    inner = page.locator('article.rules a[href^="#"]').first
    target = str(inner.get_attribute("href"))
    inner.click()
    expect(page.locator(target)).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert _serious(page) == []
    page.screenshot(path=artifacts / f"rules-ice_palace-{width}.png", full_page=True)
    # The French page is a link away, says it is French, and links back.
    page.click('a[hreflang="fr"]')
    expect(page.locator("h1")).to_have_text("Règles du jeu Ice Palace")
    page.screenshot(path=artifacts / f"rules-ice_palace-fr-{width}-top.png")
    assert page.evaluate("document.documentElement.lang") == "fr"
    expect(page.locator("#le-maximum-du-constructeur")).to_be_attached()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert _serious(page) == []
    page.screenshot(path=artifacts / f"rules-ice_palace-fr-{width}.png", full_page=True)
    page.click('a[hreflang="en"]')
    expect(page.locator("h1")).to_have_text("Rules of Ice Palace")
    page.context.close()


def test_the_games_played_go_on_a_page_at_a_time(
    web_service: Service, browser: Browser, artifacts: Path
) -> None:
    """More games than a page holds: "Older games" shows the next ones, on a phone."""
    for n in range(LOBBY_GAMES + 1):
        created = requests.post(
            web_service.url + "/v1/games",
            headers={"X-API-Key": TEST_API_KEY},
            json={"game": "subdivision", "players": [{"name": f"Ann {n}"}, {"name": "Bob"}]},
            timeout=30,
        )
        assert created.status_code == 201, created.text
    page = pages.new_page(browser, phone=True)
    page.goto(web_service.url + "/")
    rows = page.locator("table.games tbody tr")
    expect(rows).to_have_count(LOBBY_GAMES)
    first_page = set(rows.locator("td:first-child a").evaluate_all("els => els.map(a => a.href)"))
    page.click("text=Older games")
    expect(page.locator("text=« Newest games")).to_be_visible()
    older = rows.locator("td:first-child a").evaluate_all("els => els.map(a => a.href)")
    assert older and first_page.isdisjoint(older)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=artifacts / "lobby-older-390.png", full_page=True)
    page.context.close()
