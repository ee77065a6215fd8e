"""Hypothesis throws hostile requests at every endpoint and form of the app: never a 5xx.

The app runs in-process on SQLite (tasks eager). Every route of the URL
map is tried with every method it takes; path parts, query values, JSON
bodies and form fields are drawn from text a stranger might send: other
scripts' digits, numbers of thousands of digits, NaN and infinities, NUL,
lone surrogates, JSON nested far deeper than any move, and real values
(the game's id, a seat token, a legal-looking move) so that requests also
reach past the first checks. A form is sent with the browser's CSRF token
and, for the game forms, a seat's cookie. Every answer must be below 500,
and an error from the REST API must be problem+json.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))

# Text a browser or a URL can carry (no surrogates: those cannot be encoded in a URL or a form).
PRINTED = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
SPECIAL = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "²",
        "٣",
        "9" * 5000,
        "1e999",
        "nan",
        "inf",
        "infd",
        "72h",
        "\x00",
        "\x0b",
        " ",
        "pass",
        "KI MA",
        "[" * 5000,
        '"a\x0bb"@example.org',
        "a@example.org",
    ]
)
TEXT = st.one_of(SPECIAL, PRINTED)

# JSON values, some with what Python's json takes but the referee must refuse.
LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["\ud800", "\udfff", "\x00", "sequence", "resign", "KI", "pass"]),
)
JSON_VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(["type", "orders", "move", "notation", "url"]), TEXT),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
BODY_KEYS = st.sampled_from(
    [
        "game",
        "players",
        "options",
        "deadline",
        "on_timeout",
        "move",
        "notation",
        "expected_version",
        "url",
        "name",
        "email",
    ]
)
QUERY_KEYS = st.sampled_from(["at", "after", "limit", "wait", "status", "game", "cursor", "sub"])
FORM_KEYS = st.sampled_from(
    [
        "notation",
        "expected_version",
        "confirm",
        "deadline",
        "on_timeout",
        "api_key",
        "name-0",
        "name-1",
        "email-0",
        "opt-cells",
        "opt-parks",
        "opt-mode",
        "opt-names",
        "opt-expert",
        "opt-objectives",
    ]
)


@st.composite
def json_text(draw: st.DrawFn) -> str:
    """A body: a drawn object dumped as JSON, maybe buried deep, maybe cut short."""
    value: Any = draw(st.dictionaries(BODY_KEYS, JSON_VALUE, max_size=5))
    text = json.dumps(value)
    depth = draw(st.sampled_from([0, 0, 0, 1, 33, 1000, 30_000]))
    text = "[" * depth + text + "]" * depth
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


@pytest.fixture(scope="module")
def games(app: Flask) -> list[tuple[str, str]]:
    """One game of each kind: (id, seat 0's token)."""
    made = []
    for name in ("maniki", "subdivision", "ice_palace", "mandala", "mandala_stones"):
        players = [{"name": n} for n in "abc"]
        answer = app.test_client().post("/v1/games", json={"game": name, "players": players})
        assert answer.status_code == 201, answer.get_data(as_text=True)
        body = answer.get_json()
        made.append((body["id"], body["seats"][0]["token"]))
    return made


def routes(app: Flask) -> list[tuple[str, str]]:
    """(rule, method) of every route but the static files."""
    return sorted(
        (rule.rule, method)
        for rule in app.url_map.iter_rules()
        if not rule.endpoint.endswith("static")
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    )


def fill(rule: str, draw: st.DrawFn, game: str, token: str) -> str:
    """The rule's path with each part real or hostile."""

    def part(found: re.Match[str]) -> str:
        name = found.group(1).split(":")[-1]
        real = {"game_id": game, "token": token, "name": "subdivision"}.get(name, game)
        text = draw(st.one_of(st.just(real), st.just(real), TEXT))
        # Percent-encoded, as a client sends a segment holding '/', '?' or '#'.
        return quote(text, safe="") or real

    return re.sub(r"<([^>]+)>", part, rule)


def unexpected(answer: Any, path: str) -> str:
    return f"{answer.status_code} on {path}: {answer.get_data(as_text=True)[:400]}"


def test_every_endpoint_answers_hostile_requests_below_500(
    app: Flask, games: list[tuple[str, str]]
) -> None:
    client = app.test_client()
    every = routes(app)

    @FUZZ
    @given(st.data())
    def one(data: st.DataObject) -> None:
        rule, method = data.draw(st.sampled_from(every))
        game, token = data.draw(st.sampled_from(games))
        path = fill(rule, data.draw, game, token)
        query = data.draw(st.dictionaries(QUERY_KEYS, TEXT, max_size=3))
        headers = {"Content-Type": "application/json"}
        if data.draw(st.booleans()):
            headers["Authorization"] = f"Bearer {token}"
        if data.draw(st.integers(0, 4)) == 0:
            headers["Idempotency-Key"] = data.draw(
                PRINTED.filter(lambda t: t.isascii() and t.isprintable())
            )
        body = data.draw(json_text()) if method in ("POST", "PUT") else None
        answer = client.open(path, method=method, query_string=query, data=body, headers=headers)
        assert answer.status_code < 500, unexpected(answer, path)
        if path.startswith("/v1/") and answer.status_code >= 400:
            assert answer.mimetype == "application/problem+json", unexpected(answer, path)

    one()


def browser(app: Flask, game: str, token: str) -> tuple[FlaskClient, str]:
    """A browser holding seat 0 of `game`, and its CSRF token."""
    client = app.test_client()
    client.get(f"/g/{game}/seat/{token}")
    page = client.get(f"/g/{game}").get_data(as_text=True)
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return client, found.group(1)


def test_every_form_answers_hostile_fields_below_500(
    app: Flask, games: list[tuple[str, str]]
) -> None:
    browsers = [(game, *browser(app, game, token)) for game, token in games]
    forms = ["/g/{game}/move", "/g/{game}/resign", "/g/{game}/leave", "/new/{name}"]

    @FUZZ
    @given(st.data())
    def one(data: st.DataObject) -> None:
        game, client, csrf = data.draw(st.sampled_from(browsers))
        name = data.draw(st.sampled_from(["maniki", "subdivision", "mandala_stones", "ice_palace"]))
        path = data.draw(st.sampled_from(forms)).format(game=game, name=name)
        fields = data.draw(st.dictionaries(FORM_KEYS, TEXT, max_size=6))
        if data.draw(st.booleans()):
            fields = {"name-0": "a", "name-1": "b", **fields}
        answer = client.post(path, data={"csrf": csrf, **fields})
        assert answer.status_code < 500, unexpected(answer, path)

    one()
