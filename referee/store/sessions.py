"""Sign-in links and the sessions they open, kept by the SHA-256 of their secrets."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col, delete

from referee.store.tables import Address, PlayerSession, SignIn, core_table

_SIGN_IN = core_table(SignIn)
_ADDRESS = core_table(Address)


def claim_sign_in(session: Session, address: str, stamp: str, cut: str) -> bool:
    """Claim the next sign-in mail of `address` (already normal): True when none was
    claimed since `cut`. One conditional statement, so of two requests at once one claims it.
    """
    claimed = session.connection().execute(
        sa.update(_ADDRESS)
        .where(
            _ADDRESS.c.address == address,
            sa.or_(_ADDRESS.c.sign_in_at.is_(None), _ADDRESS.c.sign_in_at < cut),
        )
        .values(sign_in_at=stamp)
    )
    return claimed.rowcount == 1


def add_link(session: Session, token_hash: str, address: str, stamp: str, expires: str) -> None:
    link = SignIn(token_hash=token_hash, address=address, created_at=stamp, expires_at=expires)
    session.add(link)
    session.flush()


def use_link(session: Session, token_hash: str, stamp: str) -> str | None:
    """Spend a sign-in link: its address, once, while it has not expired; None otherwise.

    One statement, so two clicks at once cannot both spend it.
    """
    spent = session.connection().execute(
        sa.update(_SIGN_IN)
        .where(
            _SIGN_IN.c.token_hash == token_hash,
            _SIGN_IN.c.used_at.is_(None),
            _SIGN_IN.c.expires_at > stamp,
        )
        .values(used_at=stamp)
        .returning(_SIGN_IN.c.address)
    )
    found = spent.first()
    return None if found is None else str(found[0])


def link_address(session: Session, token_hash: str, stamp: str) -> str | None:
    """The address a sign-in link would sign in now (unspent, unexpired), without spending it."""
    found = session.get(SignIn, token_hash)
    if found is None or found.used_at is not None or found.expires_at <= stamp:
        return None
    return found.address


def open_session(session: Session, token_hash: str, address: str, stamp: str, expires: str) -> None:
    session.add(
        PlayerSession(token_hash=token_hash, address=address, created_at=stamp, expires_at=expires)
    )
    session.flush()


def session_address(session: Session, token_hash: str, stamp: str) -> str | None:
    """The address a session cookie signs in, while the session lasts."""
    found = session.get(PlayerSession, token_hash)
    if found is None or found.expires_at <= stamp:
        return None
    return found.address


def end_session(session: Session, token_hash: str) -> None:
    session.execute(delete(PlayerSession).where(col(PlayerSession.token_hash) == token_hash))
