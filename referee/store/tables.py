"""The tables of the referee, as SQLModel classes.

`move` is append-only: rows are inserted by the worker and never updated or
deleted, and `(game_id, seq)` is unique so two writers can never both log a
move at the same place. `snapshot` is a cache of states after some moves,
and `game.state` of the state at the head: dropping every row of the one and
every value of the other changes no answer, only the time replay takes.
Fields that are derived from the log (`version`, `to_act`, `status`,
`result` on `game`) are written by the worker in the same transaction as the
moves they follow from, so readers never see them disagree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, Index, Table, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from referee import automatic
from referee.store.columns import HexDigest, HexId, Stamp


class GameStatus(StrEnum):
    ACTIVE = "active"
    OVER = "over"


class SubmissionStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Source(StrEnum):
    """Where a submission came from: the REST API (and the game pages), a mail
    reply, the referee itself when a seat's time ran out, or a bot's seat."""

    REST = "rest"
    MAIL = "mail"
    TIMEOUT = "timeout"
    BOT = "bot"


class TimeoutPolicy(StrEnum):
    """What the referee plays for a seat whose time ran out (`game.on_timeout`)."""

    PASS = "pass"
    RANDOM = "random"
    FORFEIT = "forfeit"
    # The `greedy` bot plays the turn; after `BOT_AFTER_TIMEOUTS` in a row the seat is its.
    BOT = "bot"


# Timeouts in a row after which `on_timeout: bot` hands the seat to the bot for good.
BOT_AFTER_TIMEOUTS = 3
# The bot that plays for a seat out of time (`on_timeout: bot`), as records are audited.
TIMEOUT_BOT = automatic.TIMEOUT_BOT


class OutboxKind(StrEnum):
    """What an outbox row tells its seat; each kind has its own mail."""

    INVITATION = "invitation"
    YOUR_TURN = "your_turn"
    REMINDER = "reminder"
    ANSWER = "answer"
    ROUND_OVER = "round_over"
    GAME_OVER = "game_over"
    HELP = "help"
    BOARD = "board"
    REFUSED = "refused"
    # The answer to "rematch" while other seats have yet to accept.
    REMATCH = "rematch"
    # A seat was handed to a bot after timeouts in a row: every seat is told.
    BOT_SEAT = "bot_seat"
    # A player took a bot's seat over (`referee.service.handovers`): the newcomer is
    # told which seat and what happened so far, every other seat who arrived.
    SEAT_TAKEN = "seat_taken"
    ARRIVED = "arrived"
    # A seat's address bounced out (`referee.service.bounces`): the other seats are told.
    UNREACHED = "unreached"
    # A player's one-time sign-in link, and the digest of its games where it is
    # its turn: told to the player's address, carried by one of its seats
    # (`referee.service.players`), and threaded apart from the game.
    SIGN_IN = "sign_in"
    DIGEST = "digest"
    # What a player is told of open games (`referee.service.seek_telling`), told to its
    # address like the two above: a private seek invited it, one it sat at was withdrawn
    # or expired, and (at most daily) the new public seeks of the games it chose.
    SEEK_INVITED = "seek_invited"
    SEEK_WITHDRAWN = "seek_withdrawn"
    SEEK_EXPIRED = "seek_expired"
    SEEK_NEWS = "seek_news"
    # Table talk by mail (`referee.service.talk_mailing`): the answer to a reply whose
    # words were passed on to the other seats (or could not be), and the short mail of
    # the messages a seat has not seen for an hour.
    PASSED_ON = "passed_on"
    MESSAGES = "messages"
    # The benchmark's floor: a row written already sent, never delivered.
    BENCH = "bench"


# Told to a player's address rather than of its seat's game: carried by one of its
# seats, threaded apart from every game (never a game thread's root) and never
# posted to that seat's webhook, which hears of its own game only.
TOLD_TO_PLAYER = frozenset(
    {
        OutboxKind.SIGN_IN,
        OutboxKind.DIGEST,
        OutboxKind.SEEK_INVITED,
        OutboxKind.SEEK_WITHDRAWN,
        OutboxKind.SEEK_EXPIRED,
        OutboxKind.SEEK_NEWS,
    }
)
# Of those, what is told of open games: mailed one by one under `turn_mail: each`,
# listed in the digest under `digest`, not mailed under `off`.
TOLD_OF_SEEKS = frozenset(
    {
        OutboxKind.SEEK_INVITED,
        OutboxKind.SEEK_WITHDRAWN,
        OutboxKind.SEEK_EXPIRED,
        OutboxKind.SEEK_NEWS,
    }
)


class DeliveryStatus(StrEnum):
    """A notice's delivery on one channel: pending (due at `next_attempt_at`), sending
    (claimed by a worker until `lease_until`), sent, skipped (nowhere to go when its
    turn came: the address may not be mailed, the webhook was removed; `error`
    says why), or failed (given up after retries)."""

    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    SKIPPED = "skipped"
    FAILED = "failed"


# The statuses a delivery ends in: nothing more is tried.
DELIVERY_DONE = (DeliveryStatus.SENT, DeliveryStatus.SKIPPED, DeliveryStatus.FAILED)


# What deciding a submission sets: the worker announces these to a waiting request.
DECISION_FIELDS = ("status", "code", "reason", "seq", "decided_at")


# Partial indexes hold the rows of one kind alone (a player's profile counts them):
# SQLite uses one for a query that names its condition's value as a literal.
TIMEOUT_ROWS = text("source = 'timeout'")
# Submissions not decided yet: a few at any time, however many were ever made.
PENDING_ROWS = text("status = 'pending'")
RESIGN_ROWS = text("notation = 'resign'")
# The rated games and seats whose players' totals do not hold them yet.
UNTALLIED_ROWS = text("NOT tallied")
# Finished games whose cached state the trim sweep has not dropped yet.
CACHED_OVER_ROWS = text("status = 'over' AND state IS NOT NULL")
# When a new delivery is due: before any moment a sweep asks about, so at once.
DUE_AT_ONCE = "1970-01-01T00:00:00.000000+00:00"
# Deliveries done with (sent, skipped or given up): the trim sweep drops the old ones.
DONE_ROWS = text("done_at IS NOT NULL")
UNDONE_ROWS = text("status IN ('pending', 'sending')")
# Running games with a turn's clock, and those of them not reminded at their version yet:
# the deadline sweep's (`referee.store.due_games`).
CLOCKED_ROWS = text("status = 'active' AND deadline_seconds IS NOT NULL")
# Running games, and bots' seats: the bot sweep reads those idle for a while.
RUNNING_ROWS = text("status = 'active'")
BOT_ROWS = text("bot IS NOT NULL")
# Finished games the ratings have not taken in yet (`referee.store.rated_games.unrated`).
UNTAKEN_ROWS = text("status = 'over' AND NOT taken_in")
# Players told of their turns in a digest, and those who chose games to hear of new
# open games of: the digest sweep's and the news sweep's.
DIGEST_ROWS = text("turn_mail = 'digest'")
NEWS_ROWS = text("seek_news IS NOT NULL")
UNREMINDED_ROWS = text(
    "status = 'active' AND deadline_seconds IS NOT NULL "
    "AND (reminded_version IS NULL OR reminded_version <> version)"
)


class Game(SQLModel, table=True):
    __table_args__ = (
        # A player's seats reach their games' status and times without reading the rows.
        Index("ix_game_id_status_times", "id", "status", "updated_at", "created_at"),
        # The finished games still holding a cached state: the trim sweep's.
        Index(
            "ix_game_cached_over",
            "updated_at",
            sqlite_where=CACHED_OVER_ROWS,
            postgresql_where=CACHED_OVER_ROWS,
        ),
        # The running games with a deadline by their turn's time and start, and those not
        # reminded yet: the deadline sweep reads the due ones alone.
        Index(
            "ix_game_clock",
            "deadline_seconds",
            "updated_at",
            sqlite_where=CLOCKED_ROWS,
            postgresql_where=CLOCKED_ROWS,
        ),
        Index(
            "ix_game_unreminded",
            "deadline_seconds",
            "updated_at",
            sqlite_where=UNREMINDED_ROWS,
            postgresql_where=UNREMINDED_ROWS,
        ),
        Index(
            "ix_game_running",
            "updated_at",
            sqlite_where=RUNNING_ROWS,
            postgresql_where=RUNNING_ROWS,
        ),
        Index(
            "ix_game_untaken",
            "updated_at",
            "id",
            sqlite_where=UNTAKEN_ROWS,
            postgresql_where=UNTAKEN_ROWS,
        ),
    )

    id: str = Field(sa_type=HexId, primary_key=True)
    name: str = Field(max_length=40, index=True)
    rules_version: str = Field(max_length=20)
    options: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    seed: str = Field(max_length=128)
    seed_commitment: str = Field(max_length=64)
    status: str = Field(max_length=10, index=True)
    version: int = 0
    # The hash of the last logged move (the seed commitment before any).
    head_hash: str = Field(max_length=64)
    to_act: list[int] = Field(sa_column=Column(JSON, nullable=False))
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # The state after `version` moves (`state_to_json`): like `snapshot`, a
    # cache that may be dropped (set to NULL), read and written with the row
    # that deciding locks anyway.
    state: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    created_at: str = Field(max_length=40, index=True)
    updated_at: str = Field(max_length=40)
    # Service options common to every game (not the rules' options): the time
    # a seat has for each turn, and what the referee does when it runs out.
    deadline_seconds: int | None = None
    on_timeout: str | None = Field(default=None, max_length=10)
    # The version whose reminder was sent and whose timeout was applied, so
    # that the sweep does each once per turn.
    reminded_version: int | None = None
    timed_out_version: int | None = None
    # Created with the API key: its seats are mailed without first accepting
    # (games made before this column existed count as trusted).
    trusted: bool = False
    # Seconds each of its bots thinks over a move (`REFEREE_BOT_SECONDS` at its
    # creation), kept so that a bot's move can be worked out again offline.
    bot_seconds: float | None = None
    # How fast the machine that created it thinks (`service/bot_pace.py`), where a
    # seat is a bot's: a bot's budget is `bot_seconds` at this pace.
    bot_pace: float | None = None
    # Whether the ratings have taken it in (it has its `RatedGame`): finished games not
    # taken in yet are found by a partial index, however many were.
    taken_in: bool = Field(default=False, sa_column_kwargs={"server_default": text("false")})
    # The language its mails speak to a seat whose address is no player's with a
    # language of its own (None: English).
    language: str | None = Field(default=None, max_length=8)


class RematchAcceptance(SQLModel, table=True):
    """A seat of a finished game that wants to play it again (`service/rematching.py`)."""

    __tablename__ = "rematch_acceptance"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    accepted_at: str = Field(max_length=40)


class RematchClaim(SQLModel, table=True):
    """The rematch of a finished game that every seat accepted: the new game's id,
    claimed before that game is made, so that only one is ever made."""

    __tablename__ = "rematch_claim"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    rematch_id: str = Field(sa_type=HexId, unique=True)
    claimed_at: str = Field(max_length=40)


class Seat(SQLModel, table=True):
    __table_args__ = (
        UniqueConstraint("game_id", "seat"),
        # A player's seats are found by its address, compared without case.
        Index("ix_seat_address", text("lower(email)")),
        # And those its totals do not hold yet (its games in play, mostly): a profile
        # reads these alone.
        Index(
            "ix_seat_untallied",
            text("lower(email)"),
            sqlite_where=UNTALLIED_ROWS,
            postgresql_where=UNTALLIED_ROWS,
        ),
        Index("ix_seat_bot", "game_id", sqlite_where=BOT_ROWS, postgresql_where=BOT_ROWS),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", index=True)
    seat: int
    name: str = Field(max_length=100)
    email: str | None = Field(default=None, max_length=254)
    token_hash: str = Field(max_length=64)
    webhook_url: str | None = Field(default=None, max_length=2000)
    # The webhook's health: failures in a row, the last one, no delivery
    # before `webhook_retry_at` (backoff), switched off at `webhook_off_at`
    # after too many failures (a PUT switches it on again).
    webhook_failures: int = 0
    webhook_error: str | None = Field(default=None, max_length=300)
    webhook_retry_at: str | None = Field(default=None, max_length=40)
    webhook_off_at: str | None = Field(default=None, max_length=40)
    # Mixed into the signing key: rotating the secret raises it.
    webhook_generation: int = 0
    # The player token that set the webhook, if one did: revoking it drops the webhook.
    webhook_token_id: int | None = Field(default=None, index=True)
    # When a mail carrying the seat's personal link went out (None: not yet).
    linked_at: str | None = Field(default=None, max_length=40)
    # When the seat's game page was last seen open (a page view, or its live stream
    # still connected): a turn it answers there soon after is not mailed too.
    page_seen_at: str | None = Field(default=None, max_length=40)
    # The level of the bot that plays this seat (`referee.bots.levels`), or None: a person.
    bot: str | None = Field(default=None, max_length=20)
    # For a seat handed to a bot after timeouts in a row, the game's version then
    # (None: a bot from the start, or a person).
    bot_since: int | None = None
    # Whether its player's `PlayerTotals` hold its game (finished and tallied).
    tallied: bool = Field(default=False, sa_column_kwargs={"server_default": text("false")})
    # The language its mails are written in, fixed when it was first mailed so that a
    # game's thread keeps one (None: not mailed yet).
    language: str | None = Field(default=None, max_length=8)


class SeatHandover(SQLModel, table=True):
    """A bot's seat a person took over (`referee.service.handovers`): the bot played the
    seat's moves before `from_seq`, the person plays it from there on."""

    __tablename__ = "seat_handover"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    # The bot's level and name, and the address that takes the seat.
    bot: str = Field(max_length=20)
    bot_name: str = Field(max_length=100)
    address: str = Field(max_length=254)
    # The game's version when the person joined; `from_seq` is set once the seat is
    # theirs (the bot plays its turn under way first).
    joined_version: int
    from_seq: int | None = None
    joined_at: str = Field(max_length=40)


