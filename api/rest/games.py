"""Games: create, list, summary, state, legal moves, submissions, the log and checks; a
seat's webhook (`api/rest/webhooks.py`) is served under this blueprint."""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import datetime
from typing import Any

from flask import Response, request, url_for
from flask_smorest import Blueprint

from api.http import seat_auth, throttle
from api.http.context import find, referee, session
from api.http.errors import (
    BAD_QUERY,
    BAD_TOKEN,
    NO_GAME,
    NO_SEAT,
    NOT_JSON,
    SCOPE,
    Problem,
    declared,
)
from api.http.expensive import BUSY, taking_turns
from api.http.media import NDJSON, negotiated, text_response
from api.rest import webhooks
from api.schemas.games import (
    EnvelopeOut,
    GameListArgs,
    GameListOut,
    GameOut,
    LegalMovesOut,
    LogArgs,
    LogOut,
    NewGameIn,
    NewGameOut,
    StateArgs,
    VerifyOut,
)
from api.schemas.rules import COMPONENTS, NEW_GAME
from api.schemas.submissions import (
    IdempotencyIn,
    MoveIn,
    MoveJsonIn,
    NotationIn,
    SubmissionOut,
    WaitArgs,
)
from referee.replay import SEALED_NOTATION, envelope
from referee.rng import commitment
from referee.service import game_states, reachability
from referee.service.creating import NewGame, Player, create_game
from referee.service.handovers import handovers
from referee.service.submitting import SubmitMove, refusal_of, submit_move
from referee.service.vacations import game_clock
from referee.service.verification import verify_game
from referee.store import clock, reads, records
from referee.store.tables import Game, GameStatus, Submission, SubmissionStatus

blp = Blueprint(
    "games", __name__, url_prefix="/v1/games", description="Games, their moves and logs"
)

MAX_KEY = 200
KEY = re.compile(r"[\x20-\x7e]{1,200}")
SEAT = seat_auth.AS_SEAT_OR_SPECTATOR


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


def links(game_id: str) -> dict[str, str]:
    return {
        "self": url_for("games.summary", game_id=game_id),
        "state": url_for("games.state", game_id=game_id),
        "moves": url_for("games.moves", game_id=game_id),
        "log": url_for("games.log_jsonl", game_id=game_id),
    }


@blp.route("", methods=["POST"])
@blp.arguments(NewGameIn())
# Documented per game (api/schemas/rules.py): what a body may hold depends on its game.
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
            401: "unauthorized: the server's API key is needed in `X-API-Key` (on a server "
            "that has one; and for a game of bots alone on any server)",
            415: NOT_JSON,
            422: "bad_request (the body's shape, `errors`), unknown_game, bad_players (a "
            "player count the game does not allow, a bot level it does not offer, a bot with "
            "an address), bad_options (`errors` per option)",
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
    trusted = seat_auth.check_api_key()
    if not trusted:
        throttle.check("create")
    players = body["players"]
    command = NewGame(
        game=body["game"],
        players=[Player(p["name"], p["email"], p["bot"]) for p in players],
        options=body["options"],
        deadline=body["deadline"],
        on_timeout=body["on_timeout"],
        trusted=trusted,
        language=body["language"],
    )
    created = create_game(referee(), command)
    game = created.game
    answer: dict[str, Any] = {
        "id": game.id,
        "game": game.name,
        "status": game.status,
        "seats": [
            {
                "seat": n,
                "name": p["name"],
                "token": token if (trusted or not p["email"]) and not p["bot"] else None,
                "bot": p["bot"],
            }
            for n, (p, token) in enumerate(zip(players, created.tokens, strict=True))
        ],
        "seed_commitment": game.seed_commitment,
        "version": game.version,
        "links": links(game.id),
    }
    # The tokens are shown once: no cache may keep them.
    headers = {"Location": url_for("games.summary", game_id=game.id), "Cache-Control": "no-store"}
    return answer, 201, headers


@blp.route("", methods=["GET"])
@blp.arguments(GameListArgs(), location="query")
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


@blp.route("/<game_id>", methods=["GET"])
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
        unreachable = reachability.unreachable_seats(db, game.id)
        standing = game_clock(db, game)
    over = game.status == GameStatus.OVER
    return {
        "id": game.id,
        "game": game.name,
        "rules_version": game.rules_version,
        "options": game.options,
        "status": game.status,
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "bot": s.bot,
                "bot_after_timeouts": s.bot_since is not None,
                "unreachable": s.seat in unreachable,
                "away_until": _stamp_or_none(standing.away_until.get(s.seat)),
            }
            for s in seats
        ],
        "to_act": game.to_act,
        "version": game.version,
        "deadlines": turn_deadline(game, standing.due_at),
        "result": game.result,
        "seed_commitment": game.seed_commitment,
        "seed": game.seed if over else None,
        "created_at": game.created_at,
        "links": links(game.id),
    }


def _stamp_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else clock.stamp(moment)


def turn_deadline(game: Game, due: datetime | None) -> dict[str, Any] | None:
    """The turn's time limit, when it runs out (its clock stopped while a seat to act
    is on vacation) and what happens then (None: no limit)."""
    if game.deadline_seconds is None:
        return None
    return {
        "seconds": game.deadline_seconds,
        "on_timeout": game.on_timeout,
        "due_at": None if due is None else clock.stamp(due),
    }


