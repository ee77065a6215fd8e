"""Request and response schemas: the shapes the OpenAPI document is generated from."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from referee.store.tables import TimeoutPolicy


class Strict(Schema):
    class Meta:
        unknown = RAISE


class ProblemSchema(Schema):
    """An error, as RFC 9457 `application/problem+json`, with a stable `code`."""

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = fields.String(required=True, metadata={"description": "a stable machine word"})
    reason = fields.String(metadata={"description": "why a move was refused"})
    errors = fields.Dict(metadata={"description": "what is wrong with each field"})
    submission = fields.Nested(lambda: SubmissionSchema())


# No control characters (PostgreSQL refuses NUL in text) in anything stored or looked up.
PRINTABLE = validate.Regexp(r"^[^\x00-\x1f\x7f]*$", error="control characters are not allowed")


class PlayerIn(Strict):
    name = fields.String(required=True, validate=[validate.Length(min=1, max=100), PRINTABLE])
    email = fields.Email(load_default=None, allow_none=True, validate=validate.Length(max=254))


class NewGameIn(Strict):
    game = fields.String(required=True, validate=validate.Length(min=1, max=40))
    players = fields.List(
        fields.Nested(PlayerIn), required=True, validate=validate.Length(min=1, max=12)
    )
    options = fields.Dict(keys=fields.String(), load_default=dict)
    deadline = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=20),
        metadata={"description": "time per turn, e.g. `72h`, `90m`, `2d` (default: none)"},
    )
    on_timeout = fields.String(
        load_default=TimeoutPolicy.RANDOM.value,
        validate=validate.OneOf([policy.value for policy in TimeoutPolicy]),
        metadata={"description": "what the referee plays for a seat out of time"},
    )


class WebhookIn(Strict):
    url = fields.Url(
        required=True,
        schemes={"http", "https"},
        require_tld=False,
        validate=validate.Length(max=2000),
    )


class WebhookOut(Schema):
    url = fields.String(allow_none=True, required=True)
    secret = fields.String(
        required=True,
        metadata={"description": "the HMAC-SHA256 key deliveries are signed with"},
    )
    signature = fields.String(
        required=True, metadata={"description": "how to check a delivery's signature"}
    )


class SeatTokenOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    # None for a seat with a mail address in a game made without the API key:
    # its personal link goes to that address, not to whoever made the game.
    token = fields.String(required=True, allow_none=True)


class SeatOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)


class ResultOut(Schema):
    scores = fields.List(fields.Integer(), required=True)
    winners = fields.List(fields.Integer(), required=True)


class LinksOut(Schema):
    self = fields.String(required=True)
    state = fields.String(required=True)
    moves = fields.String(required=True)
    log = fields.String(required=True)


class NewGameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    seats = fields.List(fields.Nested(SeatTokenOut), required=True)
    seed_commitment = fields.String(required=True)
    version = fields.Integer(required=True)
    links = fields.Nested(LinksOut, required=True)


class GameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    rules_version = fields.String(required=True)
    options = fields.Dict(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("active", "over")))
    seats = fields.List(fields.Nested(SeatOut), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    version = fields.Integer(required=True)
    deadlines = fields.Dict(required=True, allow_none=True)
    result = fields.Nested(ResultOut, allow_none=True, required=True)
    seed_commitment = fields.String(required=True)
    seed = fields.String(allow_none=True, required=True)
    created_at = fields.String(required=True)
    links = fields.Nested(LinksOut, required=True)


class GameListArgs(Strict):
    status = fields.String(validate=validate.OneOf(("active", "over")))
    game = fields.String(validate=validate.Regexp(r"^[a-z_]{1,40}$"))
    cursor = fields.String(validate=validate.Regexp(r"^[0-9T:.+\-]{1,40}$"))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class GameListItem(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    created_at = fields.String(required=True)


class GameListOut(Schema):
    games = fields.List(fields.Nested(GameListItem), required=True)
    next_cursor = fields.String(allow_none=True, required=True)


class StateArgs(Strict):
    at = fields.Integer(validate=validate.Range(min=0, max=10_000_000))


class EnvelopeOut(Schema):
    game = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("active", "over")))
    to_act = fields.List(fields.Integer(), required=True)
    result = fields.Nested(ResultOut, allow_none=True, required=True)
    state = fields.Dict(required=True)


class LegalMoveOut(Schema):
    move = fields.Dict(required=True)
    notation = fields.String(required=True)


class LegalMovesOut(Schema):
    seat = fields.Integer(required=True)
    version = fields.Integer(required=True)
    complete = fields.Boolean(
        required=True,
        metadata={"description": "false where only the pieces moves are made of are listed"},
    )
    moves = fields.List(fields.Nested(LegalMoveOut), required=True)


class MoveIn(Strict):
    move = fields.Dict(metadata={"description": "the move as JSON, an object with a `type`"})
    notation = fields.String(validate=[validate.Length(min=1, max=400), PRINTABLE])
    expected_version = fields.Integer(validate=validate.Range(min=0, max=10_000_000))


class WaitArgs(Strict):
    wait = fields.Float(validate=validate.Range(min=0, max=30))


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


class LogArgs(Strict):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10_000_000))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class LogEntryOut(Schema):
    seq = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    move = fields.Dict(allow_none=True, required=True)
    notation = fields.String(required=True)
    created_at = fields.String(required=True)
    hash = fields.String(allow_none=True, required=True)


class LogOut(Schema):
    moves = fields.List(fields.Nested(LogEntryOut), required=True)
    next_after = fields.Integer(allow_none=True, required=True)


class VerifyOut(Schema):
    chain_valid = fields.Boolean(required=True)
    replay_matches = fields.Boolean(required=True)
    problems = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    seed_commitment = fields.String(required=True)
    seed = fields.String(allow_none=True, required=True)
    seed_matches = fields.Boolean(allow_none=True, required=True)


class RuleOut(Schema):
    name = fields.String(required=True)
    title = fields.String(required=True)
    rules_version = fields.String(required=True)
    players = fields.List(fields.Integer(), required=True)
    options = fields.Dict(required=True, metadata={"description": "JSON-ish schema of options"})
    defaults = fields.Dict(required=True)
    move_schema = fields.Dict(required=True)
    notation_help = fields.String(required=True)


class RulesOut(Schema):
    games = fields.List(fields.Nested(RuleOut), required=True)
