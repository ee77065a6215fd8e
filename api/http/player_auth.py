"""Who the player asking is: a signed-in browser (its session cookie) or a player token."""

from __future__ import annotations

from collections.abc import Callable

from flask import request

from api.http.context import referee
from api.http.seat_auth import bearer
from referee.service import profiles, refusals
from referee.service.players import Player, is_player_token, player_of_session, player_of_token

# The cookie of a signed-in browser: HttpOnly, SameSite=Lax, Secure behind https.
PLAYER_COOKIE = "player"


def current_player(scope: str) -> Player:
    """The player this request comes from, allowed `scope`; 401 or 403 otherwise."""
    token = bearer()
    if token is not None:
        if not is_player_token(token):
            raise refusals.Unauthorized("this needs a player token (rp_...) or a signed-in browser")
        player = player_of_token(referee(), token)
    else:
        player = player_of_session(referee(), request.cookies.get(PLAYER_COOKIE))
    _seen(player)
    player.require(scope)
    return player


def signed_in() -> Player | None:
    """The player a browser's session cookie signs in, if any (pages that work either way)."""
    try:
        player = player_of_session(referee(), request.cookies.get(PLAYER_COOKIE))
    except refusals.Unauthorized:
        return None
    return _seen(player)


def still_signed_in() -> Callable[[], bool]:
    """For an answer that outlasts its request (a stream): whether the player credential
    the request came with (its player token, else its session cookie) still holds, asked
    anew at each call, so that a token revoked or a browser signed out ends the stream."""
    chosen = referee()
    token = bearer()
    cookie = request.cookies.get(PLAYER_COOKIE)

    def holds() -> bool:
        try:
            if token is not None:
                player_of_token(chosen, token)
            else:
                player_of_session(chosen, cookie)
        except refusals.Unauthorized:
            return False
        return True

    return holds


def signed_in_or_token() -> Player | None:
    """The player a valid player token or session names, if any (public reads that
    show a player more, or less: its own private seeks, not those of whom it blocks)."""
    token = bearer()
    try:
        if token is not None and is_player_token(token):
            return _seen(player_of_token(referee(), token))
    except refusals.Unauthorized:
        return None
    return signed_in()


def _seen(player: Player) -> Player:
    """The player, noted as seen: standing seeks pause for a player long away."""
    profiles.seen(referee(), player.address)
    return player
