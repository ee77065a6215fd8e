"""The store on PostgreSQL: snapshots and head states are only caches, and reads stay cheap."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete, event, update
from sqlmodel import Session, select

from referee import games
from referee.playout import steps
from referee.replay import new_state, replay, verify
from referee.rng import Rng, commitment
from referee.store import creation, db, deciding, reads, records, submissions
from referee.store.tables import Game, Outbox, Snapshot, Source
from tests.configured import settings_with

RULES = games.get("subdivision")


@pytest.fixture(scope="module")
def url(pg_database: str) -> Iterator[str]:
    with settings_with(database_url=pg_database):
        db.upgrade()
        yield pg_database
    db.dispose()


def played_game(url: str, moves: int, emails: tuple[str | None, str | None] = (None, None)) -> str:
    """A game with `moves` random moves decided through `deciding.decide`."""
    with db.transaction() as session:
        created = creation.create_game(
            session, RULES, [("a", emails[0]), ("b", emails[1])], RULES.load_options({}, 2)
        )
    play_on(url, created.game.id, moves)
    return created.game.id


def _version(session: Session, game_id: str) -> int:
    """The game's version now: the position a player submitting now sees."""
    game = session.get(Game, game_id)
    assert game is not None
    return game.version


def play_on(url: str, game_id: str, moves: int) -> None:
    """Decide `moves` more random moves, chosen from the state replayed locally."""
    with Session(db.engine()) as session:
        game = session.get(Game, game_id)
        assert game is not None
        state = new_state(RULES, game.seed, 2, game.options)
        for row in reads.log(session, game_id):
            state = RULES.play(state, row.seat, RULES.move_from_json(row.move))
    chooser = Rng(f"store-{game_id}")
    for _ in range(moves):
        seat = min(RULES.actors(state))
        move = RULES.random_move(state, seat, chooser)
        accept(game_id, seat, RULES.move_to_json(move))
        state = RULES.play(state, seat, move)


def accept(game_id: str, seat: int, move: dict[str, Any]) -> None:
    """Record `move` for `seat` and decide it, as the API and a worker would: accepted."""
    with Session(db.engine(), expire_on_commit=False) as session:
        submission, _ = submissions.record(
            session,
            game_id,
            seat,
            move,
            source=Source.REST,
            seen_version=_version(session, game_id),
        )
        session.commit()
    decided = deciding.decide(submission.id).submission
    assert decided is not None and decided.status == "accepted", decided


def states(url: str, game_id: str) -> list[Any]:
    with Session(db.engine()) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return [
            RULES.state_to_json(reads.state_at(session, game, n)) for n in range(game.version + 1)
        ]


def drop_caches(url: str, game_id: str) -> None:
    """Drop the game's snapshots and the state kept on its row."""
    with db.transaction() as session:
        session.exec(delete(Snapshot).where(Snapshot.game_id == game_id))  # type: ignore[call-overload]
        session.exec(update(Game).where(Game.id == game_id).values(state=None))  # type: ignore[call-overload]


def test_dropping_every_snapshot_and_head_state_changes_no_answer(url: str) -> None:
    game_id = played_game(url, 28)
    before = states(url, game_id)
    drop_caches(url, game_id)
    assert states(url, game_id) == before
    with Session(db.engine()) as session:
        game = session.get(Game, game_id)
        assert game is not None
        assert records.chain_problems_of(session, game) == []


def test_deciding_after_the_caches_were_dropped_replays_from_the_seed(url: str) -> None:
    game_id = played_game(url, 6)
    drop_caches(url, game_id)
    play_on(url, game_id, 4)
    with Session(db.engine()) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.version == 10
        assert records.chain_problems_of(session, game) == []
        replayed = RULES.state_to_json(replay(records.full_record(session, game)).final)
        assert RULES.state_to_json(reads.state_at(session, game, 10)) == replayed


