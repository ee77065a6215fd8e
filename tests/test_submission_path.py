"""Every source of moves goes through one recording function and one judging function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _calls_and_builds(name: str) -> list[str]:
    """Where code of the project builds a `name` or calls something named `name`."""
    found = []
    for folder in ("referee", "api", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call):
                    called = node.func
                    named = called.attr if isinstance(called, ast.Attribute) else None
                    named = called.id if isinstance(called, ast.Name) else named
                    if named == name:
                        found.append(str(path.relative_to(ROOT)))
    return sorted(set(found))


def test_only_the_submissions_module_makes_a_submission() -> None:
    assert _calls_and_builds("Submission") == ["referee/store/submissions.py"]


def test_rest_mail_and_timeouts_all_record_through_one_function() -> None:
    assert _calls_and_builds("record") == [
        "api/games.py",
        "referee/store/deadlines.py",
        "workers/inbound.py",
    ]


def test_moves_are_appended_only_by_judging_and_creating_a_game() -> None:
    assert _calls_and_builds("append_to_log") == [
        "referee/store/creation.py",
        "referee/store/deciding.py",
    ]
    assert _calls_and_builds("judge") == [
        "referee/store/deadlines.py",
        "referee/store/deciding.py",
    ]