class SeekStatus(StrEnum):
    """Where an open game stands: open for players, started (its game made),
    withdrawn by its creator, or expired unstarted."""

    OPEN = "open"
    STARTED = "started"
    WITHDRAWN = "withdrawn"
    EXPIRED = "expired"


class Seek(SQLModel, table=True):
    """An open game a player posted for others to join (`referee.service.seeks`)."""

    __table_args__ = (Index("ix_seek_status_created", "status", "created_at"),)

    id: str = Field(primary_key=True, max_length=32)
    game: str = Field(max_length=40)
    min_players: int
    max_players: int
    options: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    deadline_seconds: int | None = None
    on_timeout: str | None = Field(default=None, max_length=10)
    # Whether its game's result counts for its players' ratings: posted so, and
    # started full (False once bots hold seats).
    rated: bool = True
    # The level of the bots that hold empty seats when the creator starts early.
    bots: str | None = Field(default=None, max_length=20)
    by_address: str = Field(max_length=254, index=True)
    # Only invited players may join (`SeekInvite`).
    private: bool = False
    status: str = Field(default=SeekStatus.OPEN, max_length=10)
    created_at: str = Field(max_length=40)
    expires_at: str = Field(max_length=40)
    ended_at: str | None = Field(default=None, max_length=40)
    game_id: str | None = Field(default=None, sa_type=HexId, index=True)
    # The ratings (as shown, `referee.ratings.shown`) a joining player's must lie within.
    rating_min: int | None = None
    rating_max: int | None = None
    # Seats of its game that bots hold and a player who joins may take over.
    bot_seats_open: int = 0
    # The standing seek that posted it, if one did.
    standing_id: int | None = Field(default=None, index=True)


