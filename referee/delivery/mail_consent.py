"""Whether the referee may write to an address: what a seat's mail may be, asked at send time.

Anyone may create a game naming any address, so an address the referee
has never heard from gets one invitation asking it to accept, and nothing
else until it does (by the link in that mail, or a reply saying `accept`).
Accepting holds for every later game; the unsubscribe link of any mail
stops everything until the address accepts again. Games created with the
API key (`game.trusted`) mail accepted and invited addresses alike; no game
mails a stopped one, nor one that bounced out (`referee.store.addresses.bounced_out`).
Delivery asks `mail_mode` at send time, so a stop takes effect for mail already queued.
"""

from __future__ import annotations

from referee.store.tables import Address, AddressState, OutboxKind

# What a seat's mail may be: the whole mail, the invitation asking to accept, or nothing.
FULL = "full"
ASK = "ask"
NONE = "none"


def mail_mode(known: Address | None, trusted: bool, kind: str) -> str:
    """What the seat at `known` may be sent for an outbox row of `kind`."""
    state = AddressState.INVITED if known is None else known.state
    if state == AddressState.STOPPED:
        return NONE
    if trusted or state == AddressState.ACCEPTED:
        return FULL
    return ASK if kind == OutboxKind.INVITATION else NONE
