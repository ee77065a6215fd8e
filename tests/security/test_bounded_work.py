"""Work per request is bounded: verify is kept per version, reads take no write lock, pages
page, expensive reads take turns.

In-process on SQLite (tasks eager), through Flask's test client.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import delete, update
from sqlmodel import col, select

from api import create_app
from api.http.expensive import taking_turns
from api.pages import game as game_page
from referee.service import Referee
from referee.settings import Settings
from referee.store.tables import Game, Setting, Verification


def passing_game(client: FlaskClient, seats: int, moves: int) -> dict[str, Any]:
    """A MaNiKi game whose seats have passed `moves` times, in turn."""
    created = client.post(
        "/v1/games", json={"game": "maniki", "players": [{"name": str(n)} for n in range(seats)]}
    ).get_json()
    for n in range(moves):
        token = created["seats"][n % seats]["token"]
        answer = client.post(
            f"/v1/games/{created['id']}/moves?wait=5",
            json={"notation": "pass"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 201, answer.get_data(as_text=True)
    return dict(created)


def kept(referee: Referee, game_id: str) -> list[Verification]:
    with referee.db.reading() as session:
        return list(session.exec(select(Verification).where(Verification.game_id == game_id)))


def test_verify_is_worked_out_once_per_version_and_kept(app: Flask, referee: Referee) -> None:
    client = app.test_client()
    game = passing_game(client, 2, 6)
    path = f"/v1/games/{game['id']}/verify"
    first = client.get(path).get_json()
    assert first["chain_valid"] and first["replay_matches"] and first["version"] == 6
    assert [(row.version, row.chain_valid) for row in kept(referee, game["id"])] == [(6, True)]
    # Asked again, the kept outcome is read, not worked out: a changed row shows.
    with referee.db.transaction() as session:
        session.execute(update(Verification).values(replay_matches=False, problems=["kept"]))
    assert client.get(path).get_json()["replay_matches"] is False
    # Dropping the cache changes no answer.
    with referee.db.transaction() as session:
        session.execute(delete(Verification))
    assert client.get(path).get_json() == first
    # A new version is checked afresh, and only the latest version is kept.
    seat = game["seats"][0]["token"]
    client.post(
        f"/v1/games/{game['id']}/moves?wait=5",
        json={"notation": "pass"},
        headers={"Authorization": f"Bearer {seat}"},
    )
    assert client.get(path).get_json()["version"] == 7
    assert [row.version for row in kept(referee, game["id"])] == [7]


def test_a_reading_session_leaves_the_write_lock_to_writers(referee: Referee) -> None:
    # A reading session that began before a write and is still open must not
    # hold SQLite's write lock (BEGIN IMMEDIATE would: the write below would
    # then wait for the busy timeout and fail with "database is locked").
    with referee.db.reading() as reader:
        assert reader.exec(select(Game)).first() is not None
        with referee.db.transaction() as writer:
            writer.add(Setting(key="bounded-test", value="written"))
        assert reader.exec(select(Game)).first() is not None
    with referee.db.reading() as session:
        assert session.get(Setting, "bounded-test") is not None


def listed(page: str) -> list[int]:
    return [int(n) for n in re.findall(r'<li[^>]*value="(\d+)"', page)]


def test_the_game_page_lists_a_window_of_the_log(app: Flask) -> None:
    client = app.test_client()
    moves = game_page.LOG_PAGE + 40
    game = passing_game(client, 4, moves)  # 4 seats pass 96 times before the game ends
    latest = client.get(f"/g/{game['id']}").get_data(as_text=True)
    assert listed(latest) == list(range(moves - game_page.LOG_PAGE + 1, moves + 1))
    assert 'id="log-earlier"' in latest and 'id="log-later"' not in latest
    start = client.get(f"/g/{game['id']}?at=0").get_data(as_text=True)
    assert listed(start) == list(range(game_page.LOG_PAGE + 1))
    assert 'id="log-later"' in start and 'id="log-earlier"' not in start
    # Paging on from a window reaches the next one with no move left out.
    later = re.search(r'href="([^"]+)" id="log-later"', start)
    assert later is not None
    following = client.get(later.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert listed(following)[0] <= game_page.LOG_PAGE + 1 < listed(following)[-1]


def test_only_the_latest_verification_of_each_game_is_kept(referee: Referee) -> None:
    with referee.db.reading() as session:
        games = session.exec(select(col(Verification.game_id))).all()
    assert len(games) == len(set(games))


EXPENSIVE = (
    "/v1/games/{id}/verify",
    "/v1/games/{id}/log.jsonl",
    "/v1/games/{id}/board.svg",
    "/g/{id}",
)


def app_with(app_settings: Settings, **changes: Any) -> Flask:
    """An app on the same database as the `app` fixture's, with `changes` to its settings."""
    chosen = replace(app_settings, **changes)
    return create_app(chosen, Referee(chosen))


