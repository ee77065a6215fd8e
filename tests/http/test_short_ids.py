"""A game's short id, as a mail's subject shows it (its id's first 8 hexadecimal digits),
opens the game's page when no other game's id begins alike; otherwise nothing is
guessed."""

from __future__ import annotations

from datetime import UTC, datetime

from flask.testing import FlaskClient

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from tests import rating_rows


def test_a_games_short_id_opens_its_page_when_no_other_begins_alike(
    client: FlaskClient, referee: Referee
) -> None:
    made = create_game(
        referee, NewGame("subdivision", [Player("Ann"), Player("Bob")], {}, trusted=True)
    )
    game_id = made.game.id
    for short in (game_id[:8], game_id[:20], game_id[:31]):
        answer = client.get(f"/g/{short}")
        assert answer.status_code == 302, short
        assert answer.headers["Location"] == f"/g/{game_id}"
    assert client.get(f"/g/{game_id}").status_code == 200
    # Fewer than 8 digits, or other letters, are not a short id.
    for not_short in (game_id[:7], game_id[:7] + "g", game_id[:8] + "-"):
        assert client.get(f"/g/{not_short}").status_code == 404, not_short

    # A second game beginning with the same 8 digits: neither is guessed, each opens whole.
    twin_id = game_id[:8] + ("0" if game_id[8] != "0" else "1") + "0" * 23
    with referee.db.transaction() as session:
        rating_rows.game(
            session,
            [None, None],
            datetime(2026, 3, 1, tzinfo=UTC),
            status="active",
            game_id=twin_id,
        )
    assert client.get(f"/g/{game_id[:8]}").status_code == 404
    assert client.get(f"/g/{game_id[:9]}").headers["Location"] == f"/g/{game_id}"
    assert client.get(f"/g/{twin_id[:9]}").headers["Location"] == f"/g/{twin_id}"
