"""The pages of open games: `/seeks`, those one may join (by game), with a form to post one;
and `/seeks/<id>`, an open game's own page, the one its link shares.

The use cases are `referee.service.seeks`'s; these pages say them in words:
counts, time per turn, who is seated (public names only), how long ago it
was posted, when it expires. A signed-in player joins with one click, a
stranger is offered the sign-in page instead. Forms carry the pages' CSRF
protections (`kit.check_csrf`) and answer with a redirect to the open
game's page (post/redirect/get); a refusal answers the page again with its
reason, having changed nothing. Posting, joining and leaving are counted
per player as through the API (`REFEREE_RATE_SEEKS`).

Once the game started, the page links a player seated at it to its seat
(its play-now link, as `/me` does) and anyone else to watching it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from flask import Blueprint, redirect, render_template, request, url_for
from werkzeug.wrappers.response import Response

from api.http import throttle
from api.http.context import referee
from api.http.errors import Problem, status_of
from api.http.player_auth import signed_in
from api.pages import kit
from api.pages.in_words import ago_words, deadline_words, per_turn_words
from referee import bots, games
from referee.delivery.play_links import play_url, works_until
from referee.i18n import N_, _, ngettext
from referee.ratings import Shown
from referee.service import refusals
from referee.service.my_games import held_seat
from referee.service.players import PLAY, Player
from referee.service.profiles import profile
from referee.service.seeks import (
    MOST_INVITED,
    RATING_HIGHEST,
    RATING_LOWEST,
    NewSeek,
    SeekShown,
    get_seek,
    join_seek,
    leave_seek,
    list_seeks,
    post_seek,
    start_seek,
    withdraw_seek,
)
from referee.store.clock import parse_stamp
from referee.store.tables import GameStatus, SeekStatus

if TYPE_CHECKING:
    from referee.service import Referee

bp = Blueprint("seeks", __name__)

SIGN_IN = "/me/sign-in"
# The times per turn the form offers (the API takes any the referee keeps).
DEADLINES = {
    "": N_("no time limit"),
    "24h": N_("1 day"),
    "48h": N_("2 days"),
    "72h": N_("3 days"),
    "7d": N_("1 week"),
}
FORM_FIELDS = ("game", "min", "max", "deadline", "bots", "invite", "rating_min", "rating_max")
# What the form keeps of a typed field when it is shown again.
TYPED_MOST = 200

STATUS_WORDS: dict[str, str] = {
    SeekStatus.OPEN: N_("open: waiting for players"),
    SeekStatus.STARTED: N_("started"),
    SeekStatus.WITHDRAWN: N_("withdrawn by the player who posted it"),
    SeekStatus.EXPIRED: N_("expired before enough players joined"),
}

Act = Callable[["Referee", Player, str], SeekShown]
ACTIONS: dict[str, Act] = {
    "join": join_seek,
    "leave": leave_seek,
    "withdraw": withdraw_seek,
    "start": start_seek,
}
# The actions counted against the player's rate, as the API counts them.
COUNTED = {"join", "leave"}


def _title(name: str) -> str:
    try:
        return _(games.get(name).title)
    except KeyError:
        return name


def _words(refused: refusals.Refusal) -> str:
    """A refusal's reason as a sentence on a page."""
    reason = refused.reason
    return reason[:1].upper() + reason[1:] + ("" if reason.endswith(".") else ".")


def rated(name: str, rating: Shown | None) -> dict[str, Any]:
    """A player of an open game with its rating at the game (None: not rated yet)."""
    return {
        "name": name,
        "rating": None if rating is None else rating.rating,
        "provisional": rating is None or rating.provisional,
    }


def range_words(low: int | None, high: int | None) -> str:
    """An open game's rating range: "ratings 1400 to 1700", "ratings from 1600"."""
    if low is not None and high is not None:
        return _("ratings %(low)d to %(high)d") % {"low": low, "high": high}
    if low is not None:
        return _("ratings from %(low)d") % {"low": low}
    return "" if high is None else _("ratings up to %(high)d") % {"high": high}


