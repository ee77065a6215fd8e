"""What the referee plays by itself is auditable, against real processes: `referee serve`
and a worker on PostgreSQL and Redis, and the `referee` command an auditor runs.

Ann (a person) plays Mandala against the `greedy` bot with a deadline and `on_timeout:
bot`. Her turns run out (the deadline sweep is run from here with a later clock): the
referee plays the greedy move for her, and after three in a row her seat is the bot's;
the worker plays the bots' turns to the end. The record read over HTTP marks every move
with its source; `referee verify --bots` works out again each timeout and each bot's move
from the revealed seed; `referee suggest` prints each of them, a timeout's with `--bot
greedy` too. A timeout or a bot's move changed to another legal move (the chain made
again around it, so only the audit can tell) fails verification at its line.

Also: the timeout's greedy move is thought out while the game's row is free (no lock
held): another transaction takes the row's lock meanwhile at once.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from referee import automatic, bots
from referee.record import Entry, Record, chain, loads
from referee.replay import replay
from referee.service import Referee
from referee.service.deadlines import sweep_deadlines
from referee.settings import Settings
from tests.stacks import REFEREE, TEST_API_KEY, Service, wait_for


@pytest.fixture(scope="module")
def local(pg_service: Service) -> Any:
    """The referee in this process on the stack's database and broker: the sweeps run
    here, with a clock of the test's; the moves they lead to go to the stack's worker."""
    made = Referee(Settings.from_environ(pg_service.env))
    yield made
    made.close()


def _game(url: str, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()
    return found


def _create(url: str) -> str:
    body = {
        "game": "mandala",
        "players": [{"name": "Ann"}, {"name": "Gus", "bot": "greedy"}],
        "deadline": "1h",
        "on_timeout": "bot",
    }
    answer = requests.post(
        f"{url}/v1/games", json=body, headers={"X-API-Key": TEST_API_KEY}, timeout=30
    )
    assert answer.status_code == 201, answer.text
    game_id: str = answer.json()["id"]
    return game_id


def _played_out(url: str, local: Referee) -> Record:
    """A finished game with timeouts and bots' moves in its record (a new game when a
    deal ends before Ann's seat is handed over: a greedy Mandala seat may end it early)."""
    for _ in range(8):
        game_id = _create(url)
        moment = datetime.now(UTC)
        for _sweep in range(12):
            # Ann's turn, once the bot has played its own.
            game = wait_for(lambda: _settled(url, game_id), seconds=120)  # noqa: B023
            if game["status"] == "over" or game["seats"][0]["bot"]:
                break
            moment += timedelta(hours=2)
            sweep_deadlines(local, moment)
        wait_for(lambda: _game(url, game_id)["status"] == "over", seconds=240)  # noqa: B023
        text = requests.get(f"{url}/v1/games/{game_id}/log.jsonl", timeout=30).text
        record = loads(text)
        if record.header.bots == ("greedy", "greedy"):
            return record
    raise AssertionError("no game went on until Ann's seat was handed to the bot")


def _settled(url: str, game_id: str) -> dict[str, Any] | None:
    """The game once it is over or waits for a person (no bot to act)."""
    game = _game(url, game_id)
    bots_seats = {seat["seat"] for seat in game["seats"] if seat["bot"]}
    if game["status"] == "over" or not bots_seats & set(game["to_act"]):
        return game
    return None


