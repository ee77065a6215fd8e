"""The shapes of `/v1/me/...`: a player's games and its personal tokens."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.shared import NULL_WHILE_RUNNING, PRINTABLE, FullMatch, ResultOut, Strict
from referee.service.my_games import MAX_PAGE
from referee.service.players import SCOPES
from referee.service.tokens import MAX_NAME


class MeOut(Schema):
    email = fields.String(required=True, metadata={"description": "the player's address"})


class MyGamesArgs(Strict):
    status = fields.String(validate=validate.OneOf(("active", "over")))
    to_act = fields.String(
        validate=validate.OneOf(("me",)),
        metadata={"description": "`me`: only the games where one of my seats must act now"},
    )
    cursor = fields.String(
        validate=FullMatch(r"^[0-9]{1,9}$"),
        metadata={"description": "the `next_cursor` of the page before"},
    )
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))


class MySeatOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    me = fields.Boolean(required=True, metadata={"description": "whether I hold this seat"})


class MyGameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("active", "over")))
    seats = fields.List(fields.Nested(MySeatOut), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    my_turn = fields.Boolean(
        required=True, metadata={"description": "whether one of my seats must act now"}
    )
    deadline = fields.DateTime(
        required=True,
        allow_none=True,
        metadata={"description": "when the seats to act run out of time (null: no deadline)"},
    )
    version = fields.Integer(required=True)
    updated_at = fields.String(required=True)
    result = fields.Nested(ResultOut, required=True, metadata=NULL_WHILE_RUNNING)


class MyGamesOut(Schema):
    games = fields.List(fields.Nested(MyGameOut), required=True)
    next_cursor = fields.String(
        required=True, allow_none=True, metadata={"description": "null on the last page"}
    )


class NewTokenIn(Strict):
    name = fields.String(
        required=True,
        validate=[validate.Length(min=1, max=MAX_NAME), PRINTABLE],
        metadata={"description": "what the token is for, to tell it from the others"},
    )
    scopes = fields.List(
        fields.String(validate=validate.OneOf(SCOPES)),
        required=True,
        validate=validate.Length(min=1, max=len(SCOPES)),
        metadata={"description": "`read` (see my games as my seats), `play` (act in them)"},
    )


class TokenOut(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    scopes = fields.List(fields.String(validate=validate.OneOf(SCOPES)), required=True)
    created_at = fields.String(required=True)
    last_used_at = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "its last use, to the minute (null: never used)"},
    )


class TokensOut(Schema):
    tokens = fields.List(fields.Nested(TokenOut), required=True)


class TokenMadeOut(TokenOut):
    token = fields.String(
        required=True,
        metadata={"description": "the secret (`rp_...`), shown this once: keep it safe"},
    )