def card(seek: SeekShown, now: datetime) -> dict[str, Any]:
    """An open game as the pages show it, in words."""
    if seek.max_players > seek.min_players:
        players = _("%(fewest)d to %(most)d players") % {
            "fewest": seek.min_players,
            "most": seek.max_players,
        }
    else:
        players = ngettext("%(num)d player", "%(num)d players", seek.max_players) % {
            "num": seek.max_players
        }
    startable = seek.bots is not None or len(seek.seated) >= seek.min_players
    return {
        "id": seek.id,
        "game": seek.game,
        "title": _title(seek.game),
        "players": players,
        "max_players": seek.max_players,
        "seated": list(seek.seated),
        "seats": _("%(seated)d of %(most)d seated")
        % {"seated": len(seek.seated), "most": seek.max_players},
        # A seek of 3 to 4 players may start with 3: said where it is so.
        "starts_with": seek.min_players if seek.min_players < seek.max_players else None,
        "open_seats": seek.open_seats,
        "per_turn": per_turn_words(seek.deadline_seconds),
        "rated": seek.rated,
        "bots": seek.bots,
        "by": seek.by,
        "by_player": rated(seek.by, seek.by_rating),
        "seated_players": [
            rated(name, rating)
            for name, rating in zip(seek.seated, seek.seated_ratings, strict=True)
        ],
        "range": range_words(seek.rating_min, seek.rating_max),
        "posted": ago_words(parse_stamp(seek.created_at), now),
        "posted_at": seek.created_at,
        "expires": deadline_words(parse_stamp(seek.expires_at), now),
        "expires_at": seek.expires_at,
        "status": seek.status,
        "status_words": _(STATUS_WORDS[seek.status])
        if seek.status in STATUS_WORDS
        else seek.status,
        "open": seek.status == SeekStatus.OPEN,
        "private": seek.private,
        "invited": list(seek.invited),
        "mine": seek.mine,
        "by_me": seek.by_me,
        "can_join": seek.status == SeekStatus.OPEN and not seek.mine and seek.open_seats > 0,
        "can_start": seek.by_me and seek.status == SeekStatus.OPEN and startable,
        "game_id": seek.game_id,
    }


def _player() -> Player:
    player = signed_in()
    if player is None:
        raise Problem(
            401, "unauthorized", _("Sign in first: ask for a link by mail on /me/sign-in.")
        )
    player.require(PLAY)
    return player


def _named(player: Player | None) -> bool:
    return player is not None and profile(referee(), player).name is not None


# -- the list ----------------------------------------------------------------


def _deadline_choices() -> dict[str, str]:
    """The times per turn the form offers, in the reader's language."""
    return {value: _(words) for value, words in DEADLINES.items()}


def _list_page(
    player: Player | None,
    message: str | None = None,
    typed: Mapping[str, str] | None = None,
) -> str:
    chosen = request.args.get("game") or None
    cursor = request.args.get("cursor") or None
    if cursor is not None and (len(cursor) > 40 or not cursor.isprintable()):
        raise Problem(422, "bad_request", _("This is not a place in the list that it gave."))
    page = list_seeks(referee(), None if player is None else player.address, chosen, cursor)
    now = datetime.now(UTC)
    every = games.all_games()
    return render_template(
        "web/seeks.html",
        seeks=[card(seek, now) for seek in page.seeks],
        next_cursor=page.next_cursor,
        chosen=chosen,
        chosen_title=_title(chosen) if chosen else None,
        choices=[(game.name, _(game.title)) for game in every],
        signed_in=player is not None,
        named=_named(player),
        counts=sorted({count for game in every for count in game.players}),
        levels=sorted({level for game in every for level in bots.levels(game.name)}),
        deadlines=_deadline_choices(),
        most_invited=MOST_INVITED,
        typed=typed or {},
        message=message,
        sign_in=SIGN_IN,
    )


@bp.get("/seeks")
def index() -> str:
    return _list_page(signed_in())


