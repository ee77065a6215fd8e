"""Bad requests get a problem+json 4xx with a stable code, never a 500, and write nothing.

These run the app in-process on the embedded default (a SQLite file, tasks
run eagerly), counting every table's rows around each bad request; then
schemathesis throws generated requests at every operation of
`/openapi.json` and checks answers against the document.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings, strategies
from hypothesis.strategies import from_regex
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.specs.openapi.checks import positive_data_acceptance
from sqlalchemy import text

from api import create_app
from api.http.errors import status_of
from api.rest import games as games_api
from api.schemas.games import DEADLINE_FORM, MAIL_ADDRESS_FORM, PlayerIn
from referee import games
from referee.engine import Game
from referee.service import Referee, turn_clock
from referee.service.refusals import Refusal
from referee.settings import Settings
from referee.store.tables import Source, SQLModel, Submission, SubmissionStatus

TABLES = sorted(SQLModel.metadata.tables)


class _Serving:
    """The WSGI app schemathesis calls: at import, an app of its own that serves the
    document (it reads no database for it); then the `app` fixture of this module."""

    def __init__(self) -> None:
        # An in-memory database, which serving the document never opens.
        self.app = create_app(Settings(database_url="sqlite://"))

    def __call__(self, environ: Any, start_response: Any) -> Any:
        return self.app(environ, start_response)


APP = _Serving()


@pytest.fixture(scope="module", autouse=True)
def _served(app: Flask) -> Iterator[None]:
    before, APP.app = APP.app, app
    yield
    APP.app = before


@pytest.fixture(scope="module")
def game(client: FlaskClient) -> dict[str, Any]:
    answer = client.post(
        "/v1/games", json={"game": "subdivision", "players": [{"name": "A"}, {"name": "B"}]}
    )
    assert answer.status_code == 201
    created: dict[str, Any] = answer.get_json()
    return created


def counts(referee: Referee) -> dict[str, int]:
    with referee.db.engine.connect() as connection:
        return {
            t: connection.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES
        }


def secrets_of(referee: Referee, game_id: str) -> list[str]:
    with referee.db.engine.connect() as connection:
        seed = connection.execute(text("SELECT seed FROM game WHERE id = :id"), {"id": game_id})
        return [seed.scalar_one()]


def refused(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code and body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    return body


NEW_GAME_CASES = [
    ("malformed JSON", b'{"game": "subdivision", "players": [', 400, "bad_json"),
    ("not an object", b"[1, 2, 3]", 422, "bad_request"),
    ("players not a list", b'{"game": "subdivision", "players": "ann, bob"}', 422, "bad_request"),
    (
        "game not a string",
        b'{"game": 7, "players": [{"name": "a"}, {"name": "b"}]}',
        422,
        "bad_request",
    ),
    (
        "unknown field",
        b'{"game": "maniki", "players": [{"name": "a"}], "x": 1}',
        422,
        "bad_request",
    ),
    ("no players", b'{"game": "maniki", "players": []}', 422, "bad_request"),
    (
        "unknown game",
        b'{"game": "chess", "players": [{"name": "a"}, {"name": "b"}]}',
        422,
        "unknown_game",
    ),
    (
        "too many players",
        json.dumps(
            {"game": "subdivision", "players": [{"name": str(i)} for i in range(7)]}
        ).encode(),
        422,
        "bad_players",
    ),
    (
        "unknown option",
        b'{"game": "maniki", "players": [{"name": "a"}, {"name": "b"}], "options": {"speed": 3}}',
        422,
        "bad_options",
    ),
    (
        "option of the wrong type",
        b'{"game": "maniki", "players": [{"name": "a"}, {"name": "b"}], "options": {"mode": 1}}',
        422,
        "bad_options",
    ),
    ("a 1 MB body", b'{"game": "' + b"x" * 1_000_000 + b'"}', 413, "too_large"),
]


@pytest.mark.parametrize(
    ("body", "status", "code"), [c[1:] for c in NEW_GAME_CASES], ids=[c[0] for c in NEW_GAME_CASES]
)
def test_bad_new_games_are_refused_and_write_nothing(
    client: FlaskClient, referee: Referee, body: bytes, status: int, code: str
) -> None:
    before = counts(referee)
    answer = client.post("/v1/games", data=body, content_type="application/json")
    refused(answer, status, code)
    assert counts(referee) == before


def test_bad_moves_are_refused_and_write_nothing(
    client: FlaskClient, referee: Referee, game: dict[str, Any]
) -> None:
    game_id = game["id"]
    seat0, seat1 = (f"Bearer {s['token']}" for s in game["seats"])
    path = f"/v1/games/{game_id}/moves"
    legal = client.get(f"/v1/games/{game_id}/legal-moves", headers={"Authorization": seat0})
    move = legal.get_json()["moves"][0]["move"]
    forged = "Bearer " + game["seats"][0]["token"][:-2] + "xx"
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"data": b'{"move": ', "headers": {"Authorization": seat0}}, 400, "bad_json"),
        ({"json": {"move": move}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": forged}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": "Basic abc"}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": seat1}}, 409, "not_your_turn"),
        ({"json": {"move": "3c4"}, "headers": {"Authorization": seat0}}, 422, "bad_request"),
        ({"json": {"move": {"type": 5}}, "headers": {"Authorization": seat0}}, 422, "bad_move"),
        ({"json": {"notation": "%%"}, "headers": {"Authorization": seat0}}, 422, "bad_notation"),
        (
            {"json": {"move": move, "notation": "c3"}, "headers": {"Authorization": seat0}},
            422,
            "bad_request",
        ),
        ({"json": {}, "headers": {"Authorization": seat0}}, 422, "bad_request"),
        (
            {"json": {"move": move, "expected_version": 5}, "headers": {"Authorization": seat0}},
            409,
            "stale_version",
        ),
        (
            {
                "json": {"move": move},
                "headers": {"Authorization": seat0, "Idempotency-Key": "k" * 201},
            },
            400,
            "bad_request",
        ),
        ({"data": b"x" * 1_000_000, "headers": {"Authorization": seat0}}, 413, "too_large"),
    ]
    secrets = [*secrets_of(referee, game_id), game["seats"][0]["token"]]
    before = counts(referee)
    for request, status, code in cases:
        answer = client.post(path, content_type="application/json", **request)
        body = refused(answer, status, code)
        if "seat1" in str(request) or status != 401:
            for secret in secrets:
                assert secret not in json.dumps(body)
    refused(client.post("/v1/games/nope/moves", json={"move": move}), 404, "not_found")
    refused(
        client.post(path + "?wait=99", json={"move": move}, headers={"Authorization": seat0}),
        422,
        "bad_request",
    )
    refused(client.get(f"/v1/games/{game_id}/state?at=99"), 404, "not_found")
    refused(client.get(f"/v1/games/{game_id}/state?at=-1"), 422, "bad_request")
    refused(client.get(f"/v1/games/{game_id}/legal-moves"), 401, "unauthorized")
    refused(client.get("/v1/submissions/nope"), 404, "not_found")
    refused(client.delete(f"/v1/games/{game_id}"), 405, "method_not_allowed")
    assert counts(referee) == before


def test_another_seat_and_spectators_never_see_seeds_or_tokens(
    client: FlaskClient, referee: Referee, game: dict[str, Any]
) -> None:
    game_id = game["id"]
    tokens = [s["token"] for s in game["seats"]]
    secret = [*secrets_of(referee, game_id), tokens[0]]
    for auth in ({}, {"Authorization": f"Bearer {tokens[1]}"}):
        for path in ("", "/state", "/moves", "/log.jsonl", "/verify", "/state?at=0"):
            answer = client.get(f"/v1/games/{game_id}{path}", headers=auth)
            assert answer.status_code == 200
            for value in secret:
                assert value not in answer.get_data(as_text=True)


schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)
# Each operation of the document, by its label (`GET /v1/rules`). Parametrized here rather
# than by `schema.parametrize()`, whose tests all share one node id: pytest-xdist tells
# tests apart by node id, and would run one of them.
OPERATIONS = {op.label: op for op in (found.ok() for found in schema.get_all_operations())}


@pytest.mark.parametrize("label", sorted(OPERATIONS))
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=strategies.data())
def test_the_openapi_document_holds_for_generated_requests(
    app: Flask, label: str, data: strategies.DataObject
) -> None:
    case = data.draw(OPERATIONS[label].as_strategy())
    case.call_and_validate(checks=ALL_CHECKS)


def test_a_database_out_of_reach_is_a_503_not_a_500(app_settings: Settings) -> None:
    nowhere = replace(app_settings, database_url="postgresql://postgres@127.0.0.1:9/nowhere")
    client = create_app(nowhere).test_client()
    answer = refused(client.get("/v1/games"), 503, "unavailable")
    assert "nowhere" not in json.dumps(answer)


@settings(max_examples=300, deadline=None)
@given(
    address=from_regex(MAIL_ADDRESS_FORM, fullmatch=True),
    deadline=from_regex(DEADLINE_FORM, fullmatch=True),
)
def test_what_the_document_shows_of_addresses_and_deadlines_is_taken(
    address: str, deadline: str
) -> None:
    # The document shows a part of what is read: all of that part must be taken.
    assert PlayerIn().validate({"name": "A", "email": address}) == {}
    assert 60 <= turn_clock.parse_deadline(deadline) <= 366 * 86400


def test_each_game_has_its_own_new_game_schema(client: FlaskClient) -> None:
    document = client.get("/openapi.json").get_json()
    body = document["paths"]["/v1/games"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/NewGame"}
    schemas = document["components"]["schemas"]
    mapping = schemas["NewGame"]["discriminator"]["mapping"]
    assert sorted(mapping) == sorted(game.name for game in games.all_games())
    for game in games.all_games():
        described = schemas[mapping[game.name].rsplit("/", 1)[1]]
        players = described["properties"]["players"]
        assert (players["minItems"], players["maxItems"]) == (min(game.players), max(game.players))
        options = schemas[described["properties"]["options"]["$ref"].rsplit("/", 1)[1]]
        assert sorted(options["properties"]) == sorted(game.options_schema().fields)
        assert options["additionalProperties"] is False


# Games whose options are also checked against each other and the player count
# (`Game.check_options`), which no JSON Schema of a game's options can say.
CROSS_CHECKED = sorted(
    game.name for game in games.all_games() if type(game).check_options is not Game.check_options
)
# What a request the document allows may still be refused for, by operation:
# each depends on more than the request, so no schema can promise acceptance.
BEYOND_THE_SCHEMA = {
    # The position, and the game: whether a move is legal now, and whether a
    # move the document allows (any game's) is one of this game's.
    "submitMove": {"illegal_move", "bad_move", "bad_notation"},
    # Whether the seat is still in the game (a seat resigns once).
    "resign": {"illegal_move"},
    # Where the URL's host resolves right now, and whether that is public.
    "setWebhook": {"webhook_unresolvable", "webhook_forbidden_address"},
    # Whether an invited name is a player's; `min` above `max`, which no schema
    # compares; options checked against each other, as for a new game.
    "postSeek": {"bad_request", "bad_players", "bad_options"},
    # The same for each standing seek, and two of them with the same terms.
    "setStandingSeeks": {"bad_request", "bad_players", "bad_options"},
    # The public-name rule: letters and marks of every script, which no ECMA-262
    # pattern without the `u` flag can list.
    "setProfile": {"bad_request"},
}


def not_text(body: Any) -> bool:
    """Whether a JSON body's strings hold NUL or a lone surrogate."""
    if not isinstance(body, dict | list | str):
        return False
    dumped = json.dumps(body, ensure_ascii=False)
    try:
        dumped.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return "\\u0000" in dumped


