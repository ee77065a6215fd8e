"""What the schemas of several resources share: strict reading, whole-value patterns,
printable text, a game's result, and the `?seat=` a player token names its seat by."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate


class Strict(Schema):
    class Meta:
        unknown = RAISE


class FullMatch(validate.Regexp):
    """A pattern the whole value must match.

    marshmallow's Regexp uses `re.match`, where `$` also matches before a
    final newline, so "Ann\\n" would pass `^[^\\n]*$`. The pattern is written
    with `^...$` because the OpenAPI document publishes it as an ECMA-262
    regex, which has no `\\Z`; Python checks it with `fullmatch`.
    """

    def __call__(self, value: Any) -> Any:
        if self.regex.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


# No control characters (PostgreSQL refuses NUL in text; a name becomes a mail header's
# display name, where a line break cannot go) in anything stored or looked up.
PRINTABLE = FullMatch(
    r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$", error="control characters are not allowed"
)


class ResultOut(Schema):
    """The end of a game: each seat's score and the winning seats."""

    scores = fields.List(fields.Integer(), required=True)
    winners = fields.List(fields.Integer(), required=True)


# `result` is null while the game runs. Declared as `nullable` beside the
# reference (OpenAPI 3.0's `allOf: [Result], nullable: true`) rather than with
# `allow_none`, which apispec writes as `anyOf` with an untyped object that
# generators then read every result as.
NULL_WHILE_RUNNING = {"nullable": True, "description": "null while the game runs"}


# The highest seat number `?seat=` takes (no game seats so many).
MAX_SEAT = 99


class SeatArgs(Strict):
    """`?seat=N`: which of a player's seats a player token acts as, where it holds several."""

    seat = fields.Integer(
        validate=validate.Range(min=0, max=MAX_SEAT),
        metadata={
            "description": "with a player token, the player's seat to act as, where it "
            "holds several in this game (with a seat token: that token's seat)"
        },
    )