class Rating(SQLModel, table=True):
    """A player's skill at one game (`referee.ratings`): a projection of the rated games
    it finished, which `referee ratings rebuild` works out again from them."""

    __table_args__ = (Index("ix_rating_game_mu", "game", "mu"),)

    address: str = Field(max_length=254, primary_key=True)
    game: str = Field(max_length=40, primary_key=True)
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    # The `RatedGame.seq` of the last game that moved it.
    last_seq: int


class RatedGame(SQLModel, table=True):
    """A finished game the ratings took in, in the order they did (`seq`): counted when
    it was rated (a rated seek's, persons with public names only, no bot's move)."""

    __tablename__ = "rated_game"
    __table_args__ = (
        Index(
            "ix_rated_game_untallied",
            "seq",
            sqlite_where=UNTALLIED_ROWS,
            postgresql_where=UNTALLIED_ROWS,
        ),
    )
    seq: int | None = Field(default=None, primary_key=True)
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", unique=True)
    game: str = Field(max_length=40)
    counted: bool
    finished_at: str = Field(max_length=40)
    applied_at: str = Field(max_length=40)
    # Whether its players' `PlayerTotals` hold it: every game taken in since they came
    # (migration 0019), and, once the ratings' job has caught up, every game before.
    tallied: bool = Field(default=False, sa_column_kwargs={"server_default": text("false")})


