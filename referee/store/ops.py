"""Everything that reads or writes a game's rows, through the game contract only.

The worker calls `decide`, the one place a move is ever appended: it locks
the game, takes the state at its head (kept on its row, or rebuilt from the
latest snapshot and the log after it), plays the submission, appends the
move and any moves the referee records by itself, marks the submission and
writes the outbox rows, all in one transaction. A submission that is no
longer pending when the lock is held is left alone, so running `decide`
twice (a late ack redelivered, two workers racing, a sweep) decides it
exactly once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import QueryableAttribute, defer
from sqlmodel import Session, SQLModel, col, select

from referee import games
from referee.engine import JSON, IllegalMove
from referee.games import AnyGame
from referee.record import Entry, Header, Record, canonical_json, chain_problems, entry_hash
from referee.replay import SEALED_NOTATION, forced_moves, new_state
from referee.rng import commitment, new_seed
from referee.store.db import now, transaction
from referee.store.tables import (
    ACCEPTED,
    DECISION_FIELDS,
    MAIL,
    PENDING,
    REJECTED,
    REST,
    SENT,
    Game,
    Move,
    Outbox,
    Seat,
    Snapshot,
    Submission,
)


def _table(model: type[SQLModel]) -> sa.Table:
    """A model's table, for Core statements where the ORM's unit of work costs too much."""
    table: sa.Table = model.__table__  # type: ignore[attr-defined]
    return table


_GAME = _table(Game)
_SUBMISSION = _table(Submission)
_SEAT = _table(Seat)
_SNAPSHOT = _table(Snapshot)
_MOVE = _table(Move)
_OUTBOX = _table(Outbox)


def new_id() -> str:
    return uuid.uuid4().hex


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def request_hash(body: JSON) -> str:
    """What an idempotent retry must repeat exactly: the canonical request body."""
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Created:
    game: Game
    tokens: tuple[str, ...]


class GameRow(Protocol):
    """What reading a game's state and appending to its log need of its row."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def rules_version(self) -> str: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def head_hash(self) -> str: ...
    @property
    def state(self) -> dict[str, Any] | None: ...


def rules_of(game: GameRow) -> AnyGame:
    """The rules the game was created under: a game ends under the rules it began with."""
    return games.get(game.name, game.rules_version)


def create_game(
    session: Session,
    rules: AnyGame,
    players: Sequence[tuple[str, str | None]],
    options: JSON,
) -> Created:
    """A new game with a fresh secret seed; returns the seat tokens, the only copy.

    `options` must already be validated by `rules.load_options`. Moves the
    referee records by itself at the start are logged at once.
    """
    seed = new_seed()
    stamp = now()
    state = new_state(rules, seed, len(players), options)
    game = Game(
        id=new_id(),
        name=rules.name,
        rules_version=rules.rules_version,
        options=options,
        seed=seed,
        seed_commitment=commitment(seed),
        status="active",
        version=0,
        head_hash=commitment(seed),
        to_act=[],
        created_at=stamp,
        updated_at=stamp,
    )
    appended = _append(
        game,
        rules,
        state,
        [],
        stamp,
        rounds_before=rules.rounds_decided(state),
        seat_count=len(players),
        reachable=frozenset(number for number, (_, email) in enumerate(players) if email),
    )
    for name, value in appended.game.items():
        setattr(game, name, value)
    session.add(game)
    tokens = []
    for number, (name, email) in enumerate(players):
        token = secrets.token_urlsafe(32)
        tokens.append(token)
        session.add(
            Seat(game_id=game.id, seat=number, name=name, email=email, token_hash=hash_token(token))
        )
        session.add(
            Outbox(
                game_id=game.id,
                kind="invitation",
                seat=number,
                payload={"name": name, "email": email},
                created_at=stamp,
            )
        )
    session.flush()
    _write(session.connection(), appended)
    return Created(game, tuple(tokens))


# A game's seat tokens never change once it is made, so each process keeps
# them after the first look: a submission then reads only the game's row.
_TOKENS_KEPT = 20_000
_tokens: dict[tuple[str, str], tuple[str, ...]] = {}
_tokens_lock = threading.Lock()


