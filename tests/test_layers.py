"""The layering of docs/design.md, checked on the source: imports only point downwards.

The rules layer (engine, rng, games) and the pure layer above it (replay,
record, playout, render) must stay free of I/O, clocks and global
randomness, so that every state can be rebuilt exactly from its log.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PURE = [
    "referee/engine.py",
    "referee/rng.py",
    "referee/games",
    "referee/replay.py",
    "referee/record.py",
    "referee/playout.py",
    "referee/render",
    "referee/names.py",
    "referee/bots",
]
# What pure code may not import: the upper layers, frameworks, I/O, clocks, global random.
FORBIDDEN_IN_PURE = {
    "referee.store",
    "referee.cli",
    "api",
    "workers",
    "flask",
    "sqlmodel",
    "sqlalchemy",
    "celery",
    "redis",
    "os",
    "socket",
    "time",
    "datetime",
    "random",
    "subprocess",
    "pathlib",
    "io",
    "smtplib",
    "logging",
}
ENTRY_POINTS = {"api", "workers", "mailin", "referee.cli"}
# The store (layer 3) and the service (layer 4) may not reach above themselves,
# and the entry points (layer 5) never import each other.
FORBIDDEN = {
    "referee/store": {"referee.service", *ENTRY_POINTS},
    "referee/service": ENTRY_POINTS,
    "api": ENTRY_POINTS - {"api"},
    "workers": ENTRY_POINTS - {"workers"},
    "mailin": ENTRY_POINTS - {"mailin"},
}
# Inside the web app (api/, layer 5) its kinds point downwards too: the schemas are
# shapes (no Flask, nothing of the app above them); the HTTP kit serves REST, the
# streams and the pages, which never import each other.
API_KINDS = {
    "api/schemas": {"flask", "flask_smorest", "api.http", "api.rest", "api.streams", "api.pages"},
    "api/http": {"api.rest", "api.streams", "api.pages"},
    "api/rest": {"api.streams", "api.pages"},
    "api/streams": {"api.rest", "api.pages"},
    "api/pages": {"api.rest", "api.streams"},
}
# Where the web app's modules live: the app factory and its servers at the top, every
# other module in one of the kinds.
API_TOP = {"__init__.py", "server.py", "wsgi.py"}
# The store's modules that write: only the service may use them, so that each
# use case is written once and no entry point changes the store by itself.
STORE_WRITING = {
    f"referee.store.{name}"
    for name in (
        "addresses",
        "appending",
        "bounces",
        "creation",
        "deciding",
        "delivery",
        "digests",
        "keys",
        "notices",
        "submissions",
        "vacations",
        "turn_mail",
        "verification",
        "webhooks",
    )
}


def python_files(entry: str) -> list[Path]:
    path = ROOT / entry
    return sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else []


def package_of(path: Path) -> list[str]:
    """The dotted package a file under ROOT belongs to (`referee/games/x.py`: referee.games)."""
    try:
        return list(path.resolve().relative_to(ROOT).parent.parts)
    except ValueError:
        return []


def imported(path: Path, package: list[str] | None = None) -> set[str]:
    """Every module a file imports, and for `from X import a` also X.a (a may be a module);
    relative imports are resolved against the file's package."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = package_of(path) if package is None else package
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module:
                names.add(module)
            names.update(f"{module}.{a.name}" if module else a.name for a in node.names)
    return names


def offending(names: set[str], forbidden: set[str]) -> set[str]:
    return {n for n in names for f in forbidden if n == f or n.startswith(f + ".")}


@pytest.mark.parametrize("entry", PURE)
def test_pure_layers_import_no_io_and_nothing_above_them(entry: str) -> None:
    for path in python_files(entry):
        assert not offending(imported(path), FORBIDDEN_IN_PURE), path


@pytest.mark.parametrize("entry", sorted(FORBIDDEN))
def test_upper_layers_do_not_import_each_other(entry: str) -> None:
    for path in python_files(entry):
        assert not offending(imported(path), FORBIDDEN[entry]), path


@pytest.mark.parametrize("kind", sorted(API_KINDS))
def test_the_web_apps_kinds_do_not_import_upwards_or_sideways(kind: str) -> None:
    assert python_files(kind), kind
    for path in python_files(kind):
        assert not offending(imported(path), API_KINDS[kind]), path


def test_the_web_app_holds_its_factory_and_servers_on_top_and_the_rest_in_its_kinds() -> None:
    kinds = {Path(kind).name for kind in API_KINDS}
    for path in python_files("api"):
        where = path.relative_to(ROOT / "api").parts
        assert (where[0] in API_TOP) if len(where) == 1 else (where[0] in kinds), path


def reads_the_environment(path: Path) -> bool:
    """Whether a file touches the process's environment (`os.environ`, `os.getenv`, ...)."""
    names = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in names:
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in names for alias in node.names)
        ):
            return True
    return False


def test_the_web_app_reads_no_environment() -> None:
    # Only referee/settings.py reads it; the app is handed its Settings.
    for path in python_files("api"):
        assert not reads_the_environment(path), path


def test_the_checker_sees_the_environment_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    for source, found in [
        ("import os\nos.environ.get('X')\n", True),
        ("import os\nos.getenv('X')\n", True),
        ("from os import environ\n", True),
        ("import os\nos.getpid()\n", False),
    ]:
        bad.write_text(source)
        assert reads_the_environment(bad) is found, source


@pytest.mark.parametrize("entry", ["api", "workers", "mailin", "referee/cli.py"])
def test_entry_points_do_not_import_the_stores_writing_modules(entry: str) -> None:
    assert python_files(entry), entry
    for path in python_files(entry):
        assert not offending(imported(path), STORE_WRITING), path


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import random\nfrom flask import Flask\nfrom referee import engine\n")
    assert offending(imported(bad), FORBIDDEN_IN_PURE) == {"random", "flask", "flask.Flask"}


def test_the_checker_sees_a_layer_imported_by_name_or_relatively(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    for source, found in [
        ("from referee import store\n", "referee.store"),
        ("from .. import store\n", "referee.store"),
        ("from ..store import db\n", "referee.store"),
        ("from ..store.db import transaction\n", "referee.store.db"),
        ("from . import engine as e\n", None),
    ]:
        bad.write_text(source)
        # As if it were a module of referee/games/.
        caught = offending(imported(bad, ["referee", "games"]), FORBIDDEN_IN_PURE)
        assert (found in caught) if found else not caught, (source, caught)
