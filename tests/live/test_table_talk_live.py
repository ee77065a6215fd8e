"""Table talk against real servers: messages reach the game's seats live (their game
streams, their players' streams) and nowhere else.

Each test runs against two stacks, as the streams' tests do: `referee serve` +
`referee worker` on PostgreSQL and Redis, and the embedded default (`referee serve`
alone on SQLite). Games are made over HTTP with the API key, so every seat's token
comes back; players follow with personal tokens, and sign in with sessions, made in the
service on the stack's database.

The leak test follows one message through every channel a spectator and another
game's seat (and its player) can reach, and finds it in none, while the game's own
seats get it.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from referee.service import Referee
from referee.service.players import PLAY, READ, open_session
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.live.test_me_events import player_token
from tests.servers import redis_url
from tests.stacks import TEST_API_KEY, Client, Service, base_env, start_server
from tests.tiers import starts_servers

PATIENCE = 30.0


@pytest.fixture(scope="module", params=["redis", "embedded"])
@starts_servers
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp(f"talk-{request.param}")
    settings = {
        "REFEREE_EVENTS_KEEPALIVE": "0.5",
        "REFEREE_EVENTS_PER_CLIENT": "20",
        "REFEREE_API_KEY": TEST_API_KEY,
    }
    if request.param == "redis":
        database = request.getfixturevalue("pg_database")
        env = base_env(
            DATABASE_URL=database,
            REDIS_URL=redis_url(),
            REFEREE_QUEUE=f"referee-test-{uuid.uuid4().hex[:8]}",
            **settings,
        )
    else:
        database = f"sqlite:///{tmp / 'referee.sqlite3'}"
        env = base_env(DATABASE_URL=database, **settings)
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    if request.param == "redis":
        service.start_worker()
    yield service
    service.stop()


@dataclass
class Sse:
    """One event stream read on a thread of its own: every byte it sent (`raw`), and its
    events (`data` parsed; `id` None for an event without one)."""

    response: requests.Response
    events: queue.Queue[tuple[str | None, dict[str, Any]] | None] = field(
        default_factory=queue.Queue
    )
    raw: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, url: str, headers: dict[str, str] | None = None) -> Sse:
        response = requests.get(url, headers=headers or {}, stream=True, timeout=PATIENCE)
        assert response.status_code == 200, (url, response.status_code, response.text)
        stream = cls(response)
        threading.Thread(target=stream.read, daemon=True).start()
        return stream

    def read(self) -> None:
        lines: list[str] = []
        try:
            for line in self.response.iter_lines(chunk_size=1, decode_unicode=True):
                self.raw.append(line)
                if line.startswith(":"):
                    continue
                if line:
                    lines.append(line)
                elif lines:
                    fields = dict(entry.split(": ", 1) for entry in lines)
                    if "data" in fields:
                        self.events.put((fields.get("id"), json.loads(fields["data"])))
                    lines = []
        except (requests.RequestException, OSError, AttributeError, ValueError):
            pass  # closed by the test
        self.events.put(None)

    def until(self, wanted: Any) -> list[dict[str, Any]]:
        """The events up to the first `wanted(data)` takes, that one last."""
        seen = []
        deadline = time.monotonic() + PATIENCE
        while True:
            item = self.events.get(timeout=max(deadline - time.monotonic(), 0.01))
            assert item is not None, f"the stream ended: {self.raw[-5:]}"
            seen.append(item[1])
            if wanted(item[1]):
                return seen

    def text(self) -> str:
        return "\n".join(self.raw)

    def close(self) -> None:
        self.response.close()


def _game(client: Client, *players: tuple[str, str | None]) -> tuple[str, list[str]]:
    body = {"game": "subdivision", "players": [{"name": n, "email": e} for n, e in players]}
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    made = answer.json()
    return made["id"], [seat["token"] for seat in made["seats"]]


def _say(client: Client, game_id: str, token: str, words: str) -> dict[str, Any]:
    answer = client.post(f"/v1/games/{game_id}/messages", {"text": words}, token)
    assert answer.status_code == 201, answer.text
    said: dict[str, Any] = answer.json()
    return said


def _play(client: Client, game_id: str, tokens: list[str]) -> int:
    """Whoever acts plays its first legal move, decided before returning; the new version."""
    (seat,) = client.get(f"/v1/games/{game_id}").json()["to_act"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", tokens[seat]).json()
    answer = client.move(game_id, tokens[seat], {"move": legal["moves"][0]["move"]})
    assert answer.status_code == 201, answer.text
    version: int = client.get(f"/v1/games/{game_id}").json()["version"]
    return version


def _session(stack: Service, address: str) -> str:
    local = Referee(Settings(database_url=stack.database_url))
    try:
        # Written as the server's clock reads it, so that it expires when the server says.
        with on_server_clock():
            return open_session(local, address)
    finally:
        local.close()


def _addresses() -> tuple[str, str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"ann-{tag}@example.org", f"bob-{tag}@example.org", f"cy-{tag}@example.org"


def test_a_message_reaches_the_seats_live_and_no_one_else(stack: Service) -> None:
    client = Client(stack.url)
    ann, bob, cy = _addresses()
    game_id, (ann_seat, bob_seat) = _game(client, ("Ann", ann), ("Bob", bob))
    other_id, (cy_seat, dee_seat) = _game(client, ("Cy", cy), ("Dee", None))
    secret = f"meet me at dawn {uuid.uuid4().hex}"
    games = f"{stack.url}/v1/games"
    streams = {
        "ann's game stream": Sse.open(f"{games}/{game_id}/events", Client.auth(ann_seat)),
        "ann's player stream": Sse.open(
            f"{stack.url}/v1/me/events", Client.auth(player_token(stack, ann, [READ]))
        ),
        "a spectator's game stream": Sse.open(f"{games}/{game_id}/events"),
        "a spectator's page stream": Sse.open(f"{stack.url}/g/{game_id}/events"),
        "another game's seat's page stream": Sse.open(
            f"{stack.url}/g/{game_id}/events", {"Cookie": f"seat={cy_seat}"}
        ),
        "another game's player's stream": Sse.open(
            f"{stack.url}/v1/me/events", Client.auth(player_token(stack, cy, [READ, PLAY]))
        ),
    }
    try:
        # Another game's seat cannot follow this game as a seat at all.
        refused = requests.get(
            f"{games}/{game_id}/events", headers=Client.auth(cy_seat), timeout=PATIENCE
        )
        assert refused.status_code == 401 and secret not in refused.text
        said = _say(client, game_id, bob_seat, secret)
        version = _play(client, game_id, [ann_seat, bob_seat])
        other_version = _play(client, other_id, [cy_seat, dee_seat])

        # The seats are told: the message on the game's stream (without an id), then the move.
        seen = streams["ann's game stream"].until(lambda data: data.get("version") == version)
        assert {"kind": "message", "game_id": game_id, **said} in seen
        mine = streams["ann's player stream"].until(lambda data: data.get("kind") == "message")
        assert mine[-1]["text"] == secret and mine[-1]["unread"] == 1
        assert mine[-1]["my_seat"] == 0 and mine[-1]["game_id"] == game_id
        # Each of the others has had the move after the message: the message came first
        # if it came at all. It did not, anywhere.
        for name in ("a spectator's game stream", "a spectator's page stream"):
            streams[name].until(lambda data: data.get("version") == version)
        streams["another game's seat's page stream"].until(
            lambda data: data.get("version") == version
        )
        streams["another game's player's stream"].until(
            lambda data: data.get("game_id") == other_id and data.get("version") == other_version
        )
        for name, stream in streams.items():
            if name.startswith("ann"):
                continue
            assert secret not in stream.text(), name
            assert '"kind":"message"' not in stream.text(), name
    finally:
        for stream in streams.values():
            stream.close()

    # Nor any answer a spectator, another game's seat, or its player reads.
    cy_player = player_token(stack, cy, [READ, PLAY])
    readers: dict[str, dict[str, str]] = {
        "spectator": {},
        "another game's seat": Client.auth(cy_seat),
        "another game's player": Client.auth(cy_player),
    }
    paths = [
        "",
        "/state",
        f"/state?at={version}",
        "/moves",
        "/log.jsonl",
        "/verify",
        "/board.svg",
        "/rematch",
        "/messages",
        "/note",
    ]
    for who, headers in readers.items():
        for path in paths:
            answer = requests.get(f"{games}/{game_id}{path}", headers=headers, timeout=PATIENCE)
            assert secret not in answer.text, (who, path, answer.status_code)
        answer = requests.get(f"{games}/{game_id}/messages", headers=headers, timeout=PATIENCE)
        assert answer.status_code in (401, 403), (who, answer.status_code)
    for headers in ({}, {"Cookie": f"seat={cy_seat}"}):
        page = requests.get(f"{stack.url}/g/{game_id}", headers=headers, timeout=PATIENCE)
        assert page.status_code == 200 and secret not in page.text and 'id="talk"' not in page.text
        script = requests.get(f"{stack.url}/g/{game_id}/messages", headers=headers, timeout=60)
        assert script.status_code == 403 and secret not in script.text
    cy_browser = {"Cookie": f"player={_session(stack, cy)}"}
    for path in ("/me", "/v1/me/games"):
        answer = requests.get(f"{stack.url}{path}", headers=cy_browser, timeout=PATIENCE)
        assert answer.status_code == 200 and secret not in answer.text, path
        assert game_id not in answer.text, path
    # The seats' own pages show it, escaped, and the players' homes mark it unread.
    page = requests.get(
        f"{stack.url}/g/{game_id}", headers={"Cookie": f"seat={ann_seat}"}, timeout=PATIENCE
    )
    assert secret in page.text
    bob_home = requests.get(
        f"{stack.url}/me", headers={"Cookie": f"player={_session(stack, bob)}"}, timeout=60
    )
    assert "new message" not in bob_home.text, "a seat's own messages are not news to it"


def test_a_muted_writer_is_not_told_to_the_seat_that_muted_it(stack: Service) -> None:
    client = Client(stack.url)
    game_id, tokens = _game(client, ("Ann", None), ("Bob", None), ("Eve", None))
    assert client.http.put(
        f"{stack.url}/v1/games/{game_id}/mutes/2", headers=Client.auth(tokens[0]), timeout=60
    ).json() == {"muted": [2]}
    ann = Sse.open(f"{stack.url}/v1/games/{game_id}/events", Client.auth(tokens[0]))
    bob = Sse.open(f"{stack.url}/v1/games/{game_id}/events", Client.auth(tokens[1]))
    try:
        _say(client, game_id, tokens[2], "eve talks too much")
        _say(client, game_id, tokens[1], "bob says hi")
        heard = ann.until(lambda data: data.get("kind") == "message")
        assert [data["text"] for data in heard if data.get("kind")] == ["bob says hi"]
        heard = bob.until(lambda data: data.get("text") == "bob says hi")
        assert [data["text"] for data in heard if data.get("kind")] == [
            "eve talks too much",
            "bob says hi",
        ]
    finally:
        ann.close()
        bob.close()


def test_seats_writing_at_once_get_numbers_of_their_own_and_the_limit_holds(
    stack: Service,
) -> None:
    client = Client(stack.url)
    game_id, tokens = _game(client, ("Ann", None), ("Bob", None), ("Cy", None), ("Dee", None))

    def write(n: int) -> int:
        return _say(client, game_id, tokens[n % 4], f"at once {n}")["seq"]

    with ThreadPoolExecutor(8) as pool:
        numbers = sorted(pool.map(write, range(24)))
    assert numbers == list(range(1, 25))
    listed = client.get(f"/v1/games/{game_id}/messages", tokens[0]).json()["messages"]
    assert [said["seq"] for said in listed] == numbers
    # Ann has written 6 of 30 this hour.
    for n in range(24):
        _say(client, game_id, tokens[0], f"more {n}")
    refused = client.post(f"/v1/games/{game_id}/messages", {"text": "too many"}, tokens[0])
    assert refused.status_code == 429
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "too_many_messages"
    assert 3500 <= int(refused.headers["Retry-After"]) <= 3600
    assert _say(client, game_id, tokens[1], "Bob may")["seq"] == 49