def accepted_unless_refused_beyond_the_schema(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis's positive_data_acceptance, but for the refusals the document names
    as depending on more than the request's shape, and but for a body whose strings hold
    what JSON allows and text does not (NUL, a lone UTF-16 surrogate): no ECMA-262
    pattern without the `u` flag can refuse a lone surrogate and keep emoji."""
    if response.status_code == 400 and not_text(case.body):
        return None
    if response.status_code == 422 and case.meta is not None:
        code = json.loads(response.content or b"{}").get("code")
        operation = case.operation.definition.raw.get("operationId")
        if code in BEYOND_THE_SCHEMA.get(operation, ()):
            return None
        named = case.body.get("game") if isinstance(case.body, dict) else None
        if operation == "createGame" and code == "bad_options" and named in CROSS_CHECKED:
            return None
    result: bool | None = positive_data_acceptance(ctx, response, case)
    return result


load_all_checks()
# Every stock check (the CLI's `--checks all`), positive_data_acceptance as its copy
# above that lets through the refusals the document names as beyond any schema.
ALL_CHECKS = [
    *(check for check in CHECKS.get_all() if check is not positive_data_acceptance),
    accepted_unless_refused_beyond_the_schema,
]

# The first seat's token of each game the stateful machine created, by game id.
SEAT_TOKENS: dict[str, str] = {}


@schema.auth(refresh_interval=None)
class SeatToken:
    """A game's seat token, given as the document's `seat` scheme is given.

    A link carries the game's id; the token is a secret no link may carry, so
    it is supplied as configured auth. schemathesis then probes each seat-only
    operation once without it and once with a wrong one (`ignored_auth`).
    """

    def get(self, case: Any, context: Any) -> str | None:
        return SEAT_TOKENS.get(str((case.path_parameters or {}).get("game_id", "")))

    def set(self, case: Any, token: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


class Stateful(schema.as_state_machine()):  # type: ignore[misc]
    """Follows the document's links (create -> state -> moves -> submission), as a seat."""

    def after_call(self, response: Any, case: Any) -> None:
        if case.method == "POST" and case.path == "/v1/games" and response.status_code == 201:
            created = response.json()
            SEAT_TOKENS[created["id"]] = created["seats"][0]["token"]

    def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
        # Every stock check, positive_data_acceptance as the copy that lets through
        # the refusals no schema can rule out (BEYOND_THE_SCHEMA).
        case.validate_response(response, checks=ALL_CHECKS, transport_kwargs=kwargs)


def test_the_document_holds_when_its_links_are_followed(app: Flask) -> None:
    Stateful.run(
        settings=settings(
            max_examples=25,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )


def test_http_as_clients_expect_it(
    client: FlaskClient, referee: Referee, game: dict[str, Any]
) -> None:
    game_id = game["id"]
    seat0 = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    path = f"/v1/games/{game_id}/moves"
    before = counts(referee)
    # curl's -d sends a form: not read as no body, but refused for its type.
    form = client.post(path, data="notation=3c4", headers=seat0)
    refused(form, 415, "unsupported_media_type")
    # A trailing newline is not printable text ($ would let it through).
    refused(client.post(path, json={"notation": "3c4\n"}, headers=seat0), 422, "bad_request")
    named = {"game": "subdivision", "players": [{"name": "Ann\n"}, {"name": "Bob"}]}
    refused(client.post("/v1/games", json=named), 422, "bad_request")
    # Undeclared query parameters and bodies nobody reads are refused like unknown fields.
    body = refused(client.get(f"/v1/games/{game_id}?verbose=1"), 422, "bad_request")
    assert body["errors"] == {"query": {"verbose": ["Unknown field."]}}
    refused(
        client.post(path + "?wiat=10", json={"notation": "3c4"}, headers=seat0), 422, "bad_request"
    )
    refused(
        client.post(f"/v1/games/{game_id}/resign", json={"really": True}, headers=seat0),
        422,
        "bad_request",
    )
    refused(client.get(f"/v1/games/{game_id}/state", json={"at": 1}), 422, "bad_request")
    assert counts(referee) == before
    created = client.post(
        "/v1/games", json={"game": "mandala", "players": [{"name": "A"}, {"name": "B"}]}
    )
    assert created.status_code == 201
    assert created.headers["Location"] == f"/v1/games/{created.get_json()['id']}"
    assert created.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("code", "status"),
    [("not_your_turn", 409), ("stale_version", 409), ("game_over", 409), ("illegal_move", 422)],
)
def test_a_refusal_made_when_deciding_has_the_status_of_the_same_refusal_made_at_once(
    code: str, status: int
) -> None:
    # The worker refuses a move that was the seat's turn when recorded but is
    # not when decided; `?wait=` answers that with the status the API gives
    # the same code at once (409), and a rule's refusal with 422.
    decided = Submission(
        id="0" * 32,
        game_id="1" * 32,
        seat=0,
        move={"type": "resign"},
        status=SubmissionStatus.REJECTED,
        code=code,
        reason="why",
        request_hash="",
        source=Source.REST,
        created_at="2026-01-01T00:00:00+00:00",
    )
    with pytest.raises(Refusal) as answer:
        games_api._answer(decided, waited=True)
    assert (status_of(answer.value), answer.value.code) == (status, code)
