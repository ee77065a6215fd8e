"""Players' public names, when each was last seen, and whom each blocks."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from referee.store.tables import Address, Block, core_table

_ADDRESS = core_table(Address)


def public_name(session: Session, address: str) -> str | None:
    """The public name the player at `address` chose, if it chose one."""
    return session.exec(select(Address.public_name).where(Address.address == address)).first()


def names_of(session: Session, addresses: Collection[str]) -> dict[str, str]:
    """The public names of those of `addresses` that chose one."""
    if not addresses:
        return {}
    query = select(Address.address, Address.public_name).where(
        col(Address.address).in_(addresses), col(Address.public_name).is_not(None)
    )
    return {address: name for address, name in session.exec(query) if name is not None}


def address_named(session: Session, key: str) -> str | None:
    """The address whose public name compares as `key` (`referee.names.public_key`)."""
    return session.exec(select(Address.address).where(Address.name_key == key)).first()


def set_public_name(session: Session, address: str, name: str, key: str) -> bool:
    """Give the player at `address` its public name; False when another player holds
    one that compares the same (two players asking at once: one gets it)."""
    holder = address_named(session, key)
    if holder is not None and holder != address:
        return False
    try:
        with session.begin_nested():
            session.connection().execute(
                update(_ADDRESS)
                .where(_ADDRESS.c.address == address)
                .values(public_name=name, name_key=key)
            )
    except IntegrityError:
        return False
    return True


def speech(session: Session, address: str) -> tuple[str | None, str | None]:
    """The language and time zone the player at `address` chose (None: not chosen)."""
    found = session.exec(
        select(Address.language, Address.time_zone).where(Address.address == address)
    ).first()
    return (None, None) if found is None else (found[0], found[1])


def set_speech(session: Session, address: str, language: str | None, time_zone: str | None) -> None:
    """Choose the player's language and time zone; None leaves one as it was."""
    values = {
        name: value
        for name, value in (("language", language), ("time_zone", time_zone))
        if value is not None
    }
    if values:
        session.connection().execute(
            update(_ADDRESS).where(_ADDRESS.c.address == address).values(**values)
        )


def seen_at(session: Session, address: str) -> str | None:
    """When the player was last seen (None: never, or no such player)."""
    return session.exec(select(Address.seen_at).where(Address.address == address)).first()


def mark_seen(session: Session, address: str, at: str, before: str) -> None:
    """Note that the player was seen at `at`, unless it was already seen since `before`."""
    session.connection().execute(
        update(_ADDRESS)
        .where(
            _ADDRESS.c.address == address,
            or_(_ADDRESS.c.seen_at.is_(None), _ADDRESS.c.seen_at < before),
        )
        .values(seen_at=at)
    )


def blocked_by(session: Session, address: str) -> list[str]:
    """The addresses the player blocks, in the order it blocked them."""
    query = select(Block.blocked).where(Block.address == address).order_by(col(Block.created_at))
    return list(session.exec(query))


def apart(session: Session, address: str) -> set[str]:
    """Every address that the player blocks or that blocks it."""
    query = select(Block.address, Block.blocked).where(
        or_(col(Block.address) == address, col(Block.blocked) == address)
    )
    return {other if mine == address else mine for mine, other in session.exec(query)}


def apart_of(session: Session, addresses: Collection[str]) -> dict[str, set[str]]:
    """`apart` for many players at once: one statement."""
    found: dict[str, set[str]] = {address: set() for address in addresses}
    if not addresses:
        return found
    wanted = sorted(addresses)
    query = select(Block.address, Block.blocked).where(
        or_(col(Block.address).in_(wanted), col(Block.blocked).in_(wanted))
    )
    for mine, other in session.exec(query):
        if mine in found:
            found[mine].add(other)
        if other in found:
            found[other].add(mine)
    return found


def block(session: Session, address: str, blocked: str, at: str) -> None:
    """Block `blocked` for `address` (blocking again changes nothing)."""
    if session.get(Block, (address, blocked)) is None:
        session.add(Block(address=address, blocked=blocked, created_at=at))
        session.flush()


def unblock(session: Session, address: str, blocked: str) -> None:
    session.execute(
        delete(Block).where(col(Block.address) == address, col(Block.blocked) == blocked)
    )