def seat_of_token(session: Session, game_id: str, token: str) -> int | None:
    """The seat whose token this is in this game, compared in constant time."""
    wanted = hash_token(token)
    key = (str(session.get_bind().engine.url), game_id)
    hashes = _tokens.get(key)
    if hashes is None:
        query = select(Seat.token_hash).where(Seat.game_id == game_id).order_by(col(Seat.seat))
        hashes = tuple(session.exec(query))
        if hashes:
            with _tokens_lock:
                if len(_tokens) >= _TOKENS_KEPT:
                    del _tokens[next(iter(_tokens))]
                _tokens[key] = hashes
    found = None
    for number, token_hash in enumerate(hashes):
        if hmac.compare_digest(token_hash, wanted):
            found = number
    return found


def seats(session: Session, game_id: str) -> list[Seat]:
    return list(session.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))))


# A snapshot every this many moves bounds the replay of `state?at=N` to
# fewer moves; the head itself is kept on the game's row.
SNAPSHOT_EVERY = 16


def state_at(session: Session, game: GameRow, version: int) -> Any:
    """The state after `version` moves.

    At the head, the state kept on the game's row; elsewhere (or with that
    dropped) the nearest snapshot and the log after it, or without any
    snapshot a replay from the seed: both are caches that only save time.
    """
    rules = rules_of(game)
    if version == game.version and game.state is not None:
        return rules.state_from_json(game.state)
    snap = session.exec(
        select(Snapshot)
        .where(Snapshot.game_id == game.id, Snapshot.version <= version)
        .order_by(col(Snapshot.version).desc())
        .limit(1)
    ).first()
    if snap is None:
        state = new_state(rules, game.seed, len(seats(session, game.id)), game.options)
        start = 0
    else:
        state = rules.state_from_json(snap.state)
        start = snap.version
    if start < version:
        tail = session.exec(
            select(Move)
            .where(Move.game_id == game.id, Move.seq > start, Move.seq <= version)
            .order_by(col(Move.seq))
        )
        for row in tail:
            state = rules.play(state, row.seat, rules.move_from_json(row.move))
    return state


def log(session: Session, game_id: str, after: int = 0, limit: int | None = None) -> list[Move]:
    query = select(Move).where(Move.game_id == game_id, Move.seq > after).order_by(col(Move.seq))
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query))


def sealed_from(game: Game, head: Any) -> int:
    """The first sequence number shown as `sealed` now (beyond the log: none)."""
    return game.version - rules_of(game).hidden_tail(head) + 1


def record(session: Session, game: Game, head: Any) -> Record:
    """The game record of API.md; the seed only once the game is over, sealed moves hidden."""
    first_sealed = sealed_from(game, head)
    header = Header(
        game=game.name,
        players=tuple(seat.name for seat in seats(session, game.id)),
        options=game.options,
        seed_commitment=game.seed_commitment,
        rules_version=game.rules_version,
        seed=game.seed if game.status == "over" else None,
    )
    entries = tuple(
        Entry(row.seq, row.seat, SEALED_NOTATION, row.created_at)
        if row.seq >= first_sealed
        else Entry(row.seq, row.seat, row.notation, row.created_at, row.prev_hash, row.hash)
        for row in log(session, game.id)
    )
    return Record(header, entries)


def full_record(session: Session, game: Game) -> Record:
    """The record with every move and the seed: for the server's own checks only."""
    header = Header(
        game.name,
        tuple(seat.name for seat in seats(session, game.id)),
        game.options,
        game.seed_commitment,
        game.rules_version,
        game.seed,
    )
    entries = tuple(
        Entry(row.seq, row.seat, row.notation, row.created_at, row.prev_hash, row.hash)
        for row in log(session, game.id)
    )
    return Record(header, entries)


def chain_holds(session: Session, game: Game) -> list[str]:
    return chain_problems(full_record(session, game))


# -- submissions -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    """What the API checks of a game before it records a submission for it."""

    id: str
    name: str
    options: JSON
    status: str
    version: int
    to_act: list[int]


_TURN = sa.select(*(_GAME.c[name] for name in Turn.__dataclass_fields__)).where(
    _GAME.c.id == sa.bindparam("game_id")
)
_INSERT_SUBMISSION = sa.insert(_SUBMISSION)


def turn(session: Session, game_id: str) -> Turn | None:
    """The game's turn as it stands, read with one Core statement: this runs for every move."""
    row = session.connection().execute(_TURN, {"game_id": game_id}).first()
    return None if row is None else Turn(*row)


