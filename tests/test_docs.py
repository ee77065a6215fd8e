"""The project documents itself: a rules page per game naming every field of its view."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from referee import games
from referee.playout import steps
from referee.rng import Rng

ROOT = Path(__file__).resolve().parent.parent
SPEC = "../" + "shared"  # spelt apart so that this file does not point at it itself


@pytest.mark.parametrize("name", games.names())
def test_every_field_of_a_games_view_is_described_in_its_rules_page(name: str) -> None:
    rules = games.get(name)
    page = (ROOT / "docs" / "rules" / f"{name}.md").read_text(encoding="utf-8")
    players = rules.players[0]
    options = rules.load_options({}, players)
    fields: set[str] = set()
    for step in itertools.islice(steps(rules, players, options, "docs", Rng("docs")), 80):
        for seat in (None, 0):
            fields |= set(rules.view(step.state, seat))
    assert fields
    assert sorted(field for field in fields if f"`{field}`" not in page) == []


def test_every_link_between_the_documents_resolves() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_nothing_in_the_repository_points_at_the_spec_it_was_built_from() -> None:
    pointing = []
    for folder in ("referee", "api", "workers", "tests", "bench", "deploy", "docs"):
        for path in (ROOT / folder).rglob("*"):
            readable = path.suffix in (".py", ".md", ".j2", ".html", ".yaml", ".conf")
            if readable and SPEC in path.read_text(encoding="utf-8", errors="replace"):
                pointing.append(str(path.relative_to(ROOT)))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert pointing == [] and SPEC not in readme
