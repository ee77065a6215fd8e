"""Game records: reading, the hash chain, replay and verification."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from itertools import islice

import pytest

from referee import games
from referee.engine import Result
from referee.playout import steps
from referee.record import (
    MAX_LINE_BYTES,
    SEALED_NOTATION,
    Entry,
    Handover,
    Header,
    Record,
    RecordError,
    chain,
    chain_problems,
    loads,
)
from referee.replay import ReplayError, replay, unrevealed, verify
from referee.rng import Rng, commitment

SEED = "record-test-seed"


def finished_record(
    game_name: str = "subdivision",
    players: int = 2,
    seed: str = SEED,
    rules_version: str | None = None,
) -> Record:
    """A whole random game's record, under the current rules unless told otherwise."""
    game = games.get(game_name)
    options = game.load_options({}, players)
    played = steps(game, players, options, seed, Rng("chooser"))
    header = Header(
        game.name,
        ("Ann", "Bob", "Cy", "Di")[:players],
        options,
        commitment(seed),
        rules_version or game.rules_version,
        seed,
    )
    moves = [(s.seat, game.notate(s.move), "2026-11-26T00:00:00+00:00") for s in played]
    return Record(header, chain(header.seed_commitment, moves))


def with_entry(record: Record, index: int, **changes: object) -> Record:
    entries = list(record.entries)
    entries[index] = entries[index].__class__(**{**entries[index].to_json(), **changes})
    return Record(record.header, tuple(entries))


def test_the_chain_is_sha256_of_prev_hash_and_canonical_entry() -> None:
    record = finished_record()
    first, second = record.entries[:2]
    body = json.dumps(
        {"created_at": first.created_at, "move": first.move, "seat": first.seat, "seq": 1},
        separators=(",", ":"),
    )
    assert first.prev_hash == commitment(SEED)
    assert first.hash == hashlib.sha256((commitment(SEED) + body).encode()).hexdigest()
    assert second.prev_hash == first.hash
    assert chain_problems(record) == []


def test_a_record_reads_back_as_written() -> None:
    record = finished_record()
    again = loads(record.dumps())
    assert again == record
    assert again.dumps() == record.dumps()


def test_a_record_with_bots_reads_back_and_one_without_still_loads_and_verifies() -> None:
    record = finished_record()
    with_bots = Record(
        replace(record.header, bots=(None, "strong"), bot_seconds=0.5, bot_pace=1.3),
        record.entries,
    )
    text = with_bots.dumps()
    assert '"bots":[null,"strong"]' in text and '"bot_seconds":0.5' in text
    assert '"bot_pace":1.3' in text
    again = loads(text)
    assert again == with_bots and verify(again) == []
    # An older record has neither field: it reads as no bots, and verifies as before.
    assert "bots" not in record.dumps()
    older = loads(record.dumps())
    assert (older.header.bots, older.header.bot_seconds, older.header.bot_pace) == (None,) * 3
    assert verify(older) == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('"bots": ["strong"]', "bot level or null"),
        ('"bots": [1, null]', "bot level or null"),
        ('"bot_seconds": 0', "above 0"),
        ('"bot_seconds": "2"', "wrong type"),
        ('"bot_pace": 0', "from 0.1 to 10"),
        ('"bot_pace": 11', "from 0.1 to 10"),
        ('"bot_pace": true', "from 0.1 to 10"),
    ],
)
def test_bad_bot_fields_are_reported_on_line_one(fields: str, message: str) -> None:
    text = '{"game": "mandala", "players": ["A", "B"], "seed_commitment": "x", ' + fields + "}\n"
    with pytest.raises(RecordError) as error:
        loads(text)
    assert error.value.line == 1 and message in str(error.value)