def submit(
    session: Session,
    game_id: str,
    seat: int,
    move: JSON,
    body_hash: str,
    idempotency_key: str | None,
    expected_version: int | None,
    source: str = REST,
) -> tuple[Submission, bool]:
    """Record a pending submission; `(submission, False)` when the key was seen already.

    The session is committed here: the submission must exist before it is
    enqueued.
    """
    if idempotency_key is not None:
        earlier = find_by_key(session, game_id, seat, idempotency_key)
        if earlier is not None:
            return earlier, False
    submission = Submission(
        id=new_id(),
        game_id=game_id,
        seat=seat,
        move=move,
        expected_version=expected_version,
        idempotency_key=idempotency_key,
        request_hash=body_hash,
        status=PENDING,
        created_at=now(),
        source=source,
    )
    # A Core INSERT: the ORM's unit of work costs more than the statement here.
    try:
        session.connection().execute(_INSERT_SUBMISSION, submission.model_dump())
        session.commit()
    except IntegrityError:
        # The same key raced in from another request: the first one stands.
        session.rollback()
        earlier = find_by_key(session, game_id, seat, idempotency_key or "")
        if earlier is None:
            raise
        return earlier, False
    return submission, True


def find_by_key(session: Session, game_id: str, seat: int, key: str) -> Submission | None:
    return session.exec(
        select(Submission).where(
            Submission.game_id == game_id,
            Submission.seat == seat,
            Submission.idempotency_key == key,
        )
    ).first()


def pending_before(session: Session, before: str, limit: int = 500) -> list[str]:
    """Submissions still pending that were made before `before` (for the sweep)."""
    return list(
        session.exec(
            select(Submission.id)
            .where(Submission.status == PENDING, Submission.created_at < before)
            .order_by(col(Submission.created_at))
            .limit(limit)
        )
    )


@dataclass(frozen=True, slots=True)
class Decided:
    """A submission as `decide` left it: its id and the fields deciding sets."""

    id: str
    status: str
    code: str | None
    reason: str | None
    seq: int | None
    decided_at: str | None


@dataclass(frozen=True, slots=True)
class Decision:
    """A submission as `decide` left it, and whether it wrote news that is due to be sent."""

    submission: Decided | None
    news_due: bool = False


def decide(submission_id: str, url: str | None = None) -> Decided | None:
    """Decide one submission, exactly once; None when there is no such submission."""
    return decision(submission_id, url).submission


@dataclass(frozen=True, slots=True)
class _Locked:
    """The game's row as deciding reads it (a `GameRow`)."""

    id: str
    name: str
    rules_version: str
    options: dict[str, Any]
    seed: str
    status: str
    version: int
    head_hash: str
    state: dict[str, Any] | None


_SUBMISSION_READ = ("id", "seat", "move", "expected_version", "source", *DECISION_FIELDS)
_SEATS_OF_GAME = _SEAT.c.game_id == _GAME.c.id
# Deciding runs for every move, so it reads in one statement what it needs:
# the game (with the state at its head) and the submission, both locked, the
# number of seats, and the seats news can reach (with mail or a webhook).
# Locking the submission too matters: when another worker decided it while
# this one waited for the lock, PostgreSQL re-reads locked rows at their
# newest version, so the status read here is the one that worker committed.
_LOCK_FOR_DECISION = (
    sa.select(
        *(_GAME.c[name] for name in _Locked.__dataclass_fields__),
        *(_SUBMISSION.c[name].label(f"submission_{name}") for name in _SUBMISSION_READ),
        sa.select(sa.func.count())
        .select_from(_SEAT)
        .where(_SEATS_OF_GAME)
        .scalar_subquery()
        .label("seat_count"),
        sa.select(sa.func.aggregate_strings(sa.cast(_SEAT.c.seat, sa.String), ","))
        .where(_SEATS_OF_GAME, _SEAT.c.email.is_not(None) | _SEAT.c.webhook_url.is_not(None))
        .scalar_subquery()
        .label("reachable_seats"),
    )
    .select_from(_SUBMISSION.join(_GAME, _GAME.c.id == _SUBMISSION.c.game_id))
    .where(_SUBMISSION.c.id == sa.bindparam("submission_id"))
    .with_for_update(of=[_GAME, _SUBMISSION], key_share=True)
)
# Built once: the columns an UPDATE sets are the names of the parameters
# it is given (besides the row's id), and an INSERT takes a list of rows.
_SET_SUBMISSION = sa.update(_SUBMISSION).where(_SUBMISSION.c.id == sa.bindparam("submission_id"))
_SET_GAME = sa.update(_GAME).where(_GAME.c.id == sa.bindparam("game_id"))
_INSERT_MOVES = sa.insert(_MOVE)
_INSERT_SNAPSHOT = sa.insert(_SNAPSHOT)
_INSERT_OUTBOX = sa.insert(_OUTBOX)


