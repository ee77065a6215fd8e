"""The store on PostgreSQL: snapshots and head states are only caches, and reads stay cheap."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete, event, update
from sqlmodel import Session, select

from referee import games
from referee.playout import steps
from referee.replay import new_state, replay, verify
from referee.rng import Rng, commitment
from referee.service import Referee, game_states
from referee.service.creating import NewGame, Player, create_game
from referee.service.deciding import decide
from referee.settings import Settings
from referee.store import reads, records, submissions
from referee.store.creation import new_ordered_id
from referee.store.db import Database
from referee.store.tables import Game, Outbox, Setting, Snapshot, Source, Submission

RULES = games.get("subdivision")


@pytest.fixture(scope="module")
def referee(pg_database: str) -> Iterator[Referee]:
    """The service on a PostgreSQL database of this module's own."""
    made = Referee(Settings(database_url=pg_database))
    made.db.upgrade()
    yield made
    made.close()


def new_game(
    referee: Referee, name: str, emails: list[str | None], version: str | None = None
) -> str:
    """A new game of `name`, one seat per address (None: no mail); its id."""
    players = [Player(chr(ord("a") + n), email) for n, email in enumerate(emails)]
    return create_game(referee, NewGame(name, players, {}, rules_version=version)).game.id


def with_seed(referee: Referee, game_id: str, seed: str) -> None:
    """Deal the game anew from `seed` (before any move)."""
    sealed = commitment(seed)
    with referee.db.transaction() as session:
        session.exec(  # type: ignore[call-overload]
            update(Game)
            .where(Game.id == game_id)
            .values(seed=seed, seed_commitment=sealed, head_hash=sealed, state=None)
        )


def played_game(
    referee: Referee, moves: int, emails: tuple[str | None, str | None] = (None, None)
) -> str:
    """A game with `moves` random moves decided through the service's `decide`, from a
    deal and moves fixed in advance: some random games end before 28 moves."""
    game_id = new_game(referee, "subdivision", list(emails))
    with_seed(referee, game_id, "store")
    play_on(referee, game_id, moves)
    return game_id


def _version(session: Session, game_id: str) -> int:
    """The game's version now: the position a player submitting now sees."""
    game = session.get(Game, game_id)
    assert game is not None
    return game.version


def play_on(referee: Referee, game_id: str, moves: int) -> None:
    """Decide `moves` more random moves, chosen from the state replayed locally."""
    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        state = new_state(RULES, game.seed, 2, game.options)
        for row in reads.log(session, game_id):
            state = RULES.play(state, row.seat, RULES.parse(row.notation))
        chooser = Rng(f"store-{game.seed}-{game.version}")
    for made in range(moves):
        assert RULES.actors(state), f"the game ended after {made} of the {moves} moves"
        seat = min(RULES.actors(state))
        move = RULES.random_move(state, seat, chooser)
        accept(referee, game_id, seat, RULES.move_to_json(move))
        state = RULES.play(state, seat, move)


def accept(referee: Referee, game_id: str, seat: int, move: dict[str, Any]) -> None:
    """Record `move` for `seat` and decide it, as the API and a worker would: accepted."""
    with Session(referee.db.engine, expire_on_commit=False) as session:
        submission, _ = submissions.record(
            session,
            game_id,
            seat,
            move,
            source=Source.REST,
            seen_version=_version(session, game_id),
        )
        session.commit()
    decided = decide(referee, submission.id)
    assert decided is not None and decided.status == "accepted", decided


def states(referee: Referee, game_id: str) -> list[Any]:
    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return [
            RULES.state_to_json(game_states.state_at(session, game, n))
            for n in range(game.version + 1)
        ]


def drop_caches(referee: Referee, game_id: str) -> None:
    """Drop the game's snapshots and the state kept on its row."""
    with referee.db.transaction() as session:
        session.exec(delete(Snapshot).where(Snapshot.game_id == game_id))  # type: ignore[call-overload]
        session.exec(update(Game).where(Game.id == game_id).values(state=None))  # type: ignore[call-overload]


def test_dropping_every_snapshot_and_head_state_changes_no_answer(referee: Referee) -> None:
    game_id = played_game(referee, 28)
    before = states(referee, game_id)
    drop_caches(referee, game_id)
    assert states(referee, game_id) == before
    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        assert records.chain_problems_of(session, game) == []


def test_deciding_after_the_caches_were_dropped_replays_from_the_seed(referee: Referee) -> None:
    game_id = played_game(referee, 6)
    drop_caches(referee, game_id)
    play_on(referee, game_id, 4)
    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.version == 10
        assert records.chain_problems_of(session, game) == []
        replayed = RULES.state_to_json(replay(records.full_record(session, game)).final)
        assert RULES.state_to_json(game_states.state_at(session, game, 10)) == replayed


