"""Games: create, list, summary, state, legal moves, submissions, the log and checks."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from flask import Response, request, url_for
from flask_smorest import Blueprint
from sqlmodel import Session

from api import auth, throttle
from api.errors import Problem
from api.schemas import (
    EnvelopeOut,
    GameListArgs,
    GameListOut,
    GameOut,
    LegalMovesOut,
    LogArgs,
    LogOut,
    MoveIn,
    NewGameIn,
    NewGameOut,
    StateArgs,
    SubmissionOut,
    VerifyOut,
    WaitArgs,
    WebhookIn,
    WebhookOut,
)
from referee import games
from referee.engine import BadOptions, IllegalMove, Resign
from referee.queue import DECIDE, Heard, decided_signal, eager, enqueue
from referee.record import chain_problems
from referee.replay import SEALED_NOTATION, ReplayError, envelope, replay
from referee.rng import commitment
from referee.store import clock, creation, deadlines, keys, reads, records, submissions
from referee.store.db import engine, transaction
from referee.store.tables import (
    DECISION_FIELDS,
    Game,
    GameStatus,
    Source,
    Submission,
    SubmissionStatus,
    TimeoutPolicy,
)

blp = Blueprint("games", __name__, url_prefix="/v1", description="Games, their moves and logs")

_log = logging.getLogger(__name__)

MAX_KEY = 200
ID = re.compile(r"[0-9a-f]{32}")
KEY = re.compile(r"[\x20-\x7e]{1,200}")
SEAT: list[dict[str, list[str]]] = [{"seat": []}, {}]


def session() -> Session:
    return Session(engine(), expire_on_commit=False)


def well_formed(identifier: str) -> bool:
    """Ids are 32 hex digits; anything else is looked up nowhere."""
    return ID.fullmatch(identifier) is not None


def no_such_game() -> Problem:
    return Problem(404, "not_found", "there is no game with this id")


def find(db: Session, game_id: str) -> Game:
    game = db.get(Game, game_id) if well_formed(game_id) else None
    if game is None:
        raise no_such_game()
    return game


def links(game_id: str) -> dict[str, str]:
    return {
        "self": url_for("games.summary", game_id=game_id),
        "state": url_for("games.state", game_id=game_id),
        "moves": url_for("games.moves", game_id=game_id),
        "log": url_for("games.log_jsonl", game_id=game_id),
    }


@blp.route("/games", methods=["POST"])
@blp.arguments(NewGameIn)
@blp.response(201, NewGameOut)
@blp.alt_response(401, description="an API key is needed")
@blp.doc(security=[{"apiKey": []}, {}])
def create(body: dict[str, Any]) -> dict[str, Any]:
    """Start a game; the answer holds the secret token of each seat without a mail address, once.

    Seats with an address get their personal link by mail instead (trusted
    clients, which give the API key, get every token).
    """
    trusted = auth.check_api_key()
    if not trusted:
        throttle.check("create")
    try:
        rules = games.get(body["game"])
    except KeyError as error:
        raise Problem(422, "unknown_game", str(error.args[0])) from None
    players = body["players"]
    try:
        options = rules.load_options(body["options"], len(players))
    except BadOptions as error:
        if "_players" in error.errors:
            raise Problem(
                422, "bad_players", " ".join(error.errors["_players"]), errors=error.errors
            ) from None
        raise Problem(
            422, "bad_options", "the options are not valid", errors=error.errors
        ) from None
    try:
        deadline = None if body["deadline"] is None else deadlines.parse_deadline(body["deadline"])
    except ValueError as error:
        raise Problem(422, "bad_request", str(error), errors={"deadline": [str(error)]}) from None
    # Fetched before the transaction: on SQLite it may write the secret's row.
    secret = keys.server_secret()
    with transaction() as db:
        created = creation.create_game(
            db,
            rules,
            [(p["name"], p["email"]) for p in players],
            options,
            deadline_seconds=deadline,
            on_timeout=TimeoutPolicy(body["on_timeout"]),
            trusted=trusted,
            secret=secret,
        )
    game = created.game
    return {
        "id": game.id,
        "game": game.name,
        "status": game.status,
        "seats": [
            {"seat": n, "name": p["name"], "token": token if trusted or not p["email"] else None}
            for n, (p, token) in enumerate(zip(players, created.tokens, strict=True))
        ],
        "seed_commitment": game.seed_commitment,
        "version": game.version,
        "links": links(game.id),
    }


@blp.route("/games", methods=["GET"])
@blp.arguments(GameListArgs, location="query")
@blp.response(200, GameListOut)
def index(args: dict[str, Any]) -> dict[str, Any]:
    """Games, newest first; pass `next_cursor` back as `cursor` for the next page."""
    limit = args["limit"]
    with session() as db:
        found = reads.list_games(
            db, args.get("status"), args.get("game"), args.get("cursor"), limit
        )
    return {
        "games": [
            {
                "id": g.id,
                "game": g.name,
                "status": g.status,
                "version": g.version,
                "created_at": g.created_at,
            }
            for g in found
        ],
        "next_cursor": found[-1].created_at if len(found) == limit else None,
    }


@blp.route("/games/<game_id>", methods=["GET"])
@blp.response(200, GameOut)
@blp.alt_response(404, description="no such game")
def summary(game_id: str) -> dict[str, Any]:
    """The game: seats, who acts, version, and the result and seed once over."""
    with session() as db:
        game = find(db, game_id)
        seats = reads.seats(db, game.id)
    over = game.status == GameStatus.OVER
    return {
        "id": game.id,
        "game": game.name,
        "rules_version": game.rules_version,
        "options": game.options,
        "status": game.status,
        "seats": [{"seat": s.seat, "name": s.name} for s in seats],
        "to_act": game.to_act,
        "version": game.version,
        "deadlines": turn_deadline(game),
        "result": game.result,
        "seed_commitment": game.seed_commitment,
        "seed": game.seed if over else None,
        "created_at": game.created_at,
        "links": links(game.id),
    }


def turn_deadline(game: Game) -> dict[str, Any] | None:
    """The turn's time limit, when it runs out and what happens then (None: no limit)."""
    due = deadlines.due_at(game)
    if game.deadline_seconds is None:
        return None
    return {
        "seconds": game.deadline_seconds,
        "on_timeout": game.on_timeout,
        "due_at": None if due is None else clock.stamp(due),
    }


