"""`referee verify`, `replay` and `legal` on a record written to hurt them, run as the
installed command in a process of its own, as an auditor would run it.

Every line that cannot be read is named ("line N: reason") and the command
exits 1, without a traceback; a line nested 100,000 deep is one of them,
and a line of 50 MB is read past in pieces, never held whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.record import MAX_DEPTH, MAX_LINE_BYTES
from tests.games.test_record import finished_record
from tests.stacks import REFEREE

# Each test starts the command in a process of its own.
pytestmark = pytest.mark.service

COMMANDS = [["verify"], ["replay"], ["legal", "--seat", "0"]]


@dataclass
class Ran:
    code: int
    out: str
    err: str
    # The most memory the command held at once, in KiB (Linux's ru_maxrss).
    peak_kib: int


def run(*args: str, tmp: Path) -> Ran:
    """The command in a child process, with what it printed and its peak memory."""
    out, err = tmp / "out.txt", tmp / "err.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen([REFEREE, *args], stdout=stdout, stderr=stderr)
    deadline = time.monotonic() + 120
    # wait4 on this child alone: its own peak memory, not that of other children.
    pid, status, usage = os.wait4(child.pid, os.WNOHANG)
    while pid == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
    if pid == 0:
        child.kill()
        child.wait()
        raise AssertionError(f"referee {' '.join(args)} ran past 120 s")
    child.returncode = os.waitstatus_to_exitcode(status)
    return Ran(child.returncode, out.read_text(), err.read_text(), usage.ru_maxrss)


def header_and_first_move() -> list[str]:
    return finished_record().dumps().splitlines()[:2]


def test_every_unreadable_line_is_named_and_the_command_exits_1(tmp_path: Path) -> None:
    header, first = header_and_first_move()
    move = json.loads(first)
    deep_header = json.loads(header) | {"options": json.loads("[" * 100 + "]" * 100)}
    lines = [
        header,  # 1
        first,  # 2
        "[" * 100_000 + "]" * 100_000,  # 3: deeper than the recursion limit
        '{"seq": 4, "seat": 0, "move": ' + "[" * 500 + "]" * 500 + "}",  # 4: within it
        json.dumps(move | {"seq": 5, "seat": 0}).replace('"seat": 0', '"seat": ' + "9" * 5000),
        '{"seq": 6, "move": "\xff"}',  # 6: not UTF-8 (written as bytes below)
        '{"seq": 7, "move": "' + "x" * (MAX_LINE_BYTES + 10) + '"}',  # 7: too long
        "{oops",  # 8; 5: too many digits
    ]
    path = tmp_path / "hostile.jsonl"
    data = "\n".join(lines).encode("utf-8").replace("\xff".encode(), b"\xff")
    path.write_bytes(data + b"\n")
    for command in COMMANDS:
        ran = run(*command, str(path), tmp=tmp_path)
        assert ran.code == 1, ran
        assert "Traceback" not in ran.err and "RecursionError" not in ran.err
        for line, reason in [
            (3, f"nests deeper than {MAX_DEPTH} levels"),
            (4, f"nests deeper than {MAX_DEPTH} levels"),
            (5, "a number too long"),
            (6, "not UTF-8"),
            (7, f"longer than {MAX_LINE_BYTES} bytes"),
            (8, "not JSON"),
        ]:
            assert f"{path}: line {line}: {reason}" in ran.err, (command, line, ran.err)
        assert "line 1:" not in ran.err and "line 2:" not in ran.err
    # A header nested too deep is named too.
    path.write_text(json.dumps(deep_header) + "\n")
    ran = run("verify", str(path), tmp=tmp_path)
    assert ran.code == 1 and f"line 1: nests deeper than {MAX_DEPTH} levels" in ran.err, ran


def test_a_50_mb_line_is_refused_without_holding_it(tmp_path: Path) -> None:
    header, first = header_and_first_move()
    small = tmp_path / "small.jsonl"
    small.write_text(f"{header}\n{first}\n")
    baseline = run("verify", str(small), tmp=tmp_path)
    assert baseline.code in (0, 1), baseline  # a record cut short: its seed may not match
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as stream:
        stream.write(f"{header}\n".encode())
        stream.write(b'{"seq": 1, "seat": 0, "move": "')
        for _ in range(50):
            stream.write(b"x" * 1_000_000)
        stream.write(b'"}\n')
        stream.write(f"{first}\n".encode())
    ran = run("verify", str(huge), tmp=tmp_path)
    assert ran.code == 1, ran
    assert f"{huge}: line 2: longer than {MAX_LINE_BYTES} bytes" in ran.err
    # The line after it is read as the next line, not lost in the skipped one.
    assert f"{huge}: line 3: expected move 2, found seq 1" in ran.err
    # Holding the line (50 MB as bytes, again as text) would add 100 MB or more.
    assert ran.peak_kib - baseline.peak_kib < 20_000, (ran.peak_kib, baseline.peak_kib)


def test_a_malformed_handovers_field_is_refused_with_its_line(tmp_path: Path) -> None:
    header, first = header_and_first_move()
    bad = json.loads(header) | {"handovers": [{"seat": 99, "from_seq": "1", "bot": ["x"]}]}
    path = tmp_path / "handovers.jsonl"
    path.write_text(json.dumps(bad) + "\n" + first + "\n")
    for command in COMMANDS:
        ran = run(*command, str(path), tmp=tmp_path)
        assert ran.code == 1 and "Traceback" not in ran.err, ran
        assert f"{path}: line 1: field 'handovers' must list objects" in ran.err, ran