class PlayerTotals(SQLModel, table=True):
    """What a player's finished games add up to, for its profile: the games whose
    `RatedGame` is `tallied`, summed when each was taken in. A projection of the
    finished games like the ratings; a profile adds the games not tallied yet."""

    __tablename__ = "player_totals"
    address: str = Field(max_length=254, primary_key=True)
    games_finished: int = 0
    timeouts: int = 0
    resigned: int = 0
    # Its last moves in them, latest first, as [asked_at, moved_at].
    answers: list[list[str]] = Field(sa_column=Column(JSON, nullable=False))
    # Its last finished games, latest first, as [finished_at, game_id, [seats]].
    recent: list[list[Any]] = Field(sa_column=Column(JSON, nullable=False))


class RatingChange(SQLModel, table=True):
    """What one counted game did to one player's skill: its history, drawn as a chart."""

    __tablename__ = "rating_change"
    __table_args__ = (Index("ix_rating_change_player", "address", "game", "seq"),)

    seq: int = Field(foreign_key="rated_game.seq", primary_key=True)
    address: str = Field(max_length=254, primary_key=True)
    game: str = Field(max_length=40)
    seat: int
    rank: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    at: str = Field(max_length=40)


class SeekPlayer(SQLModel, table=True):
    """A player seated at an open game, in the order they joined."""

    __tablename__ = "seek_player"
    seek_id: str = Field(foreign_key="seek.id", max_length=32, primary_key=True)
    address: str = Field(max_length=254, primary_key=True, index=True)
    joined_at: str = Field(max_length=40)


