"""ruff and mypy are part of the suite, so style and types cannot rot unseen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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
