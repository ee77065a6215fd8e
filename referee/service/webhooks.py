"""A seat's webhook: setting it (to a URL the referee will post to), dropping it, its secret.

A URL is checked before it is kept (`referee.webhooks.check`): a scheme,
host and port the referee posts to, resolving to public addresses only
(unless `REFEREE_WEBHOOK_ALLOW_PRIVATE`), looked up within the webhook
deadline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from referee import webhooks
from referee.service import refusals
from referee.store import keys
from referee.store import webhooks as seats_hooks

# What a seat may know of its webhook, as the entry points answer it.
from referee.store.webhooks import Health as Health

if TYPE_CHECKING:
    from referee.service import Referee


class WebhookRefused(refusals.Refusal):
    """A URL the referee will not post to; `code` says why (`webhook_bad_url`, ...)."""

    code = "webhook_refused"

    def __init__(self, refused: webhooks.Refused) -> None:
        super().__init__(refused.reason)
        # Each cause has its own code, documented with the webhook's answers.
        self.code = refused.code  # type: ignore[misc]


def set_webhook(referee: Referee, game_id: str, seat: int, url: str) -> Health:
    """POST the seat's notices to `url` from now on; switches a webhook back on after failures."""
    chosen = referee.settings
    try:
        webhooks.check(
            url, allow_private=chosen.webhook_allow_private, seconds=chosen.webhook_deadline
        )
    except webhooks.Refused as refused:
        raise WebhookRefused(refused) from None
    with referee.db.transaction() as session:
        seats_hooks.set_url(session, game_id, seat, url)
        return seats_hooks.health(session, game_id, seat)


def webhook_health(referee: Referee, game_id: str, seat: int) -> Health:
    """The seat's webhook and its health: failures, the last error, backoff, switched off."""
    with referee.db.reading() as session:
        return seats_hooks.health(session, game_id, seat)


def drop_webhook(referee: Referee, game_id: str, seat: int) -> Health:
    """Stop POSTing the seat's notices."""
    with referee.db.transaction() as session:
        seats_hooks.set_url(session, game_id, seat, None)
        return seats_hooks.health(session, game_id, seat)


def rotate_secret(referee: Referee, game_id: str, seat: int) -> str:
    """A new signing secret for the seat's webhook; the old one signs nothing more."""
    with referee.db.transaction() as session:
        generation = seats_hooks.rotate(session, game_id, seat)
    return signing_secret(referee, game_id, seat, generation)


def signing_secret(referee: Referee, game_id: str, seat: int, generation: int) -> str:
    """The key the seat's webhook posts are signed with, at `generation`."""
    return keys.webhook_secret(referee.secret(), game_id, seat, generation)
