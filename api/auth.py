"""Who is asking: a seat of the game (by its bearer token) or a spectator."""

from __future__ import annotations

import hmac

from flask import current_app, request
from sqlmodel import Session

from referee.service import refusals
from referee.service.submitting import NO_TOKEN, SeatToken, seat_of

MAX_TOKEN = 200


def bearer() -> str | None:
    """The bearer token of the request; 401 for an Authorization header of another shape."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN:
        raise refusals.Unauthorized("send 'Authorization: Bearer <seat token>'")
    return token


def viewer(session: Session, game_id: str) -> int | None:
    """The caller's seat in this game; None for a spectator; 401 for a bad token."""
    token = bearer()
    return None if token is None else seat_of(session, game_id, SeatToken(token))


def seat(session: Session, game_id: str) -> int:
    """The caller's seat, which this request needs."""
    found = viewer(session, game_id)
    if found is None:
        raise refusals.Unauthorized(NO_TOKEN)
    return found


def check_api_key() -> bool:
    """Creating games may need `REFEREE_API_KEY` (header `X-API-Key`).

    True when the server has a key and the request gave it: a trusted
    client, whose games mail their seats without asking them first.
    """
    wanted = current_app.config.get("REFEREE_API_KEY")
    if not wanted:
        return False
    given = request.headers.get("X-API-Key", "")
    if not hmac.compare_digest(given.encode("utf-8"), str(wanted).encode("utf-8")):
        raise refusals.Unauthorized("creating a game needs the server's API key (X-API-Key)")
    return True
