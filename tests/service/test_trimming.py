"""The trim sweep: after REFEREE_KEEP_DAYS a finished game's cached states and decided
submissions, and the delivery rows of notices done with, are dropped, and nothing else.
A trimmed game's record (each move's source too), verification, replay, moves and state
at every version are what they were; a game in play and a delivery still due are
untouched; a second run finds nothing."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlmodel import col, func, select

from referee.delivery import CHANNELS
from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.game_states import state_at
from referee.service.trimming import Trimmed, trim
from referee.service.verification import check_afresh
from referee.store.clock import stamp
from referee.store.reads import rules_of
from referee.store.records import public_record
from referee.store.tables import (
    Delivery,
    DeliveryStatus,
    Game,
    GameStatus,
    Move,
    Outbox,
    Snapshot,
    Submission,
)
from tests.rated_games import play_out

LONG_AGO = "2020-01-01T00:00:00.000000+00:00"


def _count(referee: Referee, table: Any, *where: Any) -> int:
    with referee.db.reading() as session:
        return session.exec(select(func.count()).select_from(table).where(*where)).one()


def _seen(referee: Referee, game_id: str) -> dict[str, Any]:
    """Everything anyone reads of a game: its record, its log's check, its state at
    every version, its rows of moves and submissions, its result."""
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        rules = rules_of(game)
        states = [
            rules.state_to_json(state_at(session, game, version))
            for version in range(game.version + 1)
        ]
        moves = [
            row.model_dump() for row in session.exec(select(Move).where(Move.game_id == game_id))
        ]
        submitted = session.exec(select(Submission).where(Submission.game_id == game_id)).all()
        return {
            "record": public_record(session, game, state_at(session, game, game.version)).dumps(),
            "check": check_afresh(session, game),
            "states": states,
            "moves": moves,
            "submissions": [row.model_dump() for row in submitted],
            "result": game.result,
            "seed": game.seed,
        }


def test_old_finished_games_and_deliveries_are_trimmed_and_nothing_read_changes(
    fresh_referee: Referee,
) -> None:
    referee = fresh_referee
    seated = [Player("Ann", email="ann@x.test"), Player("Bob", email="bob@x.test")]
    finished = create_game(referee, NewGame("mandala", seated, {}, trusted=True)).game.id
    playing = create_game(referee, NewGame("mandala", seated, {}, trusted=True)).game.id
    assert play_out(referee, finished, random.Random(3)).status == GameStatus.OVER
    play_out(referee, playing, random.Random(4), 5)
    now = datetime.now(UTC)
    for channel in CHANNELS:
        deliver_due(referee, channel)
    # A notice whose mail is still due, made long ago (a relay down for months).
    with referee.db.transaction() as session:
        notice = Outbox(game_id=playing, kind="your_turn", seat=0, payload={}, created_at=LONG_AGO)
        session.add(notice)
        session.flush()
        session.add(Delivery(notice_id=notice.id, channel="mail", next_attempt_at=LONG_AGO))
    before = {game_id: _seen(referee, game_id) for game_id in (finished, playing)}
    done = _count(referee, Delivery, col(Delivery.done_at).is_not(None))
    assert done > 0 and before[finished]["check"].replay_matches

    # Within the days kept, nothing goes.
    assert trim(referee, now) == Trimmed(0, 0, 0, 0)
    later = now + timedelta(days=referee.settings.keep_days, hours=1)
    trimmed = trim(referee, later)
    assert trimmed.games == 1 and trimmed.deliveries == done and trimmed.notices > 0
    assert trimmed.submissions == len(before[finished]["submissions"]) > 0
    with referee.db.reading() as session:
        old = session.get(Game, finished)
        assert old is not None and old.state is None
        assert not session.exec(select(Snapshot).where(Snapshot.game_id == finished)).all()
        current = session.get(Game, playing)
        assert current is not None and current.state is not None
    assert _count(referee, Delivery, col(Delivery.done_at).is_not(None)) == 0
    due = _count(referee, Delivery, Delivery.status == DeliveryStatus.PENDING)
    assert due == 1 and _count(referee, Outbox, Outbox.id == notice.id) == 1
    after = {game_id: _seen(referee, game_id) for game_id in (finished, playing)}
    assert after[playing] == before[playing]
    assert after[finished] == before[finished] | {"submissions": []}
    assert trim(referee, later) == Trimmed(0, 0, 0, 0)
    assert stamp(later) > before[finished]["moves"][-1]["created_at"]
