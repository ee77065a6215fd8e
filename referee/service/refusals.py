"""The refusals of the use cases: one class per kind, each with its stable `code`.

Whichever path meets a refusal (a REST request, a game page, a mail reply,
the worker deciding a move recorded earlier), it is raised as the same
class with the same words, so a player reads one sentence for one cause.
The entry points translate a refusal into their own output: `api/http/errors.py`
keeps the one table of HTTP statuses and problem titles, mail answers quote
`reason`. Refusals never mention hidden information.

A refusal answered at once (a request, a reply being answered) is worded in
the language spoken there (`referee.i18n._`). One the worker records with a
move (`Submission.reason`: not your turn, the game over, a stale version) is
kept in English, its template registered with the rules' reasons, so that
pages, mail and problem details say it in their reader's language
(`referee.games.reasons.reason_words`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from referee.engine import IllegalMove
from referee.games.reasons import GAME_OVER, NOT_YOUR_TURN, reason
from referee.i18n import N_, _

# What the worker deciding a move records (`Submission.reason`), kept in English
# and said in the reader's language when shown (`reasons.reason_words`).
STALE_EXPECTED = reason(
    N_("the game is at version {version}, not {expected}: look again and resubmit")
)
STALE_MOVED_ON = reason(
    N_(
        "the game moved on since version {seen}, which your move answered "
        "(it is at version {version} now): look again and resubmit"
    )
)
MOVE_REFUSED = reason(N_("the move was refused"))


class Refusal(Exception):
    """A use case refused what it was asked; `reason` is written for the person asking."""

    code: ClassVar[str]

    def __init__(self, reason: str, **extra: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        # More for the answer (`errors` per field, the refused `submission`).
        self.extra = extra


class MoveRefusal(Refusal):
    """A refusal of a move: its answers also carry `reason` (and, once decided, the submission)."""


class NotFound(Refusal):
    """No such game, submission or move number."""

    code = "not_found"

    @classmethod
    def game(cls) -> NotFound:
        return cls(_("there is no game with this id"))


class Unauthorized(Refusal):
    """The caller is not who the operation needs (a seat of this game, the API key)."""

    code = "unauthorized"


class Forbidden(Refusal):
    """The caller is known, but its credential does not allow this (a player token's scopes)."""

    code = "forbidden"


class SignInLinkNotValid(Refusal):
    """A sign-in link that signs in no one: spent, expired or forged, which it never says."""

    code = "sign_in_link_not_valid"


class UnknownGame(Refusal):
    """The name is not a registered game."""

    code = "unknown_game"


class BadPlayers(Refusal):
    """A player count the game does not allow."""

    code = "bad_players"


class BadOptions(Refusal):
    """A game's options that are not valid (`errors` per option)."""

    code = "bad_options"


class BadRequest(Refusal):
    """A request whose content the rules do not read: a bad deadline, a malformed key."""

    code = "bad_request"


class NotASeat(Refusal):
    """What only a game's seats may do (its table talk), asked by anyone else: a
    spectator, another game's seat, a stranger."""

    code = "not_a_seat"


class BadMessage(Refusal):
    """A message or note that shows nothing, or holds too much."""

    code = "bad_message"


class TooManyMessages(Refusal):
    """A seat that wrote as many messages as it may in an hour; `retry_after` seconds
    until it may write again."""

    code = "too_many_messages"

    def __init__(self, reason: str, retry_after: int) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class StillInPlay(Refusal):
    """What only a finished game offers (a rematch), asked of a game still in play."""

    code = "still_in_play"


class VacationRefused(Refusal):
    """A vacation the rules do not allow: too near a deadline, past the allowance,
    or a change to one under way other than its end."""

    code = "vacation_refused"


class NameTaken(Refusal):
    """A public name another player holds (compared without case or width)."""

    code = "name_taken"


class NeedsName(Refusal):
    """What shows the player to strangers (posting or joining an open game) asked of
    a player without a public name."""

    code = "needs_name"


class SeekRefusal(Refusal):
    """An open game that cannot be joined, left, withdrawn or started as asked: each
    kind has its own code, and the refusal changes nothing."""


class SeekFull(SeekRefusal):
    code = "seek_full"


class SeekStarted(SeekRefusal):
    code = "seek_started"


class SeekWithdrawn(SeekRefusal):
    code = "seek_withdrawn"


class SeekExpired(SeekRefusal):
    code = "seek_expired"


class AlreadyJoined(SeekRefusal):
    code = "already_joined"


class NotJoined(SeekRefusal):
    """Leaving an open game one does not sit at."""

    code = "not_joined"


class NotInvited(SeekRefusal):
    """Joining a private open game one was not invited to."""

    code = "not_invited"


class Blocked(SeekRefusal):
    """One of two players blocked the other: they do not meet."""

    code = "blocked"


class TooManySeeks(SeekRefusal):
    """As many open games posted as a player may hold (`REFEREE_SEEKS_PER_PLAYER`)."""

    code = "too_many_seeks"


class NotYourSeek(SeekRefusal):
    """Withdrawing or starting an open game someone else posted."""

    code = "not_your_seek"


class CreatorStays(SeekRefusal):
    """The creator leaving its own open game: it withdraws it instead."""

    code = "creator_stays"


class TooFewSeated(SeekRefusal):
    """Starting early with fewer players than the open game's least."""

    code = "too_few_seated"


class RatingOutOfRange(SeekRefusal):
    """Joining an open game whose rating range leaves out one's rating at its game."""

    code = "rating_out_of_range"


class GameOver(MoveRefusal):
    """The game is over: nothing more can be played."""

    code = "game_over"

    def __init__(self, reason: str = GAME_OVER(), **extra: Any) -> None:
        super().__init__(reason, **extra)


class NotYourTurn(MoveRefusal):
    """The seat may not act now (also: it has already answered this MaNiKi card)."""

    code = "not_your_turn"

    def __init__(self, reason: str = NOT_YOUR_TURN(), **extra: Any) -> None:
        super().__init__(reason, **extra)


class StaleVersion(MoveRefusal):
    """The move answered a position the game has left."""

    code = "stale_version"

    @classmethod
    def expected(cls, version: int, expected: int) -> StaleVersion:
        """`expected_version` named a version the game is no longer at."""
        return cls(STALE_EXPECTED(version=version, expected=expected))

    @classmethod
    def moved_on(cls, version: int, seen: int) -> StaleVersion:
        """What the seat answered changed since the version its move was made at."""
        return cls(STALE_MOVED_ON(seen=seen, version=version))


class IdempotencyConflict(Refusal):
    """An Idempotency-Key used again for another request."""

    code = "idempotency_conflict"

    def __init__(self, reason: str | None = None, **extra: Any) -> None:
        super().__init__(
            _("this Idempotency-Key was used for another request") if reason is None else reason,
            **extra,
        )


class BadNotation(MoveRefusal):
    """The move's notation cannot be read; the reason says what was expected."""

    code = "bad_notation"


class BadMove(MoveRefusal):
    """The move's JSON has the wrong shape."""

    code = "bad_move"


class IllegalMoveRefused(MoveRefusal):
    """The rules refuse the move; the reason says why."""

    code = "illegal_move"


class BadStep(MoveRefusal):
    """A step of a move built on the board that is not among the choices offered."""

    code = "bad_step"


# The rules' own refusal codes (`referee.engine.IllegalMove`), as the service's kinds.
_FROM_RULES: dict[str, type[MoveRefusal]] = {
    kind.code: kind
    for kind in (
        BadNotation,
        BadMove,
        BadStep,
        IllegalMoveRefused,
        GameOver,
        NotYourTurn,
        StaleVersion,
    )
}


def from_rules(refused: IllegalMove, **extra: Any) -> MoveRefusal:
    """The refusal of the rules' `IllegalMove`, same code and same words."""
    return _FROM_RULES.get(refused.code, IllegalMoveRefused)(refused.reason, **extra)


def of_code(code: str | None, reason: str | None, **extra: Any) -> MoveRefusal:
    """The refusal a decided submission recorded (its `code` and `reason`)."""
    kind = _FROM_RULES.get(code or "", IllegalMoveRefused)
    return kind(reason or MOVE_REFUSED(), **extra)


def every_kind() -> list[type[Refusal]]:
    """Every kind of refusal the service raises (docs/api.md lists each code)."""
    found: list[type[Refusal]] = []
    pending = list(Refusal.__subclasses__())
    while pending:
        kind = pending.pop(0)
        if "code" in vars(kind):
            found.append(kind)
        pending.extend(kind.__subclasses__())
    return found