def test_news_is_written_only_for_seats_it_can_reach(url: str) -> None:
    game_id = played_game(url, 4, emails=("a@example.org", None))
    with Session(db.engine()) as session:
        news = session.exec(
            select(Outbox.seat, Outbox.payload).where(
                Outbox.game_id == game_id, Outbox.kind == "your_turn"
            )
        ).all()
    # Seat 0 hears of every turn of its own (at the start and after each of
    # seat 1's moves); seat 1 has no mail and no webhook, so nothing for it.
    assert sorted(payload["version"] for seat, payload in news if seat == 0) == [0, 2, 4]
    assert {seat for seat, _ in news} == {0}


def read_cost(url: str, game_id: str, back: int = 0) -> tuple[int, int]:
    """Statements run and rows read to get the state `back` moves before the head."""
    statements, rows = [0], [0]

    def count(_conn: Any, cursor: Any, *_args: Any) -> None:
        statements[0] += 1
        rows[0] += max(cursor.rowcount, 0)

    bind = db.engine()
    event.listen(bind, "after_cursor_execute", count)
    try:
        with Session(bind) as session:
            game = session.get(Game, game_id)
            assert game is not None
            statements[0] = rows[0] = 0
            reads.state_at(session, game, game.version - back)
    finally:
        event.remove(bind, "after_cursor_execute", count)
    return statements[0], rows[0]


def test_the_head_costs_the_same_whatever_the_log_length(url: str) -> None:
    short, long = played_game(url, 2), played_game(url, 28)
    # The head is on the game's row, which every reader has already read.
    assert read_cost(url, short) == read_cost(url, long) == (0, 0)


def test_an_earlier_state_costs_a_snapshot_and_a_bounded_tail(url: str) -> None:
    game_id = played_game(url, 28)
    for back in range(1, 28):
        statements, rows = read_cost(url, game_id, back)
        # The nearest snapshot (or, before the first, the seats to start
        # from the seed), then fewer than SNAPSHOT_EVERY moves of the log.
        assert statements <= 3 and rows <= reads.SNAPSHOT_EVERY + 1, back


def test_a_game_begun_under_earlier_rules_ends_under_them(url: str) -> None:
    older = games.get("mandala", "1")
    # A deal known to end in a tie (10, 15, 15): its seed replaces the fresh one.
    seed, sealed = "tie4", commitment("tie4")
    with db.transaction() as session:
        created = creation.create_game(session, older, [("a", None), ("b", None), ("c", None)], {})
        game_id = created.game.id
        session.exec(  # type: ignore[call-overload]
            update(Game)
            .where(Game.id == game_id)
            .values(seed=seed, seed_commitment=sealed, head_hash=sealed, state=None)
        )
    for step in steps(older, 3, {}, seed, Rng("chooser")):
        accept(game_id, step.seat, older.move_to_json(step.move))
    with Session(db.engine()) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.rules_version == "1"
        assert reads.rules_of(game) is older
        # Version 1 shares ties; version 2 would give the win to seat 2 alone.
        assert game.result == {"scores": [10, 15, 15], "winners": [1, 2]}
        assert verify(records.full_record(session, game)) == []


