"""The column types PostgreSQL holds ids, hashes and stamps in (`referee.store.columns`):
the code gets back exactly the text it wrote, and text that is no id finds nothing."""

from __future__ import annotations

import random

import sqlalchemy as sa

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.store import reads
from referee.store.columns import HexDigest, HexId, Stamp
from referee.store.tables import Move
from tests.live.test_profiles_pg import fresh_referee  # noqa: F401  (the database)
from tests.rated_games import play_out

_KEPT = sa.Table(
    "kept_text",
    sa.MetaData(),
    sa.Column("id", HexId(), primary_key=True),
    sa.Column("digest", HexDigest()),
    sa.Column("at", Stamp()),
)


def test_what_is_written_is_read_back_as_the_same_text(fresh_referee: Referee) -> None:  # noqa: F811
    rows = [
        {"id": "0" * 32, "digest": "f" * 64, "at": "1970-01-01T00:00:00.000000+00:00"},
        {
            "id": "9f86d081884c7d659a2feaa0c55ad015",
            "digest": "a3f1" * 16,
            "at": "2028-02-29T23:59:59.999999+00:00",
        },
        {"id": "ffffffffffffffffffffffffffffffff", "digest": None, "at": None},
    ]
    with fresh_referee.db.engine.begin() as connection:
        _KEPT.create(connection)
        connection.execute(sa.insert(_KEPT), rows)
        assert [
            dict(row)
            for row in connection.execute(sa.select(_KEPT).order_by(_KEPT.c.id)).mappings()
        ] == rows
        # Held in PostgreSQL's own types, not as text.
        held = connection.execute(
            sa.text(
                "SELECT pg_typeof(id)::text, pg_typeof(digest)::text, pg_typeof(at)::text"
                " FROM kept_text LIMIT 1"
            )
        ).one()
        assert tuple(held) == ("uuid", "bytea", "timestamp with time zone")
        # Another spelling of the same uuid, or text that is no id, finds nothing.
        for asked in ("0" * 31, "0" * 33, "F" * 32, "ffffffff-ffff-ffff-ffff-ffffffffffff", "x"):
            assert connection.execute(sa.select(_KEPT).where(_KEPT.c.id == asked)).all() == []
        # A moment written as other text comes back in the referee's form: why the
        # upgrade refuses moves whose stamps are not in it (their hashes cover them).
        connection.execute(
            sa.update(_KEPT).where(_KEPT.c.id == "0" * 32).values(at="2026-01-01T01:00:00+01:00")
        )
        at = connection.execute(sa.select(_KEPT.c.at).where(_KEPT.c.id == "0" * 32)).scalar_one()
        assert at == "2026-01-01T00:00:00.000000+00:00"


def test_a_game_is_found_by_its_id_alone_and_its_moves_hashes_come_back_whole(
    fresh_referee: Referee,  # noqa: F811
) -> None:
    game_id = create_game(
        fresh_referee, NewGame("subdivision", [Player("A"), Player("B")], {})
    ).game.id
    play_out(fresh_referee, game_id, random.Random(1), 4)
    with fresh_referee.db.reading() as session:
        assert reads.game_by_id(session, game_id) is not None
        for other in (game_id.upper(), game_id[:-1], f"{game_id[:8]}-{game_id[8:12]}"):
            assert reads.game_by_id(session, other) is None
        assert reads.ids_starting(session, game_id[:6], 2) == [game_id]
        # In capitals a prefix finds nothing; it must hold a letter to differ, and a
        # random id's first six characters are all digits about one time in seventeen.
        first_letter = min(at for at, character in enumerate(game_id) if character in "abcdef")
        lettered = game_id[: max(6, first_letter + 1)]
        assert reads.ids_starting(session, lettered.upper(), 2) == []
        moves = reads.log(session, game_id)
        with fresh_referee.db.engine.connect() as connection:
            stored = connection.execute(
                sa.text(
                    "SELECT encode(hash, 'hex'), seq FROM move WHERE game_id = :game ORDER BY seq"
                ),
                {"game": game_id},
            ).all()
    assert [(row.hash, row.seq) for row in moves] == [tuple(row) for row in stored]
    assert all(isinstance(row, Move) and len(row.hash) == 64 for row in moves)
