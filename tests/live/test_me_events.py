"""`GET /v1/me/events`: one stream of a player's games, against real servers.

Each test runs against two stacks, as the game streams' tests do: `referee
serve` + `referee worker` on PostgreSQL and Redis (the worker's
announcements reach the API through Redis), and the embedded default
(`referee serve` alone on SQLite). Games are made and played over HTTP
with the API key (a trusted client), so every seat's token comes back;
the player follows with a personal token made in the service on the
stack's database. Waits are bounded only so that a broken server fails
the test instead of hanging it.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
import requests

from referee.service import Referee
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.profiles import set_profile
from referee.service.tokens import make_token
from referee.settings import Settings
from tests.live.test_events import Stream as GameStream
from tests.stacks import TEST_API_KEY, Client, Service, either_stack
from tests.tiers import starts_servers

MAX_FOLLOWERS = 4
PATIENCE = 30.0


@pytest.fixture(scope="module", params=["redis", "embedded"])
@starts_servers
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp(f"me-events-{request.param}")
    settings = {
        "REFEREE_EVENTS_KEEPALIVE": "0.5",
        "REFEREE_EVENTS_MAX": str(MAX_FOLLOWERS),
        "REFEREE_API_KEY": TEST_API_KEY,
    }
    service = either_stack(request, tmp, settings)
    yield service
    service.stop()


def player_token(stack: Service, address: str, scopes: list[str]) -> str:
    """A personal token of `address`, made in the service on the stack's database."""
    local = Referee(Settings(database_url=stack.database_url))
    try:
        signed = Player(address, frozenset({READ, PLAY, MANAGE}))
        return make_token(local, signed, "test", scopes).secret
    finally:
        local.close()


@dataclass
class Event:
    id: int
    data: dict[str, Any] | None


@dataclass
class MyStream:
    """One stream of a player's events, read line by line on a thread of its own."""

    response: requests.Response
    items: queue.Queue[Event | None] = field(default_factory=queue.Queue)

    @classmethod
    def open(cls, url: str, token: str | None, last: str | None = None) -> MyStream:
        headers = Client.auth(token)
        if last is not None:
            headers["Last-Event-ID"] = last
        response = requests.get(
            f"{url}/v1/me/events", headers=headers, stream=True, timeout=PATIENCE
        )
        stream = cls(response)
        if response.status_code == 200:
            threading.Thread(target=stream.read, daemon=True).start()
        return stream

    def read(self) -> None:
        lines: list[str] = []
        try:
            for line in self.response.iter_lines(chunk_size=1, decode_unicode=True):
                if line.startswith(":"):
                    continue
                if line:
                    lines.append(line)
                elif lines:
                    fields = dict(entry.split(": ", 1) for entry in lines)
                    data = json.loads(fields["data"]) if "data" in fields else None
                    self.items.put(Event(int(fields["id"]), data))
                    lines = []
        except (requests.RequestException, OSError, AttributeError, ValueError):
            pass  # closed by the test
        self.items.put(None)

    def next(self) -> Event:
        found = self.items.get(timeout=PATIENCE)
        assert found is not None, "the stream ended"
        return found

    def mark(self) -> int:
        """The next item, which must be an `id:` alone (a mark to resume from)."""
        found = self.next()
        assert found.data is None, found
        return found.id

    def event(self) -> dict[str, Any]:
        found = self.next()
        assert found.data is not None, found
        return found.data

    def close(self) -> None:
        self.response.close()


def new_game(client: Client, game: str, players: list[tuple[str, str | None]]) -> dict[str, Any]:
    body = {"game": game, "players": [{"name": n, "email": e} for n, e in players]}
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def play_first_legal(client: Client, game_id: str, token: str) -> None:
    """The seat of `token` plays its first legal move, decided before returning."""
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()
    answer = client.move(game_id, token, {"move": legal["moves"][0]["move"]})
    assert answer.status_code in (201, 202), answer.text
    if answer.status_code == 202:  # a worker slow to start on a busy machine
        decided = client.wait_decided(answer.json()["submission"]["id"], token, PATIENCE)
        assert decided["status"] == "accepted", decided