class SeekInvite(SQLModel, table=True):
    """A player a private seek invites: only they may join it."""

    __tablename__ = "seek_invite"
    seek_id: str = Field(foreign_key="seek.id", max_length=32, primary_key=True)
    address: str = Field(max_length=254, primary_key=True, index=True)


class Block(SQLModel, table=True):
    """A player who does not want to meet another: neither sees nor joins the other's seeks."""

    address: str = Field(max_length=254, primary_key=True)
    blocked: str = Field(max_length=254, primary_key=True, index=True)
    created_at: str = Field(max_length=40)


class StandingSeek(SQLModel, table=True):
    """A kind of game a player wants to be in `count` of at all times: the referee
    posts a seek whenever their running games and open seeks of it fall short."""

    __tablename__ = "standing_seek"
    id: int | None = Field(default=None, primary_key=True)
    address: str = Field(max_length=254, index=True)
    game: str = Field(max_length=40)
    min_players: int
    max_players: int
    options: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    deadline_seconds: int | None = None
    count: int
    created_at: str = Field(max_length=40)


class AddressState(StrEnum):
    """Whether the referee may mail an address: invited (only one invitation,
    asking it to accept), accepted, or stopped (nothing until it accepts again)."""

    INVITED = "invited"
    ACCEPTED = "accepted"
    STOPPED = "stopped"