def test_news_is_written_only_for_seats_it_can_reach(referee: Referee) -> None:
    game_id = played_game(referee, 4, emails=("a@example.org", None))
    with Session(referee.db.engine) as session:
        news = session.exec(
            select(Outbox.seat, Outbox.payload).where(
                Outbox.game_id == game_id, Outbox.kind == "your_turn"
            )
        ).all()
    # Seat 0 hears of every turn of its own (at the start and after each of
    # seat 1's moves); seat 1 has no mail and no webhook, so nothing for it.
    assert sorted(payload["version"] for seat, payload in news if seat == 0) == [0, 2, 4]
    assert {seat for seat, _ in news} == {0}


def read_cost(referee: Referee, game_id: str, back: int = 0) -> tuple[int, int]:
    """Statements run and rows read to get the state `back` moves before the head."""
    statements, rows = [0], [0]

    def count(_conn: Any, cursor: Any, *_args: Any) -> None:
        statements[0] += 1
        rows[0] += max(cursor.rowcount, 0)

    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        # This session's own connection: the service's threads (sweeps, ratings) share
        # the engine, and their statements are not this read's.
        connection = session.connection()
        event.listen(connection, "after_cursor_execute", count)
        try:
            game_states.state_at(session, game, game.version - back)
        finally:
            event.remove(connection, "after_cursor_execute", count)
    return statements[0], rows[0]


def test_the_head_costs_the_same_whatever_the_log_length(referee: Referee) -> None:
    short, long = played_game(referee, 2), played_game(referee, 28)
    # The head is on the game's row, which every reader has already read.
    assert read_cost(referee, short) == read_cost(referee, long) == (0, 0)


def test_an_earlier_state_costs_a_snapshot_and_a_bounded_tail(referee: Referee) -> None:
    game_id = played_game(referee, 28)
    for back in range(1, 28):
        statements, rows = read_cost(referee, game_id, back)
        # The nearest snapshot (or, before the first, the seats to start
        # from the seed), then fewer than SNAPSHOT_EVERY moves of the log.
        assert statements <= 3 and rows <= reads.SNAPSHOT_EVERY + 1, back


def test_a_game_begun_under_earlier_rules_ends_under_them(referee: Referee) -> None:
    older = games.get("mandala", "1")
    # A deal known to end in a tie (10, 15, 15): its seed replaces the fresh one.
    seed = "tie4"
    game_id = new_game(referee, "mandala", [None, None, None], version="1")
    with_seed(referee, game_id, seed)
    for step in steps(older, 3, {}, seed, Rng("chooser")):
        accept(referee, game_id, step.seat, older.move_to_json(step.move))
    with Session(referee.db.engine) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.rules_version == "1"
        assert reads.rules_of(game) is older
        # Version 1 shares ties; version 2 would give the win to seat 2 alone.
        assert game.result == {"scores": [10, 15, 15], "winners": [1, 2]}
        assert verify(records.full_record(session, game)) == []


def test_a_seat_that_can_only_pass_is_asked_and_passes_like_any_other(referee: Referee) -> None:
    rules = games.get("ice_palace")
    # A deal where the third move is made by a seat with nothing to place.
    seed = "stuck10"
    emails: list[str | None] = ["a@example.org", "b@example.org", "c@example.org"]
    game_id = new_game(referee, "ice_palace", emails)
    with_seed(referee, game_id, seed)
    state = new_state(rules, seed, 3, {})
    only_passes = []
    for step in itertools.islice(steps(rules, 3, {}, seed, Rng("chooser")), 5):
        if rules.legal_moves(state, step.seat) == [rules.parse("pass")]:
            only_passes.append(step.seat)
        accept(referee, game_id, step.seat, rules.move_to_json(step.move))
        state = step.state
    assert only_passes
    with Session(referee.db.engine) as session:
        moves = reads.log(session, game_id)
        news = session.exec(
            select(Outbox.seat, Outbox.payload).where(
                Outbox.game_id == game_id, Outbox.kind == "your_turn"
            )
        ).all()
    # Every move, the passes with nothing else to play too, came from its
    # seat's submission at a moment of its own, after a turn mail to it alone.
    assert len(moves) == 5 and all(move.source == Source.REST for move in moves)
    assert len({move.created_at for move in moves}) == 5
    # The news at version 0 was written for the seed drawn at creation, before
    # the test swapped in its own: only the news after a move is compared.
    asked = sorted((payload["version"], seat) for seat, payload in news if payload["version"])
    assert asked == [(move.seq - 1, move.seat) for move in moves[1:]] + [(5, state.turn)]


