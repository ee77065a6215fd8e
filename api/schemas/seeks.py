"""The shapes of open games (`/v1/seeks`), public names and blocks (`/v1/me/...`)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.games import GameTermsIn
from api.schemas.shared import PRINTABLE, Strict
from referee import games
from referee.i18n import LANGUAGES
from referee.names import PUBLIC_LONGEST, PUBLIC_NAME_FORM, PUBLIC_SHORTEST
from referee.service.seeks import LIST_MOST, MOST_INVITED, RATING_HIGHEST, RATING_LOWEST
from referee.service.standing_seeks import MOST_COUNT


def _text(value: str) -> None:
    """Printable text: the public-name rule itself is the service's (`bad_request`)."""
    PRINTABLE(value)


def _public_name(description: str, required: bool = True) -> fields.String:
    return fields.String(
        required=required,
        validate=[validate.Length(min=1, max=100), _text],
        metadata={"pattern": PUBLIC_NAME_FORM, "description": description},
    )


class ProfileIn(Strict):
    """What to change of my profile: any of its fields; those not given stay."""

    name = _public_name(
        f"{PUBLIC_SHORTEST} to {PUBLIC_LONGEST} letters, digits, marks, spaces and - ' _ "
        "(one letter or digit at least, one space between words), unique on the server "
        "without regard to case or width (the pattern shows those of the Basic "
        "Multilingual Plane: other scripts are taken too)",
        required=False,
    )
    language = fields.String(
        validate=validate.OneOf(LANGUAGES),
        metadata={"description": "the language of my pages and mail"},
    )
    time_zone = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "an IANA time zone (`Europe/Paris`): every time shown to me is "
            "in it, and my digest hours are hours of its day",
            "pattern": r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$",
        },
    )


class ProfileOut(Schema):
    name = fields.String(
        required=True, allow_none=True, metadata={"description": "null until chosen"}
    )
    language = fields.String(
        required=True, metadata={"enum": list(LANGUAGES), "description": "default `en`"}
    )
    time_zone = fields.String(required=True, metadata={"description": "default `UTC`"})


class BlocksOut(Schema):
    blocks = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "the public names of the players I block"},
    )


class PlayerCountIn(Strict):
    min = fields.Integer(validate=validate.Range(min=1, max=12))
    max = fields.Integer(validate=validate.Range(min=1, max=12))


class RatingRangeIn(Strict):
    min = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=RATING_LOWEST, max=RATING_HIGHEST),
    )
    max = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=RATING_LOWEST, max=RATING_HIGHEST),
    )


class NewSeekIn(GameTermsIn):
    players = fields.Nested(
        PlayerCountIn,
        load_default=dict,
        metadata={
            "description": "how many play: `min` to `max` (one given: both; none: the "
            "game's smallest count)"
        },
    )
    rated = fields.Boolean(load_default=True)
    bots = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=20),
        metadata={
            "description": "a bot level (GET /v1/rules): the creator may start at once, "
            "bots holding the empty seats until players join (the game is then not rated)"
        },
    )
    invite = fields.List(
        _public_name("a player's public name"),
        load_default=list,
        validate=validate.Length(max=MOST_INVITED),
        metadata={"description": "public names: only these players may join (a private seek)"},
    )
    rating = fields.Nested(
        RatingRangeIn,
        load_default=dict,
        metadata={
            "description": "the ratings at this game a joining player's must lie within "
            "(either bound optional; an unrated player counts as 1500); the creator is "
            "not checked"
        },
    )


class PlayersOut(Schema):
    min = fields.Integer(required=True)
    max = fields.Integer(required=True)


class SeatedOut(Schema):
    name = fields.String(required=True)
    rating = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "the player's rating at the seek's game (null: not rated yet)"},
    )
    provisional = fields.Boolean(
        required=True,
        metadata={"description": "true while the rating is not settled (and when there is none)"},
    )


class RatingRangeOut(Schema):
    min = fields.Integer(required=True, allow_none=True)
    max = fields.Integer(required=True, allow_none=True)


class SeekOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    players = fields.Nested(PlayersOut, required=True)
    options = fields.Dict(required=True)
    deadline = fields.String(
        required=True, allow_none=True, metadata={"description": "time per turn (`172800s`)"}
    )
    on_timeout = fields.String(required=True, allow_none=True)
    rated = fields.Boolean(required=True)
    bots = fields.String(required=True, allow_none=True)
    by = fields.Nested(SeatedOut, required=True, metadata={"description": "who posted it"})
    seated = fields.List(
        fields.Nested(SeatedOut),
        required=True,
        metadata={"description": "in the order they joined"},
    )
    rating = fields.Nested(
        RatingRangeOut,
        required=True,
        metadata={"description": "the ratings a joining player's must lie within (null: no bound)"},
    )
    status = fields.String(
        required=True, validate=validate.OneOf(("open", "started", "withdrawn", "expired"))
    )
    private = fields.Boolean(required=True)
    invited = fields.List(
        fields.String(),
        required=True,
        metadata={"description": "a private seek's invited players (shown to its creator)"},
    )
    open_seats = fields.Integer(
        required=True,
        metadata={"description": "seats a player may still join (bots hold them once started)"},
    )
    game_id = fields.String(
        required=True, allow_none=True, metadata={"description": "once started"}
    )
    link = fields.String(required=True, metadata={"description": "the seek's page: share it"})
    created_at = fields.String(required=True)
    expires_at = fields.String(required=True)


class SeekListArgs(Strict):
    game = fields.String(
        validate=validate.Length(min=1, max=40),
        metadata={"enum": sorted({game.name for game in games.all_games()})},
    )
    cursor = fields.String(
        validate=[validate.Length(min=1, max=40), PRINTABLE],
        metadata={"description": "the `next_cursor` of the page before"},
    )
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=LIST_MOST))


class SeekListOut(Schema):
    seeks = fields.List(fields.Nested(SeekOut), required=True)
    next_cursor = fields.String(
        required=True, allow_none=True, metadata={"description": "null on the last page"}
    )


class StandingSeekIn(GameTermsIn):
    """A standing seek: the terms of the open games to post, and how many to keep going."""

    class Meta(Strict.Meta):
        # Its seeks take the default timeout policy; a seek posted by hand may choose.
        exclude = ("on_timeout",)

    players = fields.Nested(
        PlayerCountIn,
        load_default=dict,
        metadata={"description": "how many play, as for POST /v1/seeks"},
    )
    count = fields.Integer(
        required=True,
        validate=validate.Range(min=1, max=MOST_COUNT),
        metadata={"description": "the games of this kind to keep me in: open or in play"},
    )


class StandingSeekOut(Schema):
    game = fields.String(required=True)
    players = fields.Nested(PlayersOut, required=True)
    options = fields.Dict(required=True)
    deadline = fields.String(required=True, allow_none=True)
    count = fields.Integer(required=True)
