"""The audit of the moves the referee makes by itself, on records made here: forced
moves, timeouts and the marks (`source`) a record gives its moves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from referee import automatic, games
from referee.record import Header, Record, RecordError, chain, loads
from referee.replay import replay
from referee.rng import Rng, commitment

SEED = "audit seed"


def _record(name: str, players: int, moves: list[tuple[int, str, str]], **more: Any) -> Record:
    """A finished-game record of `(seat, notation, source)` moves."""
    header = Header(name, tuple(f"p{n}" for n in range(players)), {}, commitment(SEED), seed=SEED)
    header = replace(header, **more)
    chained = chain(header.seed_commitment, [(s, m, None) for s, m, _ in moves])
    sources = [source for _, _, source in moves]
    return Record(
        header, tuple(replace(e, source=x) for e, x in zip(chained, sources, strict=True))
    )


def _audit(record: Record, with_bots: bool = False) -> automatic.Audit:
    replayed = replay(loads(record.dumps()))
    return automatic.audit(
        loads(record.dumps()),
        replayed.game,
        replayed.options,
        replayed.states,
        with_bots=with_bots,
        default_bot_seconds=0.05,
    )


def _ice_palace_with_forced_builds() -> list[tuple[int, str, str]]:
    """An Ice Palace game of random moves holding a forced build, each move marked."""
    game = games.get("ice_palace")
    for number in range(50):
        state = game.start(3, game.load_options({}, 3), Rng(SEED))
        rng = Rng(f"moves {number}")
        moves: list[tuple[int, str, str]] = []
        while game.result(state) is None:
            (seat,) = game.actors(state)
            move = game.random_move(state, seat, rng)
            state = game.play(state, seat, move)
            moves.append((seat, game.notate(move), "rest"))
            for forced_seat, forced, after in game.forced_moves(state):
                moves.append((forced_seat, game.notate(forced), "forced"))
                state = after
        if any(source == "forced" for _, _, source in moves):
            return moves
    raise AssertionError("no game had a forced build")


def test_forced_moves_are_checked_and_a_choice_marked_forced_fails_at_its_line() -> None:
    moves = _ice_palace_with_forced_builds()
    record = _record("ice_palace", 3, moves)
    found = _audit(record)
    assert found.problems == []
    assert found.checked == sum(source == "forced" for _, _, source in moves)
    # A move of the seat's own choosing (the lead's, of a hand of six), marked as one
    # the rules forced.
    number = 0
    seat, move, _ = moves[number]
    marked = _record("ice_palace", 3, [*moves[:number], (seat, move, "forced")])
    found = _audit(marked)
    assert found.problems == [
        f"line {number + 2}: move {number + 1} ({move!r}): marked forced, but the rules "
        "leave the seat a choice here"
    ]


def _mandala_with_timeouts(policy: str) -> list[tuple[int, str, str]]:
    """A Mandala game where every third move is a timeout's under `policy`."""
    game = games.get("mandala")
    options = game.load_options({}, 2)
    state = game.start(2, options, Rng(SEED))
    rng = Rng("moves")
    moves: list[tuple[int, str, str]] = []
    while game.result(state) is None:
        (seat,) = game.actors(state)
        if len(moves) % 3 == 2:
            move = automatic.timeout_move(
                game,
                state,
                seat,
                policy,
                SEED,
                len(moves),
                players=2,
                options=options,
                bot_seconds=0.05,
            )
            source = "timeout"
        else:
            move, source = game.random_move(state, seat, rng), "mail"
        state = game.play(state, seat, move)
        moves.append((seat, game.notate(move), source))
    return moves


@pytest.mark.parametrize("policy", ["random", "bot"])
def test_a_timeout_that_is_not_the_policys_move_fails_at_its_line(policy: str) -> None:
    moves = _mandala_with_timeouts(policy)
    record = _record("mandala", 2, moves, on_timeout=policy)
    found = _audit(record)
    assert found.problems == [] and found.checked == len(moves) // 3
    # The last timeout changed to another legal move (the record cut there).
    number = max(n for n, (_, _, source) in enumerate(moves) if source == "timeout")
    replayed = replay(_record("mandala", 2, moves[:number], on_timeout=policy))
    seat, played, _ = moves[number]
    other = next(
        replayed.game.notate(move)
        for move in replayed.game.legal_moves(replayed.final, seat)
        if replayed.game.notate(move) != played
    )
    changed = _record("mandala", 2, [*moves[:number], (seat, other, "timeout")], on_timeout=policy)
    found = _audit(changed)
    assert len(found.problems) == 1
    assert found.problems[0].startswith(f"line {number + 2}: move {number + 1} ({other!r}): ")
    assert f"a timeout under {policy!r} plays {played!r} here" in found.problems[0]


def test_a_record_naming_no_timeout_policy_leaves_its_timeouts_unchecked_and_says_so() -> None:
    moves = _mandala_with_timeouts("random")
    found = _audit(_record("mandala", 2, moves))
    assert found.problems == [] and found.checked == 0
    assert len(found.notes) == len(moves) // 3
    assert "does not name its timeout policy" in found.notes[0]


def test_a_records_sources_and_policy_are_read_back_and_bad_ones_refused_at_their_line() -> None:
    record = _record("mandala", 2, _mandala_with_timeouts("random")[:3], on_timeout="random")
    text = record.dumps()
    assert loads(text) == record
    assert '"source":"timeout"' in text and '"on_timeout":"random"' in text
    with pytest.raises(RecordError) as refused:
        loads(text.replace('"source":"timeout"', '"source":"oracle"'))
    assert refused.value.line == 4 and "'source' must be one of" in str(refused.value)
    with pytest.raises(RecordError) as refused:
        loads(text.replace('"on_timeout":"random"', '"on_timeout":"coin"'))
    assert refused.value.line == 1 and "'on_timeout' must be one of" in str(refused.value)


def test_timeouts_of_one_sweep_logged_before_moves_were_counted_verify_too() -> None:
    # Before the stream counted the moves logged, every seat of one sweep drew at the
    # version the sweep found: a second timeout of the same stamp may draw at the first's.
    game = games.get("mandala")
    options = game.load_options({}, 2)
    state = game.start(2, options, Rng(SEED))
    moves = []
    for _ in range(2):
        (seat,) = game.actors(state)
        move = automatic.timeout_move(
            game, state, seat, "random", SEED, 0, players=2, options=options, bot_seconds=0.05
        )
        state = game.play(state, seat, move)
        moves.append((seat, game.notate(move), None))
    header = Header("mandala", ("a", "b"), {}, commitment(SEED), seed=SEED, on_timeout="random")
    stamp = "2026-12-06T10:00:00+00:00"

    def record(second_stamp: str) -> Record:
        stamps = [stamp, second_stamp]
        chained = chain(
            header.seed_commitment,
            [(s, m, t) for (s, m, _), t in zip(moves, stamps, strict=True)],
        )
        return Record(header, tuple(replace(e, source="timeout") for e in chained))

    assert _audit(record(stamp)).problems == []
    # Another stamp: another sweep, whose draw at its own version differs here.
    second = replay(record(stamp), 1).final
    own = automatic.timeout_move(
        game, second, moves[1][0], "random", SEED, 1, players=2, options=options, bot_seconds=0.05
    )
    assert game.notate(own) != moves[1][1]
    later = _audit(record("2026-12-06T12:00:00+00:00")).problems
    assert len(later) == 1 and later[0].startswith("line 3: move 2 ")
