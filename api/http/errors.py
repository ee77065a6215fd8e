"""Errors as RFC 9457 `application/problem+json`, each with a stable `code`.

Every error the API gives goes through `problem`: request-shape errors from
webargs, HTTP errors from Werkzeug (404, 405, 413, ...), refusals the
handlers raise as `Problem`, and anything unexpected (a 500 that says
nothing about the server's insides).
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from flask import Response, json
from werkzeug.exceptions import HTTPException

from api.schemas.problems import ProblemSchema
from referee.games.reasons import reason_words
from referee.i18n import N_, _
from referee.service import refusals
from referee.service.webhooks import WebhookRefused

PROBLEM = "application/problem+json"

_log = logging.getLogger(__name__)

# The titles of answers that name no refusal of their own, by status: the request's
# language says them (the `code` beside them is what a client switches on).
STATUS_TITLES = {
    400: N_("Bad request"),
    401: N_("Unauthorized"),
    403: N_("Forbidden"),
    404: N_("Not found"),
    405: N_("Method not allowed"),
    406: N_("Not acceptable"),
    409: N_("Conflict"),
    413: N_("Request too large"),
    415: N_("Unsupported media type"),
    422: N_("Unprocessable request"),
    429: N_("Too many requests"),
    500: N_("Internal server error"),
    503: N_("Service unavailable"),
}

# What the routing's own refusals say, in our words (Werkzeug's are English only).
_ROUTING_DETAILS = {
    404: N_("nothing is at this address"),
    405: N_("this address does not take this method"),
    406: N_("this address cannot answer in any of the types asked for"),
    415: N_("this address does not take a body of this type"),
}

# Werkzeug's status codes, as the stable words clients switch on.
_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "bad_request",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}


class Problem(Exception):
    """An error answer: raise it from a handler."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        # Response headers (a 429's Retry-After), not part of the body.
        self.headers = headers or {}
        self.extra = extra


# The one table of the service's refusals as HTTP answers: status and problem title (said
# in the request's language, `_` at the answer).
REFUSALS: dict[type[refusals.Refusal], tuple[int, str]] = {
    refusals.NotFound: (404, N_("Not found")),
    refusals.Unauthorized: (401, N_("Unauthorized")),
    refusals.Forbidden: (403, N_("Forbidden")),
    refusals.SignInLinkNotValid: (404, N_("Sign-in link not valid")),
    refusals.UnknownGame: (422, N_("Unknown game")),
    refusals.BadPlayers: (422, N_("Wrong number of players")),
    refusals.BadOptions: (422, N_("Invalid options")),
    refusals.BadRequest: (422, N_("Bad request")),
    refusals.NameTaken: (409, N_("Name taken")),
    refusals.NeedsName: (409, N_("Public name needed")),
    refusals.SeekFull: (409, N_("Open game full")),
    refusals.SeekStarted: (409, N_("Open game started")),
    refusals.SeekWithdrawn: (409, N_("Open game withdrawn")),
    refusals.SeekExpired: (409, N_("Open game expired")),
    refusals.AlreadyJoined: (409, N_("Already joined")),
    refusals.NotJoined: (409, N_("Not joined")),
    refusals.NotInvited: (409, N_("Not invited")),
    refusals.Blocked: (409, N_("Blocked")),
    refusals.TooManySeeks: (409, N_("Too many open games")),
    refusals.NotYourSeek: (409, N_("Not your open game")),
    refusals.CreatorStays: (409, N_("Creator stays")),
    refusals.TooFewSeated: (409, N_("Too few seated")),
    refusals.RatingOutOfRange: (409, N_("Rating out of range")),
    refusals.GameOver: (409, N_("Game over")),
    refusals.StillInPlay: (409, N_("Game still in play")),
    refusals.NotASeat: (403, N_("Seats only")),
    refusals.BadMessage: (422, N_("Message refused")),
    refusals.TooManyMessages: (429, N_("Too many messages")),
    refusals.VacationRefused: (409, N_("Vacation refused")),
    refusals.NotYourTurn: (409, N_("Not your turn")),
    refusals.StaleVersion: (409, N_("Stale version")),
    refusals.IdempotencyConflict: (409, N_("Idempotency conflict")),
    refusals.BadNotation: (422, N_("Unreadable notation")),
    refusals.BadMove: (422, N_("Malformed move")),
    refusals.BadStep: (422, N_("Step not offered")),
    refusals.IllegalMoveRefused: (422, N_("Illegal move")),
    WebhookRefused: (422, N_("Webhook URL refused")),
}