class Address(SQLModel, table=True):
    """A mail address some seat was given, and what its owner said about our mail.

    The tokens of its accept and unsubscribe links are HMACs of the address
    (`keys.address_token`), kept here so that a link finds its address.
    """

    __table_args__ = (
        Index(
            "ix_address_digest", "address", sqlite_where=DIGEST_ROWS, postgresql_where=DIGEST_ROWS
        ),
        Index("ix_address_news", "address", sqlite_where=NEWS_ROWS, postgresql_where=NEWS_ROWS),
    )

    address: str = Field(primary_key=True, max_length=254)
    state: str = Field(default=AddressState.INVITED, max_length=10)
    accept_token: str = Field(max_length=64, unique=True)
    stop_token: str = Field(max_length=64, unique=True)
    created_at: str = Field(max_length=40)
    # When an invitation asking to accept last went out, and which outbox row
    # sent it (so that retrying that row is not taken for a second invitation).
    invited_at: str | None = Field(default=None, max_length=40)
    invited_row: int | None = None
    accepted_at: str | None = Field(default=None, max_length=40)
    stopped_at: str | None = Field(default=None, max_length=40)
    # The token of its envelope sender (`bounce+<token>@<domain>`, where delivery reports
    # come back: an HMAC of the address, `keys.address_token`); None until first mailed.
    bounce_token: str | None = Field(default=None, max_length=64, unique=True)
    # Hard bounces since its last sign of life, and when they reached
    # `REFEREE_MAIL_BOUNCES`: from then on it is not mailed (`referee.store.bounce_reports`).
    bounces: int = 0
    bounced_at: str | None = Field(default=None, max_length=40)
    # How its player is told of turns (`TurnMail`), at which hours of its day (in
    # `time_zone`) a digest goes out (None: the default hours), and whether deadline
    # reminders come.
    turn_mail: str = Field(default="each", max_length=10)
    digest_hours: list[int] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    reminders: bool = True
    # The local hour whose digest was last written for it, as the stamp of that hour's
    # UTC start (its first, when the clocks go back): each hour once.
    digest_hour: str | None = Field(default=None, max_length=40)
    # When its last sign-in link was mailed (at most one per few minutes).
    sign_in_at: str | None = Field(default=None, max_length=40)
    # The player's public name (`referee.names.public_refusal`), and the same compared
    # without case or width (`referee.names.public_key`), which no two players share.
    public_name: str | None = Field(default=None, max_length=24)
    name_key: str | None = Field(default=None, max_length=100, unique=True, index=True)
    # When the player last signed in or used a token or a page (at most hourly):
    # standing seeks of a player not seen for a while pause.
    seen_at: str | None = Field(default=None, max_length=40)
    # The games whose new public seeks the player hears of, and the last such
    # news written for it (a mail at most daily when it gets no digest).
    seek_news: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    seek_news_at: str | None = Field(default=None, max_length=40)
    # The language its pages and mails speak, and the IANA zone its times are said in
    # (None: not chosen; English and UTC).
    language: str | None = Field(default=None, max_length=8)
    time_zone: str | None = Field(default=None, max_length=64)


class TurnMail(StrEnum):
    """How a player hears that it is its turn: a mail each time, a digest, or not at all."""

    EACH = "each"
    DIGEST = "digest"
    OFF = "off"


class SignIn(SQLModel, table=True):
    """A one-time sign-in link mailed to a player's address (the store keeps its SHA-256)."""

    __tablename__ = "sign_in"
    token_hash: str = Field(primary_key=True, max_length=64)
    address: str = Field(max_length=254, index=True)
    created_at: str = Field(max_length=40)
    expires_at: str = Field(max_length=40)
    used_at: str | None = Field(default=None, max_length=40)


class PlayerSession(SQLModel, table=True):
    """A browser signed in as a player (a cookie's SHA-256); signing out deletes it."""

    __tablename__ = "player_session"
    token_hash: str = Field(primary_key=True, max_length=64)
    address: str = Field(max_length=254, index=True)
    created_at: str = Field(max_length=40)
    expires_at: str = Field(max_length=40)


class PlayerToken(SQLModel, table=True):
    """A player's personal API token: a name, its scopes, kept hashed, revocable."""

    __tablename__ = "player_token"
    id: int | None = Field(default=None, primary_key=True)
    address: str = Field(max_length=254, index=True)
    name: str = Field(max_length=100)
    scopes: list[str] = Field(sa_column=Column(JSON, nullable=False))
    token_hash: str = Field(max_length=64, unique=True)
    created_at: str = Field(max_length=40)
    revoked_at: str | None = Field(default=None, max_length=40)
    last_used_at: str | None = Field(default=None, max_length=40)


class Mute(SQLModel, table=True):
    """A game a player asked not to be mailed about."""

    address: str = Field(primary_key=True, max_length=254)
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    created_at: str = Field(max_length=40)


