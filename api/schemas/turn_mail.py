"""The schemas of a player's turn mail settings (`/v1/me/settings`)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from referee import games
from referee.store.tables import TurnMail

_TURN_MAIL = {
    "description": "`each`: a mail per turn; `digest`: one mail at each of `digest_hours` "
    "listing every game where it is your turn (none: no mail); `off`: no turn mail",
}
_HOURS = {
    "description": "hours of your own day, on the clocks of your time zone (`time_zone` of "
    "`/v1/me/profile`, UTC when none is chosen), at which the digest goes out: 1 to 24 "
    "distinct, 0-23. Through daylight-saving changes one digest per chosen hour and local "
    "day: an hour lived twice sends once, an hour skipped sends in the next that exists",
}
_REMINDERS = {"description": "deadline reminders (they come under `digest` and `off` too)"}
_SEEK_NEWS = {
    "description": "games whose new public open games (seeks) you hear of: listed in your "
    "next digest, or with `turn_mail: each` in at most one mail a day (`off`: none)",
}


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
    seek_news = fields.List(
        fields.String(validate=validate.OneOf(games.names())),
        validate=validate.Length(0, len(games.names())),
        metadata=_SEEK_NEWS,
    )


class TurnMailOut(Schema):
    turn_mail = fields.String(required=True, metadata=_TURN_MAIL)
    digest_hours = fields.List(fields.Integer(), required=True, metadata=_HOURS)
    reminders = fields.Boolean(required=True, metadata=_REMINDERS)
    seek_news = fields.List(fields.String(), required=True, metadata=_SEEK_NEWS)
    muted = fields.List(
        fields.String(),
        required=True,
        metadata={
            "description": "the games muted for you alone (read-only here: "
            "`PUT`/`DELETE /v1/me/games/{id}/mute`)"
        },
    )