def status_of(refused: refusals.Refusal) -> int:
    """The HTTP status of a refusal of the service."""
    return REFUSALS[type(refused)][0]


def from_refusal(refused: refusals.Refusal) -> Response:
    """A refusal of the service, as its row of `REFUSALS` says."""
    status, title = REFUSALS[type(refused)]
    extra = dict(refused.extra)
    if isinstance(refused, refusals.MoveRefusal):
        extra["reason"] = refused.reason
    # A move's `reason` is the record (English, as stored); `detail` is for the
    # reader, a stored reason said in the request's language.
    answer = problem(status, refused.code, reason_words(refused.reason), title=title, **extra)
    if isinstance(refused, refusals.TooManyMessages):
        answer.headers["Retry-After"] = str(refused.retry_after)
    return answer


def _title(status: int) -> str:
    """A status's title in the request's language (Werkzeug's English phrase for others)."""
    return _(STATUS_TITLES[status]) if status in STATUS_TITLES else HTTPStatus(status).phrase


def problem(
    status: int, code: str, detail: str, title: str | None = None, **extra: Any
) -> Response:
    body = {
        "type": f"https://referee.invalid/problems/{code}",
        "title": _(title) if title else _title(status),
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }
    return Response(json.dumps(body), status=status, mimetype=PROBLEM)


def from_problem(error: Problem) -> Response:
    response = problem(error.status, error.code, error.detail, **error.extra)
    response.headers.update(error.headers)
    return response


def from_http(error: HTTPException) -> Response:
    status = error.code or 500
    code = _CODES.get(status, "error")
    data = getattr(error, "data", None)
    if isinstance(data, dict) and "messages" in data:
        # webargs: the request did not have the shape of its schema.
        messages = data["messages"]
        if status == 400 and "json" in messages:
            return problem(400, "bad_json", _("the body is not valid JSON"), errors=messages)
        return problem(
            status, "bad_request", _("the request does not match its schema"), errors=messages
        )
    detail = error.description or HTTPStatus(status).phrase
    if status in _ROUTING_DETAILS:
        detail = _(_ROUTING_DETAILS[status])
    if status == 413:
        detail = _("the request body is too large")
    response = problem(status, code, str(detail))
    if status == 405 and error.get_response().headers.get("Allow"):
        response.headers["Allow"] = error.get_response().headers["Allow"]
    return response


def from_database_down(error: Exception) -> Response:
    """The database could not be reached (down, or out of connections): try again soon."""
    _log.error("database unavailable: %s", error)
    response = problem(
        503, "unavailable", _("the referee cannot reach its database; try again soon")
    )
    response.headers["Retry-After"] = "5"
    return response


def from_anything(error: Exception) -> Response:
    _log.exception("unexpected error", exc_info=error)
    return problem(500, "internal_error", _("the server could not answer this request"))


# The errors operations share, as the OpenAPI document describes them.
NO_GAME = "not_found: no such game"
BAD_TOKEN = (
    "unauthorized: a header that is not `Bearer <token>`, or a token (seat or player) that "
    "is not a seat of this game, or not the seat `?seat=` names"
)
NO_SEAT = "unauthorized: no token, or a seat or player token that is not a seat of this game"
SCOPE = "forbidden: a player token without the scope this needs (`read` to see, `play` to act)"
BAD_QUERY = "bad_request: a query parameter out of range or not declared, or a body (`errors`)"
NOT_JSON = "unsupported_media_type: a body that is not `application/json`"


def declared(
    described: dict[int, str], also: dict[int, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The OpenAPI `responses` of an operation's errors, each problem+json with the Problem schema.

    Pass it to `@blp.doc(**declared({404: "not_found: ..."}))`; `also` adds
    to other responses (such as the links of a success).
    """
    responses: dict[int, dict[str, Any]] = {
        status: {"description": text, "content": {PROBLEM: {"schema": ProblemSchema}}}
        for status, text in described.items()
    }
    return {"responses": responses | (also or {})}
