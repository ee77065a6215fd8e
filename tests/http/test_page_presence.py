"""A seat's game page marks the seat seen while open: shown, and at each beat of its
live stream. The mail channel reads the mark to hold a turn mail back
(tests/service/test_mail_counts.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from flask import Flask
from sqlmodel import select

from referee.settings import Settings
from referee.store.tables import Seat
from tests.http.test_web_pages import HOST, database, new_game, page


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # Pages served from http://localhost, whose forms that origin sends; a stream that
    # beats at once, so that reading its first bytes does not wait long.
    return replace(app_settings, public_url=HOST, events_keepalive=0.05)


def _seen(app: Flask, game_id: str) -> list[str | None]:
    with database(app).reading() as session:
        rows = session.exec(
            select(Seat.page_seen_at).where(Seat.game_id == game_id).order_by(Seat.seat)
        ).all()
    return list(rows)


def test_a_seats_page_and_its_stream_mark_it_seen_a_spectators_do_not(app: Flask) -> None:
    game_id, spectator, (ann, bob) = new_game(app, "subdivision", ["Ann", "Bob"])
    # Opening the seat link shows no page yet; a spectator's page and stream mark nothing.
    page(spectator, game_id)
    watched = spectator.get(f"/g/{game_id}/events", buffered=False)
    next(iter(watched.response))
    watched.close()
    assert _seen(app, game_id) == [None, None]
    page(ann, game_id)
    after_page = _seen(app, game_id)
    stream = bob.get(f"/g/{game_id}/events", buffered=False)
    next(iter(stream.response))
    stream.close()
    after_stream = _seen(app, game_id)
    assert after_page[0] is not None and after_page[1] is None
    assert after_stream[0] == after_page[0] and after_stream[1] is not None