def test_a_record_with_handovers_reads_back_and_says_whose_each_move_was() -> None:
    record = finished_record()
    handed = Record(
        replace(
            record.header,
            bots=(None, None),
            handovers=(Handover(seat=1, from_seq=7, bot="random"),),
        ),
        record.entries,
    )
    text = handed.dumps()
    assert '"handovers":[{"bot":"random","from_seq":7,"seat":1}]' in text
    again = loads(text)
    assert again == handed and verify(again) == []
    # Seat 1's moves before move 7 were the bot's; from it on, the person's.
    assert [again.header.bot_at(1, seq) for seq in (2, 6, 7, 8)] == ["random", "random", None, None]
    assert again.header.bot_at(0, 2) is None
    # An older record has no such field.
    assert loads(record.dumps()).header.handovers is None


@pytest.mark.parametrize(
    "handovers",
    [
        '{"seat": 1}',
        "[1]",
        '[{"seat": 2, "from_seq": 3, "bot": "random"}]',
        '[{"seat": -1, "from_seq": 3, "bot": "random"}]',
        '[{"seat": true, "from_seq": 3, "bot": "random"}]',
        '[{"seat": 1, "from_seq": 0, "bot": "random"}]',
        '[{"seat": 1, "from_seq": 3.5, "bot": "random"}]',
        '[{"seat": 1, "from_seq": 3, "bot": ""}]',
        '[{"seat": 1, "from_seq": 3, "bot": null}]',
        '[{"seat": 1, "from_seq": 3, "bot": "random", "by": "x"}]',
        '[{"seat": 1, "from_seq": 3, "bot": "random"}, {"seat": 1, "from_seq": 5, "bot": "x"}]',
    ],
)
def test_bad_handovers_are_reported_on_line_one(handovers: str) -> None:
    text = '{"game": "mandala", "players": ["A", "B"], "seed_commitment": "x", "handovers": '
    with pytest.raises(RecordError) as error:
        loads(text + handovers + "}\n")
    assert error.value.line == 1 and "'handovers'" in str(error.value)


def test_replay_reaches_the_same_result_as_live_play() -> None:
    game = games.get("subdivision")
    options = game.load_options({}, 2)
    played = list(steps(game, 2, options, SEED, Rng("chooser")))
    replayed = replay(loads(finished_record().dumps()))
    assert game.result(replayed.final) == game.result(played[-1].state)
    assert len(replayed.states) == len(played) + 1


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 0, "empty"),
        ("not json\n", 1, "not JSON"),
        ("[1, 2]\n", 1, "JSON object"),
        ('{"game": "subdivision", "players": ["A", "B"]}\n', 1, "seed_commitment"),
        ('{"game": "subdivision", "players": [], "seed_commitment": "x"}\n', 1, "players"),
    ],
)
def test_bad_headers_are_reported_with_their_line(text: str, line: int, message: str) -> None:
    with pytest.raises(RecordError) as error:
        loads(text)
    assert error.value.line == line
    assert message in error.value.message


def test_bad_move_lines_are_reported_with_their_file_line() -> None:
    lines = finished_record().dumps().splitlines()
    bad_seat = json.loads(lines[3]) | {"seat": True}
    for broken, message in [
        ("{oops", "not JSON"),
        (json.dumps(bad_seat), "'seat' has the wrong type"),
        (json.dumps(json.loads(lines[3]) | {"seq": 7}), "expected move 3"),
        (json.dumps({"seq": 3, "seat": 0}), "missing field 'move'"),
    ]:
        text = "\n".join([*lines[:3], "", broken, *lines[4:]])
        with pytest.raises(RecordError) as error:
            loads(text)
        assert error.value.line == 5, broken
        assert message in error.value.message


def test_a_line_of_the_longest_length_is_read_one_byte_more_is_not() -> None:
    header, first = finished_record().dumps().splitlines()[:2]
    padding = MAX_LINE_BYTES - len(first.encode())
    longest = first[:-1] + " " * padding + "}"
    assert len(longest.encode()) == MAX_LINE_BYTES
    # Line ends as Windows writes them are line ends too.
    assert loads(f"{header}\r\n{longest}\r\n").entries[0].move == json.loads(first)["move"]
    with pytest.raises(RecordError) as error:
        loads(f"{header}\n{first[:-1]} {' ' * padding}}}\n{first}")
    assert [(p.line, p.message) for p in error.value.problems] == [
        (2, f"longer than {MAX_LINE_BYTES} bytes"),
        (3, "expected move 2, found seq 1"),
    ]


