"""Bots keep seats warm, against real processes: `referee serve`, a worker, PostgreSQL,
Redis, `referee mail-in` and the players' SMTP server.

Ann posts an Ice Palace open game of three with `bots: random` and starts it at once:
two bots hold the empty seats while she plays. Bob joins later and takes a bot's seat;
then Cyd and Dee ask for the last one at the same moment: one gets it, the other is
refused (409 `seek_started`). Each newcomer's mail says which seat it took, the others
are told who arrived, and the game is played to its end through REST, the people's
moves by their player tokens, the bots' by the worker. The record's header names the
seats taken over and from which move, `referee verify` says it in words and passes, and
`GET .../verify` lists them.
"""

from __future__ import annotations

import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from referee.record import loads
from tests.mail.players import kinds, text_of
from tests.mailboxes import MailService, Received
from tests.stacks import REFEREE, TEST_API_KEY

PEOPLE = {
    "ann@warm.test": "Ann",
    "bob@warm.test": "Bob",
    "cyd@warm.test": "Cyd",
    "dee@warm.test": "Dee",
}
SIGN_IN = re.compile(r"https?://[^\s\"<>]+(/me/sign-in/[A-Za-z0-9_-]+)")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
TOOK = re.compile(r"You took over Player (\d+)'s seat in a game of Ice Palace")


def _mail(stack: MailService, address: str, kind: str, seconds: float = 60) -> list[Received]:
    """The mails telling a notice of `kind` to `address`, once there is one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [m for m in stack.mailbox.to(address) if kind in kinds(m)]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no {kind} mail to {address}")


def _players_known(stack: MailService) -> None:
    """Each address seated once by a trusted client: the referee may mail it in full."""
    for pair in (list(PEOPLE)[:2], list(PEOPLE)[2:]):
        created = requests.post(
            f"{stack.service.url}/v1/games",
            headers={"X-API-Key": TEST_API_KEY},
            json={"game": "mandala", "players": [{"name": "p", "email": a} for a in pair]},
            timeout=30,
        )
        assert created.status_code == 201, created.text


def _signed_in(stack: MailService, address: str) -> requests.Session:
    """A client signed in as `address` by its mailed link, with its public name chosen."""
    url = stack.service.url
    asked = requests.post(f"{url}/v1/players/sign-in", json={"email": address}, timeout=30)
    assert asked.status_code == 202, asked.text
    found = SIGN_IN.search(text_of(_mail(stack, address, "sign_in")[-1].mail))
    assert found is not None
    client = requests.Session()
    page = client.get(url + found.group(1), timeout=30)
    csrf = CSRF.search(page.text)
    assert page.status_code == 200 and csrf is not None, page.text
    spent = client.post(
        url + found.group(1), data={"csrf": csrf.group(1)}, allow_redirects=False, timeout=30
    )
    assert spent.status_code == 303, spent.text
    named = client.put(f"{url}/v1/me/profile", json={"name": PEOPLE[address]}, timeout=30)
    assert named.status_code == 200, named.text
    return client


def _token(client: requests.Session, url: str) -> str:
    made = client.post(
        f"{url}/v1/me/tokens", json={"name": "play", "scopes": ["read", "play"]}, timeout=30
    )
    assert made.status_code == 201, made.text
    token: str = made.json()["token"]
    return token


def _summary(url: str, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()
    return found


def _play_to_the_end(url: str, game_id: str, tokens: dict[str, str]) -> dict[str, Any]:
    """Each person's turn played with its first legal move; the bots play on the worker."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        game = _summary(url, game_id)
        if game["status"] == "over":
            return game
        seat = game["seats"][game["to_act"][0]]
        if seat["bot"] is not None:
            time.sleep(0.05)
            continue
        auth = {"Authorization": f"Bearer {tokens[seat['name']]}"}
        mine = {"seat": seat["seat"]}
        legal = requests.get(
            f"{url}/v1/games/{game_id}/legal-moves", headers=auth, params=mine, timeout=30
        ).json()
        if legal["version"] != game["version"] or not legal["moves"]:
            continue
        answer = requests.post(
            f"{url}/v1/games/{game_id}/moves",
            headers=auth,
            params={**mine, "wait": 20},
            json={"notation": legal["moves"][0]["notation"], "expected_version": game["version"]},
            timeout=60,
        )
        assert answer.status_code in (201, 422), answer.text
    raise AssertionError(f"the game did not end: {_summary(url, game_id)}")


