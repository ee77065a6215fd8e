"""Who a player is: an address proved by a mailed link, then a session or a personal token.

There are no passwords. A sign-in link proves the address it was mailed
to and nothing else; the session it opens lives in a cookie whose
SHA-256 the store keeps. A player token (`rp_...`) is made on `/me`, with
scopes `read` and/or `play`, and is looked up on every use, so a revoked
token stops at once in every process. A session may do everything a
player may; a token only what its scopes allow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from referee.delivery.play_links import works_until
from referee.i18n import _
from referee.service import refusals
from referee.store import addresses, keys, player_seats, player_tokens, sessions
from referee.store.clock import stamp

if TYPE_CHECKING:
    from sqlmodel import Session

    from referee.service import Referee

TOKEN_PREFIX = "rp_"
READ = "read"
PLAY = "play"
# What a signed-in browser may do beyond any token: make and revoke tokens,
# change settings and vacations.
MANAGE = "manage"
SCOPES = (READ, PLAY)
SESSION_DAYS = 30
# The most games whose seat cookies signing out clears: a header each.
SIGN_OUT_GAMES = 100
# How stale a token's `last_used_at` may be: it is written at most this often.
USE_NOTED_EVERY = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Player:
    """A proved address and what the credential that proved it allows."""

    address: str
    scopes: frozenset[str]
    # The player token it came with (None: a signed-in browser).
    token_id: int | None = None

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise refusals.Forbidden(
                _("this token's scopes do not include {scope}").format(scope=repr(scope))
            )

    def require_as_seat(self, scope: str) -> None:
        """`require`, for what the player does as its seat of a game: playing needs
        seeing, so `play` also reads that game as the seat sees it (state, legal
        moves, events, board), and nothing beyond the games the player plays in."""
        if scope == READ and PLAY in self.scopes:
            return
        self.require(scope)


def is_player_token(token: str) -> bool:
    """Whether a bearer token is a player's (seat tokens never start so)."""
    return token.startswith(TOKEN_PREFIX)


def player_of_token(referee: Referee, token: str) -> Player:
    """The player whose token this is; refused when none is (forged, revoked, malformed)."""
    with referee.db.reading() as session:
        found = player_tokens.by_hash(session, keys.hash_token(token))
    if found is None or found.id is None:
        raise refusals.Unauthorized(_("this player token is not valid (or was revoked)"))
    moment = datetime.now(UTC)
    before = stamp(moment - USE_NOTED_EVERY)
    if found.last_used_at is None or found.last_used_at < before:
        # A write at most once a minute per token, not one per request.
        with referee.db.transaction() as session:
            player_tokens.mark_used(session, found.id, stamp(moment), before)
    return Player(found.address, frozenset(found.scopes), found.id)


def player_of_session(referee: Referee, cookie: str | None) -> Player:
    """The player a session cookie signs in; refused when it signs in no one."""
    address = None
    if cookie:
        with referee.db.reading() as session:
            address = sessions.session_address(session, keys.hash_token(cookie), _now())
    if address is None:
        raise refusals.Unauthorized(_("sign in first: ask for a link by mail on /me"))
    return Player(address, frozenset({READ, PLAY, MANAGE}))


def open_session(referee: Referee, address: str) -> str:
    """A new session for a proved address: the cookie's secret, which is not kept."""
    cookie = keys.new_token()
    moment = datetime.now(UTC)
    with referee.db.transaction() as session:
        sessions.open_session(
            session,
            keys.hash_token(cookie),
            addresses.normal(address),
            stamp(moment),
            stamp(moment + timedelta(days=SESSION_DAYS)),
        )
    return cookie


def sign_out(referee: Referee, cookie: str | None) -> list[str]:
    """End the session the cookie names (nothing when it names none).

    Returns the games whose seats the browser may hold by the player's
    play-now links (those whose links still work, most recently changed first,
    at most `SIGN_OUT_GAMES`), for the caller to clear its seat cookies of:
    signing out on a shared computer leaves no seat of the player's to the next
    person at it."""
    if not cookie:
        return []
    with referee.db.transaction() as session:
        token_hash = keys.hash_token(cookie)
        address = sessions.session_address(session, token_hash, _now())
        sessions.end_session(session, token_hash)
        held = [] if address is None else player_seats.games_held(session, address)
    moment = datetime.now(UTC)
    working = [game for game in held if (works_until(game) or moment) >= moment]
    working.sort(key=lambda game: game.updated_at, reverse=True)
    return [game.id for game in working[:SIGN_OUT_GAMES]]


def seat_in(session: Session, player: Player, game_id: str, seat: int | None = None) -> int:
    """The player's seat in a game: the only one it holds, or `seat` among several."""
    held = player_seats.seat_numbers(session, player.address, game_id)
    if not held:
        raise refusals.Unauthorized(_("you hold no seat in this game"))
    if seat is not None:
        if seat not in held:
            raise refusals.Unauthorized(
                _("you do not hold seat {seat} of this game").format(seat=seat)
            )
        return seat
    if len(held) > 1:
        raise refusals.BadRequest(
            _("you hold seats {seats} of this game: say which with ?seat=N").format(seats=held)
        )
    return held[0]


def _now() -> str:
    return stamp(datetime.now(UTC))
