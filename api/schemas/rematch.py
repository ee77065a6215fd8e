"""A rematch: the seats that accepted and those yet to, and the new game once all have."""

from __future__ import annotations

from marshmallow import Schema, fields


class RematchOut(Schema):
    seats = fields.Integer(required=True, metadata={"description": "the seats of the game"})
    accepted = fields.List(
        fields.Integer(), required=True, metadata={"description": "the seats that accepted"}
    )
    waiting_for = fields.List(
        fields.Integer(), required=True, metadata={"description": "the seats yet to accept"}
    )
    game_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "the new game, once every seat accepted"},
    )


class RematchAcceptedOut(RematchOut):
    token = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "the caller's seat token in the new game, once it started "
            "(the same seat number as in this one); null for a player token, which acts "
            "in the new game as the player's seat as it does here"
        },
    )
