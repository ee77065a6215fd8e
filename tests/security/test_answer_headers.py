"""Every answer of a real `referee serve` is read as the type it is served as, and its
redirects never name a host the sender chose.

`nosniff` on JSON, problem+json, pages, the board picture, the event stream
and the document; the board picture (it holds player names) also with a
CSP that forbids scripts and sandboxes it. Werkzeug's own redirects
(merging slashes) answer with a path, whatever the Host header says, and the
seat links of a game made on its page are under REFEREE_PUBLIC_URL.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import requests

from tests.stacks import Client, Service

SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


@pytest.fixture(scope="module")
def game(embedded_service: Service) -> tuple[str, str]:
    """A game's id and its first seat's token."""
    created = Client(embedded_service.url).create("subdivision", 2)
    return created["id"], created["seats"][0]["token"]


def test_the_board_picture_runs_nothing_and_is_not_sniffed(
    embedded_service: Service, game: tuple[str, str]
) -> None:
    game_id, token = game
    client = Client(embedded_service.url)
    for accept in ("image/svg+xml", "text/plain"):
        answer = client.http.get(
            f"{embedded_service.url}/v1/games/{game_id}/board.svg",
            headers={**client.auth(token), "Accept": accept},
            timeout=30,
        )
        assert answer.status_code == 200 and "<svg" in answer.text
        assert answer.headers["Content-Type"].startswith(accept)
        assert answer.headers["Content-Security-Policy"] == SVG_CSP
        assert answer.headers["X-Content-Type-Options"] == "nosniff"


ANSWERS: dict[str, Callable[[Client, str, str], requests.Response]] = {
    "json": lambda c, g, t: c.get(f"/v1/games/{g}/state", t),
    "problem+json": lambda c, g, t: c.get("/v1/games/0123456789abcdef0123456789abcdef"),
    "bad json": lambda c, g, t: c.http.post(
        c.url + "/v1/games", data=b"{", headers={"Content-Type": "application/json"}, timeout=30
    ),
    "unknown path": lambda c, g, t: c.get("/nothing/here"),
    "page": lambda c, g, t: c.get(f"/g/{g}"),
    "lobby": lambda c, g, t: c.get("/"),
    "asset": lambda c, g, t: c.get("/assets/web.css"),
    "record": lambda c, g, t: c.get(f"/v1/games/{g}/log.jsonl", t),
    "document": lambda c, g, t: c.get("/openapi.json"),
    "redirect": lambda c, g, t: c.http.get(c.url + "/v1//rules", allow_redirects=False),
}


@pytest.mark.parametrize("kind", ANSWERS)
def test_every_answer_is_nosniff(
    embedded_service: Service, game: tuple[str, str], kind: str
) -> None:
    answer = ANSWERS[kind](Client(embedded_service.url), *game)
    assert answer.headers.get("X-Content-Type-Options") == "nosniff", (kind, answer.headers)


def test_the_event_stream_is_nosniff(embedded_service: Service, game: tuple[str, str]) -> None:
    game_id, token = game
    client = Client(embedded_service.url)
    with client.http.get(
        f"{embedded_service.url}/v1/games/{game_id}/events",
        headers=client.auth(token),
        stream=True,
        timeout=30,
    ) as answer:
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        assert answer.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/g//{game}", "/g/{game}"),
        ("/g//{game}?at=0", "/g/{game}?at=0"),
        ("/v1//games/{game}/state", "/v1/games/{game}/state"),
        ("/v1/games//{game}//board.svg", "/v1/games/{game}/board.svg"),
        ("/assets//web.css", "/assets/web.css"),
    ],
)
@pytest.mark.parametrize("forwarded", [False, True])
def test_redirects_never_name_the_host_the_sender_gave(
    embedded_service: Service, game: tuple[str, str], path: str, target: str, forwarded: bool
) -> None:
    game_id, _ = game
    headers = {"Host": "evil.example"}
    if forwarded:
        headers |= {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
    url = embedded_service.url + path.format(game=game_id)
    answer = requests.get(url, headers=headers, allow_redirects=False, timeout=30)
    assert answer.status_code == 308, answer.text
    assert answer.headers["Location"] == target.format(game=game_id)
    assert "evil.example" not in answer.text
    # And the path it names is the page asked for.
    followed = requests.get(embedded_service.url + answer.headers["Location"], timeout=30)
    assert followed.status_code == 200


def test_a_form_sends_the_browser_on_by_a_path(
    embedded_service: Service, game: tuple[str, str]
) -> None:
    """The game page's forms (leaving it, here) answer 303 to a path, not to the Host given."""
    game_id, _ = game
    page = requests.get(f"{embedded_service.url}/new/subdivision", timeout=30)
    token = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = requests.post(
        f"{embedded_service.url}/g/{game_id}/leave",
        data={"csrf": token},
        # By hand: a cookie jar holds no cookie for the host named here.
        headers={"Host": "evil.example", "Cookie": f"csrf={token}"},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == 303, answer.text
    assert answer.headers["Location"] == f"/g/{game_id}"


def test_seat_links_of_a_new_game_are_under_the_public_url_whatever_the_host(
    embedded_service: Service,
) -> None:
    # `referee serve` on 127.0.0.1 without REFEREE_PUBLIC_URL: its own address is public.
    page = requests.get(f"{embedded_service.url}/new/subdivision", timeout=30)
    token = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = requests.post(
        f"{embedded_service.url}/new/subdivision",
        data={"csrf": token, "name-0": "Ann", "name-1": "Bob"},
        headers={
            "Host": "evil.example",
            "X-Forwarded-Host": "evil.example",
            "X-Forwarded-Proto": "https",
            "Cookie": f"csrf={token}",
        },
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    links = [part.split('"', 1)[0] for part in answer.text.split('value="')[1:]]
    seat_links = [link for link in links if "/seat/" in link]
    assert len(seat_links) == 2
    assert all(link.startswith(embedded_service.url + "/g/") for link in seat_links)
    assert "evil.example" not in answer.text
