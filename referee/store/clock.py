"""Times as the store keeps them: fixed-width ISO 8601 in UTC, so strings sort as times."""

from __future__ import annotations

from datetime import UTC, datetime


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def now() -> str:
    return stamp(datetime.now(UTC))


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)