@blp.route("/games/<game_id>/state", methods=["GET"])
@blp.arguments(StateArgs, location="query")
@blp.response(200, EnvelopeOut)
@blp.alt_response(401, description="a bad token")
@blp.alt_response(404, description="no such game or move")
@blp.doc(security=SEAT)
def state(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The caller's view of the state after move `at` (default: the latest)."""
    with session() as db:
        game = find(db, game_id)
        seat = auth.viewer(db, game.id)
        at = args.get("at", game.version)
        if at > game.version:
            raise Problem(404, "not_found", f"the log holds {game.version} moves, not {at}")
        rules = reads.rules_of(game)
        return envelope(rules, reads.state_at(db, game, at), at, seat)


@blp.route("/games/<game_id>/legal-moves", methods=["GET"])
@blp.response(200, LegalMovesOut)
@blp.alt_response(401, description="no or a bad token")
@blp.alt_response(404, description="no such game")
@blp.doc(security=SEAT)
def legal_moves(game_id: str) -> dict[str, Any]:
    """The caller's legal moves now (resign, always legal, left out)."""
    with session() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        rules = reads.rules_of(game)
        now = reads.state_at(db, game, game.version)
    return {
        "seat": seat,
        "version": game.version,
        "complete": rules.lists_every_move,
        "moves": [
            {"move": rules.move_to_json(m), "notation": rules.notate(m)}
            for m in rules.legal_moves(now, seat)
        ],
    }


def _key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is not None and KEY.fullmatch(key) is None:
        detail = f"Idempotency-Key holds 1 to {MAX_KEY} printable ASCII characters"
        raise Problem(400, "bad_request", detail)
    return key


def submission_json(submission: Submission, seat: int | None) -> dict[str, Any]:
    """A submission as its seat sees it; others do not see the move (it may be sealed)."""
    return {
        "id": submission.id,
        "game_id": submission.game_id,
        "seat": submission.seat,
        "move": submission.move if seat == submission.seat else {},
        "status": submission.status,
        "code": submission.code,
        "reason": submission.reason,
        "seq": submission.seq,
        "created_at": submission.created_at,
        "decided_at": submission.decided_at,
    }


def _wait(submission: Submission, seconds: float, heard: Heard, pending: bool) -> Submission:
    """The submission once decided, or as it is after `seconds`.

    `pending` says the submission is known to be undecided (just recorded,
    its task not run here), which saves reading it before the first wait.
    A decision heard from the worker carries the fields it set, so it is
    answered without reading the submission again.
    """
    deadline = time.monotonic() + seconds
    while True:
        if not pending:
            with session() as db:
                submission = db.get(Submission, submission.id) or submission
        pending = False
        left = deadline - time.monotonic()
        if submission.status != SubmissionStatus.PENDING or left <= 0:
            return submission
        # Look again now and then even unannounced: a decision made outside
        # a worker task (a direct `decide`) announces nothing.
        decided = heard(min(left, 0.5))
        if (
            isinstance(decided, dict)
            and decided.get("status", SubmissionStatus.PENDING) != SubmissionStatus.PENDING
        ):
            for name in DECISION_FIELDS:
                setattr(submission, name, decided.get(name))
            return submission


def _answer(submission: Submission, waited: bool) -> tuple[dict[str, Any], int]:
    body = {"submission": submission_json(submission, submission.seat)}
    if not waited or submission.status == SubmissionStatus.PENDING:
        return body, 202
    if submission.status == SubmissionStatus.ACCEPTED:
        return body, 201
    raise Problem(
        422,
        submission.code or "illegal_move",
        submission.reason or "the move was refused",
        reason=submission.reason or "",
        submission=body["submission"],
    )


def submit(
    game_id: str,
    move: Any,
    expected: int | None,
    wait: float | None,
    seat_of: Callable[[Session, str], int] = auth.seat,
) -> Any:
    """Shape-check a move, record it as pending and enqueue it; the worker decides.

    `seat_of` says who is asking: the bearer token here, the seat cookie on game pages.
    """
    key = _key()
    throttle.check("moves")
    with session() as db:
        game = reads.turn(db, game_id) if well_formed(game_id) else None
        if game is None:
            raise no_such_game()
        seat = seat_of(db, game.id)
        rules = games.get(game.name, game.rules_version)
        try:
            parsed = (
                rules.parse(move, game.options)
                if isinstance(move, str)
                else rules.move_from_json(move)
            )
        except IllegalMove as refused:
            raise Problem(422, refused.code, refused.reason, reason=refused.reason) from None
        move_json = rules.move_to_json(parsed)
        body_hash = submissions.request_hash(move_json, expected)
        earlier = submissions.find_by_key(db, game.id, seat, key) if key is not None else None
        if earlier is None:
            if game.status != GameStatus.ACTIVE:
                raise Problem(409, "game_over", "the game is over", reason="the game is over")
            if expected is not None and expected != game.version:
                detail = f"the game is at version {game.version}, not {expected}"
                raise Problem(409, "stale_version", detail, reason=detail)
            if seat not in game.to_act and not isinstance(parsed, Resign):
                raise Problem(
                    409, "not_your_turn", "it is not your turn", reason="it is not your turn"
                )
        submission, fresh = submissions.record(
            db,
            game.id,
            seat,
            move_json,
            source=Source.REST,
            seen_version=game.version if expected is None else expected,
            expected_version=expected,
            idempotency_key=key,
        )
        # The submission must exist before it is enqueued.
        db.commit()
    if not fresh and submission.request_hash != body_hash:
        raise Problem(
            409,
            "idempotency_conflict",
            "this Idempotency-Key was used for another request",
        )
    with ExitStack() as stack:
        # Listen before enqueueing, so that no announcement comes too early.
        heard = None if wait is None else stack.enter_context(decided_signal(submission.id))
        if fresh:
            try:
                enqueue(DECIDE, submission.id)
            except Exception:
                # The sweep enqueues it again once the broker is back.
                _log.exception("could not enqueue submission %s", submission.id)
        if heard is not None and wait is not None:
            submission = _wait(submission, wait, heard, pending=fresh and not eager())
    return _answer(submission, wait is not None)


# What OpenAPI says of every submission a seat makes: its token, and an
# optional Idempotency-Key that makes a retry safe.
_SEAT_SUBMISSION_DOC: dict[str, Any] = {
    "security": [{"seat": []}],
    "parameters": [{"in": "header", "name": "Idempotency-Key", "schema": {"type": "string"}}],
}


@blp.route("/games/<game_id>/moves", methods=["POST"])
@blp.arguments(MoveIn)
@blp.arguments(WaitArgs, location="query")
@blp.response(202, SubmissionOut, description="recorded; decided soon")
@blp.alt_response(201, schema=SubmissionOut, description="accepted (with ?wait=)")
@blp.alt_response(401, description="no or a bad token")
@blp.alt_response(404, description="no such game")
@blp.alt_response(409, description="not your turn, stale version, game over, key reused")
@blp.doc(**_SEAT_SUBMISSION_DOC)
def play(body: dict[str, Any], args: dict[str, Any], game_id: str) -> Any:
    """Submit a move (`move` JSON or `notation`); with `?wait=S` answer once decided."""
    if ("move" in body) == ("notation" in body):
        raise Problem(422, "bad_request", "send exactly one of 'move' and 'notation'")
    move = body.get("notation", body.get("move"))
    return submit(game_id, move, body.get("expected_version"), args.get("wait"))


@blp.route("/games/<game_id>/resign", methods=["POST"])
@blp.arguments(WaitArgs, location="query")
@blp.response(202, SubmissionOut, description="recorded; decided soon")
@blp.alt_response(201, schema=SubmissionOut, description="accepted (with ?wait=)")
@blp.alt_response(401, description="no or a bad token")
@blp.alt_response(404, description="no such game")
@blp.alt_response(409, description="game over, key reused")
@blp.doc(**_SEAT_SUBMISSION_DOC)
def resign(args: dict[str, Any], game_id: str) -> Any:
    """Leave the game: the caller's seat resigns."""
    return submit(game_id, {"type": "resign"}, None, args.get("wait"))


@blp.route("/games/<game_id>/webhook", methods=["PUT"])
@blp.arguments(WebhookIn)
@blp.response(200, WebhookOut)
@blp.alt_response(401, description="no or a bad token")
@blp.alt_response(404, description="no such game")
@blp.doc(security=[{"seat": []}])
def set_webhook(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Have the caller's notifications POSTed to `url` as signed JSON, besides any mail."""
    return _webhook(game_id, body["url"])


@blp.route("/games/<game_id>/webhook", methods=["DELETE"])
@blp.response(200, WebhookOut)
@blp.alt_response(401, description="no or a bad token")
@blp.alt_response(404, description="no such game")
@blp.doc(security=[{"seat": []}])
def drop_webhook(game_id: str) -> dict[str, Any]:
    """Stop POSTing the caller's notifications."""
    return _webhook(game_id, None)


def _webhook(game_id: str, url: str | None) -> dict[str, Any]:
    with transaction() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        creation.set_webhook(db, game.id, seat, url)
    key = keys.webhook_secret(keys.server_secret(), game.id, seat)
    return {
        "url": url,
        "secret": key,
        "signature": "X-Referee-Signature: sha256=<hex HMAC-SHA256(secret, "
        "X-Referee-Timestamp + '.' + body)>",
    }


@blp.route("/games/<game_id>/moves", methods=["GET"])
@blp.arguments(LogArgs, location="query")
@blp.response(200, LogOut)
@blp.alt_response(404, description="no such game")
def moves(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The log after move `after`; moves of an undecided sealed round show as `sealed`."""
    with session() as db:
        game = find(db, game_id)
        head = reads.state_at(db, game, game.version)
        first_sealed = records.sealed_from(game, head)
        rows = reads.log(db, game.id, args["after"], args["limit"])
    entries = [
        {
            "seq": row.seq,
            "seat": row.seat,
            "move": None if row.seq >= first_sealed else row.move,
            "notation": SEALED_NOTATION if row.seq >= first_sealed else row.notation,
            "created_at": row.created_at,
            "hash": None if row.seq >= first_sealed else row.hash,
        }
        for row in rows
    ]
    more = len(rows) == args["limit"] and rows[-1].seq < game.version
    return {"moves": entries, "next_after": rows[-1].seq if more else None}


@blp.route("/games/<game_id>/log.jsonl", methods=["GET"])
@blp.alt_response(404, description="no such game")
@blp.doc(
    responses={
        "200": {
            "description": "the game record, JSON Lines",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    }
)
def log_jsonl(game_id: str) -> Response:
    """The game record for `referee verify`: the seed only once the game is over."""
    with session() as db:
        game = find(db, game_id)
        head = reads.state_at(db, game, game.version)
        text = records.public_record(db, game, head).dumps()
    return Response(text, mimetype="application/x-ndjson")


@blp.route("/games/<game_id>/verify", methods=["GET"])
@blp.response(200, VerifyOut)
@blp.alt_response(404, description="no such game")
def verify(game_id: str) -> dict[str, Any]:
    """Does the chain hold, and does replaying the log give the stored state?"""
    with session() as db:
        game = find(db, game_id)
        full = records.full_record(db, game)
        stored = reads.state_at(db, game, game.version)
    rules = reads.rules_of(game)
    chain = chain_problems(full)
    problems = list(chain)
    try:
        replayed = replay(full).final
        matches = rules.state_to_json(replayed) == rules.state_to_json(stored)
        if not matches:
            problems.append("replaying the log does not give the stored state")
    except ReplayError as error:
        matches = False
        problems.append(f"the log does not replay: {error}")
    over = game.status == GameStatus.OVER
    return {
        "chain_valid": not chain,
        "replay_matches": matches,
        "problems": problems if over or not problems else ["the log does not check out"],
        "version": game.version,
        "seed_commitment": game.seed_commitment,
        "seed": game.seed if over else None,
        "seed_matches": commitment(game.seed) == game.seed_commitment if over else None,
    }
