"""Submitted moves: a move (as JSON or in notation), how long to wait for the decision,
the idempotency key, and the submission the referee answers with."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

from api.schemas.rules import any_move
from api.schemas.shared import PRINTABLE, FullMatch, SeatArgs, Strict

NOTATION = [validate.Length(min=1, max=400), PRINTABLE]
EXPECTED_VERSION = validate.Range(min=0, max=10_000_000)


class MoveIn(Strict):
    """What `POST .../moves` reads; the handler checks that exactly one of the two came.

    The document describes the body as `MoveJsonIn` or `NotationIn` instead,
    which says the same in a shape generators and validators understand.
    """

    move = fields.Dict(metadata={"description": "the move as JSON, an object with a `type`"})
    notation = fields.String(validate=NOTATION)
    expected_version = fields.Integer(validate=EXPECTED_VERSION)


_EXPECTED_DOC = {"description": "refuse the move unless the log then holds exactly this many"}


class MoveJsonIn(Strict):
    """A move as JSON: one of the games' move schemas (`GET /v1/rules`)."""

    move = fields.Raw(required=True, metadata=any_move())
    expected_version = fields.Integer(validate=EXPECTED_VERSION, metadata=_EXPECTED_DOC)


class NotationIn(Strict):
    """A move in the game's notation, read as forgivingly as a mail reply."""

    notation = fields.String(required=True, validate=NOTATION)
    expected_version = fields.Integer(validate=EXPECTED_VERSION, metadata=_EXPECTED_DOC)


class WaitArgs(SeatArgs):
    wait = fields.Float(
        validate=validate.Range(min=0, max=30),
        metadata={"description": "seconds to wait for the decision (0-30)"},
    )


class IdempotencyIn(Schema):
    """The one header a submission reads besides the token (other headers are let be)."""

    class Meta:
        unknown = EXCLUDE

    key = fields.String(
        data_key="Idempotency-Key",
        validate=[validate.Length(min=1, max=200), FullMatch(r"^[\x20-\x7e]*$")],
        metadata={
            "description": "makes a retry safe: the same key from the same seat in the "
            "same game returns the first submission (1-200 printable ASCII characters)"
        },
    )


class SubmissionSchema(Schema):
    id = fields.String(required=True)
    game_id = fields.String(required=True)
    seat = fields.Integer(required=True)
    move = fields.Dict(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(("pending", "accepted", "rejected"))
    )
    code = fields.String(allow_none=True)
    reason = fields.String(allow_none=True)
    seq = fields.Integer(allow_none=True)
    created_at = fields.String(required=True)
    decided_at = fields.String(allow_none=True)


class SubmissionOut(Schema):
    submission = fields.Nested(SubmissionSchema, required=True)