def test_a_repeated_idempotency_key_records_nothing_new(referee: Referee) -> None:
    game_id = new_game(referee, "subdivision", [None, None])
    with referee.db.transaction() as session:
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


def test_a_move_is_judged_against_the_position_its_sender_saw(referee: Referee) -> None:
    # Subdivision: a move left pending while its seat's position changed is stale.
    game_id = new_game(referee, "subdivision", [None, None])
    with Session(referee.db.engine, expire_on_commit=False) as session:
        seed = session.get(Game, game_id).seed  # type: ignore[union-attr]
        state = new_state(RULES, seed, 2, RULES.load_options({}, 2))
        first, second = (RULES.notate(m) for m in RULES.legal_moves(state, 0)[:2])
        early = _pending(session, game_id, 0, RULES, first, 0)
        late = _pending(session, game_id, 0, RULES, second, 0)
        session.commit()
    assert decide(referee, early).status == "accepted"  # type: ignore[union-attr]
    refused = decide(referee, late)
    assert refused is not None and refused.code == "stale_version"

    # MaNiKi: another seat's answer to the same card leaves an answer standing.
    maniki = games.get("maniki")
    game_id = new_game(referee, "maniki", [None, None, None])
    with Session(referee.db.engine, expire_on_commit=False) as session:
        passing = _pending(session, game_id, 0, maniki, "pass", 0)
        other = _pending(session, game_id, 1, maniki, "pass", 0)
        session.commit()
    assert decide(referee, passing).status == "accepted"  # type: ignore[union-attr]
    assert decide(referee, other).status == "accepted"  # type: ignore[union-attr]