class Vacation(SQLModel, table=True):
    """A player's time away: its deadlines stand still from `starts_at` to `ends_at`
    (set to the moment it was ended early, when it was)."""

    __table_args__ = (Index("ix_vacation_address_ends", "address", "ends_at"),)

    id: int | None = Field(default=None, primary_key=True)
    address: str = Field(max_length=254)
    starts_at: str = Field(max_length=40)
    ends_at: str = Field(max_length=40)
    created_at: str = Field(max_length=40)


class Move(SQLModel, table=True):
    # The columns in the order that packs a row tightest in PostgreSQL (fixed widths
    # first, largest alignment first): a move is the row a history holds most of.
    __table_args__ = (
        Index(
            "ix_move_resign",
            "game_id",
            "seat",
            sqlite_where=RESIGN_ROWS,
            postgresql_where=RESIGN_ROWS,
        ),
    )

    # A move's place in its game's log is its key: two writers can never both log one
    # at the same place.
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    seat: int
    created_at: str = Field(sa_type=Stamp)
    # The previous hash is not kept: it is the hash of the move before, or the seed's
    # commitment for the first (`referee.store.records`).
    hash: str = Field(sa_type=HexDigest)
    # The move itself is its canonical notation, which parses back to it
    # (`parse(notate(m)) == m`, as records are read): no JSON is kept beside it.
    notation: str = Field(max_length=400)
    # Where the move came from: its submission's source, or `forced`; kept here so that
    # the record needs no submission (the trim sweep drops finished games' ones). A
    # submission names its move by `seq`.
    source: str = Field(max_length=10)


class Submission(SQLModel, table=True):
    __table_args__ = (
        # Its game's submissions are found by this key's first column.
        UniqueConstraint("game_id", "seat", "idempotency_key"),
        # The pending ones alone: the sweep's (a decided one leaves the index).
        Index(
            "ix_submission_pending",
            "created_at",
            sqlite_where=PENDING_ROWS,
            postgresql_where=PENDING_ROWS,
        ),
        Index(
            "ix_submission_timeout",
            "game_id",
            "seat",
            sqlite_where=TIMEOUT_ROWS,
            postgresql_where=TIMEOUT_ROWS,
        ),
    )

    id: str = Field(sa_type=HexId, primary_key=True)
    game_id: str = Field(sa_type=HexId, foreign_key="game.id")
    seat: int
    move: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    expected_version: int | None = None
    idempotency_key: str | None = Field(default=None, max_length=200)
    request_hash: str = Field(sa_type=HexDigest)
    status: str = Field(max_length=10)
    code: str | None = Field(default=None, max_length=40)
    reason: str | None = Field(default=None, max_length=1000)
    seq: int | None = None
    created_at: str = Field(sa_type=Stamp)
    decided_at: str | None = Field(default=None, sa_type=Stamp)
    source: str = Field(default=Source.REST, max_length=10)
    # The version of the game the seat saw when it made this submission.
    seen_version: int | None = None


class TableMessage(SQLModel, table=True):
    """A message a seat wrote to the game's other seats (`referee.service.table_talk`):
    append-only, numbered per game, and apart from the move log. No move, state,
    record or verification ever reads it."""

    __tablename__ = "message"
    # A seat's messages of the last hour are counted at each new one.
    # And the sweep of unseen messages (`referee.service.talk_mailing`) reads the last days'.
    __table_args__ = (
        Index("ix_message_seat_created", "game_id", "seat", "created_at"),
        Index("ix_message_created", "created_at"),
    )

    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seq: int = Field(primary_key=True)
    seat: int
    # As shown (`referee.talk_text.shown`): one to `MESSAGE_LONGEST` characters.
    text: str = Field(max_length=1000)
    # Where it was written: "api", "page" or "mail".
    via: str = Field(max_length=10)
    created_at: str = Field(max_length=40)


class MessageSeen(SQLModel, table=True):
    """The last message of a game that a seat has seen (it never moves backwards)."""

    __tablename__ = "message_seen"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    seen_seq: int


class MessageMute(SQLModel, table=True):
    """A seat that hides another seat's messages from itself, in one game."""

    __tablename__ = "message_mute"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    muted_seat: int = Field(primary_key=True)
    created_at: str = Field(max_length=40)


