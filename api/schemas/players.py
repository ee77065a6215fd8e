"""The shapes of a player's profile (`/v1/players/{name}`) and a game's players by rating
(`/v1/ratings/{game}`): public names and figures, never addresses."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.shared import FullMatch, Strict
from referee.service.leaderboards import CURSOR_FORM, PAGE, PAGE_MOST

_PROVISIONAL = "true while the rating is not settled (its deviation above 110)"


class GameRatingOut(Schema):
    rating = fields.Integer(required=True, metadata={"description": "1500 for a newcomer"})
    deviation = fields.Integer(
        required=True, metadata={"description": "how unsure the rating is (350 for a newcomer)"}
    )
    games = fields.Integer(required=True, metadata={"description": "rated games finished"})
    wins = fields.Integer(required=True, metadata={"description": "of those, won or shared"})
    provisional = fields.Boolean(required=True, metadata={"description": _PROVISIONAL})


class StatsOut(Schema):
    games_finished = fields.Integer(required=True)
    games_active = fields.Integer(required=True)
    timeouts = fields.Integer(
        required=True, metadata={"description": "moves the referee played when time ran out"}
    )
    resigned = fields.Integer(
        required=True, metadata={"description": "games the player resigned itself"}
    )
    median_response_hours = fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "the median time from a turn being asked to the move, over the "
            "last 100 moves (null before any)"
        },
    )


class RecentOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    result = fields.String(
        required=True,
        validate=validate.OneOf(("won", "lost", "draw")),
        metadata={"description": "how it went for the player (`draw`: a win shared)"},
    )
    place = fields.Integer(required=True, metadata={"description": "1 is first; ties share"})
    players = fields.Integer(required=True)
    finished_at = fields.String(required=True)


class PlayerOut(Schema):
    name = fields.String(required=True)
    since = fields.String(
        required=True, metadata={"description": "when the player first came to this referee"}
    )
    ratings = fields.Dict(
        keys=fields.String(),
        values=fields.Nested(GameRatingOut),
        required=True,
        metadata={"description": "by game, those the player was rated in"},
    )
    stats = fields.Nested(StatsOut, required=True)
    recent = fields.List(
        fields.Nested(RecentOut),
        required=True,
        metadata={"description": "the last finished games, the latest first"},
    )


class LeaderboardArgs(Strict):
    cursor = fields.String(
        validate=[validate.Length(min=3, max=400), FullMatch(CURSOR_FORM)],
        metadata={
            "description": "the `next_cursor` of the page before: an estimate, `:`, a name "
            "key; any of this form starts the page after that place"
        },
    )
    limit = fields.Integer(load_default=PAGE, validate=validate.Range(min=1, max=PAGE_MOST))


class RankedOut(Schema):
    place = fields.Integer(
        required=True, metadata={"description": "1 is the highest; equal ratings share"}
    )
    name = fields.String(required=True)
    rating = fields.Integer(required=True)
    deviation = fields.Integer(required=True)
    games = fields.Integer(required=True)
    wins = fields.Integer(required=True)
    provisional = fields.Boolean(required=True, metadata={"description": _PROVISIONAL})


class LeaderboardOut(Schema):
    game = fields.String(required=True)
    players = fields.List(fields.Nested(RankedOut), required=True)
    next_cursor = fields.String(
        required=True, allow_none=True, metadata={"description": "null on the last page"}
    )