def test_verify_catches_a_changed_move() -> None:
    record = finished_record()
    game = games.get("subdivision")
    state = replay(record, 0).final
    other = next(m for m in game.legal_moves(state, 0) if game.notate(m) != record.entries[0].move)
    problems = verify(with_entry(record, 0, move=game.notate(other)))
    assert any("line 2: hash does not match" in p for p in problems)


def test_verify_catches_a_broken_chain() -> None:
    record = finished_record()
    problems = verify(with_entry(record, 4, prev_hash="0" * 64))
    assert problems == ["line 6: prev_hash does not match the line before"]
    dropped = Record(record.header, record.entries[:3] + record.entries[4:])
    with pytest.raises(RecordError):
        loads(dropped.dumps())  # the sequence numbers no longer follow


def test_verify_catches_a_seed_that_does_not_match_its_commitment() -> None:
    record = finished_record()
    header = Header(
        **{**record.header.to_json(), "players": record.header.players, "seed": "another seed"}
    )
    problems = verify(Record(header, record.entries))
    assert problems == ["line 1: the seed does not match its commitment"]


def test_an_illegal_move_is_reported_with_its_line_and_reason() -> None:
    record = finished_record()
    header = record.header
    moves = [(e.seat, e.move, e.created_at) for e in record.entries]
    moves[2] = (moves[2][0], moves[0][1], None)  # the cell is already taken
    with pytest.raises(ReplayError) as error:
        replay(Record(header, chain(header.seed_commitment, moves)))
    assert error.value.line == 4
    assert error.value.code == "illegal_move"
    assert moves[0][1] in error.value.message


def test_a_running_game_has_no_seed_to_replay_with() -> None:
    record = finished_record()
    header = Header(**{**record.header.to_json(), "players": record.header.players, "seed": None})
    running = Record(header, record.entries[:5])
    with pytest.raises(ReplayError) as error:
        verify(running)
    assert error.value.code == "no_seed"


def test_records_of_another_rules_version_are_not_replayed() -> None:
    record = finished_record()
    future = Header(
        **{**record.header.to_json(), "players": record.header.players, "rules_version": "999"}
    )
    with pytest.raises(ReplayError) as error:
        replay(Record(future, record.entries))
    assert error.value.code == "unsupported_rules_version"
    assert "999" in error.value.message
    hand_written = Header(
        **{**record.header.to_json(), "players": record.header.players, "rules_version": None}
    )
    assert replay(Record(hand_written, record.entries)).final == replay(record).final


def test_a_mandala_record_of_rules_version_1_keeps_its_shared_win() -> None:
    # This deal ends 10, 15, 15 with the tied pawns on 68 (seat 1) and 73 (seat 2).
    old = finished_record("mandala", 3, seed="tie4", rules_version="1")
    assert verify(loads(old.dumps())) == []
    replayed = replay(old)
    assert replayed.game.rules_version == "1"
    result = replayed.game.result(replayed.final)
    assert result is not None and result.scores == (10, 15, 15) and result.winners == (1, 2)
    now = replay(finished_record("mandala", 3, seed="tie4"))
    assert now.game.rules_version == "2" and now.final == replayed.final
    assert now.game.result(now.final) == Result((10, 15, 15), (2,))


def test_a_mandala_stones_record_that_calls_red_pink_still_replays_and_verifies() -> None:
    record = finished_record("mandala_stones")
    # Written before red had its name: the same moves, with `score P` for red.
    old = [(e.seat, e.move.replace("score R", "score P"), e.created_at) for e in record.entries]
    assert "score P" in [move for _, move, _ in old]
    written_before = Record(record.header, chain(record.header.seed_commitment, old))
    assert verify(loads(written_before.dumps())) == []
    assert replay(written_before).states == replay(record).states