def _run(*args: str) -> tuple[int, str]:
    done = subprocess.run([REFEREE, *args], capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def _other_move(record: Record, seq: int) -> str | None:
    """A legal move other than the one played at `seq`, None where it was the only one."""
    replayed = replay(record, seq - 1)
    entry = record.entries[seq - 1]
    legal = (replayed.game.notate(m) for m in replayed.game.legal_moves(replayed.final, entry.seat))
    return next((move for move in legal if move != entry.move), None)


def _changeable(record: Record, entries: list[Entry]) -> int:
    """The seq of the first of `entries` that had another legal move (some turns have one)."""
    return next(e.seq for e in entries if _other_move(record, e.seq) is not None)


def _forged(record: Record, seq: int) -> Record:
    """The record cut after move `seq`, that move changed to another legal one and the
    chain made again: only re-deriving the move can tell."""
    entry = record.entries[seq - 1]
    other = _other_move(record, seq)
    assert other is not None
    moves = [(e.seat, e.move, e.created_at) for e in record.entries[: seq - 1]]
    moves.append((entry.seat, other, entry.created_at))
    chained = chain(record.header.seed_commitment, moves)
    sources = [e.source for e in record.entries[:seq]]
    return Record(
        record.header,
        tuple(replace(e, source=source) for e, source in zip(chained, sources, strict=True)),
    )


def test_the_referees_own_moves_verify_suggest_alike_and_a_changed_one_fails_at_its_line(
    pg_service: Service, local: Referee, tmp_path: Path
) -> None:
    record = _played_out(pg_service.url, local)
    header = record.header
    assert header.on_timeout == "bot" and header.seed is not None
    # Every move is marked: Ann's own turns ran out, the rest are the bots'.
    assert {entry.source for entry in record.entries} == {"timeout", "bot"}
    timeouts = [e for e in record.entries if e.source == "timeout"]
    robots = [e for e in record.entries if e.source == "bot"]
    assert len(timeouts) == 3 and {e.seat for e in timeouts} == {0}
    path = tmp_path / "game.jsonl"
    path.write_text(record.dumps(), encoding="utf-8")

    code, said = _run("verify", str(path), "--bots")
    assert code == 0, said
    assert f"{len(record.entries)} moves the referee made by itself worked out again" in said
    code, said = _run("verify", str(path))
    assert code == 0 and "3 moves the referee made by itself" in said and "--bots" in said

    # `suggest` gives the move the service played, wherever the referee played by itself.
    for entry in [*timeouts, *robots[:4]]:
        at = ["suggest", str(path), "--seat", str(entry.seat), "--at", str(entry.seq - 1)]
        code, said = _run(*at)
        assert (code, said.strip()) == (0, entry.move), entry
        if entry.source == "timeout":
            code, said = _run(*at, "--bot", "greedy")
            assert (code, said.strip()) == (0, entry.move), entry

    # A timeout changed: the chain holds, the replay is legal, the audit fails it.
    last_timeout = _changeable(record, timeouts[::-1])
    forged = tmp_path / "forged-timeout.jsonl"
    forged.write_text(_forged(record, last_timeout).dumps(), encoding="utf-8")
    code, said = _run("verify", str(forged))
    assert code == 1, said
    line = record.line_of(last_timeout)
    assert f"FAIL line {line}: move {last_timeout} " in said and "timeout" in said

    # A bot's move changed: found only when the bots are asked again (`--bots`).
    bot_move = _changeable(record, robots)
    forged = tmp_path / "forged-bot.jsonl"
    forged.write_text(_forged(record, bot_move).dumps(), encoding="utf-8")
    assert _run("verify", str(forged))[0] == 0
    code, said = _run("verify", str(forged), "--bots")
    assert code == 1 and f"FAIL line {record.line_of(bot_move)}: move {bot_move} " in said


def test_the_timeouts_greedy_move_is_thought_out_with_the_games_row_free(
    pg_service: Service, local: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = _create(pg_service.url)
    wait_for(lambda: _settled(pg_service.url, game_id), seconds=120)
    locked_meanwhile: list[bool] = []
    think = bots.decide

    def thinking(*args: Any, **kwargs: Any) -> Any:
        # While the greedy bot thinks for Ann, another connection asks for the row's lock
        # and is refused at once (NOWAIT) only if the sweep holds it.
        with psycopg.connect(pg_service.database_url) as other:
            try:
                other.execute(
                    "SELECT id FROM game WHERE id = %s FOR UPDATE NOWAIT", (game_id,)
                ).fetchall()
                locked_meanwhile.append(False)
            except psycopg.errors.LockNotAvailable:
                locked_meanwhile.append(True)
        return think(*args, **kwargs)

    monkeypatch.setattr(automatic.bots, "decide", thinking)
    swept = sweep_deadlines(local, datetime.now(UTC) + timedelta(hours=2))
    assert game_id in swept.timed_out
    assert locked_meanwhile and not any(locked_meanwhile)
