"""`/me`: a signed-in player's page: every game of mine, my turn first, my open games, my
public name and whom I block (their forms: `api/pages/profile.py`), and my API tokens.

Three lists from `first_pages` (those of `my_games`, read at once): "Your
turn" (soonest deadline first, said in words), "Waiting" (whose turn it
is), "Finished" (how it went). Each row
links to its play-now link (`/g/<id>/play/<token>`), so that a click opens
that seat's page signed in (a finished game's, where the rematch is
offered, while its links work); a finished game's row past that links to
its page. A small script (`me.js`) follows `GET /v1/me/events`
and fetches the page again when one of its games changed; without it the
page is as fresh as its last load.

A browser that is not signed in is sent to `/me/sign-in`. Tokens are made
and revoked by forms (CSRF-checked as every form of the pages); a new
token's secret is shown once, on the answer to the form that made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, make_response, render_template, request, url_for

from api.http.context import referee
from api.http.player_auth import signed_in
from api.pages import kit
from api.pages.in_words import deadline_words, result_words, seat_words, won
from api.pages.seeks import card
from referee import games
from referee.delivery.play_links import play_url, works_until
from referee.i18n import _, when
from referee.names import shown as shown_name
from referee.service import refusals, table_talk
from referee.service.my_events import mark_now
from referee.service.my_games import MyGame, first_pages
from referee.service.players import PLAY, READ, Player
from referee.service.profiles import blocks, profile
from referee.service.seeks import my_seeks
from referee.service.tokens import list_tokens, make_token, revoke_token
from referee.store.tables import GameStatus

bp = Blueprint("me", __name__)

SIGN_IN = "/me/sign-in"
# Finished games the page lists, the newest first: the rest are in `GET /v1/me/games`.
FINISHED_SHOWN = 20
# Games in play the page lists (my turns first): a page a person reads, not an archive;
# `GET /v1/me/games` pages through them all.
RUNNING_SHOWN = 100


@dataclass(frozen=True, slots=True)
class Row:
    """One game as the page lists it."""

    id: str
    version: int
    title: str
    href: str
    # The other seats' names, each with its player's public name (None: a bot, or a
    # player without one: shown unlinked), and those of the seats to act (mine left out).
    others: list[tuple[str, str | None]]
    to_act: list[str]
    due: str
    # Whether the turn has a deadline at all.
    timed: bool
    overdue: bool
    moves: int
    result: str
    won: bool
    # Each seat's final score, with its name (finished games).
    scores: list[tuple[str, Any]]
    # The others' messages my seats have not read (`referee.service.table_talk`).
    unread: int = 0


def _title(name: str) -> str:
    try:
        return _(games.get(name).title)
    except KeyError:
        return name


def _href(game: MyGame, mine: list[int], secret: bytes, now: datetime) -> str:
    """Where a click on the game goes: its play-now link for the seat that must act (else
    my first), so that it opens signed in (a finished game's seat is offered the rematch
    there); a finished game's page once its links stopped working."""
    until = works_until(game)
    if until is not None and now > until:
        # A path built by hand: `url_for` costs more than the rest of a row.
        return f"/g/{game.id}"
    seat = next((n for n in mine if n in game.to_act), mine[0])
    # A path on this site: the page is read where it is served.
    return play_url("", secret, game.id, seat)


def _row(game: MyGame, secret: bytes, now: datetime, unread: int) -> Row:
    names = [shown_name(s.name) or seat_words(s.seat) for s in game.seats]
    mine = [s.seat for s in game.seats if s.me]
    running = game.status == GameStatus.ACTIVE
    due = game.deadline if running else None
    return Row(
        id=game.id,
        version=game.version,
        title=_title(game.game),
        href=_href(game, mine, secret, now),
        others=[(names[s.seat], s.profile) for s in game.seats if not s.me],
        to_act=[names[n] for n in game.to_act if n < len(names) and n not in mine],
        due=deadline_words(due, now),
        timed=due is not None,
        overdue=due is not None and due <= now,
        moves=game.version,
        result="" if running else result_words(game.result, mine),
        won=not running and won(game.result, mine),
        scores=list(zip(names, (game.result or {}).get("scores", []), strict=False)),
        unread=unread,
    )


