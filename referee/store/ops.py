"""Everything that reads or writes a game's rows, through the game contract only.

The worker calls `decide`, the one place a move is ever appended: it locks
the game, rebuilds the state from the latest snapshot and the log after it,
plays the submission, appends the move and any moves the referee records by
itself, marks the submission and writes the outbox rows, all in one
transaction. A submission that is no longer pending when the lock is held
is left alone, so running `decide` twice (a late ack redelivered, two
workers racing, a sweep) decides it exactly once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from referee import games
from referee.engine import JSON, IllegalMove
from referee.games import AnyGame
from referee.record import Entry, Header, Record, canonical_json, chain_problems, entry_hash
from referee.replay import SEALED_NOTATION, forced_moves, new_state
from referee.rng import commitment, new_seed
from referee.store.db import now, transaction
from referee.store.tables import (
    ACCEPTED,
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


def rules_of(game: Game) -> AnyGame:
    return games.get(game.name)


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
    _advance(session, game, rules, state, [], stamp, rounds_before=rules.rounds_decided(state))
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


def state_at(session: Session, game: Game, version: int) -> Any:
    """The state after `version` moves: the nearest snapshot, then the log after it.

    Without any snapshot the state is replayed from the seed, so snapshots
    only save time.
    """
    rules = rules_of(game)
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
        session.execute(insert(Submission).values(submission.model_dump()))
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
class Decision:
    """A submission as `decide` left it, and whether it wrote news that is due to be sent."""

    submission: Submission | None
    news_due: bool = False


def decide(submission_id: str, url: str | None = None) -> Submission | None:
    """Decide one submission, exactly once; None when there is no such submission."""
    return decision(submission_id, url).submission


def decision(submission_id: str, url: str | None = None) -> Decision:
    """As `decide`, and say whether delivery has work now (the worker sends it at once)."""
    with transaction(url) as session:
        owner = select(Submission.game_id).where(Submission.id == submission_id)
        game = session.exec(
            select(Game).where(Game.id == owner.scalar_subquery()).with_for_update(key_share=True)
        ).first()
        # Read under the game's lock: another worker may have decided it already.
        submission = session.get(Submission, submission_id)
        if game is None or submission is None or submission.status != PENDING:
            return Decision(submission)
        rules = rules_of(game)
        stamp = now()
        try:
            if game.status != "active":
                raise IllegalMove("game_over", "the game is over")
            if (
                submission.expected_version is not None
                and submission.expected_version != game.version
            ):
                raise IllegalMove(
                    "stale_version",
                    f"the game is at version {game.version}, "
                    f"not {submission.expected_version}: look again and resubmit",
                )
            state = state_at(session, game, game.version)
            move = rules.move_from_json(submission.move)
            after = rules.play(state, submission.seat, move)
        except IllegalMove as refused:
            submission.status = REJECTED
            submission.code = refused.code
            submission.reason = refused.reason
            submission.decided_at = stamp
            session.add(submission)
            return Decision(submission, _answer_by_mail(session, submission, stamp))
        submission.status = ACCEPTED
        submission.seq = game.version + 1
        submission.decided_at = stamp
        session.add(submission)
        mailed = _answer_by_mail(session, submission, stamp)
        played: list[tuple[int, Any, str | None]] = [(submission.seat, move, submission.id)]
        before = rules.rounds_decided(state)
        news = _advance(session, game, rules, after, played, stamp, rounds_before=before)
        return Decision(submission, mailed or news)


def _answer_by_mail(session: Session, submission: Submission, stamp: str) -> bool:
    """A move that came by mail is answered by mail, accepted or refused; True if it was."""
    if submission.source != MAIL:
        return False
    session.add(
        Outbox(
            game_id=submission.game_id,
            kind="answer",
            seat=submission.seat,
            payload={"submission": submission.id},
            created_at=stamp,
        )
    )
    return True


def _advance(
    session: Session,
    game: Game,
    rules: AnyGame,
    state: Any,
    played: list[tuple[int, Any, str | None]],
    stamp: str,
    *,
    rounds_before: int,
) -> bool:
    """Log `played` (already applied to `state`) and the referee's own moves after them.

    `rounds_before` is `rules.rounds_decided` of the state before `played`:
    a change that raises it ends a round, which every seat hears of.
    True when some news written for the seats has somewhere to go.
    """
    moves = list(played)
    for seat, move, after in forced_moves(rules, state):
        moves.append((seat, move, None))
        state = after
    prev = game.head_hash
    for seat, move, submission_id in moves:
        game.version += 1
        notation = rules.notate(move)
        digest = entry_hash(prev, game.version, seat, notation, stamp)
        session.add(
            Move(
                game_id=game.id,
                seq=game.version,
                seat=seat,
                move=rules.move_to_json(move),
                notation=notation,
                created_at=stamp,
                prev_hash=prev,
                hash=digest,
                submission_id=submission_id,
            )
        )
        prev = digest
    game.head_hash = prev
    result = rules.result(state)
    game.to_act = sorted(rules.actors(state))
    game.updated_at = stamp
    if result is not None:
        game.status = "over"
        game.result = result.to_json()
    session.add(game)
    session.add(Snapshot(game_id=game.id, version=game.version, state=rules.state_to_json(state)))
    news: list[tuple[str, int, dict[str, Any]]]
    if result is not None:
        news = [
            ("game_over", seat, {"result": game.result, "seed": game.seed})
            for seat in range(len(result.scores))
        ]
    else:
        news = []
        if rules.rounds_decided(state) > rounds_before:
            # Once over, the game-over mail tells the round's end with the rest.
            everyone = range(len(seats(session, game.id)))
            news = [("round_over", seat, {"version": game.version}) for seat in everyone]
        # Every seat that must act after a change hears of it, even one that
        # already could: a MaNiKi card won by another seat is a new card for all.
        news += [("your_turn", seat, {"version": game.version}) for seat in game.to_act]
    reachable = _reachable(session, game.id)
    for kind, seat, payload in news:
        row = Outbox(game_id=game.id, kind=kind, seat=seat, payload=payload, created_at=stamp)
        if seat not in reachable:
            # Nowhere to send it: written down as done, as delivery would mark it.
            row.status = SENT
            row.sent_at = row.mail_at = row.hook_at = stamp
        session.add(row)
    return any(seat in reachable for _, seat, _ in news)


def _reachable(session: Session, game_id: str) -> set[int]:
    """The seats that news can reach: by mail or by webhook."""
    rows = session.exec(
        select(Seat.seat, Seat.email, Seat.webhook_url).where(Seat.game_id == game_id)
    )
    return {seat for seat, email, webhook_url in rows if email or webhook_url}


def list_games(
    session: Session, status: str | None, name: str | None, before: str | None, limit: int
) -> list[Game]:
    query = select(Game)
    if status is not None:
        query = query.where(Game.status == status)
    if name is not None:
        query = query.where(Game.name == name)
    if before is not None:
        query = query.where(Game.created_at < before)
    return list(session.exec(query.order_by(col(Game.created_at).desc()).limit(limit)))


def bench_row(session: Session, game_id: str) -> int:
    """One outbox row marked as sent, for the benchmark's floor; returns its id."""
    row = Outbox(game_id=game_id, kind="bench", payload={}, created_at=now(), sent_at=now())
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id