def test_a_seat_that_can_only_pass_is_asked_and_passes_like_any_other(url: str) -> None:
    rules = games.get("ice_palace")
    # A deal where the third move is made by a seat with nothing to place.
    seed, sealed = "stuck10", commitment("stuck10")
    emails = [("a", "a@example.org"), ("b", "b@example.org"), ("c", "c@example.org")]
    with db.transaction() as session:
        game_id = creation.create_game(session, rules, emails, {}).game.id
        session.exec(  # type: ignore[call-overload]
            update(Game)
            .where(Game.id == game_id)
            .values(seed=seed, seed_commitment=sealed, head_hash=sealed, state=None)
        )
    state = new_state(rules, seed, 3, {})
    only_passes = []
    for step in itertools.islice(steps(rules, 3, {}, seed, Rng("chooser")), 5):
        if rules.legal_moves(state, step.seat) == [rules.parse("pass")]:
            only_passes.append(step.seat)
        accept(game_id, step.seat, rules.move_to_json(step.move))
        state = step.state
    assert only_passes
    with Session(db.engine()) as session:
        moves = reads.log(session, game_id)
        news = session.exec(
            select(Outbox.seat, Outbox.payload).where(
                Outbox.game_id == game_id, Outbox.kind == "your_turn"
            )
        ).all()
    # Every move, the passes with nothing else to play too, came from its
    # seat's submission at a moment of its own, after a turn mail to it alone.
    assert len(moves) == 5 and all(move.submission_id for move in moves)
    assert len({move.created_at for move in moves}) == 5
    # The news at version 0 was written for the seed drawn at creation, before
    # the test swapped in its own: only the news after a move is compared.
    asked = sorted((payload["version"], seat) for seat, payload in news if payload["version"])
    assert asked == [(move.seq - 1, move.seat) for move in moves[1:]] + [(5, state.turn)]


def test_a_repeated_idempotency_key_records_nothing_new(url: str) -> None:
    with db.transaction() as session:
        created = creation.create_game(
            session, RULES, [("a", None), ("b", None)], RULES.load_options({}, 2)
        )
        game_id = created.game.id
        resign = {"type": "resign"}
        first, fresh = submissions.record(
            session, game_id, 0, resign, source=Source.REST, seen_version=0, idempotency_key="k"
        )
        again, again_fresh = submissions.record(
            session, game_id, 0, resign, source=Source.REST, seen_version=0, idempotency_key="k"
        )
        other, other_fresh = submissions.record(
            session, game_id, 1, resign, source=Source.REST, seen_version=0, idempotency_key="k"
        )
    assert (fresh, again_fresh, other_fresh) == (True, False, True)
    assert again.id == first.id != other.id


def _pending(session: Session, game_id: str, seat: int, rules: Any, text: str, seen: int) -> str:
    submission, _ = submissions.record(
        session,
        game_id,
        seat,
        rules.move_to_json(rules.parse(text)),
        source=Source.MAIL,
        seen_version=seen,
    )
    return submission.id


def test_a_move_is_judged_against_the_position_its_sender_saw(url: str) -> None:
    # Subdivision: a move left pending while its seat's position changed is stale.
    with db.transaction() as session:
        game_id = creation.create_game(
            session, RULES, [("a", None), ("b", None)], RULES.load_options({}, 2)
        ).game.id
    with Session(db.engine(), expire_on_commit=False) as session:
        seed = session.get(Game, game_id).seed  # type: ignore[union-attr]
        state = new_state(RULES, seed, 2, RULES.load_options({}, 2))
        first, second = (RULES.notate(m) for m in RULES.legal_moves(state, 0)[:2])
        early = _pending(session, game_id, 0, RULES, first, 0)
        late = _pending(session, game_id, 0, RULES, second, 0)
        session.commit()
    assert deciding.decide(early).submission.status == "accepted"  # type: ignore[union-attr]
    refused = deciding.decide(late).submission
    assert refused is not None and refused.code == "stale_version"

    # MaNiKi: another seat's answer to the same card leaves an answer standing.
    maniki = games.get("maniki")
    players = [("a", None), ("b", None), ("c", None)]
    with db.transaction() as session:
        game_id = creation.create_game(session, maniki, players, maniki.load_options({}, 3)).game.id
    with Session(db.engine(), expire_on_commit=False) as session:
        passing = _pending(session, game_id, 0, maniki, "pass", 0)
        other = _pending(session, game_id, 1, maniki, "pass", 0)
        session.commit()
    assert deciding.decide(passing).submission.status == "accepted"  # type: ignore[union-attr]
    assert deciding.decide(other).submission.status == "accepted"  # type: ignore[union-attr]
