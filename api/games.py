"""Games: create, list, summary, state, legal moves, submissions, webhooks, the log and checks."""

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
from api.errors import BAD_QUERY, BAD_TOKEN, NO_GAME, NO_SEAT, NOT_JSON, Problem, declared
from api.expensive import BUSY, taking_turns
from api.game_schemas import COMPONENTS, NEW_GAME
from api.media import NDJSON, negotiated, text_response
from api.schemas import (
    EnvelopeOut,
    GameListArgs,
    GameListOut,
    GameOut,
    IdempotencyIn,
    LegalMovesOut,
    LogArgs,
    LogOut,
    MoveIn,
    MoveJsonIn,
    NewGameIn,
    NewGameOut,
    NotationIn,
    StateArgs,
    SubmissionOut,
    VerifyOut,
    WaitArgs,
    WebhookIn,
    WebhookOut,
    WebhookSecretOut,
    WebhookStatusOut,
)
from referee import games, settings, webhooks
from referee.engine import BadOptions, IllegalMove, Resign
from referee.queue import DECIDE, Heard, decided_signal, eager, enqueue
from referee.replay import SEALED_NOTATION, envelope
from referee.rng import commitment
from referee.store import (
    clock,
    creation,
    deadlines,
    keys,
    reads,
    records,
    submissions,
    verification,
)
from referee.store import webhooks as store_webhooks
from referee.store.db import reading, transaction
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

# The refusals a submission can get once decided, when the game moved on
# between recording and deciding: the same status as when the API refuses
# them at once, so that a code always comes with one status.
CONFLICTS = frozenset({"not_your_turn", "stale_version", "game_over"})


def _game_link(operation: str, source: str = "$response.body#/id") -> dict[str, Any]:
    return {"operationId": operation, "parameters": {"game_id": source}}


# OpenAPI links from a game's id to what can be done with it (stateful clients
# and testers follow them: create -> state -> moves -> submission).
GAME_LINKS = {
    name: _game_link(name)
    for name in (
        "getGame",
        "getGameState",
        "listLegalMoves",
        "submitMove",
        "resign",
        "listMoves",
        "getGameRecord",
        "verifyGame",
        "getBoardSvg",
    )
}


