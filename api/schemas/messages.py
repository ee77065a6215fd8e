"""Table talk's bodies: a message, the list of a game's messages, a seat's mutes and note."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.shared import SeatArgs, Strict
from referee.talk_text import MESSAGE_LONGEST, NOTE_LONGEST, SENT_LONGEST


class MessageIn(Strict):
    text = fields.String(
        required=True,
        validate=validate.Length(min=1, max=SENT_LONGEST),
        metadata={
            "description": f"plain text, 1 to {MESSAGE_LONGEST} characters once trimmed and "
            "without invisible or direction-changing characters (`bad_message` otherwise); "
            "lines break at `\\n`"
        },
    )


class MessagesArgs(SeatArgs):
    after = fields.Integer(
        validate=validate.Range(min=0, max=1_000_000_000),
        metadata={"description": "the messages after this number (0: from the first)"},
    )


class MessageOut(Schema):
    seq = fields.Integer(required=True, metadata={"description": "its number in the game, from 1"})
    seat = fields.Integer(required=True, metadata={"description": "the seat that wrote it"})
    name = fields.String(required=True, metadata={"description": "that seat's name, as shown"})
    text = fields.String(required=True, metadata={"description": "plain text, as shown"})
    created_at = fields.String(required=True)


class MessagesOut(Schema):
    messages = fields.List(
        fields.Nested(MessageOut),
        required=True,
        metadata={
            "description": "oldest first, at most 200 (ask again with `after`), none of the "
            "seats the caller muted"
        },
    )
    muted = fields.List(
        fields.Integer(), required=True, metadata={"description": "the seats the caller muted"}
    )


class MutesOut(Schema):
    muted = fields.List(
        fields.Integer(), required=True, metadata={"description": "the seats the caller muted"}
    )


class NoteIn(Strict):
    text = fields.String(
        required=True,
        validate=validate.Length(max=SENT_LONGEST),
        metadata={
            "description": f"plain text, at most {NOTE_LONGEST} characters once trimmed; "
            "empty deletes the note"
        },
    )


class NoteOut(Schema):
    text = fields.String(required=True, metadata={"description": "empty: no note"})
    updated_at = fields.String(required=True, allow_none=True)