def _count(form: Mapping[str, str], field: str) -> int | None:
    given = form.get(field, "").strip()
    if not given:
        return None
    if not kit.whole_number(given):
        raise refusals.BadRequest(_("%(given)r is not a number of players") % {"given": given[:20]})
    return int(given)


def _rating(form: Mapping[str, str], field: str) -> int | None:
    given = form.get(field, "").strip()
    if not given:
        return None
    if not kit.whole_number(given) or not RATING_LOWEST <= int(given) <= RATING_HIGHEST:
        raise refusals.BadRequest(
            _("a rating bound is a number from %(lowest)d to %(highest)d, not %(given)r")
            % {"lowest": RATING_LOWEST, "highest": RATING_HIGHEST, "given": given[:20]}
        )
    return int(given)


def _new_seek(form: Mapping[str, str]) -> NewSeek:
    """The open game the form asks for."""
    invite = tuple(name.strip() for name in form.get("invite", "").split(",") if name.strip())
    return NewSeek(
        game=form.get("game", ""),
        min_players=_count(form, "min"),
        max_players=_count(form, "max"),
        deadline=form.get("deadline", "").strip() or None,
        rated=form.get("rated") == "on",
        bots=form.get("bots") or None,
        invite=invite,
        rating_min=_rating(form, "rating_min"),
        rating_max=_rating(form, "rating_max"),
    )


@bp.post("/seeks")
def post() -> Response | tuple[str, int]:
    kit.check_csrf()
    player = _player()
    form = request.form
    typed = {field: form.get(field, "")[:TYPED_MOST] for field in FORM_FIELDS}
    typed["rated"] = "on" if form.get("rated") == "on" else ""
    try:
        new = _new_seek(form)
        throttle.check("seeks", player.address)
        seek = post_seek(referee(), player, new)
    except (
        refusals.UnknownGame,
        refusals.BadPlayers,
        refusals.BadOptions,
        refusals.BadRequest,
        refusals.NeedsName,
        refusals.SeekRefusal,
    ) as refused:
        return _list_page(player, _words(refused), typed), status_of(refused)
    return redirect(url_for(".seek", seek_id=seek.id), 303)


# -- one open game -------------------------------------------------------------


def _game_link(player: Player | None, game_id: str, now: datetime) -> dict[str, Any]:
    """Where the page sends a click on the started game: a seated player to its seat's
    play-now link while it works (as `/me` does), anyone else to watching it."""
    held = None if player is None else held_seat(referee(), player, game_id)
    if held is None:
        return {"href": url_for("pages.game.game", game_id=game_id), "mine": False, "over": None}
    until = works_until(held)
    href = (
        url_for("pages.game.game", game_id=game_id)
        if until is not None and now > until
        else play_url("", referee().secret(), game_id, held.seat)
    )
    return {"href": href, "mine": True, "over": held.status != GameStatus.ACTIVE}


def _seek_page(player: Player | None, seek_id: str, message: str | None = None) -> str:
    viewer = None if player is None else player.address
    shown = get_seek(referee(), seek_id, viewer)
    now = datetime.now(UTC)
    game = None if shown.game_id is None else _game_link(player, shown.game_id, now)
    return render_template(
        "web/seek.html",
        seek=card(shown, now),
        game=game,
        signed_in=player is not None,
        named=_named(player),
        message=message,
        sign_in=SIGN_IN,
    )


@bp.get("/seeks/<seek_id>")
def seek(seek_id: str) -> str:
    return _seek_page(signed_in(), seek_id)


@bp.post("/seeks/<seek_id>/<any(join, leave, withdraw, start):action>")
def act(seek_id: str, action: str) -> Response | tuple[str, int]:
    """Join, leave, withdraw or start; a refusal shows on the open game's page."""
    kit.check_csrf()
    player = _player()
    if action in COUNTED:
        throttle.check("seeks", player.address)
    try:
        ACTIONS[action](referee(), player, seek_id)
    except (refusals.SeekRefusal, refusals.NeedsName) as refused:
        return _seek_page(player, seek_id, _words(refused)), status_of(refused)
    return redirect(url_for(".seek", seek_id=seek_id), 303)
