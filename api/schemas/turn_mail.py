"""The schemas of a player's turn mail settings (`/v1/me/settings`)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from referee.store.tables import TurnMail

_TURN_MAIL = {
    "description": "`each`: a mail per turn; `digest`: one mail at each of `digest_hours` "
    "listing every game where it is your turn (none: no mail); `off`: no turn mail",
}
_HOURS = {"description": "hours of the day (UTC) of the digest, 1 to 24 distinct, 0-23"}
_REMINDERS = {"description": "deadline reminders (they come under `digest` and `off` too)"}


class TurnMailIn(Schema):
    """Any of the settings; those left out keep their values."""

    turn_mail = fields.String(
        validate=validate.OneOf([kind.value for kind in TurnMail]), metadata=_TURN_MAIL
    )
    digest_hours = fields.List(
        fields.Integer(strict=True, validate=validate.Range(0, 23)),
        validate=validate.Length(1, 24),
        metadata=_HOURS,
    )
    reminders = fields.Boolean(metadata=_REMINDERS)


class TurnMailOut(Schema):
    turn_mail = fields.String(required=True, metadata=_TURN_MAIL)
    digest_hours = fields.List(fields.Integer(), required=True, metadata=_HOURS)
    reminders = fields.Boolean(required=True, metadata=_REMINDERS)
    muted = fields.List(
        fields.String(),
        required=True,
        metadata={
            "description": "the games muted for you alone (read-only here: "
            "`PUT`/`DELETE /v1/me/games/{id}/mute`)"
        },
    )
