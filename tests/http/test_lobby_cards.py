"""The lobby sells the games: each game's card (a picture of a real position, a line
on what it is like, its players and usual length, its rules page), the rules pages,
and the list of games played, a page at a time. Through Flask's test client, on the
embedded default; tests/live/test_lobby_browser.py looks at them in Chromium.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import pytest
from flask import Flask

from api.pages import lobby, rules_text
from referee import games
from referee.games import AnyGame
from referee.render import showcase
from tests.http.test_web_pages import app_settings, browser, new_game

__all__ = ["app_settings"]

SVG = "{http://www.w3.org/2000/svg}"


def _card(text: str, name: str) -> str:
    found = re.search(rf'<li class="card game-card" id="card-{name}">(.*?)</li>', text, re.S)
    assert found is not None, name
    return found.group(1)


@pytest.mark.parametrize("rules", games.all_games(), ids=games.names())
def test_each_games_card_shows_a_position_its_line_players_length_and_rules(
    app: Flask, rules: AnyGame
) -> None:
    card = _card(browser(app).get("/").get_data(as_text=True), rules.name)
    assert f'src="/pictures/{rules.name}.svg"' in card
    assert unescape(showcase.showcase(rules.name).line) in unescape(card)
    low, high = rules.players[0], rules.players[-1]
    assert f"{low}\u2013{high} players" in card
    (few, short), (many, long) = sorted(showcase.showcase(rules.name).moves.items())
    assert f"about {short} moves with {few} players, {long} with {many}" in card
    assert {few, many} == {low, high}
    assert f'href="/rules/{rules.name}"' in card and f'href="/new/{rules.name}"' in card


@pytest.mark.parametrize("rules", games.all_games(), ids=games.names())
def test_a_games_picture_is_a_real_position_the_same_every_time(app: Flask, rules: AnyGame) -> None:
    client = browser(app)
    first, again = (
        client.get(f"/pictures/{rules.name}.svg"),
        client.get(f"/pictures/{rules.name}.svg"),
    )
    assert first.status_code == 200 and first.mimetype == "image/svg+xml"
    assert first.data == again.data
    assert "public" in first.headers["Cache-Control"]
    root = ET.fromstring(first.data)
    # Pieces on the board, some moves in (drawn as the game page draws them).
    assert root.tag == f"{SVG}svg"
    drawn = [e for e in root.iter() if e.get("class") in ("pyramid", "stone", "animal", "pawn")]
    assert drawn or rules.name == "maniki", rules.name
    assert first.data.decode() == showcase.picture(rules.name)
    assert browser(app).get("/pictures/chess.svg").status_code == 404


@pytest.mark.parametrize("rules", games.all_games(), ids=games.names())
def test_a_games_rules_page_says_its_rules(app: Flask, rules: AnyGame) -> None:
    answer = browser(app).get(f"/rules/{rules.name}")
    assert answer.status_code == 200
    text = answer.get_data(as_text=True)
    assert f"<h1>Rules of {rules.title}</h1>" in text
    source = (rules_text.RULES / f"{rules.name}.md").read_text()
    for heading in re.findall(r"^## (.+)$", source, re.M):
        assert f'id="{rules_text.slug(heading)}"' in text, heading
    # Links inside the page lead to its headings.
    for anchor in re.findall(r'href="#([^"]+)"', text):
        assert f'id="{anchor}"' in text, anchor
    assert f'href="/new/{rules.name}"' in text
    assert browser(app).get("/rules/chess").status_code == 404
    french = browser(app).get(f"/rules/{rules.name}?lang=fr").get_data(as_text=True)
    assert '<html lang="fr">' in french
    source = (rules_text.RULES / "fr" / f"{rules.name}.md").read_text()
    for heading in re.findall(r"^## (.+)$", source, re.M):
        assert f'id="{rules_text.slug(heading)}"' in french, heading
    for anchor in re.findall(r'href="#([^"]+)"', french):
        assert f'id="{anchor}"' in french, anchor


@pytest.mark.parametrize(
    ("query", "accept", "language"),
    [
        ("?lang=fr", None, "fr"),
        ("", "fr-FR,fr;q=0.9", "fr"),
        ("", "en-GB,en;q=0.9,fr;q=0.5", "en"),
        ("", None, "en"),
        ("?lang=en", "fr-FR,fr;q=0.9", "en"),
        ("?lang=xx", None, "en"),
        ("?lang=", "de", "en"),
    ],
)
def test_a_rules_page_is_french_when_the_reader_asks_for_french(
    app: Flask, query: str, accept: str | None, language: str
) -> None:
    headers = {"Accept-Language": accept} if accept else {}
    answer = browser(app).get(f"/rules/mandala{query}", headers=headers)
    assert answer.status_code == 200
    assert "Accept-Language" in answer.vary
    text = answer.get_data(as_text=True)
    assert f'<html lang="{language}">' in text
    other = "en" if language == "fr" else "fr"
    assert f'href="/rules/mandala?lang={other}" hreflang="{other}"' in text
    french = (rules_text.RULES / "fr" / "mandala.md").read_text()
    heading = re.findall(r"^## (.+)$", french, re.M)[0]  # "Matériel"
    assert (f'id="{rules_text.slug(heading)}"' in text) == (language == "fr")
    assert ("<h1>Règles du jeu Mandala</h1>" in text) == (language == "fr")
    # The notation is the same in both languages.
    assert '<code>{"type": "take", "index": 17}</code>' in text


def test_a_rules_page_not_written_in_french_is_shown_in_english(
    app: Flask, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "mandala.md").write_text("# Mandala\n\n## Components\n\nPyramids.\n")
    monkeypatch.setattr(rules_text, "RULES", tmp_path)
    answer = browser(app).get("/rules/mandala?lang=fr", headers={"Accept-Language": "fr"})
    text = answer.get_data(as_text=True)
    assert answer.status_code == 200 and '<html lang="en">' in text
    assert 'id="components"' in text and "hreflang" not in text


def test_the_rules_text_escapes_markup_and_keeps_its_own_few_forms() -> None:
    html = rules_text.to_html(
        "# T\n\nA <b>bold</b> **move** of *one* `<pyramid>`, [see](#end).\n\n"
        "- one\n  - inner\n    carried on\n- two\n\n| a | b |\n| --- | --- |\n| `x` | y |\n\n"
        "## The end\n\n[elsewhere](../api.md) and [Mandala](mandala.md)\n"
    )
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<strong>move</strong>" in html
    assert "<em>one</em>" in html and "<code>&lt;pyramid&gt;</code>" in html
    assert '<a href="#end">see</a>' in html
    assert "<ul><li>one<ul><li>inner carried on</li></ul></li><li>two</li></ul>" in html
    assert "<td><code>x</code></td><td>y</td>" in html
    assert '<h2 id="the-end">The end</h2>' in html
    assert "elsewhere and" in html and '<a href="/rules/mandala">Mandala</a>' in html


def test_the_games_played_are_listed_a_page_at_a_time(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lobby, "LOBBY_GAMES", 2)
    made = [new_game(app, "subdivision", ["Ann", "Bob"])[0] for _ in range(3)]
    client = browser(app)
    first = client.get("/").get_data(as_text=True)
    listed = re.findall(r'<td><a href="/g/([0-9a-f]{32})">', first)
    assert len(listed) == 2
    found = re.search(r'<a rel="next" href="/\?before=([^"#]+)#games-heading">Older games', first)
    assert found is not None
    seen = set(listed)
    cursor: str | None = unquote(unescape(found.group(1)))
    while cursor is not None:
        page = client.get("/", query_string={"before": cursor}).get_data(as_text=True)
        assert "« Newest games" in page
        more = re.findall(r'<td><a href="/g/([0-9a-f]{32})">', page)
        assert seen.isdisjoint(more)
        seen |= set(more)
        found = re.search(r'<a rel="next" href="/\?before=([^"#]+)#', page)
        cursor = unquote(unescape(found.group(1))) if found else None
    assert set(made) <= seen


def test_a_bad_page_of_games_is_refused_plainly(app: Flask) -> None:
    answer = browser(app).get("/", query_string={"before": "<script>"})
    assert answer.status_code == 400
    assert "<script>" not in answer.get_data(as_text=True)
