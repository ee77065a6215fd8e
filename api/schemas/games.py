"""Games: a new game and its players, a game, the list of games, its state, legal moves
and log, and its verification."""

from __future__ import annotations

from email.errors import HeaderParseError
from email.headerregistry import Address
from typing import Any

from email_validator import EmailNotValidError, validate_email
from marshmallow import Schema, ValidationError, fields, validate

from api.schemas.shared import NULL_WHILE_RUNNING, PRINTABLE, FullMatch, ResultOut, SeatArgs, Strict
from referee import games, names
from referee.i18n import LANGUAGES, SOURCE_LANGUAGE
from referee.store.tables import TimeoutPolicy


def player_name(value: str) -> str:
    """A name the others may be shown: printable (`PRINTABLE`), with nothing
    that turns text around or hides, and something visible (`names.refusal`)."""
    PRINTABLE(value)
    why = names.refusal(value)
    if why is not None:
        raise ValidationError(why)
    return value


class MailAddress(fields.String):
    """An address the outbox can mail: ASCII before the @, a domain with a dot (IDN as punycode).

    Marshmallow's own Email field takes quoted local parts with control
    characters (`"a\\x0bb"@example.org`) that no SMTP server takes. The
    address is checked by email-validator (syntax only, no DNS), kept in
    its ASCII form, and must come back unchanged from the email package,
    which builds the To header, and so from smtplib, which reads it there.
    """

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > 254:
            raise ValidationError("a mail address is at most 254 characters long")
        try:
            # test_environment lets the reserved `.test` domain through (tests mail it).
            valid = validate_email(
                text, check_deliverability=False, allow_smtputf8=False, test_environment=True
            )
            address = valid.ascii_email
            if address is None or Address(addr_spec=address).addr_spec != address:
                raise ValidationError("this mail address cannot be mailed")
        except (EmailNotValidError, HeaderParseError, ValueError) as error:
            raise ValidationError(f"not a mail address the referee can send to: {error}") from None
        return address


# Documented forms, each a part of what the server reads: a plain ASCII mail
# address (the server takes any address it can send to, but none under a
# special-use name such as .local, .invalid or .onion), and a deadline as a
# whole number and a unit within 1 minute and 366 days (the server also reads
# decimals, a space before the unit and capitals).
MAIL_ADDRESS_FORM = (
    r"^[A-Za-z0-9]{1,20}([._+-][A-Za-z0-9]{1,20}){0,2}"
    r"@([A-Za-z0-9]{1,20}(-[A-Za-z0-9]{1,20}){0,2}\.){1,3}[A-Za-z]{2,24}$"
)
DEADLINE_FORM = (
    r"^(([6-9][0-9]|[1-9][0-9]{2,5})s|[1-9][0-9]{0,4}m|[1-9][0-9]{0,2}h?"
    r"|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$"
)


class PlayerIn(Strict):
    name = fields.String(
        required=True,
        validate=[validate.Length(min=1, max=100), player_name],
        metadata={
            "pattern": names.NAME_FORM,
            "description": "shown to the other players; no control, invisible or "
            "direction-changing characters, and something visible (the pattern shows a "
            "part of what is taken: other scripts and emoji are taken too)",
        },
    )
    email = MailAddress(
        load_default=None,
        allow_none=True,
        metadata={
            "format": "email",
            "pattern": MAIL_ADDRESS_FORM,
            "maxLength": 254,
            "description": "where the seat is invited and plays by mail (none: no mail); "
            "not under a special-use name such as .local, .invalid, .localhost, .onion, .arpa",
        },
    )
    bot = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=20),
        metadata={
            "description": "a bot plays this seat, at this level: one of the game's `bots` "
            "(GET /v1/rules); such a seat has no `email` and its token is never given. "
            "A game needs one person at least unless made with the API key"
        },
    )


class GameTermsIn(Strict):
    """What a new game and an open game both say: which game, its options and clock."""

    # The enum is documented, not validated here, so that an unknown game keeps its own
    # code (`unknown_game`) rather than a schema error.
    game = fields.String(
        required=True,
        validate=validate.Length(min=1, max=40),
        metadata={
            "enum": sorted({game.name for game in games.all_games()}),
            "description": "a registered game (see GET /v1/rules)",
        },
    )
    options = fields.Dict(keys=fields.String(), load_default=dict)
    deadline = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(min=1, max=20),
        metadata={
            "description": "time per turn, from 1 minute to 366 days: `72h`, `90m`, `2d`, "
            "`600s` or a number of hours (default: none)",
            "pattern": DEADLINE_FORM,
        },
    )
    on_timeout = fields.String(
        load_default=TimeoutPolicy.RANDOM.value,
        validate=validate.OneOf([policy.value for policy in TimeoutPolicy]),
        metadata={"description": "what the referee plays for a seat out of time"},
    )


class NewGameIn(GameTermsIn):
    players = fields.List(
        fields.Nested(PlayerIn), required=True, validate=validate.Length(min=1, max=12)
    )
    language = fields.String(
        load_default=SOURCE_LANGUAGE,
        validate=validate.OneOf(LANGUAGES),
        metadata={
            "description": "the language of the game's mail to a seat whose player has not "
            "chosen one (default `en`)"
        },
    )