@blp.route("/<game_id>/state", methods=["GET"])
@blp.arguments(StateArgs(), location="query")
@blp.response(200, EnvelopeOut)
@blp.doc(
    operationId="getGameState",
    security=SEAT,
    **declared(
        {
            401: BAD_TOKEN,
            403: SCOPE,
            404: "not_found: no such game, or `at` beyond the log",
            422: BAD_QUERY,
        }
    ),
)
def state(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The caller's view of the state after move `at` (default: the latest)."""
    with session() as db:
        game = find(db, game_id)
        seat = seat_auth.viewer(db, game.id)
        at = args.get("at", game.version)
        if at > game.version:
            raise Problem(404, "not_found", f"the log holds {game.version} moves, not {at}")
        rules = reads.rules_of(game)
        return envelope(rules, game_states.state_at(db, game, at), at, seat)


@blp.route("/<game_id>/legal-moves", methods=["GET"])
@blp.response(200, LegalMovesOut)
@blp.doc(
    operationId="listLegalMoves",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared({401: NO_SEAT, 403: SCOPE, 404: NO_GAME, 422: BAD_QUERY}),
)
def legal_moves(game_id: str) -> dict[str, Any]:
    """The caller's legal moves now (resign, always legal, left out)."""
    with session() as db:
        game = find(db, game_id)
        seat = seat_auth.seat(db, game.id)
        rules = reads.rules_of(game)
        now = game_states.state_at(db, game, game.version)
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


def _answer(submission: Submission, waited: bool) -> tuple[dict[str, Any], int]:
    body = {"submission": submission_json(submission, submission.seat)}
    if not waited or submission.status == SubmissionStatus.PENDING:
        return body, 202
    if submission.status == SubmissionStatus.ACCEPTED:
        return body, 201
    raise refusal_of(submission, submission=body["submission"])


def submit(game_id: str, move: Any, expected: int | None, wait: float | None) -> Any:
    """Submit the bearer token's move; the worker decides it (`?wait=`: answer once decided)."""
    key = _key()
    throttle.check("moves")
    command = SubmitMove(
        game_id, seat_auth.caller(), move, expected_version=expected, idempotency_key=key
    )
    return _answer(submit_move(referee(), command, wait), wait is not None)


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
    errors |= {401: NO_SEAT, 403: SCOPE, 404: NO_GAME, 409: conflict, 422: refused}
    errors |= {429: "too_many_requests: this client submitted too many moves (`Retry-After`)"}
    errors |= {415: NOT_JSON} if 415 in more else {}
    links = {"links": _SUBMISSION_LINKS}
    return {"security": seat_auth.AS_SEAT, **declared(errors, also={201: links, 202: links})}


@blp.route("/<game_id>/moves", methods=["POST"])
@blp.arguments(MoveIn())
@blp.arguments(WaitArgs(), location="query")
@blp.arguments(IdempotencyIn(), location="headers", error_status_code=400)
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


@blp.route("/<game_id>/resign", methods=["POST"])
@blp.arguments(WaitArgs(), location="query")
@blp.arguments(IdempotencyIn(), location="headers", error_status_code=400)
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


# A seat's webhook is a part of a game: its paths are the game's, its operations tagged so;
# registered here, after the submissions, where the document has always listed it.
blp.register_blueprint(webhooks.blp)


@blp.route("/<game_id>/moves", methods=["GET"])
@blp.arguments(LogArgs(), location="query")
@blp.response(200, LogOut)
@blp.doc(operationId="listMoves", **declared({404: NO_GAME, 422: BAD_QUERY}))
def moves(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The log after move `after`; moves of an undecided sealed round show as `sealed`."""
    with session() as db:
        game = find(db, game_id)
        head = game_states.state_at(db, game, game.version)
        first_sealed = records.sealed_from(game, head)
        rows = reads.log(db, game.id, args["after"], args["limit"])
    rules = reads.rules_of(game)
    entries = [
        {
            "seq": row.seq,
            "seat": row.seat,
            "move": (
                None if row.seq >= first_sealed else rules.move_to_json(rules.parse(row.notation))
            ),
            "notation": SEALED_NOTATION if row.seq >= first_sealed else row.notation,
            "created_at": row.created_at,
            "hash": None if row.seq >= first_sealed else row.hash,
        }
        for row in rows
    ]
    more = len(rows) == args["limit"] and rows[-1].seq < game.version
    return {"moves": entries, "next_after": rows[-1].seq if more else None}


@blp.route("/<game_id>/log.jsonl", methods=["GET"])
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
        head = game_states.state_at(db, game, game.version)
        text = records.public_record(db, game, head).dumps()
    return Response(text, mimetype=negotiated(NDJSON))


@blp.route("/<game_id>/verify", methods=["GET"])
@blp.response(200, VerifyOut)
@blp.doc(operationId="verifyGame", **declared({404: NO_GAME, 422: BAD_QUERY, 503: BUSY}))
@taking_turns
def verify(game_id: str) -> dict[str, Any]:
    """Does the chain hold, and does replaying the log give the stored state?

    Worked out once per version of the game, then kept.
    """
    with session() as db:
        game = find(db, game_id)
    checked = verify_game(referee(), game)
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
        "handovers": [asdict(handover) for handover in handovers(referee(), game.id)],
    }
