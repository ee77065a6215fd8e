"""The `referee` command over game records, as a player or an auditor uses it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee import games
from referee.cli import main
from referee.record import Handover, Record, loads
from referee.replay import envelope, replay
from tests.games.test_record import finished_record, running_sealed_record
from tests.stacks import base_env, start_server


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_a_local_game_from_new_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    code, out = run("new", "subdivision", str(path), "--player", "Ann", "--player", "Bob")
    assert code == 0, out
    game = games.get("subdivision")
    while True:
        code, out = run("replay", str(path), "--json")
        data = json.loads(out)
        if data["status"] == "over":
            break
        seat = data["to_act"][0]
        code, legal = run("legal", str(path))
        assert code == 0
        first = legal.splitlines()[0]
        code, out = run("move", str(path), first, "--seat", str(seat))
        assert code == 0 and "accepted" in out, out
    record = loads(path.read_text())
    assert run("verify", str(path)) == (
        0,
        f"ok: chain, seed and {len(record.entries)} moves verified\n",
    )
    assert data["result"] == game.result(replay(record).final).to_json()


def test_replay_prints_the_envelope_at_any_move_for_any_seat(tmp_path: Path) -> None:
    record = finished_record()
    path = tmp_path / "r.jsonl"
    path.write_text(record.dumps())
    replayed = replay(record)
    for at in (0, 3, len(record.entries)):
        code, out = run("replay", str(path), "--at", str(at), "--seat", "1", "--json")
        assert code == 0
        assert json.loads(out) == envelope(replayed.game, replayed.states[at], at, 1)
    code, out = run("replay", str(path))
    assert code == 0 and "over" in out and "winner" in out


def test_forgiving_input_is_stored_canonically(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    run("new", "subdivision", str(path), "--player", "A", "--player", "B", "--seed", "x")
    code, out = run("move", str(path), " Large  C2 ", "--seat", "0")
    assert code == 0, out
    assert loads(path.read_text()).entries[0].move == "3c2"


def test_errors_name_the_line_and_reason_and_exit_1(tmp_path: Path) -> None:
    record = finished_record()
    lines = record.dumps().splitlines()
    lines[3] = lines[3].replace(record.entries[2].move, record.entries[0].move)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out = run("replay", str(path))
    assert code == 1
    assert f"{path}: line 4:" in out and record.entries[0].move in out
    code, out = run("verify", str(path))
    assert code == 1 and "FAIL line 4: hash does not match" in out


def test_bad_arguments_are_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    assert run("new", "chess", str(path), "--player", "A")[0] == 1
    code, out = run("new", "subdivision", str(path), "--player", "A")
    assert code == 1 and "players" in out
    code, out = run(
        "new", "subdivision", str(path), "--player", "A", "--player", "B", "--options", "{nope"
    )
    assert code == 1 and "not JSON" in out
    run("new", "subdivision", str(path), "--player", "A", "--player", "B")
    code, out = run("move", str(path), "hello", "--seat", "0")
    assert code == 1 and "bad_notation" in out
    code, out = run("move", str(path), "3c2", "--seat", "1")
    assert code == 1 and "not_your_turn" in out
    code, out = run("replay", str(path), "--seat", "5")
    assert code == 1 and "seat 5 does not exist" in out
    assert len(loads(path.read_text()).entries) == 0  # nothing written by refused moves


# It runs the command in a process of its own.
@pytest.mark.service
def test_the_installed_command_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee", "games"], capture_output=True, text=True, check=True
    )
    assert "subdivision" in done.stdout


# It starts `referee serve`.
@pytest.mark.service
def test_serve_makes_the_kept_secret_before_any_request_needs_it(tmp_path: Path) -> None:
    database = tmp_path / "referee.sqlite3"
    _url, server = start_server(base_env(DATABASE_URL=f"sqlite:///{database}"), tmp_path)
    try:
        # Only the start's own check (`/v1/rules`, which needs no secret) was asked.
        with closing(sqlite3.connect(database)) as connection:
            kept = connection.execute("SELECT key, length(value) FROM setting").fetchall()
    finally:
        server.kill()
    assert len(kept) == 1 and kept[0][1] == 64


def test_verify_passes_a_running_games_record_and_says_what_is_not_revealed(
    tmp_path: Path,
) -> None:
    record, hidden = running_sealed_record()
    path = tmp_path / "running.jsonl"
    path.write_text(record.dumps())
    code, out = run("verify", str(path))
    chained = len(record.entries) - hidden
    assert code == 0, out
    assert out.startswith(f"ok: chain of {chained} moves verified; not yet revealed: the seed")
    assert "sealed until their round is decided" in out


def test_verify_says_who_played_a_seat_taken_over_from_a_bot(tmp_path: Path) -> None:
    record = finished_record()
    header = replace(record.header, handovers=(Handover(seat=1, from_seq=5, bot="greedy"),))
    path = tmp_path / "handed.jsonl"
    path.write_text(Record(header, record.entries).dumps())
    code, out = run("verify", str(path))
    assert code == 0, out
    assert out.splitlines() == [
        "seat 1 (Bob): its moves before move 5 were played by the greedy bot, from move 5 on "
        "by Bob",
        f"ok: chain, seed and {len(record.entries)} moves verified",
    ]
