"""A broken bot never leaves its game waiting, against real processes: `referee serve` and
a worker on PostgreSQL and Redis, the worker's `greedy` bot broken on purpose.

The worker starts with a `sitecustomize` that makes every `greedy` move of Mandala a
`take` the rules refuse there, handed past the bot's own check: so the
bot's submission is recorded, and the deciding worker refuses it (`illegal_move`); where
every cell ahead may be taken, one off the path's end, which the submission itself
refuses.
Ann plays her turns over REST against the broken bot. After each refusal the seat plays
the `random` level's move from the same stream, and the worker's log says so once per
turn, with the position as anyone sees it (never the seed).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from referee import automatic, games
from referee.cli import main
from referee.record import loads
from referee.replay import replay
from tests.fixtures import GENEROUS
from tests.servers import redis_url
from tests.stacks import TEST_API_KEY, Client, Service, base_env, start_server, wait_for
from tests.tiers import starts_servers

BROKEN = '''
"""Breaks Mandala's greedy bot in this process (tests/live/test_broken_bot.py)."""
import referee.automatic as automatic
from referee.games.mandala import Take

_choice = automatic.bot_choice


def _broken(game, level, state, seat, *args, **kwargs):
    if game.name == "mandala" and level == "greedy":
        legal = {move.index for move in game.legal_moves(state, seat)}
        # A cell the rules refuse now, else one off the path's end.
        refused = sorted(set(range(len(state.path))) - legal) or [len(state.path)]
        return automatic.BotChoice(Take(refused[0]))
    return _choice(game, level, state, seat, *args, **kwargs)


automatic.bot_choice = _broken
'''
REFUSED = re.compile(
    r"game (\w+), version (\d+), seat 1: the greedy bot's Mandala move was refused"
)


@pytest.fixture(scope="module")
@starts_servers
def broken(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """API server + one worker whose greedy bot is broken."""
    tmp = tmp_path_factory.mktemp("broken")
    env = base_env(
        DATABASE_URL=pg_database,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"referee-test-{uuid.uuid4().hex[:8]}",
        REFEREE_RATE_MOVES=GENEROUS,
    )
    url, server = start_server(env, tmp)
    service = Service(url, pg_database, env, tmp, server)
    patch = tmp / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(BROKEN, encoding="utf-8")
    service.env = {**env, "PYTHONPATH": str(patch)}
    service.start_worker()
    yield service
    service.stop()


def _game(client: Client, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/v1/games/{game_id}").json()
    return found


def _not_the_bots_turn(client: Client, game_id: str) -> dict[str, Any] | None:
    game = _game(client, game_id)
    return None if game["to_act"] == [1] else game


def test_a_bot_whose_move_is_refused_plays_the_random_levels_and_says_so_once(
    broken: Service, tmp_path: Path
) -> None:
    client = Client(broken.url)
    body = {"game": "mandala", "players": [{"name": "Ann"}, {"name": "Gus", "bot": "greedy"}]}
    created = client.post("/v1/games", body, headers={"X-API-Key": TEST_API_KEY})
    assert created.status_code == 201, created.text
    game_id, token = created.json()["id"], created.json()["seats"][0]["token"]
    bot_turns = 0
    while bot_turns < 4:
        game = wait_for(lambda: _not_the_bots_turn(client, game_id))
        if game["status"] == "over":
            break
        if game["version"] > 0:
            bot_turns += 1
        legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
        answer = client.move(game_id, token, {"notation": legal[0]["notation"]})
        assert answer.status_code == 201 and answer.json()["submission"]["status"] == "accepted"
    # Ann resigns on her own turn, so that every turn of the bot's is in the log.
    if wait_for(lambda: _not_the_bots_turn(client, game_id))["status"] != "over":
        assert client.move(game_id, token, {"notation": "resign"}).status_code == 201
    wait_for(lambda: _game(client, game_id)["status"] == "over")

    record = loads(requests.get(f"{broken.url}/v1/games/{game_id}/log.jsonl", timeout=30).text)
    assert record.header.seed is not None
    replayed = replay(record)
    rules = games.get("mandala")
    gus = [entry for entry in record.entries if entry.seat == 1 and entry.move != "resign"]
    assert gus and all(entry.source == "bot" for entry in gus)
    for entry in gus:
        # The random level's move, drawn from the stream of the version the bot was asked at.
        stand_in = automatic.fallback_move(
            rules,
            replayed.states[entry.seq - 1],
            1,
            record.header.seed,
            entry.seq - 1,
            players=2,
            options=replayed.options,
        )
        assert entry.move == rules.notate(stand_in)
    # Once per turn of the bot's, in the operators' log; never the seed.
    log = "".join(worker.output() for worker in broken.workers)
    said = [(found[0], int(found[1])) for found in REFUSED.findall(log)]
    assert sorted(said) == [(game_id, entry.seq - 1) for entry in gus]
    assert "illegal_move" in log and "Traceback" not in log and record.header.seed not in log
    # The auditor's `verify --bots` finds each stand-in and says why it was played.
    path = tmp_path / "game.jsonl"
    path.write_text(record.dumps(), encoding="utf-8")
    said = CliRunner().invoke(main, ["verify", str(path), "--bots"])
    assert said.exit_code == 0, said.output
    # Noted where the greedy bot's own move (unbroken in this process) is not the one
    # played; where the two happen to agree there is nothing to note.
    differ = 0
    for entry in gus:
        own = automatic.bot_choice(
            rules,
            "greedy",
            replayed.states[entry.seq - 1],
            1,
            record.header.seed,
            entry.seq - 1,
            players=2,
            options=replayed.options,
            seconds=0.05,
            bots_seats=[1],
        )
        differ += rules.notate(own.move) != entry.move
    assert differ and said.output.count("was refused by the service") == differ
