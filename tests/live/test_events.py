"""`GET /v1/games/{id}/events`: following games over Server-Sent Events, against real servers.

Each test runs against two stacks: `referee serve` + `referee worker` on
PostgreSQL and Redis (the worker's announcements reach the API through
Redis), and the embedded default (`referee serve` alone on SQLite, moves
decided in its own process). The streams are read over HTTP by a thread
per stream, as any client would; waits are bounded only so that a broken
server fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from tests.stacks import Client, Service, either_stack
from tests.tiers import starts_servers

KEEPALIVE = "0.5"
MAX_FOLLOWERS = 4
# Fewer than the followers: streams must hold threads of their own, not these.
THREADS = 2
PATIENCE = 30.0


@pytest.fixture(scope="module", params=["redis", "embedded"])
@starts_servers
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp(f"events-{request.param}")
    settings = {
        "REFEREE_EVENTS_KEEPALIVE": KEEPALIVE,
        "REFEREE_EVENTS_MAX": str(MAX_FOLLOWERS),
        "REFEREE_THREADS": str(THREADS),
    }
    service = either_stack(request, tmp, settings)
    yield service
    service.stop()


@dataclass
class Event:
    id: int
    data: dict[str, Any]
    text: str


@dataclass
class Stream:
    """One follower: `GET .../events` read line by line on a thread of its own."""

    response: requests.Response
    items: queue.Queue[Event | str | None] = field(default_factory=queue.Queue)
    raw: list[str] = field(default_factory=list)

    @classmethod
    def open(
        cls, url: str, game_id: str, token: str | None = None, last: int | None = None
    ) -> Stream:
        headers = Client.auth(token)
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        response = requests.get(
            f"{url}/v1/games/{game_id}/events", headers=headers, stream=True, timeout=PATIENCE
        )
        stream = cls(response)
        if response.status_code == 200:
            threading.Thread(target=stream.read, daemon=True).start()
        return stream

    def read(self) -> None:
        lines: list[str] = []
        try:
            for line in self.response.iter_lines(chunk_size=1, decode_unicode=True):
                self.raw.append(line)
                if line.startswith(":"):
                    self.items.put(line)
                elif line:
                    lines.append(line)
                elif lines:
                    fields = dict(entry.split(": ", 1) for entry in lines)
                    text = "\n".join(lines)
                    self.items.put(Event(int(fields["id"]), json.loads(fields["data"]), text))
                    lines = []
        except (requests.RequestException, OSError, AttributeError, ValueError):
            pass  # closed by the test
        self.items.put(None)

    def next(self, comments: bool = False) -> Event | str | None:
        """The next event (or comment, with `comments`); None once the stream has ended."""
        deadline = time.monotonic() + PATIENCE
        while True:
            item = self.items.get(timeout=max(deadline - time.monotonic(), 0.01))
            if comments or not isinstance(item, str):
                return item

    def event(self) -> Event:
        found = self.next()
        assert isinstance(found, Event), f"the stream ended: {self.raw[-5:]}"
        return found

    def close(self) -> None:
        self.response.close()


def new_game(client: Client, game: str, players: int, **options: Any) -> tuple[str, list[str]]:
    created = client.create(game, players, **options)
    return created["id"], [seat["token"] for seat in created["seats"]]


def play_first_legal(client: Client, game_id: str, tokens: list[str]) -> int:
    """The first seat to act plays its first legal move; returns the version it made."""
    to_act = client.get(f"/v1/games/{game_id}/state").json()["to_act"]
    token = tokens[to_act[0]]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()
    answer = client.move(game_id, token, {"move": legal["moves"][0]["move"]})
    assert answer.status_code == 201, answer.text
    return int(client.get(f"/v1/games/{game_id}").json()["version"])


def resign_until_over(client: Client, game_id: str, tokens: list[str]) -> int:
    for token in tokens:
        summary = client.get(f"/v1/games/{game_id}").json()
        if summary["status"] == "over":
            break
        answer = client.http.post(
            f"{client.url}/v1/games/{game_id}/resign",
            params={"wait": 20},
            headers=client.auth(token),
            timeout=60,
        )
        assert answer.status_code == 201, answer.text
    summary = client.get(f"/v1/games/{game_id}").json()
    assert summary["status"] == "over"
    return int(summary["version"])


def test_a_seat_gets_an_event_per_move_with_its_own_view(stack: Service) -> None:
    client = Client(stack.url)
    game_id, tokens = new_game(client, "ice_palace", 3)
    stream = Stream.open(stack.url, game_id, tokens[0])
    assert stream.response.headers["Content-Type"].startswith("text/event-stream")
    assert stream.response.headers["X-Accel-Buffering"] == "no"
    events = [stream.event()]
    assert events[0].id == 0
    versions = [0]
    try:
        for _ in range(4):
            versions.append(play_first_legal(client, game_id, tokens))
            # Moves wait for the event before the next, so none is skipped.
            events.append(stream.event())
            assert events[-1].id == versions[-1]
        final = resign_until_over(client, game_id, tokens)
        while events[-1].id < final:
            events.append(stream.event())
        assert stream.next() is None, "the stream ends after the game is over"
    finally:
        stream.close()
    # One event per change: a move the referee records by itself right after
    # a seat's (Ice Palace's empty build) belongs to the same change.
    assert [event.id for event in events[:5]] == versions
    for event in events:
        data = event.data
        assert data["version"] == event.id == data["view"]["version"]
        view = client.get(f"/v1/games/{game_id}/state", tokens[0], at=event.id).json()
        assert data["view"] == view
        assert data["to_act"] == view["to_act"] and data["status"] == view["status"]
        # Seat 0 sees its own hand, and only the sizes of the others'.
        hands = data["view"]["state"]["hands"]
        assert isinstance(hands[0], list) and not isinstance(hands[1], list)
    assert events[-1].data["status"] == "over" and events[-1].data["result"] is not None
    assert all(event.data["result"] is None for event in events[:-1])


def test_a_spectator_never_sees_hands_sealed_moves_or_the_seed(stack: Service) -> None:
    client = Client(stack.url)
    palace, palace_tokens = new_game(client, "ice_palace", 3)
    maniki, maniki_tokens = new_game(client, "maniki", 3, mode="sealed")
    watching = [Stream.open(stack.url, palace), Stream.open(stack.url, maniki)]
    seen: list[Event] = [stream.event() for stream in watching]
    try:
        for _ in range(3):
            play_first_legal(client, palace, palace_tokens)
            seen.append(watching[0].event())
        # Seat 0 seals its answer; the round stays open (two seats have not answered).
        answer = client.move(maniki, maniki_tokens[0], {"notation": "KI KI"})
        assert answer.status_code == 201, answer.text
        sealed = watching[1].event()
        assert sealed.data["view"]["state"]["submitted"] == [0]
        seen.append(sealed)
        for game_id, tokens, stream in zip(
            (palace, maniki), (palace_tokens, maniki_tokens), watching, strict=True
        ):
            final = resign_until_over(client, game_id, tokens)
            while seen[-1].data["game_id"] != game_id or seen[-1].id < final:
                seen.append(stream.event())
    finally:
        for stream in watching:
            stream.close()
    seeds = [client.get(f"/v1/games/{g}").json()["seed"] for g in (palace, maniki)]
    for event in seen:
        data = event.data
        spectator = client.get(f"/v1/games/{data['game_id']}/state", at=event.id).json()
        assert data["view"] == spectator
        for secret in [*seeds, *palace_tokens, *maniki_tokens]:
            assert secret not in event.text
        if data["game_id"] == palace:
            assert not any(isinstance(hand, list) for hand in data["view"]["state"]["hands"])
        else:
            assert "KI KI" not in event.text and '"KI"' not in event.text


def test_last_event_id_resumes_and_a_finished_game_says_204(stack: Service) -> None:
    client = Client(stack.url)
    game_id, tokens = new_game(client, "ice_palace", 3)
    first = Stream.open(stack.url, game_id, tokens[1])
    assert first.event().id == 0
    first.close()
    play_first_legal(client, game_id, tokens)
    version = play_first_legal(client, game_id, tokens)
    assert version == 2

    # Behind: the current state at once (version 1 is skipped, not replayed).
    behind = Stream.open(stack.url, game_id, tokens[1], last=0)
    caught_up = behind.event()
    behind.close()
    assert caught_up.id == 2
    assert caught_up.data["view"] == client.get(f"/v1/games/{game_id}/state", tokens[1]).json()

    # Up to date: nothing until the next change, keepalives meanwhile.
    current = Stream.open(stack.url, game_id, tokens[1], last=2)
    try:
        assert current.next(comments=True) == ": keepalive"
        version = play_first_legal(client, game_id, tokens)
        assert current.event().id == version == 3
    finally:
        current.close()

    final = resign_until_over(client, game_id, tokens)
    late = Stream.open(stack.url, game_id, tokens[1], last=1)
    assert late.event().id == final
    assert late.next() is None
    done = requests.get(
        f"{stack.url}/v1/games/{game_id}/events", headers={"Last-Event-ID": str(final)}, timeout=10
    )
    assert done.status_code == 204 and done.content == b""
    bad = requests.get(
        f"{stack.url}/v1/games/{game_id}/events", headers={"Last-Event-ID": "x1"}, timeout=10
    )
    assert bad.status_code == 400 and bad.json()["code"] == "bad_request"
    unknown = requests.get(f"{stack.url}/v1/games/{'0' * 32}/events", timeout=10)
    assert unknown.status_code == 404
    stranger = requests.get(
        f"{stack.url}/v1/games/{game_id}/events",
        headers={"Authorization": "Bearer not-a-seat"},
        timeout=10,
    )
    assert stranger.status_code == 401


def test_heartbeats_come_while_nothing_changes(stack: Service) -> None:
    client = Client(stack.url)
    game_id, _tokens = new_game(client, "maniki", 2)
    stream = Stream.open(stack.url, game_id)
    try:
        assert stream.event().id == 0
        assert [stream.next(comments=True) for _ in range(3)] == [": keepalive"] * 3
    finally:
        stream.close()


def test_more_followers_than_the_setting_get_503_with_retry_after(stack: Service) -> None:
    client = Client(stack.url)
    game_id, tokens = new_game(client, "maniki", 2)
    opened: list[Stream] = []
    try:
        # Streams closed by earlier tests are let go at their next keepalive,
        # so admission is tried until refused rather than counted exactly.
        refused = None
        for _ in range(MAX_FOLLOWERS + 1):
            stream = Stream.open(stack.url, game_id)
            if stream.response.status_code != 200:
                refused = stream.response
                break
            opened.append(stream)
            stream.event()
        assert refused is not None and 0 < len(opened) <= MAX_FOLLOWERS
        assert refused.status_code == 503
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert refused.json()["code"] == "too_many_followers"
        assert int(refused.headers["Retry-After"]) > 0
        # The followers hold more threads than REFEREE_THREADS, yet moves are answered.
        assert play_first_legal(client, game_id, tokens) == 1
        # Once a follower leaves, its place is free again.
        opened.pop().close()
        deadline = time.monotonic() + PATIENCE
        while True:
            again = Stream.open(stack.url, game_id)
            if again.response.status_code == 200:
                opened.append(again)
                break
            assert time.monotonic() < deadline, "the place of a closed stream was never freed"
            time.sleep(0.2)
        assert again.event().id == 1  # the version the move above made
    finally:
        for stream in opened:
            stream.close()


def test_the_openapi_document_declares_the_stream(stack: Service) -> None:
    document = requests.get(f"{stack.url}/openapi.json", timeout=10).json()
    operation = document["paths"]["/v1/games/{game_id}/events"]["get"]
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    assert {"503", "404", "401"} <= operation["responses"].keys()
