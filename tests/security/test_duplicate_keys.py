"""A JSON body that names a member twice is refused, at any depth (RFC 7493 §2.3), by a real
`referee serve`: a validator in front of it that keeps the first of two names would
otherwise pass one move while the referee plays the other.
"""

from __future__ import annotations

import json

import pytest
import requests

from tests.stacks import Client, Service

PLAYERS = '[{"name": "Ann"}, {"name": "Bob"}]'
THREE = '[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}]'


def send(url: str, method: str, body: str, token: str | None = None) -> requests.Response:
    headers = {"Content-Type": "application/json", **Client.auth(token)}
    return requests.request(method, url, data=body.encode(), headers=headers, timeout=30)


def refused(answer: requests.Response, name: str) -> None:
    assert answer.status_code == 400, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "bad_json"
    assert f'"{name}" appears twice' in answer.json()["detail"]


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (f'{{"game": "subdivision", "players": {PLAYERS}, "players": {THREE}}}', "players"),
        (f'{{"game": "maniki", "game": "subdivision", "players": {PLAYERS}}}', "game"),
        (
            '{"game": "subdivision", "players": [{"name": "Ann", "name": "Eve"}, {"name": "B"}]}',
            "name",
        ),
        (
            f'{{"game": "subdivision", "players": {PLAYERS}, '
            '"options": {"seconds": 1, "seconds": 2}}',
            "seconds",
        ),
        # The same name spelled with an escape is the same name.
        (f'{{"game": "subdivision", "players": {PLAYERS}, "pl\\u0061yers": {THREE}}}', "players"),
    ],
)
def test_a_new_game_naming_a_member_twice_is_refused(
    embedded_service: Service, body: str, name: str
) -> None:
    before = Client(embedded_service.url).get("/v1/games").json()
    refused(send(embedded_service.url + "/v1/games", "POST", body), name)
    assert Client(embedded_service.url).get("/v1/games").json() == before


def test_a_move_naming_its_notation_twice_is_refused_and_nothing_is_played(
    embedded_service: Service,
) -> None:
    client = Client(embedded_service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
    first, second = (json.dumps(move["notation"]) for move in legal[:2])
    url = f"{embedded_service.url}/v1/games/{game_id}/moves"
    refused(send(url, "POST", f'{{"notation": {first}, "notation": {second}}}', token), "notation")
    move = json.dumps(legal[0]["move"])
    refused(send(url, "POST", f'{{"move": {move}, "move": {move}}}', token), "move")
    nested = legal[0]["move"] | {"type": "__twice__"}
    doubled = json.dumps(nested).replace(
        '"type": "__twice__"', f'"type": "x", "type": {json.dumps(legal[0]["move"]["type"])}'
    )
    refused(send(url, "POST", f'{{"move": {doubled}}}', token), "type")
    assert client.get(f"/v1/games/{game_id}", token).json()["version"] == 0
    # The same move, named once, is played.
    assert client.move(game_id, token, {"notation": legal[0]["notation"]}).status_code == 201


def test_a_webhook_naming_its_url_twice_is_refused(embedded_service: Service) -> None:
    client = Client(embedded_service.url)
    created = client.create("subdivision", 2)
    url = f"{embedded_service.url}/v1/games/{created['id']}/webhook"
    body = '{"url": "https://example.com/a", "url": "https://example.com/b"}'
    refused(send(url, "PUT", body, created["seats"][0]["token"]), "url")
