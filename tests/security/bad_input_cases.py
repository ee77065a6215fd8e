"""The nasty inputs that once answered 500, and their neighbours: each must now be a 4xx.

One list, thrown by `test_bad_input_cases.py` at the app in-process on
SQLite and by `test_bad_input_postgresql.py` at a real `referee serve` on
PostgreSQL. Paths name `{game}` (a MaNiKi game made for the run); `seat`
says the request carries seat 0's token (a bearer token for the API, the
seat cookie and the form's CSRF token for the pages).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

DEEP = "[" * 30_000 + "]" * 30_000
DIGITS = "9" * 5_000
PLAYERS = '[{"name": "a"}, {"name": "b"}]'


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    body: str | None = None  # JSON text, sent as it is
    form: dict[str, str] = field(default_factory=dict)
    seat: bool = False

    @property
    def page(self) -> bool:
        """A game page or form (answers in HTML), not the REST API (problem+json)."""
        return not self.path.startswith("/v1/")


def _new(extra: str) -> str:
    return '{"game": "maniki", "players": ' + PLAYERS + extra + "}"


CASES = [
    Case(
        "options nested 30,000 deep", "POST", "/v1/games", _new(', "options": {"x": ' + DEEP + "}")
    ),
    Case(
        "an option nested 40 deep",
        "POST",
        "/v1/games",
        _new(', "options": {"x": ' + "[" * 40 + "]" * 40 + "}"),
    ),
    Case(
        "a move nested 30,000 deep",
        "POST",
        "/v1/games/{game}/moves",
        '{"move": ' + DEEP + "}",
        seat=True,
    ),
    Case(
        "a move's orders nested 30,000 deep",
        "POST",
        "/v1/games/{game}/moves",
        '{"move": {"type": "sequence", "orders": ' + DEEP + "}}",
        seat=True,
    ),
    Case(
        "a lone surrogate in a name",
        "POST",
        "/v1/games",
        '{"game": "maniki", "players": [{"name": "\\ud800"}, {"name": "b"}]}',
    ),
    Case(
        "a name ending in a line break (a mail header's display name)",
        "POST",
        "/v1/games",
        '{"game": "maniki", "players": [{"name": "a\\n"}, {"name": "b"}]}',
    ),
    Case(
        "NUL in a name",
        "POST",
        "/v1/games",
        '{"game": "maniki", "players": [{"name": "a\\u0000"}, {"name": "b"}]}',
    ),
    Case(
        "a lone surrogate in an option",
        "POST",
        "/v1/games",
        _new(', "options": {"mode": "\\udfff"}'),
    ),
    Case(
        "a lone surrogate in a webhook URL",
        "PUT",
        "/v1/games/{game}/webhook",
        '{"url": "http://example.org/\\ud800"}',
        seat=True,
    ),
    Case(
        "a lone surrogate in a notation",
        "POST",
        "/v1/games/{game}/moves",
        '{"notation": "KI \\ud83d"}',
        seat=True,
    ),
    Case("a 5,000-digit option", "POST", "/v1/games", _new(', "options": {"x": ' + DIGITS + "}")),
    Case(
        "a 5,000-digit expected_version",
        "POST",
        "/v1/games/{game}/moves",
        '{"notation": "KI", "expected_version": ' + DIGITS + "}",
        seat=True,
    ),
    Case("1e999 as an option", "POST", "/v1/games", _new(', "options": {"x": 1e999}')),
    Case("NaN as an option", "POST", "/v1/games", _new(', "options": {"x": NaN}')),
    Case("deadline infd", "POST", "/v1/games", _new(', "deadline": "infd"')),
    Case("deadline nan", "POST", "/v1/games", _new(', "deadline": "nan"')),
    Case("deadline 1e9h", "POST", "/v1/games", _new(', "deadline": "1e9h"')),
    Case(
        "deadline in Arabic-Indic digits",
        "POST",
        "/v1/games",
        _new(', "deadline": "\\u0667\\u0662h"'),
    ),
    Case(
        "a mail address with a vertical tab",
        "POST",
        "/v1/games",
        json.dumps(
            {
                "game": "maniki",
                "players": [{"name": "a", "email": '"a\x0bb"@example.org'}, {"name": "b"}],
            }
        ),
    ),
    Case(
        "a mail address with a quoted space",
        "POST",
        "/v1/games",
        json.dumps(
            {
                "game": "maniki",
                "players": [{"name": "a", "email": '"a b"@example.org'}, {"name": "b"}],
            }
        ),
    ),
    Case(
        "a mail address with a bare IP",
        "POST",
        "/v1/games",
        json.dumps(
            {"game": "maniki", "players": [{"name": "a", "email": "a@[127.0.0.1]"}, {"name": "b"}]}
        ),
    ),
    Case(
        "a mail address with a non-ASCII local part",
        "POST",
        "/v1/games",
        json.dumps(
            {"game": "maniki", "players": [{"name": "a", "email": "ü@example.org"}, {"name": "b"}]}
        ),
    ),
    Case(
        "a seek's options nested 30,000 deep",
        "POST",
        "/v1/seeks",
        '{"game": "maniki", "options": {"x": ' + DEEP + "}}",
    ),
    Case(
        "a seek's player count of 5,000 digits",
        "POST",
        "/v1/seeks",
        '{"game": "maniki", "players": {"min": ' + DIGITS + "}}",
    ),
    Case(
        "a lone surrogate in a seek's invited name",
        "POST",
        "/v1/seeks",
        '{"game": "maniki", "invite": ["\\ud800"]}',
    ),
    Case("a seek's deadline infd", "POST", "/v1/seeks", '{"game": "maniki", "deadline": "infd"}'),
    Case("seeks listed from 5,000 digits", "GET", "/v1/seeks?limit=" + DIGITS),
    Case("a seek's id with a lone surrogate", "GET", "/v1/seeks/%ED%A0%80"),
    Case("a seek's id of 5,000 digits", "POST", "/v1/seeks/" + DIGITS + "/join"),
    Case("a public name with NUL", "PUT", "/v1/me/profile", '{"name": "a\\u0000b"}'),
    Case("a block of a name of 5,000 digits", "PUT", "/v1/me/blocks/" + DIGITS),
    Case(
        "standing seeks nested 30,000 deep",
        "PUT",
        "/v1/me/standing-seeks",
        '[{"game": "maniki", "count": 1, "options": {"x": ' + DEEP + "}}]",
    ),
    Case(
        "a standing seek's count of 5,000 digits",
        "PUT",
        "/v1/me/standing-seeks",
        '[{"game": "maniki", "count": ' + DIGITS + "}]",
    ),
    Case(
        "a standing seek's count NaN",
        "PUT",
        "/v1/me/standing-seeks",
        '[{"game": "maniki", "count": NaN}]',
    ),
    Case("standing seeks as an object", "PUT", "/v1/me/standing-seeks", '{"game": "maniki"}'),
    Case("state at ²", "GET", "/v1/games/{game}/state?at=²"),
    Case("state at 5,000 digits", "GET", "/v1/games/{game}/state?at=" + DIGITS),
    Case("moves after 5,000 digits", "GET", "/v1/games/{game}/moves?after=" + DIGITS),
    Case(
        "wait of 5,000 digits",
        "POST",
        "/v1/games/{game}/moves?wait=" + DIGITS,
        '{"notation": "KI"}',
        seat=True,
    ),
    Case("the page at ²", "GET", "/g/{game}?at=²"),
    Case("the page at 5,000 digits", "GET", "/g/{game}?at=" + DIGITS),
    Case("the page at -1", "GET", "/g/{game}?at=-1"),
    Case(
        "a form's expected_version ²",
        "POST",
        "/g/{game}/move",
        form={"notation": "KI", "expected_version": "²"},
        seat=True,
    ),
    Case(
        "a form's expected_version of 5,000 digits",
        "POST",
        "/g/{game}/move",
        form={"notation": "KI", "expected_version": DIGITS},
        seat=True,
    ),
    Case(
        "a lobby option nested 30,000 deep",
        "POST",
        "/new/subdivision",
        form={"name-0": "a", "name-1": "b", "opt-cells": DEEP},
    ),
    Case(
        "a lobby option of 5,000 digits",
        "POST",
        "/new/subdivision",
        form={"name-0": "a", "name-1": "b", "opt-cells": DIGITS},
    ),
    Case(
        "a lobby option with a lone surrogate",
        "POST",
        "/new/subdivision",
        form={"name-0": "a", "name-1": "b", "opt-cells": '["\\ud800"]'},
    ),
    Case(
        "a lobby deadline infd",
        "POST",
        "/new/maniki",
        form={"name-0": "a", "name-1": "b", "deadline": "infd"},
    ),
    Case(
        "a lobby mail address with a vertical tab",
        "POST",
        "/new/maniki",
        form={"name-0": "a", "email-0": '"a\x0bb"@example.org', "name-1": "b"},
    ),
]


# How a test sends one request: (method, path, body or form, headers) -> (status, mimetype, text).
Send = Callable[[str, str, bytes | dict[str, str] | None, dict[str, str]], tuple[int, str, str]]

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def throw(case: Case, send: Send, game: str, token: str) -> tuple[int, str, str]:
    """Send `case` as a client would; `send` keeps cookies between calls (a browser's jar)."""
    path = case.path.replace("{game}", game)
    headers: dict[str, str] = {}
    data: bytes | dict[str, str] | None = None
    if case.body is not None:
        headers["Content-Type"] = "application/json"
        data = case.body.encode()
    if case.page and case.method == "POST":
        if case.seat:
            send("GET", f"/g/{game}/seat/{token}", None, {})
        form_page = f"/g/{game}" if case.seat else path
        found = _CSRF.search(send("GET", form_page, None, {})[2])
        assert found is not None, f"no form on {form_page}"
        data = {"csrf": found.group(1), **case.form}
    elif case.seat:
        headers["Authorization"] = f"Bearer {token}"
    return send(case.method, path, data, headers)


def refused(case: Case, answer: tuple[int, str, str]) -> None:
    """A 4xx: problem+json from the API, an HTML page from the pages; never a 5xx."""
    status, mimetype, text = answer
    assert 400 <= status < 500, f"{case.name}: {status} {text[:300]}"
    if not case.page:
        assert mimetype == "application/problem+json", f"{case.name}: {mimetype}"
        assert json.loads(text)["code"], case.name
