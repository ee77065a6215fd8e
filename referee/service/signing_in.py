"""Signing in by a mailed one-time link: ask for one, then spend it for a session.

Asking answers the same whatever the address, so it tells no one which
addresses are players': the request only hands the address to the queue
(`ask_sign_in`), and the job (`request_sign_in`) looks it up and writes,
apart from the request. A player's address gets one mail with a link
valid `LINK_MINUTES`, at most one per `EVERY_MINUTES`; any other address
gets nothing. The mail is a notice like any other (kind `sign_in`),
carried by one of the player's seats through the mail channel, so the
consent rules that hold for every mail hold for it.

The link's token is an HMAC of a random nonce the notice keeps
(`keys.sign_in_token`); the store keeps only the token's SHA-256. Spending
it (`redeem`) is one conditional statement, so a link signs in once; a
spent, expired or forged one is refused with the same words.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from referee.i18n import N_, _
from referee.queue import SIGN_IN
from referee.service import notifying, players, profiles, refusals
from referee.service.publishing import Published, publish
from referee.store import addresses, appending, keys, player_seats, sessions
from referee.store.clock import stamp
from referee.store.tables import OutboxKind

if TYPE_CHECKING:
    from referee.service import Referee

LINK_MINUTES = 30
EVERY_MINUTES = 5
# No token the referee makes is longer; a longer one is not looked up.
MAX_TOKEN = 100
NOT_VALID = N_("this sign-in link is not valid (or no longer): ask for a new one")


def ask_sign_in(referee: Referee, email: str) -> None:
    """What a request to sign in does, whatever the address: hand it to the queue."""
    referee.queue.enqueue_apart(SIGN_IN, email)


def request_sign_in(referee: Referee, email: str, moment: datetime | None = None) -> bool:
    """Mail the player at `email` a sign-in link, unless the address is no player's or
    got one less than `EVERY_MINUTES` ago. Whether a link was written."""
    moment = moment or datetime.now(UTC)
    address = addresses.normal(email)
    nonce = keys.new_token()
    token = keys.sign_in_token(referee.secret(), nonce)
    at = stamp(moment)
    expires = stamp(moment + timedelta(minutes=LINK_MINUTES))
    with referee.db.transaction() as session:
        seat = player_seats.mailing_seat(session, address)
        if seat is None:
            return False
        cut = stamp(moment - timedelta(minutes=EVERY_MINUTES))
        if not sessions.claim_sign_in(session, address, at, cut):
            return False
        sessions.add_link(session, keys.hash_token(token), address, at, expires)
        game_id, number = seat
        # Anchored on a seat only to reach the address through it: the mail says
        # nothing of that game (`referee.delivery.sign_in`).
        payload = {"nonce": nonce, "expires_at": expires}
        notice = appending.outbox_row(game_id, OutboxKind.SIGN_IN, number, payload, at)
        notifying.write(session.connection(), None, [notice])
    publish(referee, Published(news=True))
    return True


def check_link(referee: Referee, token: str) -> None:
    """Refuse a link that would not sign in now (the page with its button asks first)."""
    address = None
    if len(token) <= MAX_TOKEN:
        with referee.db.reading() as session:
            address = sessions.link_address(session, keys.hash_token(token), _now())
    if address is None:
        raise refusals.SignInLinkNotValid(_(NOT_VALID))


def redeem(referee: Referee, token: str) -> str:
    """Spend a sign-in link and open a session for its address: the session cookie's secret.

    An address that is no longer a player's (it stopped the referee's mail
    since) is refused like a spent link, and its link is left as it was.
    """
    if len(token) > MAX_TOKEN:
        raise refusals.SignInLinkNotValid(_(NOT_VALID))
    with referee.db.transaction() as session:
        address = sessions.use_link(session, keys.hash_token(token), _now())
        if address is None or player_seats.mailing_seat(session, address) is None:
            raise refusals.SignInLinkNotValid(_(NOT_VALID))
    cookie = players.open_session(referee, address)
    profiles.seen(referee, address)
    return cookie


def _now() -> str:
    return stamp(datetime.now(UTC))