def decision(submission_id: str, url: str | None = None) -> Decision:
    """As `decide`, and say whether delivery has work now (the worker sends it at once)."""
    with transaction(url) as session:
        # Core statements on the session's connection: the ORM's bookkeeping
        # cost more than the statements on this path, run for every move.
        connection = session.connection()
        found = connection.execute(_LOCK_FOR_DECISION, {"submission_id": submission_id}).first()
        if found is None:
            return Decision(None)
        submission = {name: found._mapping[f"submission_{name}"] for name in _SUBMISSION_READ}
        if submission["status"] != PENDING:
            return Decision(_decided(submission))
        game = _Locked(*found[: len(_Locked.__dataclass_fields__)])
        seat_count = found.seat_count
        listed = found.reachable_seats
        reachable = frozenset(int(seat) for seat in listed.split(",")) if listed else frozenset()
        rules = rules_of(game)
        stamp = now()
        outbox: list[dict[str, Any]] = []
        try:
            if game.status != "active":
                raise IllegalMove("game_over", "the game is over")
            expected = submission["expected_version"]
            if expected is not None and expected != game.version:
                raise IllegalMove(
                    "stale_version",
                    f"the game is at version {game.version}, "
                    f"not {expected}: look again and resubmit",
                )
            state = state_at(session, game, game.version)
            move = rules.move_from_json(submission["move"])
            after = rules.play(state, submission["seat"], move)
        except IllegalMove as refused:
            decided: dict[str, Any] = {"status": REJECTED}
            decided |= {"code": refused.code, "reason": refused.reason}
        else:
            decided = {"status": ACCEPTED, "seq": game.version + 1}
        submission |= decided | {"decided_at": stamp}
        fields = {name: submission[name] for name in DECISION_FIELDS}
        connection.execute(_SET_SUBMISSION, {"submission_id": submission["id"], **fields})
        if submission["source"] == MAIL:
            # A move that came by mail is answered by mail, accepted or refused.
            answer = {"submission": submission["id"]}
            outbox.append(_outbox_row(game.id, "answer", submission["seat"], answer, stamp))
        if submission["status"] != ACCEPTED:
            if outbox:
                connection.execute(_INSERT_OUTBOX, outbox)
            return Decision(_decided(submission), bool(outbox))
        appended = _append(
            game,
            rules,
            after,
            [(submission["seat"], move, submission["id"])],
            stamp,
            rounds_before=rules.rounds_decided(state),
            seat_count=seat_count,
            reachable=reachable,
        )
        connection.execute(_SET_GAME, {"game_id": game.id, **appended.game})
        _write(connection, appended, answers=outbox)
        return Decision(_decided(submission), bool(outbox or appended.news))


def _decided(submission: dict[str, Any]) -> Decided:
    return Decided(**{name: submission[name] for name in ("id", *DECISION_FIELDS)})


@dataclass(frozen=True, slots=True)
class Appended:
    """What appending moves to a game's log writes: the rows, and the game's new fields."""

    game: dict[str, Any]
    moves: list[dict[str, Any]]
    # A snapshot row, every SNAPSHOT_EVERY moves.
    snapshot: dict[str, Any] | None
    # Outbox rows, for seats with mail or a webhook only.
    news: list[dict[str, Any]]


