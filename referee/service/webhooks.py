"""A seat's webhook: setting it (to a URL the referee will post to), dropping it, its secret.

A URL is checked before it is kept (`referee.webhooks.check`): a scheme,
host and port the referee posts to, resolving to public addresses only
(unless `REFEREE_WEBHOOK_ALLOW_PRIVATE`), looked up within the webhook
deadline. Who asks is checked before that: the game, then the caller's
seat in it, so that a stranger cannot have the referee look names up in
DNS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee import webhooks
from referee.service import refusals
from referee.service.submitting import PlayerSeat, SeatRef, seat_of, well_formed
from referee.store import keys, reads, seat_hooks

# What a seat may know of its webhook, as the entry points answer it.
from referee.store.seat_hooks import Health as Health

if TYPE_CHECKING:
    from referee.service import Referee


class WebhookRefused(refusals.Refusal):
    """A URL the referee will not post to; `code` says why (`webhook_bad_url`, ...)."""

    code = "webhook_refused"

    def __init__(self, refused: webhooks.Refused) -> None:
        super().__init__(refused.reason)
        # Each cause has its own code, documented with the webhook's answers.
        self.code = refused.code  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class WebhookSet:
    """A webhook just set: its health, and the secret its posts are signed with."""

    health: Health
    secret: str


def set_webhook(referee: Referee, game_id: str, caller: SeatRef, url: str) -> WebhookSet:
    """POST the caller's notices to `url` from now on; switches a webhook back on after failures.

    Refused as not found for no such game and unauthorized for a token that is
    not a seat of it, before the URL is looked at.
    """
    with referee.db.reading() as session:
        if not well_formed(game_id) or reads.turn(session, game_id) is None:
            raise refusals.NotFound.game()
        seat = seat_of(session, game_id, caller)
    chosen = referee.settings
    try:
        webhooks.check(
            url, allow_private=chosen.webhook_allow_private, seconds=chosen.webhook_deadline
        )
    except webhooks.Refused as refused:
        raise WebhookRefused(refused) from None
    # Set by a player token, it lasts as long as the token: revoking it drops the webhook.
    token_id = caller.player.token_id if isinstance(caller, PlayerSeat) else None
    with referee.db.transaction() as session:
        seat_hooks.set_url(session, game_id, seat, url, token_id)
        health = seat_hooks.health(session, game_id, seat)
    return WebhookSet(health, signing_secret(referee, game_id, seat, health.generation))


def webhook_health(referee: Referee, game_id: str, seat: int) -> Health:
    """The seat's webhook and its health: failures, the last error, backoff, switched off."""
    with referee.db.reading() as session:
        return seat_hooks.health(session, game_id, seat)


def drop_webhook(referee: Referee, game_id: str, seat: int) -> Health:
    """Stop POSTing the seat's notices."""
    with referee.db.transaction() as session:
        seat_hooks.set_url(session, game_id, seat, None)
        return seat_hooks.health(session, game_id, seat)


def rotate_secret(referee: Referee, game_id: str, seat: int) -> str:
    """A new signing secret for the seat's webhook; the old one signs nothing more."""
    with referee.db.transaction() as session:
        generation = seat_hooks.rotate(session, game_id, seat)
    return signing_secret(referee, game_id, seat, generation)


def signing_secret(referee: Referee, game_id: str, seat: int, generation: int) -> str:
    """The key the seat's webhook posts are signed with, at `generation`."""
    return keys.webhook_secret(referee.secret(), game_id, seat, generation)
