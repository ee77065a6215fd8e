"""ruff, mypy and a complexity ceiling are part of the suite, so style, types and
function size cannot rot unseen."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parent.parent

# The code whose functions are held small.
MEASURED = ("referee", "api", "workers", "mailin", "bench")
COMPLEXITY_LIMIT = 15
# A rules engine decides a position in one place, so its functions may branch further.
GAMES = ("referee", "games")
GAMES_COMPLEXITY_LIMIT = 25

pytestmark = pytest.mark.lint


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["mypy"],
        # The benchmarks import the service's code: a change there must not break them unseen.
        ["mypy", "--strict", "--explicit-package-bases", "bench"],
    ],
    ids=["ruff-check", "ruff-format", "mypy", "mypy-bench"],
)
def test_tool_is_clean(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _functions(
    blocks: Iterable[Function | Class], prefix: str = ""
) -> Iterator[tuple[str, Function]]:
    """Every function, method and nested function below `blocks`, with its dotted name."""
    for block in blocks:
        name = f"{prefix}{block.name}"
        if isinstance(block, Class):
            yield from _functions([*block.methods, *block.inner_classes], f"{name}.")
        else:
            yield name, block
            # radon leaves a nested function's branches out of its parent's score.
            yield from _functions(block.closures, f"{name}.")


def _measure(source: str) -> Iterator[tuple[str, Function]]:
    # cc_visit lists a class's methods beside the class as well as inside it: walk from
    # the module's own functions and classes only, so each is counted once.
    blocks = cc_visit(source)
    yield from _functions(
        block for block in blocks if isinstance(block, Class) or not block.is_method
    )


def over_complex(root: Path) -> list[str]:
    """`file:line name complexity N > limit` for each function above its ceiling."""
    offenders = []
    for package in MEASURED:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            limit = (
                GAMES_COMPLEXITY_LIMIT
                if relative.parts[: len(GAMES)] == GAMES
                else COMPLEXITY_LIMIT
            )
            for name, function in _measure(path.read_text(encoding="utf-8")):
                if function.complexity > limit:
                    offenders.append(
                        f"{relative.as_posix()}:{function.lineno} {name}"
                        f" complexity {function.complexity} > {limit}"
                    )
    return offenders


def test_functions_stay_small() -> None:
    offenders = over_complex(ROOT)
    assert not offenders, "split these into smaller functions:\n" + "\n".join(offenders)


def _branchy(name: str, branches: int) -> str:
    """A function of cyclomatic complexity `branches + 1`."""
    body = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(branches))
    return f"def {name}(x):\n{body}    return -1\n"


def _indented(source: str) -> str:
    return "".join(f"    {line}\n" for line in source.splitlines())


def test_complexity_check_names_each_offender(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "plain.py").write_text(
        "class Handler:\n"
        + _indented(_branchy("handle", COMPLEXITY_LIMIT))
        + _branchy("at_limit", COMPLEXITY_LIMIT - 1)
    )
    games = tmp_path / "referee" / "games"
    games.mkdir(parents=True)
    (games / "rules.py").write_text(
        "def outer():\n"
        + _indented(_branchy("inner", GAMES_COMPLEXITY_LIMIT))
        + "    return inner\n"
        + _branchy("at_games_limit", GAMES_COMPLEXITY_LIMIT - 1)
    )

    assert over_complex(tmp_path) == [
        f"referee/games/rules.py:2 outer.inner"
        f" complexity {GAMES_COMPLEXITY_LIMIT + 1} > {GAMES_COMPLEXITY_LIMIT}",
        f"api/plain.py:2 Handler.handle complexity {COMPLEXITY_LIMIT + 1} > {COMPLEXITY_LIMIT}",
    ]
