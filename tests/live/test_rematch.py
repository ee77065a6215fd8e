"""Rematch over REST against real processes: `referee serve` and a worker on PostgreSQL.

Both seats of a finished game accept (one by one, and in another game both
at the same moment): exactly one new game starts, with the same game,
players, options and deadline and a new seed, and each seat's answer
carries its token in it, which plays there and nowhere else.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from tests.stacks import TEST_API_KEY, Service

API_KEY = {"X-API-Key": TEST_API_KEY}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _finished_game(service: Service) -> tuple[str, list[str]]:
    created = requests.post(
        f"{service.url}/v1/games",
        headers=API_KEY,
        json={
            "game": "subdivision",
            "players": [{"name": "Ann"}, {"name": "Bob"}],
            "options": {"parks": "random"},
            "deadline": "48h",
        },
        timeout=30,
    ).json()
    tokens = [seat["token"] for seat in created["seats"]]
    resigned = requests.post(
        f"{service.url}/v1/games/{created['id']}/resign?wait=10",
        headers=_bearer(tokens[1]),
        timeout=30,
    )
    assert resigned.json()["submission"]["status"] == "accepted", resigned.text
    return created["id"], tokens


def _accept(service: Service, game_id: str, token: str) -> Any:
    answer = requests.post(
        f"{service.url}/v1/games/{game_id}/rematch", headers=_bearer(token), timeout=30
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_rematch_by_api_starts_once_when_both_accept(pg_service: Service) -> None:
    url = pg_service.url
    game_id, tokens = _finished_game(pg_service)
    first = _accept(pg_service, game_id, tokens[0])
    assert (first["accepted"], first["waiting_for"], first["game_id"], first["token"]) == (
        [0],
        [1],
        None,
        None,
    )
    assert _accept(pg_service, game_id, tokens[0]) == first  # again: no change
    second = _accept(pg_service, game_id, tokens[1])
    new_id = second["game_id"]
    assert new_id and second["waiting_for"] == [] and second["token"]
    assert requests.get(f"{url}/v1/games/{game_id}/rematch", timeout=10).json()["game_id"] == new_id
    old = requests.get(f"{url}/v1/games/{game_id}", timeout=10).json()
    new = requests.get(f"{url}/v1/games/{new_id}", timeout=10).json()
    assert (new["game"], new["options"], new["status"]) == (old["game"], old["options"], "active")
    assert new["seed_commitment"] != old["seed_commitment"]
    assert [s["name"] for s in new["seats"]] == ["Ann", "Bob"]
    # Ann's earlier answer had no token: accepting again gives it, for her seat alone.
    ann = _accept(pg_service, game_id, tokens[0])["token"]
    assert ann and ann != second["token"]
    mine = requests.get(f"{url}/v1/games/{new_id}/legal-moves", headers=_bearer(ann), timeout=10)
    assert mine.status_code == 200 and mine.json()["seat"] == 0
    # The old tokens are no seat of the new game.
    stale = requests.get(
        f"{url}/v1/games/{new_id}/legal-moves", headers=_bearer(tokens[0]), timeout=10
    )
    assert stale.status_code == 401


def test_seats_accepting_at_once_start_one_rematch(pg_service: Service) -> None:
    game_id, tokens = _finished_game(pg_service)
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda token: _accept(pg_service, game_id, token), tokens))
    started = {answer["game_id"] for answer in answers} - {None}
    assert len(started) == 1
    listed = requests.get(f"{pg_service.url}/v1/games", timeout=10).json()["games"]
    assert sum(1 for game in listed if game["id"] in started) == 1


def test_a_rematch_is_refused_while_the_game_runs_and_to_strangers(pg_service: Service) -> None:
    created = requests.post(
        f"{pg_service.url}/v1/games",
        headers=API_KEY,
        json={"game": "mandala", "players": [{"name": "Ann"}, {"name": "Bob"}]},
        timeout=30,
    ).json()
    url = f"{pg_service.url}/v1/games/{created['id']}/rematch"
    running = requests.post(url, headers=_bearer(created["seats"][0]["token"]), timeout=10)
    assert (running.status_code, running.json()["code"]) == (409, "still_in_play")
    stranger = requests.post(url, headers=_bearer("forged"), timeout=10)
    assert (stranger.status_code, stranger.headers["Content-Type"]) == (
        401,
        "application/problem+json",
    )
    unknown = requests.post(f"{pg_service.url}/v1/games/{'0' * 32}/rematch", timeout=10)
    assert unknown.status_code == 404
