"""The OpenAPI document promises no more than the server keeps: every operation named and
its errors problem+json; a Mandala Stones objective condition one schema per kind, so
that every condition the document takes is one the server takes.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
import schemathesis
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings

from api import create_app
from api.http.errors import PROBLEM
from referee.settings import Settings

DOCUMENT: dict[str, Any] = (
    create_app(Settings(database_url="sqlite://")).test_client().get("/openapi.json").get_json()
)
SCHEMAS = DOCUMENT["components"]["schemas"]
CARDS = SCHEMAS["MandalaStonesOptions"]["properties"]["objectives"]["oneOf"][1]
CONDITION = CARDS["items"]["properties"]["condition"]
KINDS = CONDITION["discriminator"]["mapping"]


def validator(schema: dict[str, Any]) -> jsonschema_rs.Validator:
    """`schema` checked as the document gives it, its `$ref`s found in the document."""
    return jsonschema_rs.Draft4Validator({**schema, "components": DOCUMENT["components"]})


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in DOCUMENT["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
    ]


@pytest.mark.parametrize(("method", "path", "operation"), operations())
def test_every_operation_is_named_and_its_errors_are_problems(
    method: str, path: str, operation: dict[str, Any]
) -> None:
    assert operation.get("operationId"), (method, path)
    for status, answer in operation["responses"].items():
        if status[0] not in "45" or "$ref" in answer:  # a $ref: the shared problem responses
            continue
        assert answer.get("content") == {
            PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}
        }, (method, path, status)


def test_following_a_game_declares_its_errors() -> None:
    operation = DOCUMENT["paths"]["/v1/games/{game_id}/events"]["get"]
    assert operation["operationId"] == "followGame"
    assert {"400", "401", "404", "503"} <= operation["responses"].keys()
    assert "Retry-After" in operation["responses"]["503"]["headers"]


# One condition of each kind as the server takes it.
TAKEN = {
    "top_pattern_only": {"pattern": "*"},
    "tower_count": {"count": 0},
    "top_colours": {"count": 4, "min_towers": 5},
    "heights_present": {"heights": [4, 1]},
    "towers_of_height": {"height": 4, "at_least": 1},
    "same_height": {"count": 1},
}
# A card any deal may hold, to make up the cards two players need.
TAKEN_CARD = {"kind": "same_height", "count": 2}
# A value of each parameter some kind takes.
PARAMETERS = {
    "pattern": "o",
    "count": 2,
    "min_towers": 1,
    "heights": [2],
    "height": 1,
    "at_least": 2,
}


def test_each_kind_of_condition_has_a_schema_of_its_own() -> None:
    assert sorted(KINDS) == sorted(TAKEN)
    for kind, ref in KINDS.items():
        assert SCHEMAS[ref.rsplit("/", 1)[1]]["properties"]["kind"]["enum"] == [kind]


@pytest.mark.parametrize("kind", sorted(TAKEN))
def test_a_condition_takes_only_its_own_parameters(kind: str) -> None:
    check = validator(CONDITION)
    condition = {"kind": kind, **TAKEN[kind]}
    assert check.is_valid(condition)
    for name, value in PARAMETERS.items():
        if name not in condition:
            assert not check.is_valid(condition | {name: value}), (kind, name)
    for name in TAKEN[kind]:
        missing = {key: value for key, value in condition.items() if key != name}
        assert not check.is_valid(missing), (kind, name)


def test_conditions_outside_the_servers_ranges_are_outside_the_schema() -> None:
    check = validator(CONDITION)
    for refused in [
        {"kind": "same_height", "count": 0},
        {"kind": "same_height", "count": 6},
        {"kind": "top_colours", "count": 5, "min_towers": 1},
        {"kind": "heights_present", "heights": [2, 2]},
        {"kind": "heights_present", "heights": []},
        {"kind": "towers_of_height", "height": 5, "at_least": 1},
        {"kind": "top_pattern_only", "pattern": "x"},
        {"kind": "no_such_kind"},
    ]:
        assert not check.is_valid(refused), refused


def _cards_operation() -> Any:
    """An operation whose body is the document's list of objective cards, for schemathesis to
    draw bodies from exactly as it would for the real one."""
    described = {
        "openapi": "3.0.3",
        "info": {"title": "objective cards", "version": "1"},
        "paths": {
            "/cards": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": CARDS}},
                    },
                    "responses": {"200": {"description": "taken"}},
                }
            }
        },
        "components": DOCUMENT["components"],
    }
    return schemathesis.openapi.from_dict(described)["/cards"]["POST"]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_cards_operation().as_strategy())
def test_every_list_of_cards_the_document_takes_the_server_takes(
    client: FlaskClient, case: Any
) -> None:
    cards = case.body
    # Distinct card numbers, which no JSON Schema can ask for, and enough of them to deal.
    for number, card in enumerate(cards, start=1):
        card["card"] = number
    cards += [{"card": len(cards) + n, "points": 1, "condition": TAKEN_CARD} for n in (1, 2, 3, 4)]
    body = {
        "game": "mandala_stones",
        "players": [{"name": "Ann"}, {"name": "Bob"}],
        "options": {"objectives": cards},
    }
    assert validator({"$ref": "#/components/schemas/NewGame"}).is_valid(body)
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 201, (cards, answer.get_data(as_text=True))