class _Broker:
    """A broker (a worker's queue) that keeps the decisions announced, and sends nothing."""

    eager = False

    def __init__(self) -> None:
        self.announced: list[str] = []
        self.to_decide: list[str] = []

    def announce_decided(self, decisions: list[dict[str, Any]]) -> None:
        self.announced += [decided["id"] for decided in decisions]

    def enqueue_decisions(self, submission_ids: list[str]) -> None:
        self.to_decide += submission_ids

    def decisions_taken(self) -> None:
        pass

    def enqueue_apart(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def deliver_soon(self) -> None:
        pass


def test_a_workers_decision_takes_along_the_moves_pending_in_games_no_one_holds(
    referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, along, held = (new_game(referee, "subdivision", [None, None]) for _ in range(3))
    with Session(referee.db.engine, expire_on_commit=False) as session:
        opening = {}
        for game_id in (first, along, held):
            seed = session.get(Game, game_id).seed  # type: ignore[union-attr]
            opening[game_id] = new_state(RULES, seed, 2, RULES.load_options({}, 2))
        mover = min(RULES.actors(opening[first]))
        move = RULES.legal_moves(opening[first], mover)[0]
        one = _pending(session, first, mover, RULES, RULES.notate(move), 0)
        # The answer to it, recorded before it was decided: the same task decides it next.
        after = RULES.play(opening[first], mover, move)
        answer = min(RULES.actors(after))
        answered = _pending(session, first, answer, RULES, _legal(after, answer), 1)
        # Two moves of one game, the second answering the first: decided in their order.
        state = opening[along]
        seat = min(RULES.actors(state))
        move = RULES.legal_moves(state, seat)[0]
        earlier = _pending(session, along, seat, RULES, RULES.notate(move), 0)
        state = RULES.play(state, seat, move)
        other = min(RULES.actors(state))
        later = _pending(session, along, other, RULES, _legal(state, other), 1)
        seat = min(RULES.actors(opening[held]))
        waits = _pending(session, held, seat, RULES, _legal(opening[held], seat), 0)
        session.commit()
    broker = _Broker()
    monkeypatch.setattr(referee, "queue", broker)
    with referee.db.transaction() as holding:
        # Another transaction holds this game: the batch passes it by, waiting for nothing.
        holding.exec(select(Game).where(Game.id == held).with_for_update())
        assert decide(referee, one).status == "accepted"  # type: ignore[union-attr]
    assert broker.announced[0] == one and broker.announced[-2:] == [earlier, later]
    # The one its game's holder kept from the batch is given a task of its own.
    assert broker.to_decide == [waits]
    with referee.db.reading() as session:
        decided = {s: session.get(Submission, s) for s in (earlier, later, waits, answered)}
        version = session.get(Game, along).version  # type: ignore[union-attr]
    assert (decided[answered].status, decided[answered].seq) == ("accepted", 2)  # type: ignore[union-attr]
    assert [(decided[s].status, decided[s].seq) for s in (earlier, later)] == [  # type: ignore[union-attr]
        ("accepted", 1),
        ("accepted", 2),
    ]
    assert decided[waits].status == "pending" and version == 2  # type: ignore[union-attr]
    # A task of one of them, run later, finds it decided and writes nothing to its game,
    # but still decides what is pending: the game no longer held.
    assert decide(referee, later).seq == 2  # type: ignore[union-attr]
    with referee.db.reading() as session:
        assert session.get(Game, along).version == 2  # type: ignore[union-attr]
        assert session.get(Submission, waits).status == "accepted"  # type: ignore[union-attr]
    assert decide(referee, waits).status == "accepted"  # type: ignore[union-attr]
    assert broker.to_decide == [waits]


def test_a_one_write_session_commits_each_statement_and_the_next_transaction_is_whole(
    referee: Referee, pg_database: str
) -> None:
    db = Database(pg_database, pool_size=1)
    try:
        with pytest.raises(RuntimeError), db.one_write() as session:
            session.add(Setting(key="one-write", value="written"))
            session.flush()
            raise RuntimeError("after the write")
        # That statement committed on its own: the error after it took nothing back.
        # The pool's one connection, used again for a transaction, is one again.
        with pytest.raises(RuntimeError), db.transaction() as session:
            session.add(Setting(key="in-a-transaction", value="rolled back"))
            session.flush()
            raise RuntimeError("after the write")
        with db.reading() as session:
            assert session.get(Setting, "one-write") is not None
            assert session.get(Setting, "in-a-transaction") is None
    finally:
        db.dispose()


def test_a_move_recorded_while_the_mark_is_up_is_decided_by_the_task_that_holds_it(
    referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    own_game, other_game = (new_game(referee, "subdivision", [None, None]) for _ in range(2))
    openings = {}
    with Session(referee.db.engine, expire_on_commit=False) as session:
        for game_id in (own_game, other_game):
            seed = session.get(Game, game_id).seed  # type: ignore[union-attr]
            openings[game_id] = new_state(RULES, seed, 2, RULES.load_options({}, 2))
        seat = min(RULES.actors(openings[own_game]))
        own = _pending(session, own_game, seat, RULES, _legal(openings[own_game], seat), 0)
        session.commit()
    broker = _Broker()
    recorded: list[str] = []
    cleared_after: list[list[str]] = []

    def announce(decisions: list[dict[str, Any]]) -> None:
        broker.announced += [decided["id"] for decided in decisions]
        if not recorded:
            # A move recorded now finds the mark up, so it sends no task (nothing here
            # sends one): the task deciding is the one to take it along.
            with Session(referee.db.engine) as session:
                seat = min(RULES.actors(openings[other_game]))
                notation = _legal(openings[other_game], seat)
                recorded.append(_pending(session, other_game, seat, RULES, notation, 0))
                session.commit()

    monkeypatch.setattr(broker, "announce_decided", announce)
    monkeypatch.setattr(
        broker, "decisions_taken", lambda: cleared_after.append(list(broker.announced))
    )
    monkeypatch.setattr(referee, "queue", broker)
    assert decide(referee, own).status == "accepted"  # type: ignore[union-attr]
    # The mark came down once its own move was decided and told, not before...
    assert cleared_after == [[own]]
    # ... and the move recorded meanwhile was decided after it, by the same task.
    assert broker.announced == [own, *recorded] and broker.to_decide == []
    with referee.db.reading() as session:
        assert session.get(Submission, recorded[0]).status == "accepted"  # type: ignore[union-attr]


def _legal(state: Any, seat: int) -> str:
    return RULES.notate(RULES.legal_moves(state, seat)[0])


def test_submissions_ids_grow_with_time_and_keep_74_random_bits(referee: Referee) -> None:
    game_id = new_game(referee, "subdivision", [None, None])
    recorded = []
    with Session(referee.db.engine) as session:
        seed = session.get(Game, game_id).seed  # type: ignore[union-attr]
        state = new_state(RULES, seed, 2, RULES.load_options({}, 2))
        for _ in range(3):
            recorded.append(_pending(session, game_id, 0, RULES, _legal(state, 0), 0))
            time.sleep(0.002)
        session.commit()
    # Each sorts after the ones recorded before it (a new one lands at the right end of
    # the primary key's index), and is a UUID of version 7's layout.
    assert recorded == sorted(recorded) and len(set(recorded)) == 3
    assert {uuid.UUID(made).version for made in recorded} == {7}
    # Made within one millisecond they still differ, by their random bits.
    assert len({new_ordered_id() for _ in range(10_000)}) == 10_000
