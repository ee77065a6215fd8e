"""Who is asking: a seat of the game (by its seat token, or a player token and `?seat=N`)
or a spectator."""

from __future__ import annotations

import hmac
from typing import Any

from flask import current_app, request
from sqlmodel import Session

from api.http.context import referee
from api.schemas.shared import MAX_SEAT, SeatArgs
from referee.service import refusals
from referee.service.players import READ, is_player_token, player_of_token
from referee.service.submitting import PlayerSeat, SeatRef, SeatToken, seat_of

MAX_TOKEN = 200
# The OpenAPI security of an operation a seat may do (a seat token, or a player
# token acting as the player's seat), and of one a spectator may do too.
AS_SEAT: list[dict[str, list[str]]] = [{"seat": []}, {"player": []}]
AS_SEAT_OR_SPECTATOR: list[dict[str, list[str]]] = [*AS_SEAT, {}]
# `?seat=N` in the document, for an operation that reads no other query parameter.
SEAT_PARAMETERS: list[dict[str, Any]] = [{"in": "query", "schema": SeatArgs}]
# `?seat=N`: which of a player's seats of a game a player token acts as.
SEAT_QUERY = "seat"


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


def _seat_asked() -> int | None:
    """The seat `?seat=N` names, if given; 422 for anything but a seat number."""
    given = request.args.get(SEAT_QUERY)
    if given is None:
        return None
    if not (given.isascii() and given.isdigit() and len(given) <= 2) or int(given) > MAX_SEAT:
        raise refusals.BadRequest(f"seat is a seat number, 0 to {MAX_SEAT}")
    return int(given)


def caller() -> SeatRef:
    """The seat the request's bearer names: a seat token's, or a player token's own seat
    (`?seat=N` among several). The player token is read anew: a revoked one stops here."""
    token = bearer()
    wanted = _seat_asked()
    if token is not None and is_player_token(token):
        return PlayerSeat(player_of_token(referee(), token), wanted)
    return SeatToken(token, wanted)


def viewer(session: Session, game_id: str) -> int | None:
    """The caller's seat in this game, to read its view; None for a spectator; 401 for a
    bad token, 403 for a player token without `read`."""
    asked = caller()
    if isinstance(asked, SeatToken) and asked.token is None and asked.seat is None:
        return None
    return seat_of(session, game_id, asked, READ)


def seat(session: Session, game_id: str, scope: str = READ) -> int:
    """The caller's seat, which this request needs, to read (`READ`) or to act (`PLAY`)."""
    return seat_of(session, game_id, caller(), scope)


# The cookie a game's pages know a browser's seat by (`api/pages/seat_links.py` sets it,
# scoped to `/g/<id>`): the seat's token.
SEAT_COOKIE = "seat"


def cookie_token() -> str | None:
    """This browser's seat token for the game of the page, if it holds a plausible one."""
    token = request.cookies.get(SEAT_COOKIE)
    return token if token and len(token) <= MAX_TOKEN else None


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