def play_turn(client: Client, made: dict[str, Any]) -> int:
    """The first seat to act in the game `made` plays; returns that seat."""
    (seat, *_) = client.get(f"/v1/games/{made['id']}").json()["to_act"]
    play_first_legal(client, made["id"], made["seats"][seat]["token"])
    return int(seat)


def resign(client: Client, game_id: str, token: str) -> None:
    answer = client.post(f"/v1/games/{game_id}/resign?wait=20", None, token)
    assert answer.ok, answer.text


def test_my_games_starting_changing_asking_and_ending_reach_me_and_others_do_not(
    stack: Service,
) -> None:
    client = Client(stack.url)
    ann = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    stream = MyStream.open(stack.url, player_token(stack, ann, [READ]))
    try:
        assert stream.response.status_code == 200, stream.response.text
        assert stream.response.headers["Content-Type"].startswith("text/event-stream")
        first = stream.mark()
        # Another player's game, made and played: nothing of it reaches Ann.
        other = new_game(client, "subdivision", [("Cy", "cy@example.org"), ("Dee", None)])
        play_first_legal(client, other["id"], other["seats"][0]["token"])
        # A game with Ann's address on seat 1: Bob (seat 0) is to act.
        made = new_game(client, "subdivision", [("Bob", None), ("Ann", ann.upper())])
        game_id = made["id"]
        bob, ann_seat = (seat["token"] for seat in made["seats"])
        started = stream.event()
        assert started == {
            "game_id": game_id,
            "game": "subdivision",
            "kind": "started",
            "version": 0,
            "status": "active",
            "to_act": [0],
            "my_turn": False,
            "result": None,
        }
        play_first_legal(client, other["id"], other["seats"][1]["token"])
        play_first_legal(client, game_id, bob)
        asked = stream.event()
        assert (asked["game_id"], asked["kind"], asked["version"]) == (game_id, "your_turn", 1)
        assert asked["my_turn"] is True and asked["to_act"] == [1]
        play_first_legal(client, game_id, ann_seat)
        moved = stream.event()
        assert (moved["kind"], moved["version"], moved["my_turn"]) == ("changed", 2, False)
        resign(client, game_id, bob)
        ended = stream.event()
        assert (ended["kind"], ended["status"]) == ("ended", "over")
        assert ended["result"]["winners"] == [1]
        # Events carry no view: nothing a seat could hide.
        assert "view" not in ended and "state" not in ended
    finally:
        stream.close()
    assert first > 0


def test_last_event_id_resumes_with_what_changed_meanwhile(
    stack: Service, server_now: datetime
) -> None:
    client = Client(stack.url)
    ann = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    token = player_token(stack, ann, [READ, PLAY])
    before = new_game(client, "mandala", [("Ann", ann), ("Bob", None)])
    stream = MyStream.open(stack.url, token)
    mark = stream.mark()
    stream.close()
    # While the client is away: a move in its game, and a new game of its.
    mover = play_turn(client, before)
    fresh = new_game(client, "maniki", [("Cy", None), ("Ann", ann)])

    resumed = MyStream.open(stack.url, token, last=str(mark))
    try:
        got = [resumed.next(), resumed.next(), resumed.next()]
        # The games changed since the mark (with a few minutes' slack), oldest change first,
        # each as it stands now; then a mark past both.
        assert [(e.data or {}).get("game_id") for e in got[:2]] == [before["id"], fresh["id"]]
        kinds = [(e.data or {}).get("kind") for e in got[:2]]
        assert kinds == [{0: "changed", 1: "your_turn"}[mover], "started"]
        assert got[0].data is not None and got[0].data["version"] == 1
        assert got[2].data is None and got[2].id >= got[1].id > mark
    finally:
        resumed.close()

    # A client whose mark is past every change gets none again, only what comes next.
    ahead = str(int(server_now.timestamp() * 10**6) + 3600 * 10**6)
    later = MyStream.open(stack.url, token, last=ahead)
    try:
        assert later.mark() >= int(ahead)
        play_turn(client, before)
        moved = later.event()
        assert (moved["game_id"], moved["version"]) == (before["id"], 2)
    finally:
        later.close()


