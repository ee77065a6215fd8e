"""Migration 0028: a move is keyed by its place in the log and keeps no JSON (and, on
PostgreSQL, ids, hashes and stamps are held in its own types).

A game of each of the five games, some finished and some still running, is
played to the head, taken down to 0027 and up again. Down, each move gets back
a serial key and its JSON, parsed from its notation: the JSON is the one its
seat submitted. Through both, every record, every state and every check of a
log stays the same. On SQLite here, on PostgreSQL in
tests/live/test_lean_rows_migration_pg.py.
"""

from __future__ import annotations

import json
import random
from typing import Any

import sqlalchemy as sa

from referee import games
from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.game_states import state_at
from referee.service.verification import check_afresh
from referee.store.reads import rules_of
from referee.store.records import full_record
from referee.store.tables import Game, GameStatus
from tests.migrating import migrate
from tests.rated_games import play_out

# Each game at its smallest count; every other one played to its end, the others for a
# dozen moves (a random resignation may end one of those too).
PLAYERS = ("Ann", "Bob", "Cy")


def played(referee: Referee) -> dict[str, bool]:
    """A game of each kind, played at random: {id: finished}."""
    made = {}
    for number, rules in enumerate(games.all_games()):
        seated = [Player(name) for name in PLAYERS[: min(rules.players)]]
        game_id = create_game(referee, NewGame(rules.name, seated, {})).game.id
        game = play_out(referee, game_id, random.Random(number), None if number % 2 else 12)
        made[game_id] = game.status == GameStatus.OVER
    assert set(made.values()) == {True, False}
    return made


def seen(referee: Referee) -> dict[str, tuple[str, Any, tuple[bool, bool, list[str]]]]:
    """Each game's full record, its state at the head (worked out from its log, the cache
    set aside) and the check of its log."""
    found = {}
    with referee.db.reading() as session:
        for game in session.exec(sa.select(Game)).scalars():
            rules = rules_of(game)
            game.state = None
            state = rules.state_to_json(state_at(session, game, game.version))
            checked = check_afresh(session, game)
            found[game.id] = (
                full_record(session, game).dumps(),
                state,
                (checked.chain_valid, checked.replay_matches, checked.problems),
            )
            session.expunge(game)
    return found


def moved_down_and_up(referee: Referee) -> None:
    made = played(referee)
    before = seen(referee)
    assert all(chain and replay for _, _, (chain, replay, _) in before.values())

    migrate(referee.db, "0027", down=True)
    with referee.db.engine.connect() as connection:
        moves = connection.execute(
            sa.text("SELECT id, game_id, seq, move FROM move ORDER BY id")
        ).all()
        submitted = connection.execute(
            sa.text("SELECT game_id, seq, move FROM submission WHERE status = 'accepted'")
        ).all()
    assert {str(row.game_id).replace("-", "") for row in moves} == set(made)
    assert len({row.id for row in moves}) == len(moves)
    # The JSON parsed from each notation is the JSON the seat submitted.
    by_place = {(str(row.game_id).replace("-", ""), row.seq): _json(row.move) for row in moves}
    assert submitted
    for row in submitted:
        assert by_place[(str(row.game_id).replace("-", ""), row.seq)] == _json(row.move)

    migrate(referee.db, "head")
    assert seen(referee) == before


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def test_moves_lose_their_json_and_key_and_get_them_back_on_sqlite(fresh_referee: Referee) -> None:
    moved_down_and_up(fresh_referee)
