"""What the events of the streams carry as their JSON `data`: a game's (`GET .../events`)
and a player's (`GET /v1/me/events`); each is a component of the document."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.games import EnvelopeOut, Progress
from referee.service.my_events import KINDS

# The components of each event's `data` (registered by create_app).
GAME_EVENT = "GameEvent"
PLAYER_EVENT = "PlayerEvent"


class GameEventOut(Progress):
    """What each event of `GET .../events` carries as its JSON `data`."""

    game_id = fields.String(required=True)
    view = fields.Nested(
        EnvelopeOut, required=True, metadata={"description": "the state as the caller may see it"}
    )


class PlayerEventOut(Schema):
    """What each event of `GET /v1/me/events` carries as its JSON `data`."""

    game_id = fields.String(required=True)
    game = fields.String(required=True, metadata={"description": "the game's name (`mandala`)"})
    kind = fields.String(
        required=True,
        validate=validate.OneOf(KINDS),
        metadata={
            "description": "started: a new game of mine (invited: one that asks me to accept "
            "the referee's mail first); ended; your_turn: one of my seats must act; "
            "changed: anything else"
        },
    )
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "over"]))
    to_act = fields.List(fields.Integer(), required=True)
    my_turn = fields.Boolean(required=True)
    result = fields.Dict(required=True, allow_none=True)
