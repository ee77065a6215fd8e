"""The turn mail's HTML: legal moves as a list, a game's help without Markdown backticks,
and a picture marking the last move as the game page does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.mail_counts import kinds_of, mails_by_seat
from referee import games
from referee.delivery.compose import PICTURE_ZOOM
from referee.render import render_png
from referee.service import Referee, game_states
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.store.tables import Game

MANDALA = games.get("mandala")


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def test_the_turn_mails_html_lists_moves_shows_no_backticks_and_marks_the_last_move(
    referee: Referee,
) -> None:
    players = [Player("Ann", "ann@players.test"), Player("Bob", "bob@players.test")]
    created = create_game(referee, NewGame("mandala", players, {}, trusted=True, seed="html"))
    game_id = created.game.id
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        seat = game.to_act[0]
        start = game_states.state_at(session, game, 0)
    move = MANDALA.legal_moves(start, seat)[0]
    submitted = SubmitMove(game_id, SeatToken(created.tokens[seat]), MANDALA.move_to_json(move))
    assert submit_move(referee, submitted, wait=5).status == "accepted"
    deliver_due(referee, "mail")
    mail = mails_by_seat(Path(referee.settings.mail_dir))[1 - seat][-1]
    assert kinds_of(mail)[-1] == "your_turn"
    body = mail.get_body(preferencelist=("html",))
    assert body is not None
    html = str(body.get_content())
    assert "`" not in html and "<code>take N</code>" in html
    listed = re.findall(r"<li[^>]*><code>(take \d+)</code></li>", html)
    assert len(listed) >= 2 and listed == [f"take {n}" for n in sorted(int(m[5:]) for m in listed)]
    # The text board is the plain part's: beside the picture, the HTML shows none.
    assert "<pre" not in html
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        now = game_states.state_at(session, game, 1)
    names = ["Ann", "Bob"]
    marked = render_png(
        "mandala",
        MANDALA.view(now, 1 - seat),
        names,
        zoom=PICTURE_ZOOM,
        before=MANDALA.view(start, 1 - seat),
    )
    pictures = [
        part.get_content() for part in mail.walk() if part.get_content_type() == "image/png"
    ]
    assert pictures == [marked]
    assert marked != render_png("mandala", MANDALA.view(now, 1 - seat), names, zoom=PICTURE_ZOOM)
