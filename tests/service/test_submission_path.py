"""Every source of moves goes through one recording function and one judging function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _calls_and_builds(name: str) -> list[str]:
    """Where code of the project builds a `name` or calls something named `name`."""
    found = []
    for folder in ("referee", "api", "workers", "mailin"):
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


def test_rest_pages_mail_and_timeouts_all_record_through_one_function() -> None:
    # The store's `record` is called by the service's `record_move` alone, which
    # REST, the pages and the bots (through `submit_move`), mail replies and timeouts call.
    assert _calls_and_builds("record") == ["referee/service/submitting.py"]
    assert _calls_and_builds("record_move") == [
        "referee/service/deadlines.py",
        "referee/service/replies.py",
        "referee/service/submitting.py",
    ]
    assert _calls_and_builds("submit_move") == [
        "api/pages/game.py",
        "api/rest/games.py",
        "referee/service/bots.py",
    ]


def test_moves_are_appended_only_by_judging_and_creating_a_game() -> None:
    assert _calls_and_builds("log_entries") == [
        "referee/service/creating.py",
        "referee/service/deciding.py",
    ]
    assert _calls_and_builds("judge") == [
        "referee/service/deadlines.py",
        "referee/service/deciding.py",
    ]


def test_what_is_decided_is_published_in_one_place() -> None:
    for name in ("announce_decided", "announce_changed", "deliver_soon"):
        callers = set(_calls_and_builds(name)) - {"referee/queue.py"}
        assert callers <= {"referee/service/publishing.py", "referee/service/delivering.py"}, name
