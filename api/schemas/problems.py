"""The answer of every error: RFC 9457 problem+json (`api/http/errors.py` writes it)."""

from __future__ import annotations

from marshmallow import Schema, fields

from api.schemas.submissions import SubmissionSchema


class ProblemSchema(Schema):
    """An error, as RFC 9457 `application/problem+json`, with a stable `code`."""

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = fields.String(required=True, metadata={"description": "a stable machine word"})
    reason = fields.String(metadata={"description": "why a move was refused"})
    errors = fields.Dict(metadata={"description": "what is wrong with each field"})
    submission = fields.Nested(SubmissionSchema)
