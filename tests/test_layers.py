"""The layering of docs/design.md, checked on the source: imports only point downwards.

The rules layer (engine, rng, games) and the pure layer above it (replay,
record, playout, automatic, pace, names, reply_text, render, bots) must stay free of
I/O, clocks and global randomness, so that every state can be rebuilt
exactly from its log.
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
    "referee/automatic.py",
    "referee/render",
    "referee/names.py",
    "referee/pace.py",
    "referee/bots",
    "referee/reply_text.py",
    "referee/reply_words.py",
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
# and the entry points (layer 5) never import each other. The store keeps data:
# it replays nothing and decides no policy (whom the channels reach, what a bot
# plays), so it imports neither the service's channels nor the replaying tools.
FORBIDDEN = {
    "referee/store": {
        "referee.service",
        "referee.delivery",
        "referee.replay",
        "referee.playout",
        "referee.bots",
        *ENTRY_POINTS,
    },
    "referee/service": ENTRY_POINTS,
    # Delivery (layer 4, beside the service) holds the channels the service's
    # delivering job sends through; the queue announces what the service publishes.
    "referee/delivery": ENTRY_POINTS,
    "referee/queue.py": {"referee.service", *ENTRY_POINTS},
    "api": ENTRY_POINTS - {"api"},
    "workers": ENTRY_POINTS - {"workers"},
    "mailin": ENTRY_POINTS - {"mailin"},
}
# Of the service, the channels read only a game's state at a version and its clock:
# the use cases call the channels, never the other way round.
DELIVERY_READS_OF_THE_SERVICE = {"referee.service.game_states", "referee.service.turn_clock"}
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
        "bounce_reports",
        "creation",
        "decision_rows",
        "delivery",
        "digest_rows",
        "keys",
        "mail_settings",
        "notices",
        "rated_games",
        "seat_hooks",
        "seek_told",
        "submissions",
        "vacation_rows",
        "verdicts",
    )
}


# Where the code is: every file the checks on names and the environment read.
SOURCES = ["referee", "api", "workers", "mailin", "tests", "bench"]
# The one module that reads the environment (the rest are handed a `Settings`).
SETTINGS = "referee/settings.py"


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


def test_delivery_reads_of_the_service_only_a_games_state_and_its_clock() -> None:
    assert python_files("referee/delivery")
    for path in python_files("referee/delivery"):
        # `from referee.service import x` names the package as well as x.
        used = offending(imported(path), {"referee.service"}) - {"referee.service"}
        assert not used - offending(used, DELIVERY_READS_OF_THE_SERVICE), path


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


@pytest.mark.parametrize("entry", ["api", "workers", "mailin", "referee/cli.py"])
def test_entry_points_do_not_import_the_stores_writing_modules(entry: str) -> None:
    assert python_files(entry), entry
    for path in python_files(entry):
        assert not offending(imported(path), STORE_WRITING), path


def test_no_service_module_shares_a_store_modules_name() -> None:
    # The service's modules are named for their use cases, the store's for the rows they hold.
    service = {path.stem for path in python_files("referee/service")} - {"__init__"}
    store = {path.stem for path in python_files("referee/store")} - {"__init__"}
    assert not service & store


def renamed_store_imports(path: Path) -> list[str]:
    """Each store module the file imports under another name (`from referee.store import
    x as y`, `import referee.store.x as y`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [
                f"{a.name} as {a.asname}"
                for a in node.names
                if a.name.startswith("referee.store.") and a.asname is not None
            ]
        elif isinstance(node, ast.ImportFrom) and node.module == "referee.store":
            found += [
                f"{a.name} as {a.asname}" for a in node.names if a.asname not in (None, a.name)
            ]
    return found


@pytest.mark.parametrize("entry", SOURCES)
def test_store_modules_are_imported_under_their_own_names(entry: str) -> None:
    for path in python_files(entry):
        assert not renamed_store_imports(path), path


def reads_the_environment(path: Path) -> bool:
    """Whether the file reads the environment: `os.environ`, `os.getenv` (or imports them)."""
    names = {"environ", "environb", "getenv", "getenvb"}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            used = {node.attr} if node.value.id == "os" else set()
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            used = {a.name for a in node.names}
        else:
            continue
        if used & names:
            return True
    return False


@pytest.mark.parametrize("entry", ["referee", "api", "workers", "mailin"])
def test_only_the_settings_read_the_environment(entry: str) -> None:
    for path in python_files(entry):
        if path != ROOT / SETTINGS:
            assert not reads_the_environment(path), path
    assert reads_the_environment(ROOT / SETTINGS)


def test_the_checkers_see_a_renamed_store_module_and_the_environment(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import referee.store.reads as rows\nfrom referee.store import keys as k, clock\n"
        "from referee.store import reads as reads\n"
    )
    assert renamed_store_imports(bad) == ["referee.store.reads as rows", "keys as k"]
    for source in [
        "import os\nos.environ['X']\n",
        "from os import getenv\n",
        "import os\nos.getenv('X')\n",
    ]:
        bad.write_text(source)
        assert reads_the_environment(bad), source
    bad.write_text("def app(environ):\n    return environ.get('PATH_INFO')\n")
    assert not reads_the_environment(bad)


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
