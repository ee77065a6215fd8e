"""Migration 0027: each move keeps its source, and its previous hash is no longer stored.

Games played to the head are taken down to 0026 (each move gets back the
`prev_hash` the record gives it) and up again (each move's source is read
from its submission, `forced` where it has none; a finished game trimmed
before loses its submissions): the records are the same throughout. On
SQLite here, on PostgreSQL in tests/live/test_move_source_migration_pg.py.
"""

from __future__ import annotations

import random

import sqlalchemy as sa

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.store.records import full_record
from referee.store.tables import Game, Submission
from tests.migrating import migrate
from tests.rated_games import play_out


def records(referee: Referee) -> dict[str, str]:
    with referee.db.reading() as session:
        return {
            game.id: full_record(session, game).dumps()
            for game in session.exec(sa.select(Game)).scalars()
        }


def moved_down_and_up(referee: Referee) -> None:
    seated = [Player("Ann"), Player("Bob")]
    finished = create_game(referee, NewGame("mandala", seated, {})).game.id
    playing = create_game(referee, NewGame("maniki", [*seated, Player("Cy")], {})).game.id
    play_out(referee, finished, random.Random(5))
    play_out(referee, playing, random.Random(6), 6)
    before = records(referee)

    migrate(referee.db, "0026", down=True)
    with referee.db.engine.begin() as connection:
        chained = connection.execute(
            sa.text("SELECT game_id, seq, prev_hash FROM move ORDER BY game_id, seq")
        ).all()
        # As 0026 kept them: a move the referee played for a seat out of time, and one it
        # recorded by itself (no submission).
        connection.execute(
            sa.text("UPDATE submission SET source = 'timeout' WHERE game_id = :game AND seq = 1"),
            {"game": playing},
        )
        connection.execute(
            sa.text("UPDATE move SET submission_id = NULL WHERE game_id = :game AND seq = 2"),
            {"game": finished},
        )
        # The finished game trimmed by 0026's sweep (its cached state gone).
        connection.execute(
            sa.text("UPDATE game SET state = NULL WHERE id = :game"), {"game": finished}
        )
    for game_id, text in before.items():
        lines = [line for line in text.splitlines()[1:] if line]
        assert [row.prev_hash for row in chained if row.game_id == game_id] == [
            line.split('"prev_hash":"')[1][:64] for line in lines
        ]

    migrate(referee.db, "head")
    after = records(referee)
    assert changed(before[finished], after[finished]) == {2: ("rest", "forced")}
    assert changed(before[playing], after[playing]) == {1: ("rest", "timeout")}
    with referee.db.reading() as session:
        kept = session.exec(sa.select(Submission.game_id)).scalars().all()
    assert finished not in kept and playing in kept


def changed(before: str, after: str) -> dict[int, tuple[str, str]]:
    """The lines of two records that differ, by number (the header is 0): each line's
    source before and after; asserting that nothing else differs."""
    found = {}
    for number, (old, new) in enumerate(zip(before.splitlines(), after.splitlines(), strict=True)):
        if old != new:
            sources = old.split('"source":"')[1][:-2], new.split('"source":"')[1][:-2]
            assert new == old.replace(f'"source":"{sources[0]}"', f'"source":"{sources[1]}"')
            found[number] = sources
    return found


def test_sources_and_chains_survive_down_and_up_on_sqlite(fresh_referee: Referee) -> None:
    moved_down_and_up(fresh_referee)
