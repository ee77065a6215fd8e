"""The other seats see a vacation under way: the game summary, the game page and their
mail say who is away until when, and the deadline shown is the frozen one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from flask.testing import FlaskClient
from sqlmodel import col, select

from referee import games
from referee.delivery.compose import Site, build
from referee.i18n import clock, when
from referee.service import Referee, game_states
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import MANAGE
from referee.service.players import Player as Proved
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.service.vacations import set_vacation
from referee.store.tables import Outbox, OutboxKind

DAY = timedelta(days=1)


def test_the_other_seats_see_a_vacation_and_the_frozen_deadline(
    client: FlaskClient, referee: Referee
) -> None:
    seats = [Player("Ann", "ann@seen.test"), Player("Bob", "bob@seen.test")]
    created = create_game(referee, NewGame("subdivision", seats, {}, deadline="72h", trusted=True))
    game_id, mover = created.game.id, created.game.to_act[0]
    away, other = ("Ann", "Bob")[mover], ("Ann", "Bob")[1 - mover]
    leaves = datetime.now(UTC)
    plan = set_vacation(
        referee, Proved(f"{away.lower()}@seen.test", frozenset({MANAGE})), None, leaves + 4 * DAY
    )
    assert plan.vacation is not None
    back = plan.vacation.ends_at

    summary = client.get(f"/v1/games/{game_id}").json
    until = {seat["seat"]: seat["away_until"] for seat in summary["seats"]}
    assert datetime.fromisoformat(until[mover]) == back and until[1 - mover] is None
    due = datetime.fromisoformat(summary["deadlines"]["due_at"])
    started = datetime.fromisoformat(created.game.updated_at)
    assert due - back == timedelta(hours=72) - (plan.vacation.starts_at - started)

    page = client.get(f"/g/{game_id}").text
    assert f"{away}</bdi> is on vacation until" in page
    assert "the clock of this turn stands still until then" in page
    assert when(due) in page

    # The seat away plays from the beach: the other is told of its turn, and of the vacation.
    rules = games.get("subdivision")
    with referee.db.reading() as session:
        state = game_states.state_at(session, created.game, 0)
    move = rules.notate(rules.legal_moves(state, mover)[0])
    played = submit_move(
        referee, SubmitMove(game_id, SeatToken(created.tokens[mover]), move), wait=5
    )
    assert played.status == "accepted"
    with referee.db.reading() as session:
        row = session.exec(
            select(Outbox).where(
                col(Outbox.game_id) == game_id,
                col(Outbox.kind) == OutboxKind.YOUR_TURN,
                col(Outbox.seat) == 1 - mover,
            )
        ).one()
        text = json.loads(build(session, row, referee.secret(), Site.of(referee.settings)).json())[
            "text"
        ]
    assert f"{away} is on vacation until" in text
    # The return in the reader's zone (UTC: none chosen), its time of day named.
    assert " ".join(clock(back).split()) in " ".join(text.split())
    # The other seat's own turn is not held.
    summary = client.get(f"/v1/games/{game_id}").json
    assert summary["to_act"] == [1 - mover]
    assert f"{other}</bdi> is on vacation" not in client.get(f"/g/{game_id}").text
