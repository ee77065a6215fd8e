"""What the events of the streams carry as their JSON `data`: a game's (`GET .../events`)
and a player's (`GET /v1/me/events`); each is a component of the document."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.games import EnvelopeOut, Progress
from referee.service.my_events import KINDS

# The components of each event's `data` (registered by create_app).
GAME_EVENT = "GameEvent"
MESSAGE_EVENT = "MessageEvent"
PLAYER_EVENT = "PlayerEvent"


class GameEventOut(Progress):
    """What each event of `GET .../events` carries as its JSON `data`."""

    game_id = fields.String(required=True)
    view = fields.Nested(
        EnvelopeOut, required=True, metadata={"description": "the state as the caller may see it"}
    )


class MessageEventOut(Schema):
    """A message of the game's seats, as `GET .../events` tells it to a seat (never to a
    spectator, nor to a seat that muted its writer)."""

    kind = fields.String(required=True, validate=validate.OneOf(["message"]))
    game_id = fields.String(required=True)
    seq = fields.Integer(required=True, metadata={"description": "its number in the game"})
    seat = fields.Integer(required=True, metadata={"description": "the seat that wrote it"})
    name = fields.String(required=True, metadata={"description": "that seat's name, as shown"})
    text = fields.String(required=True, metadata={"description": "plain text, as shown"})
    created_at = fields.String(required=True)


class PlayerEventOut(Schema):
    """What each event of `GET /v1/me/events` carries as its JSON `data`: a game's change
    (`game_id` to `result`), or what an open game told me (`seek_id`, `game`, `game_id`,
    `by`, `seated`)."""

    game_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "the game; for a seek's event, the game it started (else null)"},
    )
    game = fields.String(required=True, metadata={"description": "the game's name (`mandala`)"})
    kind = fields.String(
        required=True,
        validate=validate.OneOf(KINDS),
        metadata={
            "description": "started: a new game of mine (invited: one that asks me to accept "
            "the referee's mail first); ended; your_turn: one of my seats must act; "
            "changed: anything else. Of an open game (seek): seek_invited: a private one "
            "invites me; seek_started: one I sit at started (`game_id`); seek_withdrawn: "
            "its creator withdrew one I sit at; seek_expired: one I sit at expired. "
            "message: a message my seat may read in one of my games (the latest)"
        },
    )
    version = fields.Integer(metadata={"description": "a game's event only"})
    status = fields.String(
        validate=validate.OneOf(["active", "over"]),
        metadata={"description": "a game's event only"},
    )
    to_act = fields.List(fields.Integer(), metadata={"description": "a game's event only"})
    my_turn = fields.Boolean(metadata={"description": "a game's event only"})
    result = fields.Dict(allow_none=True, metadata={"description": "a game's event only"})
    seek_id = fields.String(metadata={"description": "a seek's event only: the open game"})
    by = fields.String(
        metadata={"description": "a seek's event only: the public name of who posted it"}
    )
    seated = fields.List(
        fields.String(),
        metadata={"description": "a seek's event only: the public names of those seated"},
    )
    my_seat = fields.Integer(metadata={"description": "a message's event only: my seat"})
    seq = fields.Integer(metadata={"description": "a message's event only: its number"})
    seat = fields.Integer(metadata={"description": "a message's event only: who wrote it"})
    name = fields.String(metadata={"description": "a message's event only: the writer's name"})
    text = fields.String(metadata={"description": "a message's event only: plain text"})
    created_at = fields.String(metadata={"description": "a message's event only"})
    unread = fields.Integer(
        metadata={
            "description": "a message's event only: the others' messages my seat has not "
            "seen (read with `GET /v1/games/{id}/messages` or on the game page)"
        }
    )