def test_an_ice_palace_seek_started_with_two_bots_is_joined_by_people_who_take_their_seats(
    mail_service: MailService, tmp_path: Any
) -> None:
    stack, url = mail_service, mail_service.service.url
    _players_known(stack)
    clients = {PEOPLE[address]: _signed_in(stack, address) for address in PEOPLE}
    tokens = {name: _token(client, url) for name, client in clients.items()}

    posted = clients["Ann"].post(
        f"{url}/v1/seeks",
        json={"game": "ice_palace", "players": {"min": 3, "max": 3}, "bots": "random"},
        timeout=30,
    )
    assert posted.status_code == 201, posted.text
    seek_id = posted.json()["id"]
    started = clients["Ann"].post(f"{url}/v1/seeks/{seek_id}/start", timeout=30).json()
    game_id = started["game_id"]
    assert (started["status"], started["open_seats"]) == ("started", 2)
    seats = _summary(url, game_id)["seats"]
    assert sorted(s["bot"] or s["name"] for s in seats) == ["Ann", "random", "random"]
    listed = requests.get(f"{url}/v1/seeks", timeout=30).json()["seeks"]
    assert [s["id"] for s in listed] == [seek_id]

    # Ann and the bots play a few turns before anyone joins.
    while _summary(url, game_id)["version"] < 4:
        _play_some(url, game_id, tokens)

    bob = clients["Bob"].post(f"{url}/v1/seeks/{seek_id}/join", timeout=30)
    assert bob.status_code == 200, bob.text
    assert (bob.json()["open_seats"], [s["name"] for s in bob.json()["seated"]]) == (
        1,
        ["Ann", "Bob"],
    )
    # Cyd and Dee ask for the last bot's seat at the same moment: one of them gets it.
    with ThreadPoolExecutor(2) as pool:
        asked = list(
            pool.map(
                lambda name: clients[name].post(f"{url}/v1/seeks/{seek_id}/join", timeout=30),
                ["Cyd", "Dee"],
            )
        )
    codes = sorted(answer.status_code for answer in asked)
    assert codes == [200, 409], [answer.text for answer in asked]
    refused = next(answer for answer in asked if answer.status_code == 409)
    assert refused.json()["code"] == "seek_started"
    second = "Cyd" if asked[0].status_code == 200 else "Dee"
    assert requests.get(f"{url}/v1/seeks", timeout=30).json()["seeks"] == []

    # Each newcomer is told which seat it took; the seat is its own once the bot's turn
    # under way (if any) is played.
    taken = {}
    for name in ("Bob", second):
        address = next(a for a, n in PEOPLE.items() if n == name)
        (told,) = _mail(stack, address, "seat_taken")
        text = " ".join(text_of(told.mail).split())
        found = TOOK.search(text)
        assert found is not None, text
        taken[name] = int(found.group(1)) - 1  # Player N is seat N - 1
        assert "random bot held this seat" in text and "Moves so far:" in text
        assert "/play/" in text and "/seat/" in text
    assert sorted(taken.values()) == sorted(s["seat"] for s in seats if s["bot"] is not None), taken
    seats = _summary(url, game_id)["seats"]
    assert {seats[seat]["name"] for seat in taken.values()} == {"Bob", second}
    assert all(seats[seat]["bot"] is None for seat in taken.values())
    # Everyone else seated is told who arrived, by name and seat, never by address.
    _wait_for_arrivals(stack, "ann@warm.test", 2)
    arrived = [" ".join(text_of(m.mail).split()) for m in _mail(stack, "ann@warm.test", "arrived")]
    for name, seat in taken.items():
        said = f"{name} took over Player {seat + 1}'s seat from the random bot"
        assert any(said in a for a in arrived)
    assert not any("@warm.test" in a for a in arrived)
    loser = "Dee" if second == "Cyd" else "Cyd"
    assert not [
        m
        for m in stack.mailbox.to(f"{loser.lower()}@warm.test")
        if {"seat_taken", "arrived"} & set(kinds(m))
    ]

    over = _play_to_the_end(url, game_id, tokens)
    assert over["result"] is not None

    record_text = requests.get(f"{url}/v1/games/{game_id}/log.jsonl", timeout=30).text
    record = loads(record_text)
    handovers = {h.seat: h for h in record.header.handovers or ()}
    assert set(handovers) == set(taken.values())
    assert all(h.bot == "random" and h.from_seq >= 2 for h in handovers.values())
    for name, seat in taken.items():
        assert record.header.players[seat] == name
        assert record.header.bot_at(seat, handovers[seat].from_seq - 1) == "random"
        assert record.header.bot_at(seat, handovers[seat].from_seq) is None
    # The people played their seats after the handover (their moves came by REST).
    assert any(
        entry.seat in handovers and entry.seq >= handovers[entry.seat].from_seq
        for entry in record.entries
    )
    path = tmp_path / "warm.jsonl"
    path.write_text(record_text)
    verified = subprocess.run(
        [REFEREE, "verify", str(path)], capture_output=True, text=True, check=False
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for name, seat in taken.items():
        start = handovers[seat].from_seq
        assert (
            f"seat {seat} ({name}): its moves before move {start} were played by the random "
            f"bot, from move {start} on by {name}"
        ) in verified.stdout
    assert verified.stdout.splitlines()[-1].startswith("ok: chain, seed and")
    checked = requests.get(f"{url}/v1/games/{game_id}/verify", timeout=60).json()
    assert checked["chain_valid"] and checked["replay_matches"] and checked["seed_matches"]
    assert sorted((h["seat"], h["name"], h["bot"]) for h in checked["handovers"]) == sorted(
        (seat, name, "random") for name, seat in taken.items()
    )


def _play_some(url: str, game_id: str, tokens: dict[str, str]) -> None:
    """Ann's turn played if it is hers, else a moment for the bots."""
    game = _summary(url, game_id)
    seat = game["seats"][game["to_act"][0]]
    if seat["bot"] is not None:
        time.sleep(0.05)
        return
    auth = {"Authorization": f"Bearer {tokens['Ann']}"}
    legal = requests.get(f"{url}/v1/games/{game_id}/legal-moves", headers=auth, timeout=30)
    moves = legal.json()["moves"]
    requests.post(
        f"{url}/v1/games/{game_id}/moves",
        headers=auth,
        params={"wait": 20},
        json={"notation": moves[0]["notation"], "expected_version": game["version"]},
        timeout=60,
    )


def _wait_for_arrivals(stack: MailService, address: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # Arrivals told at once come in one mail: the notices are counted.
        found = [each for m in stack.mailbox.to(address) for each in kinds(m) if each == "arrived"]
        if len(found) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{address} was not told of {count} arrivals")