@contextmanager
def expensive_read_in_progress(app: Flask) -> Iterator[None]:
    """Another thread of `app` computes an expensive read (one that waits to be let go)
    meanwhile."""
    let_go, started = threading.Event(), threading.Event()

    @taking_turns
    def computing() -> None:
        started.set()
        let_go.wait(30)

    def in_app() -> None:
        with app.app_context():
            computing()

    other = threading.Thread(target=in_app)
    other.start()
    try:
        assert started.wait(10)
        yield
    finally:
        let_go.set()
        other.join(10)


def test_expensive_reads_take_turns_and_moves_do_not_wait_for_them(
    app: Flask, app_settings: Settings
) -> None:
    game = passing_game(app.test_client(), 2, 2)
    paths = [path.format(id=game["id"]) for path in EXPENSIVE]
    impatient = app_with(app_settings, expensive_reads=1, expensive_wait=0.2)
    client = impatient.test_client()
    with expensive_read_in_progress(impatient):
        for path in paths:
            busy = client.get(path)
            assert busy.status_code == 503, path
            assert busy.headers["Retry-After"] == "1"
            if path.startswith("/v1"):
                assert busy.mimetype == "application/problem+json"
                assert busy.get_json()["code"] == "busy"
        # What is not expensive is answered at once, moves above all.
        assert client.get(f"/v1/games/{game['id']}/state").status_code == 200
        moved = client.post(
            f"/v1/games/{game['id']}/moves?wait=5",
            json={"notation": "pass"},
            headers={"Authorization": f"Bearer {game['seats'][0]['token']}"},
        )
        assert moved.status_code == 201
    for path in paths:
        assert client.get(path).status_code == 200, path


def test_an_expensive_read_waits_for_its_turn_rather_than_failing(
    app: Flask, app_settings: Settings
) -> None:
    game = passing_game(app.test_client(), 2, 2)
    answers: list[int] = []
    patient = app_with(app_settings, expensive_reads=1, expensive_wait=30)
    client = patient.test_client()
    with expensive_read_in_progress(patient):
        waiting = threading.Thread(
            target=lambda: answers.append(client.get(f"/v1/games/{game['id']}/verify").status_code)
        )
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and answers == []  # asleep until the other is done
    waiting.join(30)
    assert answers == [200]
    # Two at once, if two are allowed.
    two = app_with(app_settings, expensive_reads=2, expensive_wait=0.2)
    with expensive_read_in_progress(two):
        assert two.test_client().get(f"/v1/games/{game['id']}/verify").status_code == 200


def test_the_document_declares_the_busy_answer_of_each_expensive_read(app: Flask) -> None:
    document = app.test_client().get("/openapi.json").get_json()
    for path in EXPENSIVE[:3]:
        responses = document["paths"][path.replace("{id}", "{game_id}")]["get"]["responses"]
        assert "application/problem+json" in responses["503"]["content"], path
