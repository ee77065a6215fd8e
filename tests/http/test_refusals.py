"""Every refusal the service raises has one HTTP status, one title, and is documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from api.http.errors import REFUSALS
from referee.engine import IllegalMove
from referee.service import refusals
from referee.service.webhooks import WebhookRefused

ROOT = Path(__file__).resolve().parents[2]
API_DOC = (ROOT / "docs" / "api.md").read_text()


def _documented() -> dict[str, set[int]]:
    """The codes of docs/api.md's tables of errors, each with the statuses it is listed under."""
    found: dict[str, set[int]] = {}
    for status, code in re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", API_DOC, re.MULTILINE):
        found.setdefault(code, set()).add(int(status))
    return found


def _webhook_codes() -> set[str]:
    """The codes `referee.webhooks.Refused` is raised with."""
    tree = ast.parse((ROOT / "referee" / "webhooks.py").read_text())
    return {
        str(node.args[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Refused"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_every_kind_of_refusal_has_one_status_and_title() -> None:
    kinds = refusals.every_kind()
    assert kinds and set(kinds) == set(REFUSALS)
    for status, title in REFUSALS.values():
        assert 400 <= status < 500 and title


def test_every_code_the_service_raises_is_documented_with_its_status() -> None:
    documented = _documented()
    for kind, (status, _title) in REFUSALS.items():
        if kind is WebhookRefused:
            continue
        assert status in documented.get(kind.code, set()), (kind.code, status)
    for code in _webhook_codes():
        assert f"`{code}`" in API_DOC, code


def test_codes_are_unique_to_their_kind() -> None:
    codes = [kind.code for kind in refusals.every_kind()]
    assert len(codes) == len(set(codes))


def test_the_rules_refusals_keep_their_code_and_words() -> None:
    for code in ("bad_move", "bad_notation", "illegal_move", "game_over", "not_your_turn"):
        refused = refusals.from_rules(IllegalMove(code, "a reason for the player"))
        assert (refused.code, refused.reason) == (code, "a reason for the player")
        assert isinstance(refused, refusals.MoveRefusal)
    unknown = refusals.from_rules(IllegalMove("a_new_code", "why"))
    assert isinstance(unknown, refusals.IllegalMoveRefused)
