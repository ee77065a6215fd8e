"""The project documents itself: a rules page per game naming every field of its view,
a French rules page per game with the same sections and notation, links that resolve,
a README that stays a front door, a settings table that names exactly the settings the
code reads, and a map of the code (docs/design.md) with a line for every module and no
path that is not there."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from referee import games
from referee.playout import steps
from referee.rng import Rng
from referee.settings import ENVIRONMENT, Settings

ROOT = Path(__file__).resolve().parent.parent
SPEC = "../" + "shared"  # spelt apart so that this file does not point at it itself
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SETTINGS_HEADER = "| variable | setting | default | what it sets |"
DESIGN = ROOT / "docs" / "design.md"
# The code the map of docs/design.md covers; the Alembic versions are listed by their folder.
CODE = ("referee", "api", "workers", "mailin")
MIGRATION_VERSIONS = ROOT / "referee" / "store" / "migrations" / "versions"
# A path into the code as the documents name it (`api/rest/games.py`, `referee/store/`):
# not a part of a longer path or a URL.
CODE_PATH = re.compile(r"(?<![\w./-])(?:referee|api|workers|mailin)/[\w./-]*")
# A line of the map: a table row whose first cell is one path.
MAP_LINE = re.compile(r"^\| `([^`]+)` \|", re.MULTILINE)


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


def _notation_table(page: str) -> list[list[str]]:
    """The code spans of each row of the page's notation table (moves, forms, JSON)."""
    section = page.split("\n## Notation\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [re.findall(r"`([^`]+)`", row) for row in rows]


@pytest.mark.parametrize("name", games.names())
def test_each_games_french_rules_page_keeps_up_with_the_english_one(name: str) -> None:
    english = (ROOT / "docs" / "rules" / f"{name}.md").read_text(encoding="utf-8")
    french = (ROOT / "docs" / "rules" / "fr" / f"{name}.md").read_text(encoding="utf-8")

    def headings(page: str) -> list[str]:
        return re.findall(r"^(#+) ", page, re.MULTILINE)

    # Same sections at the same levels, and the same notation, row by row.
    assert headings(french) == headings(english)
    assert _notation_table(english)
    assert _notation_table(french) == _notation_table(english)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page`."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
        words = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
        anchors.add(words.replace(" ", "-"))
    return anchors


def test_every_link_between_the_documents_resolves() -> None:
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            linked = (page.parent / target) if target else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.relative_to(ROOT)} -> {target}#{anchor}")
    assert broken == []


def test_the_readme_stays_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    # The two commands, exactly as .ci/run runs the second.
    serve = "python3 -m pip install uv && uv run --locked --no-dev --isolated referee serve"
    suite = "python3 -m pip install --quiet uv && uv run --locked pytest"
    assert serve in readme and suite in readme
    assert suite in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _settings_table() -> dict[str, str]:
    """The settings table of docs/operations.md: environment variable -> `Settings` field."""
    lines = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(SETTINGS_HEADER) + 2  # past the header and its rule
    rows = {}
    for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start:]):
        variable, setting = (cell.strip().strip("`") for cell in line.split("|")[1:3])
        assert variable not in rows, f"{variable} is listed twice"
        rows[variable] = setting
    return rows


def test_the_settings_table_lists_exactly_the_settings_the_code_reads() -> None:
    listed = _settings_table()
    read = set(ENVIRONMENT.values())
    assert sorted(read - listed.keys()) == [], "read by referee/settings.py, not in the table"
    assert sorted(listed.keys() - read) == [], "in the table, not read by referee/settings.py"
    assert {field.name for field in dataclasses.fields(Settings)} == ENVIRONMENT.keys()
    misnamed = {name: field for name, field in listed.items() if ENVIRONMENT.get(field) != name}
    assert misnamed == {}, "the `Settings` field beside these variables is not the one they set"


def test_nothing_in_the_repository_points_at_the_spec_it_was_built_from() -> None:
    pointing = []
    for folder in ("referee", "api", "workers", "tests", "bench", "deploy", "docs"):
        for path in (ROOT / folder).rglob("*"):
            readable = path.suffix in (".py", ".md", ".j2", ".html", ".yaml", ".conf")
            if readable and SPEC in path.read_text(encoding="utf-8", errors="replace"):
                pointing.append(str(path.relative_to(ROOT)))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert pointing == [] and SPEC not in readme


def _modules() -> set[str]:
    """What the map must name: every module by its path, a package by its folder."""
    modules = set()
    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            if MIGRATION_VERSIONS in path.parents:
                continue
            relative = path.relative_to(ROOT)
            package = path.name == "__init__.py"
            modules.add(f"{relative.parent.as_posix()}/" if package else relative.as_posix())
    return modules


def _unmapped(modules: set[str], design: str) -> list[str]:
    """The modules without exactly one line of their own in the map of `design`."""
    lines = Counter(MAP_LINE.findall(design))
    return sorted(module for module in modules if lines[module] != 1)


def _missing(text: str) -> list[str]:
    """The paths into the code `text` names that do not exist."""
    named = {path.rstrip(".") for path in CODE_PATH.findall(text)}
    return sorted(path for path in named if not (ROOT / path).exists())


def test_the_map_of_the_code_has_one_line_for_every_module() -> None:
    modules = _modules()
    assert "api/rest/games.py" in modules and "referee/service/" in modules
    assert _unmapped(modules, DESIGN.read_text(encoding="utf-8")) == []


def test_every_path_into_the_code_the_documents_name_exists() -> None:
    missing = {
        str(page.relative_to(ROOT)): found
        for page in PAGES
        if (found := _missing(page.read_text(encoding="utf-8")))
    }
    assert missing == {}


def test_the_map_checks_see_a_module_without_its_line_and_a_path_that_is_gone() -> None:
    design = "| `referee/store/` | rows |\n| `referee/store/reads.py` | reads |\n"
    modules = {"referee/store/", "referee/store/reads.py", "referee/store/new.py"}
    assert _unmapped(modules, design) == ["referee/store/new.py"]
    assert _unmapped({"referee/store/"}, design + design) == ["referee/store/"]
    prose = "as `referee/store/gone.py` does, at https://example.org/api/x, and api/http/."
    assert _missing(prose) == ["referee/store/gone.py"]