def named_player(stack: Service, client: Client, name: str) -> tuple[str, str]:
    """A player seated by a trusted client and named `name`: its address and a token."""
    address = f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.org"
    new_game(client, "subdivision", [(name, address), ("Someone", None)])
    local = Referee(Settings(database_url=stack.database_url))
    try:
        signed = Player(address, frozenset({READ, PLAY, MANAGE}))
        set_profile(local, signed, f"{name}{uuid.uuid4().hex[:6]}")
        return address, make_token(local, signed, "test", [READ, PLAY]).secret
    finally:
        local.close()


def test_my_open_games_tell_me_when_they_invite_start_and_are_withdrawn(stack: Service) -> None:
    client = Client(stack.url)
    _ann, ann = named_player(stack, client, "Ann")
    _bob, bob = named_player(stack, client, "Bob")
    ann_name = client.get("/v1/me/profile", ann).json()["name"]
    bob_name = client.get("/v1/me/profile", bob).json()["name"]
    stream = MyStream.open(stack.url, bob)
    try:
        mark = stream.mark()
        private = client.post("/v1/seeks", {"game": "subdivision", "invite": [bob_name]}, ann)
        assert private.status_code == 201, private.text
        seek_id = private.json()["id"]
        assert stream.event() == {
            "kind": "seek_invited",
            "seek_id": seek_id,
            "game": "subdivision",
            "game_id": None,
            "by": ann_name,
            "seated": [ann_name],
        }
        # Bob's join fills it: the new game starts, and the seek says which game it is.
        assert client.post(f"/v1/seeks/{seek_id}/join", None, bob).status_code == 200
        both = {event["kind"]: event for event in (stream.event(), stream.event())}
        assert both.keys() == {"started", "seek_started"}
        game_id = both["started"]["game_id"]
        assert both["seek_started"]["game_id"] == game_id and game_id
        assert both["seek_started"]["seated"] == [ann_name, bob_name]
        body = {"game": "mandala", "players": {"min": 2, "max": 3}}
        public = client.post("/v1/seeks", body, ann).json()["id"]
        assert client.post(f"/v1/seeks/{public}/join", None, bob).status_code == 200
        answer = requests.delete(
            f"{stack.url}/v1/seeks/{public}", headers=Client.auth(ann), timeout=PATIENCE
        )
        assert answer.status_code == 200, answer.text
        withdrawn = stream.event()
        assert (withdrawn["kind"], withdrawn["seek_id"]) == ("seek_withdrawn", public)
        assert "@" not in json.dumps(withdrawn)
    finally:
        stream.close()
    # A client back from before all of it hears what its open games told, once each.
    resumed = MyStream.open(stack.url, bob, last=str(mark))
    try:
        heard = []
        while (event := resumed.next()).data is not None:
            heard.append(event.data)
        # Each seek once, as it stands (the invitation became a start); with them the
        # games changed in the slack (the new one, and the one that made Bob a player).
        seeks = [(e["kind"], e["seek_id"]) for e in heard if "seek_id" in e]
        assert seeks == [("seek_started", seek_id), ("seek_withdrawn", public)]
        assert ("started", game_id) in [(e["kind"], e.get("game_id")) for e in heard]
    finally:
        resumed.close()