def test_an_ice_palace_record_with_the_referees_own_passes_still_replays_and_verifies() -> None:
    # Such records were written under rules version 1.
    game = games.get("ice_palace", "1")
    state = game.start(3, {}, Rng(SEED))
    moves: list[tuple[int, str, str | None]] = []
    auto_passes = 0
    for number, step in enumerate(steps(game, 3, {}, SEED, Rng("chooser"))):
        stamp = f"2026-11-26T00:{number // 60:02d}:{number % 60:02d}+00:00"
        if game.legal_moves(state, step.seat) == [game.parse("pass")]:
            # Before, the referee passed for such a seat at once, with no
            # submission, in the same instant as the move before.
            stamp = moves[-1][2] or stamp
            auto_passes += 1
        moves.append((step.seat, game.notate(step.move), stamp))
        state = step.state
    assert auto_passes
    header = Header(game.name, ("Ann", "Bob", "Cy"), {}, commitment(SEED), "1", SEED)
    written_before = Record(header, chain(header.seed_commitment, moves))
    assert verify(loads(written_before.dumps())) == []
    assert replay(written_before).final == state


def test_unknown_games_and_bad_options_are_refused_on_line_one() -> None:
    record = finished_record()
    for changes, code in [
        ({"game": "chess"}, "unknown_game"),
        ({"options": {"no_such_option": 1}}, "bad_options"),
    ]:
        header = Header(**{**record.header.to_json(), "players": record.header.players, **changes})
        with pytest.raises(ReplayError) as error:
            replay(Record(header, record.entries))
        assert (error.value.line, error.value.code) == (1, code)


def running_sealed_record() -> tuple[Record, int]:
    """A MaNiKi game in sealed mode as the service publishes it mid-round, and its hidden tail.

    The seed is left out and the moves of the open round show as `sealed`
    with no hash, as `GET .../log.jsonl` gives them.
    """
    game = games.get("maniki")
    options = game.load_options({"mode": "sealed"}, 3)
    played = list(islice(steps(game, 3, options, SEED, Rng("chooser")), 300))
    for cut in range(len(played) - 1, 0, -1):
        hidden = game.hidden_tail(played[cut - 1].state)
        if hidden >= 2:
            break
    else:
        raise AssertionError("no open sealed round with two answers")
    moves = [(s.seat, game.notate(s.move), "2026-11-26T00:00:00+00:00") for s in played[:cut]]
    header = Header(game.name, ("Ann", "Bob", "Cy"), options, commitment(SEED), "1", None)
    entries = list(chain(header.seed_commitment, moves))
    for n in range(cut - hidden, cut):
        entries[n] = Entry(entries[n].seq, entries[n].seat, SEALED_NOTATION, entries[n].created_at)
    return loads(Record(header, tuple(entries)).dumps()), hidden


def test_a_running_sealed_record_checks_its_chain_and_names_what_is_not_revealed() -> None:
    record, hidden = running_sealed_record()
    assert chain_problems(record) == []
    assert unrevealed(record)[0].startswith("the seed")
    first = len(record.entries) - hidden + 1
    assert unrevealed(record)[1].startswith(f"moves {first}-{len(record.entries)} (sealed")
    with pytest.raises(ReplayError) as error:
        verify(record)
    assert error.value.code == "no_seed" and "not yet revealed" in error.value.message


def test_a_move_after_a_sealed_one_breaks_the_chain() -> None:
    record, _ = running_sealed_record()
    last = record.entries[-1]
    forged = Entry(last.seq + 1, 0, "KI", None, "0" * 64, "0" * 64)
    problems = verify(Record(record.header, (*record.entries, forged)))
    assert any("follows sealed move" in problem for problem in problems)