BOT_LEVEL = "the level of the bot that plays this seat; null for a person"


class SeatTokenOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    # None for a seat with a mail address in a game made without the API key:
    # its personal link goes to that address, not to whoever made the game;
    # and for a bot's seat, which only its bot plays.
    token = fields.String(required=True, allow_none=True)
    bot = fields.String(required=True, allow_none=True, metadata={"description": BOT_LEVEL})


class SeatOut(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    bot = fields.String(required=True, allow_none=True, metadata={"description": BOT_LEVEL})
    bot_after_timeouts = fields.Boolean(
        required=True,
        metadata={
            "description": "The seat was its player's until it ran out of time three turns in "
            "a row (`on_timeout: bot`); the `greedy` bot has played it since"
        },
    )
    unreachable = fields.Boolean(
        required=True,
        metadata={
            "description": "The seat has a mail address the referee no longer reaches (its "
            "mail bounced): it is not mailed, and its turns run out on the game's deadline."
        },
    )
    away_until = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "While the seat's player is on vacation, when it is back (its "
            "turns' clocks stand still until then); null otherwise"
        },
    )


class LinksOut(Schema):
    self = fields.String(required=True)
    state = fields.String(required=True)
    moves = fields.String(required=True)
    log = fields.String(required=True)


class NewGameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    seats = fields.List(fields.Nested(SeatTokenOut), required=True)
    seed_commitment = fields.String(required=True)
    version = fields.Integer(required=True)
    links = fields.Nested(LinksOut, required=True)


class GameOut(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    rules_version = fields.String(required=True)
    options = fields.Dict(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("active", "over")))
    seats = fields.List(fields.Nested(SeatOut), required=True)
    to_act = fields.List(fields.Integer(), required=True)
    version = fields.Integer(required=True)
    deadlines = fields.Dict(required=True, allow_none=True)
    result = fields.Nested(ResultOut, required=True, metadata=NULL_WHILE_RUNNING)
    seed_commitment = fields.String(required=True)
    seed = fields.String(allow_none=True, required=True)
    created_at = fields.String(required=True)
    links = fields.Nested(LinksOut, required=True)


class GameListArgs(Strict):
    status = fields.String(validate=validate.OneOf(("active", "over")))
    game = fields.String(validate=FullMatch(r"^[a-z_]{1,40}$"))
    cursor = fields.String(validate=FullMatch(r"^[0-9T:.+\-]{1,40}$"))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class GameListItem(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True)
    version = fields.Integer(required=True)
    created_at = fields.String(required=True)


class GameListOut(Schema):
    games = fields.List(fields.Nested(GameListItem), required=True)
    next_cursor = fields.String(allow_none=True, required=True)


class StateArgs(SeatArgs):
    at = fields.Integer(validate=validate.Range(min=0, max=10_000_000))


class Progress(Schema):
    """Where a game stands at one version: the fields a state and an event share."""

    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("active", "over")))
    to_act = fields.List(fields.Integer(), required=True)
    result = fields.Nested(ResultOut, required=True, metadata=NULL_WHILE_RUNNING)


class EnvelopeOut(Progress):
    game = fields.String(required=True)
    state = fields.Dict(required=True)


class LegalMoveOut(Schema):
    move = fields.Dict(required=True)
    notation = fields.String(required=True)


class LegalMovesOut(Schema):
    seat = fields.Integer(required=True)
    version = fields.Integer(required=True)
    complete = fields.Boolean(
        required=True,
        metadata={"description": "false where only the pieces moves are made of are listed"},
    )
    moves = fields.List(fields.Nested(LegalMoveOut), required=True)


class LogArgs(Strict):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10_000_000))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class LogEntryOut(Schema):
    seq = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    move = fields.Dict(allow_none=True, required=True)
    notation = fields.String(required=True)
    created_at = fields.String(required=True)
    hash = fields.String(allow_none=True, required=True)


class LogOut(Schema):
    moves = fields.List(fields.Nested(LogEntryOut), required=True)
    next_after = fields.Integer(allow_none=True, required=True)


class HandoverOut(Schema):
    seat = fields.Integer(required=True)
    bot = fields.String(required=True, metadata={"description": "the level of the bot"})
    from_seq = fields.Integer(
        required=True,
        metadata={"description": "the seat's moves before this one were the bot's"},
    )
    name = fields.String(required=True, metadata={"description": "who plays the seat now"})


class VerifyOut(Schema):
    chain_valid = fields.Boolean(required=True)
    replay_matches = fields.Boolean(required=True)
    problems = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    seed_commitment = fields.String(required=True)
    seed = fields.String(allow_none=True, required=True)
    seed_matches = fields.Boolean(allow_none=True, required=True)
    handovers = fields.List(
        fields.Nested(HandoverOut),
        required=True,
        metadata={"description": "the seats people took over from bots, by seat"},
    )
