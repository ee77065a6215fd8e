"""A player's personal API tokens: made (the secret shown once), listed, revoked.

Only a signed-in browser may manage tokens (the `manage` scope): a token
cannot make more of itself. The store keeps each token's SHA-256, so a
lost secret is revoked and made anew, never shown again.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from referee.service import refusals
from referee.service.players import MANAGE, SCOPES, TOKEN_PREFIX, Player
from referee.store import keys, player_tokens
from referee.store.clock import now
from referee.store.tables import PlayerToken

if TYPE_CHECKING:
    from referee.service import Referee

MAX_NAME = 100
# Tokens in force per player: enough for every device and bot, few enough to list.
MAX_TOKENS = 20


def make_token(
    referee: Referee, player: Player, name: str, scopes: Collection[str]
) -> tuple[PlayerToken, str]:
    """A new token of the player, with its secret (returned once, never kept)."""
    player.require(MANAGE)
    name = _checked_name(name)
    chosen = sorted(set(scopes))
    if not chosen or any(scope not in SCOPES for scope in chosen):
        raise refusals.BadRequest(
            f"choose the token's scopes among {', '.join(SCOPES)}",
            errors={"scopes": ["choose at least one scope: read, play"]},
        )
    secret = TOKEN_PREFIX + keys.new_token()
    with referee.db.transaction() as session:
        if len(player_tokens.of_address(session, player.address)) >= MAX_TOKENS:
            raise refusals.BadRequest(
                f"you hold {MAX_TOKENS} tokens, the most a player may: revoke one first"
            )
        made = player_tokens.add(
            session, player.address, name, chosen, keys.hash_token(secret), now()
        )
    return made, secret


def list_tokens(referee: Referee, player: Player) -> Sequence[PlayerToken]:
    """The player's tokens in force, oldest first, without their secrets."""
    player.require(MANAGE)
    with referee.db.reading() as session:
        return player_tokens.of_address(session, player.address)


def revoke_token(referee: Referee, player: Player, token_id: int) -> bool:
    """Revoke one of the player's tokens; False when it holds no such token in force."""
    player.require(MANAGE)
    with referee.db.transaction() as session:
        return player_tokens.revoke(session, player.address, token_id, now())


def _checked_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise refusals.BadRequest(
            f"name the token (1 to {MAX_NAME} characters), e.g. the device or bot using it",
            errors={"name": [f"1 to {MAX_NAME} characters"]},
        )
    # No control, format or separator characters but the plain space: a name is shown on pages.
    if any(unicodedata.category(c)[0] in "CZ" and c != " " for c in name):
        raise refusals.BadRequest(
            "a token's name is plain text on one line", errors={"name": ["plain text only"]}
        )
    return name
