"""The service and its command run without the test tools (`uv run --no-dev`).

The README's and docs' commands (`referee serve`, `verify`, `new`, `legal`, ...)
are run with `uv run --locked --no-dev --isolated`, an environment of the
project's own dependencies only: no pytest, Playwright, requests or PyYAML. So
no module of `referee`, `api`, `workers` or `mailin` may import a package that
only the dev group brings. Read from the source (every import, at any depth)
and the installed packages' metadata: what the project's own requirements
bring, with their extras, is allowed; anything else is a test tool.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("referee", "api", "workers", "mailin")
_REQUIREMENT = re.compile(r"([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _brought(name: str, extras: frozenset[str], seen: set[str]) -> None:
    """The distributions `name` (with `extras`) requires, at any depth, into `seen`."""
    try:
        distribution = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return  # not for this platform or Python: nothing it brings is installed
    seen.add(_key(name))
    for requirement in distribution.requires or []:
        found = _REQUIREMENT.match(requirement)
        assert found is not None, requirement
        marker = requirement.partition(";")[2]
        wanted = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if wanted and not extras.intersection(wanted):
            continue
        inner = frozenset(e.strip() for e in (found[2] or "").split(",") if e.strip())
        if _key(found[1]) not in seen or inner:
            _brought(found[1], inner, seen)


def _imported_top_levels() -> dict[str, str]:
    """Each top-level module the shipped packages import, with one file importing it."""
    found: dict[str, str] = {}
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_no_shipped_module_imports_a_test_tool() -> None:
    allowed: set[str] = set()
    _brought("referee", frozenset(), allowed)
    assert "flask" in allowed and "pytest" not in allowed and "requests" not in allowed
    owners = metadata.packages_distributions()
    tools = {}
    for module, where in _imported_top_levels().items():
        if module in SHIPPED or module in sys.stdlib_module_names or module == "__future__":
            continue
        distributions = {_key(d) for d in owners.get(module, [])}
        assert distributions, f"{module} (imported by {where}) is installed by no package"
        if not distributions & allowed:
            tools[module] = where
    assert tools == {}, "imported by the service but brought only by the dev group"