def _lists(player: Player) -> dict[str, Any]:
    """The page's three lists, read now."""
    now = datetime.now(UTC)
    secret = referee().secret()
    pages = first_pages(
        referee(), player, {GameStatus.ACTIVE: RUNNING_SHOWN, GameStatus.OVER: FINISHED_SHOWN}
    )
    running, over = pages[GameStatus.ACTIVE], pages[GameStatus.OVER]
    unread = _unread([*running.games, *over.games])
    rows = [
        (game.my_turn, _row(game, secret, now, unread.get(game.id, 0))) for game in running.games
    ]
    return {
        "turns": [row for mine, row in rows if mine],
        "waiting": [row for mine, row in rows if not mine],
        "finished": [_row(game, secret, now, unread.get(game.id, 0)) for game in over.games],
        "more_running": running.next_cursor is not None,
        "more_finished": over.next_cursor is not None,
    }


def _unread(listed: list[MyGame]) -> dict[str, int]:
    """The others' messages my seats of each game have not read, where there are any."""
    seats = {(game.id, seat.seat) for game in listed for seat in game.seats if seat.me}
    counts: dict[str, int] = {}
    for (game_id, _seat), found in table_talk.unread(referee(), seats).items():
        counts[game_id] = counts.get(game_id, 0) + found.count
    return counts


def _to_sign_in() -> Response:
    response = make_response("", 303)
    response.headers["Location"] = SIGN_IN
    return response


def render(
    player: Player,
    made: dict[str, Any] | None = None,
    errors: Any = None,
    typed: dict[str, str] | None = None,
) -> str:
    """The page; `errors` and `typed`: what a form refused, said beside it with what was typed."""
    now = datetime.now(UTC)
    tokens = [
        {
            "id": token.id,
            "name": token.name,
            "scopes": ", ".join(token.scopes),
            "made": when(datetime.fromisoformat(token.created_at), now),
            "used": when(datetime.fromisoformat(token.last_used_at), now)
            if token.last_used_at
            else "",
        }
        for token in list_tokens(referee(), player)
    ]
    return render_template(
        "web/me.html",
        address=player.address,
        tokens=tokens,
        made=made,
        errors=errors or {},
        typed=typed or {},
        public_name=profile(referee(), player).name,
        seeks=[card(seek, now) for seek in my_seeks(referee(), player)],
        blocks=blocks(referee(), player),
        # The mark the page was read at: its script follows the events from there.
        since=mark_now(),
        **_lists(player),
    )


@bp.get("/me")
def home() -> Response | str:
    player = signed_in()
    if player is None:
        return _to_sign_in()
    return render(player)


@bp.post("/me/tokens")
def new_token() -> Response | tuple[str, int]:
    """Make a token; its secret is on this answer and nowhere else, ever."""
    kit.check_csrf()
    player = signed_in()
    if player is None:
        return _to_sign_in()
    name = request.form.get("name", "")
    scopes = [scope for scope in (READ, PLAY) if request.form.get(f"scope-{scope}") == "on"]
    try:
        made = make_token(referee(), player, name, scopes)
    except refusals.BadRequest as refused:
        field = next(iter(refused.extra.get("errors", {})), "name")
        return render(player, errors={field: refused.reason}), 422
    token = made.token
    shown = {"name": token.name, "scopes": ", ".join(token.scopes), "secret": made.secret}
    return render(player, made=shown), 201


@bp.post("/me/tokens/<int:token_id>/revoke")
def revoke(token_id: int) -> Response:
    kit.check_csrf()
    player = signed_in()
    if player is None:
        return _to_sign_in()
    revoke_token(referee(), player, token_id)
    response = make_response("", 303)
    response.headers["Location"] = url_for(".home", _anchor="tokens")
    return response