def test_who_may_follow_and_what_is_refused(stack: Service) -> None:
    client = Client(stack.url)
    url = f"{stack.url}/v1/me/events"
    ann = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    made = new_game(client, "subdivision", [("Ann", ann), ("Bob", None)])

    def status(headers: dict[str, str], **params: str) -> tuple[int, str]:
        answer = requests.get(url, headers=headers, params=params, timeout=PATIENCE, stream=True)
        answer.close()
        return answer.status_code, answer.headers.get("Content-Type", "")

    problem = "application/problem+json"
    assert status({}) == (401, problem)
    assert status(Client.auth(made["seats"][0]["token"])) == (401, problem)
    assert status(Client.auth("rp_not-a-token")) == (401, problem)
    play_only = Client.auth(player_token(stack, ann, [PLAY]))
    assert status(play_only) == (403, problem)
    reader = Client.auth(player_token(stack, ann, [READ]))
    assert status({**reader, "Last-Event-ID": "yesterday"}) == (400, problem)
    assert status(reader, since="-1") == (400, problem)
    assert status(reader, seat="0") == (422, problem)


def test_player_streams_count_with_game_streams(stack: Service) -> None:
    client = Client(stack.url)
    ann = f"ann-{uuid.uuid4().hex[:6]}@example.org"
    token = player_token(stack, ann, [READ])
    game_id = new_game(client, "subdivision", [("Ann", ann), ("Bob", None)])["id"]

    def player_stream() -> requests.Response:
        return MyStream.open(stack.url, token).response

    def game_stream() -> requests.Response:
        return GameStream.open(stack.url, game_id).response

    opened: list[requests.Response] = []
    try:
        # Streams closed by earlier tests are let go at their next keepalive (on a busy
        # machine, some keepalives later), so admission is tried until refused rather
        # than counted exactly: one of each kind in turn, a player's first; and tried
        # again, a moment later, until both kinds got in before the refusal.
        refused = None
        give_up = time.monotonic() + PATIENCE
        while refused is None or (len(opened) < 2 and time.monotonic() < give_up):
            for answer in opened:
                answer.close()
            opened, refused = [], None
            time.sleep(0.5)
            for n in range(MAX_FOLLOWERS + 1):
                answer = (player_stream, game_stream)[n % 2]()
                if answer.status_code != 200:
                    refused = answer
                    break
                opened.append(answer)
        assert refused is not None and 2 <= len(opened) <= MAX_FOLLOWERS
        assert refused.status_code == 503 and refused.json()["code"] == "too_many_followers"
        assert int(refused.headers["Retry-After"]) > 0
        # Full for one kind is full for the other. A place an earlier test's stream
        # gives back meanwhile is taken, and then that kind is turned away too.
        for other in (player_stream, game_stream):
            for _ in range(MAX_FOLLOWERS):
                turned_away = other()
                if turned_away.status_code != 200:
                    break
                opened.append(turned_away)
            assert turned_away.status_code == 503
            turned_away.close()
    finally:
        for answer in opened:
            answer.close()


def test_the_openapi_document_declares_the_stream(stack: Service) -> None:
    document = requests.get(f"{stack.url}/openapi.json", timeout=PATIENCE).json()
    operation = document["paths"]["/v1/me/events"]["get"]
    assert operation["operationId"] == "followMyGames"
    assert {"400", "401", "403", "429", "503"} <= operation["responses"].keys()
    stream = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    data = stream["properties"]["data"]["contentSchema"]
    assert data == {"$ref": "#/components/schemas/PlayerEvent"}
    event = document["components"]["schemas"]["PlayerEvent"]
    assert set(event["properties"]["kind"]["enum"]) == {
        "started",
        "invited",
        "changed",
        "your_turn",
        "ended",
        "seek_invited",
        "seek_started",
        "seek_withdrawn",
        "seek_expired",
        "message",
    }
    assert {"seek_id", "by", "seated"} <= event["properties"].keys()
    assert {"my_seat", "seq", "seat", "name", "text", "unread"} <= event["properties"].keys()
    assert {"player", "session"} <= document["components"]["securitySchemes"].keys()
