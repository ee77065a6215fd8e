"""Whole games played over HTTP only, on PostgreSQL + Redis + a worker and on the embedded default.

The players are HTTP clients that know only what the API tells them: the
Subdivision player picks from `legal-moves`, the MaNiKi player solves the
card from its view with a search written here from the rules. After the
end the exported record must replay, with `referee replay`, to exactly the
states the API served along the way.
"""

from __future__ import annotations

import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from referee.cli import main
from referee.record import chain_problems, loads
from referee.rng import commitment
from tests.stacks import Client, Service
from tests.tiers import starts_servers

pytestmark = pytest.mark.long


@pytest.fixture(params=["postgres", "embedded"])
@starts_servers
def service(request: pytest.FixtureRequest) -> Service:
    name = "pg_service" if request.param == "postgres" else "embedded_service"
    found: Service = request.getfixturevalue(name)
    return found


# -- a MaNiKi player, from the rules file ------------------------------------


def _step(red: str, blue: str, order: str) -> tuple[str, str] | None:
    """One order on (red, blue), each stool bottom to top; None if it cannot be done."""
    if order == "KI":
        return (red + blue[-1], blue[:-1]) if blue else None
    if order == "LO":
        return (red[:-1], blue + red[-1]) if red else None
    if order == "NI":
        return (red[:-1] + blue[-1], blue[:-1] + red[-1]) if red and blue else None
    if order == "MA":
        return (red[1:] + red[0], blue) if len(red) > 1 else None
    return (red, blue[1:] + blue[0]) if len(blue) > 1 else None


def solve(position: str, target: str) -> list[str]:
    """A shortest non-empty sequence of orders from `position` to `target`."""
    start = tuple(s.replace("-", "") for s in position.split("/"))
    goal = tuple(s.replace("-", "") for s in target.split("/"))
    queue: deque[tuple[tuple[str, str], list[str]]] = deque([(start, [])])
    seen: set[tuple[str, str]] = set()
    while queue:
        (red, blue), path = queue.popleft()
        for order in ("KI", "LO", "NI", "MA", "SO"):
            after = _step(red, blue, order)
            if after is None:
                continue
            if after == goal:
                return [*path, order]
            if after not in seen:
                seen.add(after)
                queue.append((after, [*path, order]))
    raise AssertionError(f"no way from {position} to {target}")


# -- the games ------------------------------------------------------------------


def check_secrets(texts: list[str], seed: str, tokens: list[str]) -> None:
    for text in texts:
        assert seed not in text
        for token in tokens:
            assert token not in text


def play_subdivision(client: Client, created: dict[str, Any]) -> list[str]:
    """Play to the end; return every response body seat 1 and spectators saw."""
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    seen: list[str] = []
    for turn in range(200):
        summary = client.get(f"/v1/games/{game_id}")
        if summary.json()["status"] == "over":
            return seen
        seen.append(summary.text)
        seat = summary.json()["to_act"][0]
        legal = client.get(f"/v1/games/{game_id}/legal-moves", tokens[seat]).json()
        choice = legal["moves"][turn * 7 % len(legal["moves"])]
        body = {"notation": choice["notation"]} if turn % 2 else {"move": choice["move"]}
        answer = client.move(game_id, tokens[seat], body)
        assert answer.status_code == 201, answer.text
        assert answer.json()["submission"]["seq"] == legal["version"] + 1
        for viewer in (None, tokens[1]):
            seen.append(client.get(f"/v1/games/{game_id}/state", viewer).text)
        seen.append(client.get(f"/v1/games/{game_id}/moves").text)
    raise AssertionError("the game did not end")