def session() -> Session:
    """A session for reading (on SQLite it leaves the write lock to writers)."""
    return reading()


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
# Documented per game (api/game_schemas.py): what a body may hold depends on its game.
@blp.doc(requestBody={"content": {"application/json": {"schema": {"$ref": COMPONENTS + NEW_GAME}}}})
@blp.response(
    201,
    NewGameOut,
    headers={
        "Location": {"description": "the game's summary", "schema": {"type": "string"}},
        "Cache-Control": {
            "description": "`no-store`: the answer holds the seats' tokens",
            "schema": {"type": "string"},
        },
    },
)
@blp.doc(
    operationId="createGame",
    security=[{"apiKey": []}, {}],
    **declared(
        {
            400: "bad_json: the body is not JSON",
            401: "unauthorized: the server's API key is needed in `X-API-Key`",
            415: NOT_JSON,
            422: "bad_request (the body's shape, `errors`), unknown_game, bad_players, "
            "bad_options (`errors` per option)",
            429: "too_many_requests: this client created too many games (`Retry-After`)",
        },
        also={201: {"links": GAME_LINKS}},
    ),
)
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
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
    answer: dict[str, Any] = {
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
    # The tokens are shown once: no cache may keep them.
    headers = {"Location": url_for("games.summary", game_id=game.id), "Cache-Control": "no-store"}
    return answer, 201, headers


@blp.route("/games", methods=["GET"])
@blp.arguments(GameListArgs, location="query")
@blp.response(200, GameListOut)
@blp.doc(operationId="listGames", **declared({422: BAD_QUERY}))
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
@blp.doc(
    operationId="getGame",
    **declared({404: NO_GAME, 422: BAD_QUERY}, also={200: {"links": GAME_LINKS}}),
)
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
@blp.doc(
    operationId="getGameState",
    security=SEAT,
    **declared(
        {401: BAD_TOKEN, 404: "not_found: no such game, or `at` beyond the log", 422: BAD_QUERY}
    ),
)
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
@blp.doc(
    operationId="listLegalMoves",
    security=[{"seat": []}],
    **declared({401: NO_SEAT, 404: NO_GAME, 422: BAD_QUERY}),
)
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
        409 if submission.code in CONFLICTS else 422,
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
    with transaction() as db:
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


# What OpenAPI says of every submission a seat makes besides its parameters.
_SUBMISSION_LINKS = {
    "getSubmission": {
        "operationId": "getSubmission",
        "parameters": {"submission_id": "$response.body#/submission/id"},
    },
    "getGameState": _game_link("getGameState", "$response.body#/submission/game_id"),
}
_CONFLICT = (
    "not_your_turn, stale_version, game_over (at once, or once decided with `?wait=`), "
    "idempotency_conflict (an Idempotency-Key reused for another request)"
)
_REFUSED = (
    "bad_request (the body's or query's shape, `errors`; both or neither of `move` and "
    "`notation`), bad_notation, bad_move (with `reason`); with `?wait=`: illegal_move and "
    "the rules' other refusals, with `reason` and the `submission`"
)


def _submission_doc(conflict: str, refused: str, *more: int) -> dict[str, Any]:
    errors = {400: "bad_request: a malformed Idempotency-Key; bad_json: the body is not JSON"}
    errors |= {401: NO_SEAT, 404: NO_GAME, 409: conflict, 422: refused}
    errors |= {429: "too_many_requests: this client submitted too many moves (`Retry-After`)"}
    errors |= {415: NOT_JSON} if 415 in more else {}
    links = {"links": _SUBMISSION_LINKS}
    return {"security": [{"seat": []}], **declared(errors, also={201: links, 202: links})}


@blp.route("/games/<game_id>/moves", methods=["POST"])
@blp.arguments(MoveIn)
@blp.arguments(WaitArgs, location="query")
@blp.arguments(IdempotencyIn, location="headers", error_status_code=400)
@blp.response(202, SubmissionOut, description="recorded; decided soon (or `?wait=` ran out)")
@blp.alt_response(201, schema=SubmissionOut, description="accepted (with `?wait=`)")
@blp.doc(
    operationId="submitMove",
    requestBody={"content": {"application/json": {"schema": {"oneOf": [MoveJsonIn, NotationIn]}}}},
    **_submission_doc(_CONFLICT, _REFUSED, 415),
)
def play(body: dict[str, Any], args: dict[str, Any], _headers: dict[str, Any], game_id: str) -> Any:
    """Submit a move (`move` JSON or `notation`); with `?wait=S` answer once decided."""
    if ("move" in body) == ("notation" in body):
        raise Problem(422, "bad_request", "send exactly one of 'move' and 'notation'")
    move = body.get("notation", body.get("move"))
    return submit(game_id, move, body.get("expected_version"), args.get("wait"))


@blp.route("/games/<game_id>/resign", methods=["POST"])
@blp.arguments(WaitArgs, location="query")
@blp.arguments(IdempotencyIn, location="headers", error_status_code=400)
@blp.response(202, SubmissionOut, description="recorded; decided soon (or `?wait=` ran out)")
@blp.alt_response(201, schema=SubmissionOut, description="accepted (with `?wait=`)")
@blp.doc(
    operationId="resign",
    **_submission_doc(
        "game_over, idempotency_conflict",
        "bad_request: a query parameter out of range or not declared, or a body",
    ),
)
def resign(args: dict[str, Any], _headers: dict[str, Any], game_id: str) -> Any:
    """Leave the game: the caller's seat resigns."""
    return submit(game_id, {"type": "resign"}, None, args.get("wait"))


@blp.route("/games/<game_id>/webhook", methods=["PUT"])
@blp.arguments(WebhookIn)
@blp.response(200, WebhookOut)
@blp.doc(
    operationId="setWebhook",
    security=[{"seat": []}],
    **declared(
        {
            400: "bad_json: the body is not JSON",
            401: NO_SEAT,
            404: NO_GAME,
            415: NOT_JSON,
            422: "bad_request: an unknown field (`errors`); or a URL the referee will not "
            "post to: webhook_bad_url, webhook_credentials, webhook_unresolvable, "
            "webhook_forbidden_address",
        }
    ),
)
def set_webhook(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Have the caller's notifications POSTed to `url` as signed JSON, besides any mail.

    Setting it again switches a webhook back on after failures switched it off.
    """
    chosen = settings.active()
    try:
        webhooks.check(
            body["url"],
            allow_private=chosen.webhook_allow_private,
            seconds=chosen.webhook_deadline,
        )
    except webhooks.Refused as refused:
        raise Problem(422, refused.code, refused.reason) from None
    with transaction() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        store_webhooks.set_url(db, game.id, seat, body["url"])
        health = store_webhooks.health(db, game.id, seat)
    return {**_health(health), **_secret(game.id, seat, health.generation)}


@blp.route("/games/<game_id>/webhook", methods=["GET"])
@blp.response(200, WebhookStatusOut)
@blp.doc(
    operationId="getWebhook",
    security=[{"seat": []}],
    **declared({401: NO_SEAT, 404: NO_GAME, 422: BAD_QUERY}),
)
def get_webhook(game_id: str) -> dict[str, Any]:
    """The caller's webhook and its health: failures, the last error, backoff, switched off."""
    with session() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        return _health(store_webhooks.health(db, game.id, seat))


@blp.route("/games/<game_id>/webhook", methods=["DELETE"])
@blp.response(200, WebhookStatusOut)
@blp.doc(
    operationId="deleteWebhook",
    security=[{"seat": []}],
    **declared({401: NO_SEAT, 404: NO_GAME, 422: BAD_QUERY}),
)
def drop_webhook(game_id: str) -> dict[str, Any]:
    """Stop POSTing the caller's notifications (the answer holds no secret)."""
    with transaction() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        store_webhooks.set_url(db, game.id, seat, None)
        return _health(store_webhooks.health(db, game.id, seat))


@blp.route("/games/<game_id>/webhook/secret", methods=["POST"])
@blp.response(200, WebhookSecretOut)
@blp.doc(
    operationId="rotateWebhookSecret",
    security=[{"seat": []}],
    **declared({401: NO_SEAT, 404: NO_GAME, 422: BAD_QUERY}),
)
def rotate_webhook_secret(game_id: str) -> dict[str, Any]:
    """A new signing secret for the caller's webhook; the old one signs nothing more."""
    with transaction() as db:
        game = find(db, game_id)
        seat = auth.seat(db, game.id)
        generation = store_webhooks.rotate(db, game.id, seat)
    return _secret(game.id, seat, generation)


def _health(health: store_webhooks.Health) -> dict[str, Any]:
    return {
        "url": health.url,
        "active": health.active,
        "failures": health.failures,
        "last_error": health.last_error,
        "retry_at": health.retry_at,
        "switched_off_at": health.switched_off_at,
        "max_failures": settings.active().webhook_max_failures,
    }


def _secret(game_id: str, seat: int, generation: int) -> dict[str, Any]:
    return {
        "secret": keys.webhook_secret(keys.server_secret(), game_id, seat, generation),
        "signature": "X-Referee-Signature: sha256=<hex HMAC-SHA256(secret, "
        "X-Referee-Timestamp + '.' + body)>",
    }


@blp.route("/games/<game_id>/moves", methods=["GET"])
@blp.arguments(LogArgs, location="query")
@blp.response(200, LogOut)
@blp.doc(operationId="listMoves", **declared({404: NO_GAME, 422: BAD_QUERY}))
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
@blp.doc(
    operationId="getGameRecord",
    **declared({404: NO_GAME, 422: BAD_QUERY, 503: BUSY}),
)
@blp.doc(responses={200: text_response("the game record, JSON Lines", NDJSON)})
@taking_turns
def log_jsonl(game_id: str) -> Response:
    """The game record for `referee verify`: the seed only once the game is over."""
    with session() as db:
        game = find(db, game_id)
        head = reads.state_at(db, game, game.version)
        text = records.public_record(db, game, head).dumps()
    return Response(text, mimetype=negotiated(NDJSON))


@blp.route("/games/<game_id>/verify", methods=["GET"])
@blp.response(200, VerifyOut)
@blp.doc(operationId="verifyGame", **declared({404: NO_GAME, 422: BAD_QUERY, 503: BUSY}))
@taking_turns
def verify(game_id: str) -> dict[str, Any]:
    """Does the chain hold, and does replaying the log give the stored state?

    Worked out once per version of the game, then read (`referee.store.verification`).
    """
    with session() as db:
        game = find(db, game_id)
    checked = verification.check(game)
    over = game.status == GameStatus.OVER
    problems = checked.problems
    return {
        "chain_valid": checked.chain_valid,
        "replay_matches": checked.replay_matches,
        "problems": problems if over or not problems else ["the log does not check out"],
        "version": game.version,
        "seed_commitment": game.seed_commitment,
        "seed": game.seed if over else None,
        "seed_matches": commitment(game.seed) == game.seed_commitment if over else None,
    }