def _append(
    game: GameRow,
    rules: AnyGame,
    state: Any,
    played: list[tuple[int, Any, str | None]],
    stamp: str,
    *,
    rounds_before: int,
    seat_count: int,
    reachable: frozenset[int],
) -> Appended:
    """The log entries for `played` (already applied to `state`) and the referee's own moves.

    `rounds_before` is `rules.rounds_decided` of the state before `played`:
    a change that raises it ends a round, which every seat hears of.
    `reachable` are the seats with mail or a webhook.
    """
    moves = list(played)
    for seat, move, after in forced_moves(rules, state):
        moves.append((seat, move, None))
        state = after
    version = game.version
    prev = game.head_hash
    rows = []
    for seat, move, submission_id in moves:
        version += 1
        notation = rules.notate(move)
        digest = entry_hash(prev, version, seat, notation, stamp)
        rows.append(
            {
                "game_id": game.id,
                "seq": version,
                "seat": seat,
                "move": rules.move_to_json(move),
                "notation": notation,
                "created_at": stamp,
                "prev_hash": prev,
                "hash": digest,
                "submission_id": submission_id,
            }
        )
        prev = digest
    result = rules.result(state)
    to_act = sorted(rules.actors(state))
    changes: dict[str, Any] = {
        "version": version,
        "head_hash": prev,
        "to_act": to_act,
        "updated_at": stamp,
        "status": "active" if result is None else "over",
        "result": None if result is None else result.to_json(),
        "state": rules.state_to_json(state),
    }
    news: list[tuple[str, int, dict[str, Any]]]
    if result is not None:
        news = [
            ("game_over", seat, {"result": changes["result"], "seed": game.seed})
            for seat in range(len(result.scores))
        ]
    else:
        news = []
        if rules.rounds_decided(state) > rounds_before:
            # Once over, the game-over mail tells the round's end with the rest.
            news = [("round_over", seat, {"version": version}) for seat in range(seat_count)]
        # Every seat that must act after a change hears of it, even one that
        # already could: a MaNiKi card won by another seat is a new card for all.
        news += [("your_turn", seat, {"version": version}) for seat in to_act]
    return Appended(
        game=changes,
        moves=rows,
        snapshot=(
            {"game_id": game.id, "version": version, "state": changes["state"]}
            if version // SNAPSHOT_EVERY > game.version // SNAPSHOT_EVERY
            else None
        ),
        # News for a seat with neither mail nor a webhook would go nowhere:
        # it is not written at all.
        news=[
            _outbox_row(game.id, kind, seat, payload, stamp)
            for kind, seat, payload in news
            if seat in reachable
        ],
    )


def _outbox_row(
    game_id: str, kind: str, seat: int, payload: dict[str, Any], stamp: str
) -> dict[str, Any]:
    """An outbox row to insert, pending; the other columns get their defaults."""
    return {"game_id": game_id, "kind": kind, "seat": seat, "payload": payload, "created_at": stamp}


def _write(
    connection: sa.Connection, appended: Appended, answers: Sequence[dict[str, Any]] = ()
) -> None:
    """Insert the rows of `appended`, after outbox rows `answers`; not the game's own row."""
    if appended.moves:
        connection.execute(_INSERT_MOVES, appended.moves)
    if appended.snapshot is not None:
        connection.execute(_INSERT_SNAPSHOT, appended.snapshot)
    if answers or appended.news:
        connection.execute(_INSERT_OUTBOX, [*answers, *appended.news])


def append_moves(
    session: Session,
    game: Game,
    rules: AnyGame,
    state: Any,
    played: list[tuple[int, Any, str | None]],
    stamp: str,
    *,
    rounds_before: int,
    changes: dict[str, Any] | None = None,
) -> bool:
    """Log `played` for a game locked in `session`, as `decide` does; True if news is due.

    `changes` are more of the game's fields to set in the same statement.
    """
    where_to = sa.select(_SEAT.c.seat, _SEAT.c.email, _SEAT.c.webhook_url)
    seat_rows = session.execute(where_to.where(_SEAT.c.game_id == game.id)).all()
    appended = _append(
        game,
        rules,
        state,
        played,
        stamp,
        rounds_before=rounds_before,
        seat_count=len(seat_rows),
        reachable=frozenset(seat for seat, email, hook in seat_rows if email or hook),
    )
    connection = session.connection()
    connection.execute(_SET_GAME, {"game_id": game.id, **appended.game, **(changes or {})})
    _write(connection, appended)
    return bool(appended.news)


def list_games(
    session: Session, status: str | None, name: str | None, before: str | None, limit: int
) -> list[Game]:
    # Not the head states: a list shows none of them.
    query = select(Game).options(defer(cast(QueryableAttribute[Any], Game.state)))
    if status is not None:
        query = query.where(Game.status == status)
    if name is not None:
        query = query.where(Game.name == name)
    if before is not None:
        query = query.where(Game.created_at < before)
    return list(session.exec(query.order_by(col(Game.created_at).desc()).limit(limit)))


def bench_row(session: Session, game_id: str) -> int:
    """One outbox row marked as sent, for the benchmark's floor; returns its id.

    Marked sent so that the delivery sweep leaves it alone: a pending row
    would cost the worker a claim and a build during the measured runs.
    """
    stamp = now()
    row = Outbox(
        game_id=game_id, kind="bench", payload={}, created_at=stamp, sent_at=stamp, status=SENT
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id
