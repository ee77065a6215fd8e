"""A player's personal API tokens: made (the secret shown once), listed without it, revoked.

The secret is `rp_` and 43 random characters; the store keeps its
SHA-256 only, so a token lost is made anew, never shown again. Making and
revoking need a signed-in browser (`MANAGE`): a token cannot make
tokens, so a leaked one cannot outlive its revocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.i18n import _
from referee.service import refusals
from referee.service.players import MANAGE, SCOPES, TOKEN_PREFIX, Player
from referee.store import keys, player_tokens, seat_hooks
from referee.store.clock import now
from referee.store.tables import PlayerToken

if TYPE_CHECKING:
    from referee.service import Referee

MAX_NAME = 100
# Tokens one player may hold at once: enough for every client and script, and a
# bound on what a signed-in browser left open can pile up.
MAX_TOKENS = 50
# No token's id is this large (an id beyond it is no row's, and a database's integer
# cannot hold some such: it is "not found" without asking the store).
MAX_ID = 10**9


@dataclass(frozen=True, slots=True)
class TokenShown:
    """A token as its list shows it: never its secret."""

    id: int
    name: str
    scopes: list[str]
    created_at: str
    # The last request it signed (to the minute), or None when never used.
    last_used_at: str | None


@dataclass(frozen=True, slots=True)
class TokenMade:
    token: TokenShown
    # The secret, shown this once.
    secret: str


def make_token(referee: Referee, player: Player, name: str, scopes: list[str]) -> TokenMade:
    """A new token of the player's, with `name` and `scopes` (a non-empty part of read, play)."""
    player.require(MANAGE)
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        reason = _("a token's name is 1 to {most} printable characters").format(most=MAX_NAME)
        raise refusals.BadRequest(reason, errors={"name": [reason]})
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        reason = _("a token's scopes are one or both of {scopes}").format(scopes=list(SCOPES))
        raise refusals.BadRequest(reason, errors={"scopes": [reason]})
    secret = TOKEN_PREFIX + keys.new_token()
    # Kept in a fixed order, so the same choice always reads the same.
    chosen = [scope for scope in SCOPES if scope in scopes]
    with referee.db.transaction() as session:
        # Counted under the player's lock: sixty made at once leave `MAX_TOKENS`.
        player_tokens.lock_owner(session, player.address)
        if len(player_tokens.of_address(session, player.address)) >= MAX_TOKENS:
            raise refusals.BadRequest(
                _("you hold {most} tokens, as many as one may: revoke one first").format(
                    most=MAX_TOKENS
                )
            )
        row = player_tokens.add(
            session, player.address, name, chosen, keys.hash_token(secret), now()
        )
        return TokenMade(_shown(row), secret)


def list_tokens(referee: Referee, player: Player) -> list[TokenShown]:
    """The player's tokens in force, oldest first, without their secrets."""
    player.require(MANAGE)
    with referee.db.reading() as session:
        return [_shown(row) for row in player_tokens.of_address(session, player.address)]


def revoke_token(referee: Referee, player: Player, token_id: int) -> None:
    """Revoke one of the player's tokens: it is refused from the next request on, everywhere.

    Another player's token, one revoked already and one that never was are
    all "not found" alike, so that nobody learns which ids exist.
    """
    player.require(MANAGE)
    if not 0 < token_id < MAX_ID:
        raise refusals.NotFound(_("you hold no token with this id"))
    with referee.db.transaction() as session:
        if not player_tokens.revoke(session, player.address, token_id, now()):
            raise refusals.NotFound(_("you hold no token with this id"))
        # What the token set up goes with it: a webhook it set posts no more.
        seat_hooks.drop_set_by(session, token_id)


def _shown(row: PlayerToken) -> TokenShown:
    assert row.id is not None
    return TokenShown(row.id, row.name, list(row.scopes), row.created_at, row.last_used_at)
