"""Off one machine and back, losing nothing: `referee db copy --to URL` moves a SQLite
referee with games of every game and player count (finished and in play, rated, with
players' names, tokens and totals) to PostgreSQL, refuses a target that holds rows, and
every game checks out the same after; then the backup drill of docs/operations.md:
`pg_dump` of the copy restored into a new database, `referee db verify` finding every
game sound (and naming one whose log was tampered with), `referee export` writing every
game's record, which `referee verify` reads."""

from __future__ import annotations

import json
import random
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from referee import games
from referee.cli import main
from referee.service import Referee
from referee.service.game_states import state_at
from referee.service.rating import rate_finished
from referee.settings import Settings
from referee.store import copying
from referee.store.reads import every_game_id, game_by_id
from referee.store.records import public_record
from tests.rated_games import ADDRESSES, name_players, play_out, seek_game
from tests.servers import pg_admin, pg_tool
from tests.tiers import starts_servers

KINDS = [(game.name, count) for game in games.all_games() for count in game.players]
# Games of a few dozen moves played out; the longer ones left in play part way.
LONG = ("ice_palace", "maniki")


def _database_url(name: str) -> str:
    return pg_admin().rsplit("/", 1)[0] + "/" + name


@pytest.fixture
@starts_servers
def databases() -> Iterator[list[str]]:
    """Names for fresh PostgreSQL databases, created as they are asked for and dropped
    at the end."""
    made: list[str] = []
    yield made
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        for name in made:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _new_database(made: list[str]) -> str:
    name = f"referee_copy_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    made.append(name)
    return _database_url(name)


def _cli(database_url: str, *args: str) -> tuple[int, str]:
    environment = {"DATABASE_URL": database_url, "REDIS_URL": None}
    done = CliRunner().invoke(main, list(args), env=environment)
    return done.exit_code, done.output


def _records(referee: Referee) -> dict[str, str]:
    """Every game's public record, as `GET /v1/games/{id}/log.jsonl` gives it."""
    found = {}
    with referee.db.reading() as session:
        for game_id in every_game_id(session):
            game = game_by_id(session, game_id)
            assert game is not None
            head = state_at(session, game, game.version)
            found[game_id] = public_record(session, game, head).dumps()
    return found


def _played(referee: Referee) -> Referee:
    rng = random.Random(39)
    for game, count in KINDS:
        for finished in (True, False):
            game_id = seek_game(referee, game, rng.sample(ADDRESSES, count))
            long = game in LONG
            play_out(referee, game_id, rng, None if finished and not long else rng.randrange(3, 9))
    rate_finished(referee)
    return referee


def test_a_sqlite_referee_moves_to_postgresql_whole_and_is_restored_from_a_dump(
    fresh_referee: Referee, databases: list[str], tmp_path: Path
) -> None:
    source = _played(name_players(fresh_referee))
    source_url = source.settings.database_url
    before = copying.rows_held(source.db.engine)
    assert before["game"] >= 2 * len(KINDS) and before["move"] > 100 and before["rating"] > 0
    target_url = _new_database(databases)

    code, output = _cli(source_url, "db", "copy", "--to", target_url)
    assert code == 0, output
    assert f"{before['game']} games checked on both" in output
    assert "every game checks out the same on the copy" in output
    target = Referee(Settings(database_url=target_url, redis_url=None, secret="a test secret"))
    try:
        assert copying.rows_held(target.db.engine) == before
        assert _records(target) == _records(source)
        # New rows after the copy take keys past the copied ones.
        play_out(target, seek_game(target, "subdivision", ADDRESSES[:2]), random.Random(1), 3)
    finally:
        target.close()

    # A second copy into the same database is refused, and writes nothing.
    held = copying.rows_held(Referee(Settings(database_url=target_url, redis_url=None)).db.engine)
    code, output = _cli(source_url, "db", "copy", "--to", target_url)
    assert code == 1 and "nothing copied: the target database is not empty" in output, output
    again = Referee(Settings(database_url=target_url, redis_url=None))
    assert copying.rows_held(again.db.engine) == held
    again.close()

    # The drill: a dump of the database, restored into a new one, every game sound.
    dump = tmp_path / "referee.dump"
    subprocess.run(
        [pg_tool("pg_dump"), "--format=custom", "--file", str(dump), target_url], check=True
    )
    restored_url = _new_database(databases)
    subprocess.run(
        [pg_tool("pg_restore"), "--no-owner", "--dbname", restored_url, str(dump)], check=True
    )
    code, output = _cli(restored_url, "db", "verify")
    assert code == 0, output
    assert f"{held['game']} games checked, 0 failed" in output
    code, output = _cli(restored_url, "export", str(tmp_path / "records"))
    assert code == 0 and f"{held['game']} game records written" in output, output
    files = sorted((tmp_path / "records").glob("*.jsonl"))
    assert len(files) == held["game"]
    finished = [path for path in files if "seed" in json.loads(path.read_text().splitlines()[0])]
    assert finished and len(finished) < len(files)
    for path in finished[:5]:
        code, output = _cli(restored_url, "verify", str(path))
        assert code == 0, output

    # A move's notation changed behind the referee's back: the game is named.
    with psycopg.connect(restored_url, autocommit=True) as connection:
        game_id = connection.execute(
            "SELECT game_id FROM move ORDER BY game_id, seq LIMIT 1"
        ).fetchone()[0]
        connection.execute(
            "UPDATE move SET hash = decode(repeat('0', 64), 'hex') WHERE game_id = %s AND seq = 1",
            (game_id,),
        )
    code, output = _cli(restored_url, "db", "verify")
    assert code == 1 and f"game {game_id.hex}: " in output and "1 failed" in output, output