def play_maniki(client: Client, created: dict[str, Any]) -> list[str]:
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    seen: list[str] = []
    for turn in range(200):
        envelope = client.get(f"/v1/games/{game_id}/state", tokens[1]).json()
        seen.append(json.dumps(envelope))
        if envelope["status"] == "over":
            return seen
        state = envelope["state"]
        if turn % 5 == 3:
            # Seat 1 passes; seat 0 then wins the card alone.
            answer = client.move(game_id, tokens[1], {"notation": "pass"})
            assert answer.status_code == 201, answer.text
        orders = solve(state["position"], state["target"])
        seat = 0 if turn % 5 == 3 else turn % 2
        answer = client.move(game_id, tokens[seat], {"notation": " ".join(orders)})
        assert answer.status_code == 201, answer.text
        after = client.get(f"/v1/games/{game_id}/state").json()
        assert after["state"]["last_round"]["winner"] == seat
        seen.append(json.dumps(after))
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("game", ["subdivision", "maniki"])
def test_a_whole_game_over_http(service: Service, game: str, tmp_path: Path) -> None:
    client = Client(service.url)
    created = client.create(game, 2)
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    seen = (play_subdivision if game == "subdivision" else play_maniki)(client, created)

    summary = client.get(f"/v1/games/{game_id}").json()
    assert summary["status"] == "over" and summary["result"]["winners"]
    seed = summary["seed"]
    assert commitment(seed) == created["seed_commitment"] == summary["seed_commitment"]
    # Nothing seat 1 or a spectator saw during the game held the seed or seat 0's token.
    check_secrets(seen, seed, [tokens[0]])

    text = client.get(f"/v1/games/{game_id}/log.jsonl").text
    record = loads(text)
    assert record.header.seed == seed and not chain_problems(record)
    assert len(record.entries) == summary["version"]
    verified = client.get(f"/v1/games/{game_id}/verify").json()
    assert verified["chain_valid"] and verified["replay_matches"] and verified["seed_matches"]

    path = tmp_path / "game.jsonl"
    path.write_text(text)
    runner = CliRunner()
    assert runner.invoke(main, ["verify", str(path)]).exit_code == 0
    version = summary["version"]
    for at in sorted({0, 1, version // 3, version // 2, version - 1, version}):
        for seat, token in ((None, None), (1, tokens[1])):
            served = client.get(f"/v1/games/{game_id}/state", token, at=at).json()
            args = ["replay", str(path), "--at", str(at), "--json"]
            done = runner.invoke(main, args + ([] if seat is None else ["--seat", str(seat)]))
            assert done.exit_code == 0, done.output
            assert json.loads(done.output) == served

    refused = client.move(game_id, tokens[0], {"notation": "resign"})
    assert refused.status_code == 409 and refused.json()["code"] == "game_over"


def test_a_sealed_round_stays_secret_until_decided(service: Service) -> None:
    client = Client(service.url)
    created = client.create("maniki", 3, mode="sealed")
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    state = client.get(f"/v1/games/{game_id}/state").json()["state"]
    orders = solve(state["position"], state["target"])
    answer = client.move(game_id, tokens[0], {"notation": " ".join(orders)})
    assert answer.status_code == 201, answer.text
    sub = client.wait_decided(answer.json()["submission"]["id"], tokens[0])
    assert sub["status"] == "accepted"
    secret = sub["move"]["orders"]

    for viewer in (None, tokens[1]):
        moves = client.get(f"/v1/games/{game_id}/moves", viewer).json()["moves"]
        assert [(m["notation"], m["move"], m["hash"]) for m in moves] == [("sealed", None, None)]
        other = client.get(f"/v1/submissions/{sub['id']}", viewer).json()["submission"]
        assert other["move"] == {} and other["status"] == "accepted"
    log = client.get(f"/v1/games/{game_id}/log.jsonl").text.splitlines()
    assert json.loads(log[1])["move"] == "sealed" and "seed" not in json.loads(log[0])
    assert " ".join(secret) not in log[1]

    for seat in (1, 2):
        done = client.move(game_id, tokens[seat], {"notation": "pass"})
        assert done.status_code == 201, done.text
    moves = client.get(f"/v1/games/{game_id}/moves").json()["moves"]
    assert [m["notation"] for m in moves] == [" ".join(secret), "pass", "pass"]


def test_a_bot_plays_its_seat_and_suggest_replays_its_moves(
    service: Service, tmp_path: Path
) -> None:
    """A person against a `random` bot (which thinks no time) at Mandala: the bot answers
    each of the person's moves; the person resigns after three."""
    client = Client(service.url)
    body = {"game": "mandala", "players": [{"name": "Ann"}, {"name": "Robo", "bot": "random"}]}
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created = answer.json()
    game_id, token = created["id"], created["seats"][0]["token"]
    assert created["seats"][1]["token"] is None and created["seats"][1]["bot"] == "random"
    summary: dict[str, Any] = {}
    moved = 0
    for _ in range(600):
        summary = client.get(f"/v1/games/{game_id}").json()
        if summary["status"] == "over":
            break
        if 0 in summary["to_act"]:
            legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
            move = "resign" if moved == 3 else legal[0]["notation"]
            answer = client.move(game_id, token, {"notation": move})
            assert answer.status_code == 201, answer.text
            moved += 1
        else:
            time.sleep(0.05)
    assert summary["status"] == "over", summary
    assert summary["seats"][1]["bot"] == "random" and summary["deadlines"] is None
    text = client.get(f"/v1/games/{game_id}/log.jsonl").text
    record = loads(text)
    assert record.header.bots == (None, "random")
    path = tmp_path / "bot.jsonl"
    path.write_text(text)
    runner = CliRunner()
    bot_moves = [entry for entry in record.entries if entry.seat == 1]
    assert bot_moves
    for entry in bot_moves:
        args = ["suggest", str(path), "--seat", "1", "--at", str(entry.seq - 1)]
        done = runner.invoke(main, args)
        assert done.exit_code == 0 and done.stdout.strip() == entry.move, done.output


def test_serve_says_where_the_lobby_is(service: Service) -> None:
    # `referee serve` without REFEREE_PUBLIC_URL: the address it listens on; a page there.
    said = service.server.output()
    assert f"referee: the lobby is at {service.url}/  (the API: {service.url}/v1/rules)" in said
    assert requests.get(f"{service.url}/", timeout=10).status_code == 200