class SeatNote(SQLModel, table=True):
    """A seat's private note on its game: no one else ever reads it."""

    __tablename__ = "seat_note"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    text: str = Field(max_length=4000)
    updated_at: str = Field(max_length=40)


class MessageMail(SQLModel, table=True):
    """When a seat was last sent the short mail of the messages it had not seen
    (`referee.service.talk_mailing`): at most one per game and seat in 6 hours."""

    __tablename__ = "message_mail"
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    seat: int = Field(primary_key=True)
    sent_at: str = Field(max_length=40)


class Snapshot(SQLModel, table=True):
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    version: int = Field(primary_key=True)
    state: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))


class Verification(SQLModel, table=True):
    """What checking the log gave at one version (a cache: `referee.store.verdicts`)."""

    game_id: str = Field(sa_type=HexId, foreign_key="game.id", primary_key=True)
    version: int = Field(primary_key=True)
    chain_valid: bool
    replay_matches: bool
    problems: list[str] = Field(sa_column=Column(JSON, nullable=False))
    checked_at: str = Field(max_length=40)


class Outbox(SQLModel, table=True):
    """A notice: what one seat is to be told. How it goes out on each channel is
    its `Delivery` rows (`referee.store.notices` writes both)."""

    id: int | None = Field(default=None, primary_key=True)
    game_id: str = Field(sa_type=HexId, foreign_key="game.id", index=True)
    kind: str = Field(max_length=20)
    seat: int | None = None
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: str = Field(sa_type=Stamp, index=True)


class Delivery(SQLModel, table=True):
    """One notice on one channel (`referee.delivery.CHANNELS`), claimed and sent on its
    own: a slow webhook never holds a mail back, and a retry of one channel never
    repeats another that went out."""

    __table_args__ = (
        UniqueConstraint("notice_id", "channel"),
        # The rows still to send alone (a done one leaves the index): the claims'.
        Index(
            "ix_delivery_due",
            "channel",
            "status",
            "next_attempt_at",
            sqlite_where=UNDONE_ROWS,
            postgresql_where=UNDONE_ROWS,
        ),
        Index("ix_delivery_done", "done_at", sqlite_where=DONE_ROWS, postgresql_where=DONE_ROWS),
    )

    id: int | None = Field(default=None, primary_key=True)
    notice_id: int = Field(foreign_key="outbox.id")
    channel: str = Field(max_length=20)
    status: str = Field(default=DeliveryStatus.PENDING, max_length=10)
    attempts: int = 0
    next_attempt_at: str = Field(default=DUE_AT_ONCE, sa_type=Stamp)
    lease_until: str | None = Field(default=None, sa_type=Stamp)
    done_at: str | None = Field(default=None, sa_type=Stamp)
    error: str | None = Field(default=None, max_length=1000)


class Inbound(SQLModel, table=True):
    """A mail reply taken in, by its Message-ID: a second copy does nothing."""

    __table_args__ = (Index("ix_inbound_seat_received", "game_id", "seat", "received_at"),)

    message_key: str = Field(primary_key=True, max_length=64)
    game_id: str | None = Field(default=None, sa_type=HexId)
    seat: int | None = None
    received_at: str = Field(max_length=40)
    outcome: str = Field(max_length=40)
    # The reply's own Message-ID, which the answer to it refers to (threading).
    message_id: str | None = Field(default=None, max_length=250)
    submission_id: str | None = Field(default=None, sa_type=HexId, index=True)
    # Whether the referee answers it (False past the cap on answers, `referee.service.reply_cap`),
    # and on the last answer before the cap, when answers resume.
    answered: bool = False
    quiet_until: str | None = Field(default=None, max_length=40)


class Setting(SQLModel, table=True):
    """Server-wide values kept in the database (the mail secret when none is configured)."""

    key: str = Field(primary_key=True, max_length=40)
    value: str = Field(max_length=200)


def core_table(model: type[SQLModel]) -> Table:
    """A model's table, for Core statements where the ORM's unit of work costs too much."""
    table: Table = model.__table__  # type: ignore[attr-defined]
    return table
