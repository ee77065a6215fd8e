"""Secrets and the tokens made from them: seat tokens, reply addresses, webhook keys.

A seat's REST token is random and shown once; the store keeps only its
SHA-256. Reply tokens and webhook keys are derived from the server secret
(`REFEREE_SECRET`, or a random one the database keeps) with HMAC, so every
mail can carry one without anything more being stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from referee.store.db import Database
from referee.store.tables import Seat, Setting

_SECRET_KEY = "mail_secret"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# A game's seat tokens never change once it is made, so each process keeps
# them after the first look: a submission then reads only the game's row.
_TOKENS_KEPT = 20_000
_tokens: dict[tuple[str, str], tuple[str, ...]] = {}
_tokens_lock = threading.Lock()


def seat_of_token(session: Session, game_id: str, token: str) -> int | None:
    """The seat whose token this is in this game, compared in constant time."""
    wanted = hash_token(token)
    key = (str(session.get_bind().engine.url), game_id)
    hashes = _tokens.get(key)
    if hashes is None:
        query = select(Seat.token_hash).where(Seat.game_id == game_id).order_by(col(Seat.seat))
        hashes = tuple(session.exec(query))
        if hashes:
            with _tokens_lock:
                if len(_tokens) >= _TOKENS_KEPT:
                    del _tokens[next(iter(_tokens))]
                _tokens[key] = hashes
    found = None
    for number, token_hash in enumerate(hashes):
        if hmac.compare_digest(token_hash, wanted):
            found = number
    return found


def kept_secret(db: Database) -> bytes:
    """The random server secret the database keeps, made on first use (no `REFEREE_SECRET`)."""
    with Session(db.engine) as session:
        found = session.get(Setting, _SECRET_KEY)
        if found is None:
            session.add(Setting(key=_SECRET_KEY, value=secrets.token_hex(32)))
            try:
                session.commit()
            except IntegrityError:
                # Another process made it first; theirs stands.
                session.rollback()
            found = session.get(Setting, _SECRET_KEY)
        assert found is not None
        return found.value.encode("utf-8")


def _mac(secret: bytes, purpose: str, game_id: str, seat: int) -> bytes:
    message = f"{purpose}:{game_id}:{seat}".encode()
    return hmac.new(secret, message, hashlib.sha256).digest()


@dataclass(frozen=True, slots=True)
class ReplyKey:
    """What a reply address names: the game, the seat, and the version its mail showed.

    `version` is None for the addresses of mails sent before addresses
    carried one: such a reply is judged against the position at arrival.
    """

    game_id: str
    seat: int
    version: int | None


# game id (16 bytes), seat (1), MAC (12): 29 bytes, 47 base32 letters; a
# versioned token adds the version (4 bytes), 33 bytes, 53 letters.
_PLAIN_LENGTH = 47
_VERSIONED_LENGTH = 53


def reply_token(secret: bytes, game_id: str, seat: int, version: int | None = None) -> str:
    """The secret part of a reply address: game, seat, version and a MAC, in lower-case base32.

    Each mail carries the version it shows, signed, so a reply answers the
    position of the mail it replies to (`referee.service.deciding.judge`)
    and an address is worth something only while that position stands.
    It is derived, not stored, and it is not the REST token (which the
    server cannot recover: it keeps only its hash).
    """
    if version is None:
        mac = _mac(secret, "reply", game_id, seat)[:12]
        raw = bytes.fromhex(game_id) + bytes([seat]) + mac
    else:
        mac = _mac(secret, f"reply@{version}", game_id, seat)[:12]
        raw = bytes.fromhex(game_id) + bytes([seat]) + version.to_bytes(4, "big") + mac
    return base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def read_token(secret: bytes, token: str) -> ReplyKey | None:
    """What a reply token names; None for anything forged or malformed."""
    text = token.strip().upper()
    if len(text) not in (_PLAIN_LENGTH, _VERSIONED_LENGTH) or not text.isalnum():
        return None
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except ValueError:
        return None
    game_id, seat = raw[:16].hex(), raw[16]
    version = int.from_bytes(raw[17:21], "big") if len(text) == _VERSIONED_LENGTH else None
    # Compared as text, so another spelling of the same bits is refused too.
    if not hmac.compare_digest(text.lower(), reply_token(secret, game_id, seat, version)):
        return None
    return ReplyKey(game_id, seat, version)


def webhook_secret(secret: bytes, game_id: str, seat: int, generation: int = 0) -> str:
    """The key a seat's webhook deliveries are signed with (HMAC-SHA256).

    `generation` is the seat's count of rotations: raising it gives a new
    key and the old one signs nothing more. Generation 0 is the key seats
    were given before rotation existed.
    """
    purpose = "webhook" if generation == 0 else f"webhook{generation}"
    return _mac(secret, purpose, game_id, seat).hex()


def seat_link_token(secret: bytes, game_id: str, seat: int) -> str:
    """The REST token of a seat that has a mail address, derived so that a mail can carry it.

    The store still keeps only its hash (it authenticates like any token);
    deriving it lets the personal link go out in whichever mail first
    reaches the seat, however long after the game was made.
    """
    return base64.urlsafe_b64encode(_mac(secret, "seat", game_id, seat)).decode().rstrip("=")


def address_token(secret: bytes, purpose: str, address: str) -> str:
    """The token of an address's `accept` or `stop` link: an HMAC of the address, in base32."""
    message = f"address:{purpose}:{address}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()[:25]
    return base64.b32encode(digest).decode("ascii").lower()


def play_token(secret: bytes, game_id: str, seat: int) -> str:
    """The token of a seat's play-now link (`/g/<id>/play/<token>`), which every mail to
    the seat carries: an HMAC of game and seat, never the seat's API token."""
    return base64.urlsafe_b64encode(_mac(secret, "play", game_id, seat)[:18]).decode()


def sign_in_token(secret: bytes, nonce: str) -> str:
    """The token of a sign-in link (`/me/sign-in/<token>`): an HMAC of the random nonce its
    notice keeps. The store keeps the nonce and the token's SHA-256, neither of which signs
    in without the server secret."""
    digest = hmac.new(secret, f"sign-in:{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")
