"""Game pages for people: a lobby, a game page, and the personal link of each seat.

Server-rendered HTML that works without JavaScript (a small script follows
the game's event stream and updates the page in place, and fills the move field).

The personal link `/g/<id>/seat/<token>` carries the seat's secret once:
its answer stores the token in an HttpOnly, SameSite=Strict cookie scoped to
`/g/<id>` and sends the browser on to the clean game URL. The token never
appears in a page, a script or a later URL; that one answer is sent with
`Referrer-Policy: no-referrer` (other pages with `same-origin`, so nothing
leaves the site), and the access logs of the development server and
gunicorn show the link with its token cut out (`redact`).
That hop is a tiny page with a meta refresh, not a 303: a browser does
not send a Strict cookie on a redirect that began on another site (a
mail reader), so the first game page would otherwise show a spectator's view.
A mail's play-now link `/g/<id>/play/<token>` (`referee.service.play_now`)
hands the browser its seat the same way: same cookie, same hop, same
referrer policy, its token cut out of the logs too.

Forms are protected against cross-site requests three times: cookies are
SameSite=Strict, a browser's `Origin` must be that of REFEREE_PUBLIC_URL,
and each form carries a per-browser token that must equal the `csrf`
cookie (a double-submit token, which needs no server secret and so works
across gunicorn processes). Cookies are `Secure` when the public URL is
https, also behind a proxy that ends TLS and speaks plain HTTP to us.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Response,
    current_app,
    g,
    jsonify,
    make_response,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup
from marshmallow import ValidationError
from sqlmodel import Session
from werkzeug.exceptions import HTTPException

from api import bodies, errors, throttle
from api.context import find, referee, session
from api.errors import Problem, status_of
from api.expensive import taking_turns
from api.rules import describe
from api.schemas import PlayerIn
from referee import games, render
from referee.engine import Building, Played
from referee.games import AnyGame
from referee.names import shown as shown_name
from referee.names import with_bot
from referee.replay import SEALED_NOTATION, envelope
from referee.service import creating, game_states, reachability, refusals
from referee.service.building import build_move
from referee.service.play_now import open_seat
from referee.service.rematching import Rematch, accept_rematch, rematch_of, rematch_seat
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.service.vacations import GameClock, game_clock
from referee.store import clock, keys, reads, records
from referee.store.tables import Game, Submission, TimeoutPolicy

bp = Blueprint(
    "web",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)

JSONish = dict[str, Any]

# What the referee plays for a seat out of time, as the pages say it.
ON_TIMEOUT: dict[str, str] = {
    TimeoutPolicy.RANDOM: "the referee plays a random legal move for them",
    TimeoutPolicy.PASS: "the referee passes for them",
    TimeoutPolicy.FORFEIT: "they forfeit the game",
    TimeoutPolicy.BOT: "a bot plays for them",
}

CSRF_COOKIE = "csrf"
SEAT_COOKIE = "seat"
SEAT_COOKIE_DAYS = 180
# How long a form waits for the referee's answer before showing "recorded".
WAIT = 10.0
MAX_NOTATION = 400
LOBBY_GAMES = 50
# Moves of the log a page lists: a window around the position shown, not the whole log.
LOG_PAGE = 50
# Legal moves offered as buttons up to this many; beyond it, only the text field is quick.
MOVE_BUTTONS = 400

CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


@bp.app_template_filter("bdi")
def bdi(name: str) -> Markup:
    """A player's name isolated from the text around it (`<bdi>`): a right-to-left
    name cannot reorder the words and numbers beside it."""
    return Markup("<bdi>{}</bdi>").format(name)


def shown_names(seats: list[Any]) -> list[str]:
    """The players' names as pages show them (`names.shown`); `Seat N` where none is left;
    a bot's seat says so (`Name (bot, strong)`)."""
    return [with_bot(shown_name(s.name) or f"Seat {s.seat}", s.bot) for s in seats]


_WHOLE = re.compile(r"[0-9]{1,9}")
_INTEGER = re.compile(r"-?[0-9]{1,9}")
# Personal links, and the accept, unsubscribe, sign-in and play-now links of mails, hold secrets.
_SEAT_PATH = re.compile(r"(/seat/|/accept/|/unsubscribe/|/me/sign-in/|/play/)[^/\s?\"']+")


def redact(text: str) -> str:
    """`text` with the token of any personal link cut out."""
    return _SEAT_PATH.sub(r"\1<token>", text)


class RedactSeatLinks(logging.Filter):
    """Cuts seat tokens out of access log lines (werkzeug's and gunicorn's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {
                k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()
            }
        return True


def install_log_redaction() -> None:
    for name in ("werkzeug", "gunicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSeatLinks) for f in logger.filters):
            logger.addFilter(RedactSeatLinks())


# -- cookies and CSRF --------------------------------------------------------


def csrf_token() -> str:
    """This browser's form token (made on first use, set as a cookie after the request)."""
    token = getattr(g, "csrf", None)
    if token is None:
        given = request.cookies.get(CSRF_COOKIE, "")
        token = given if 20 <= len(given) <= 100 else secrets.token_urlsafe(24)
        g.csrf = token
    return str(token)


def public_origin() -> str:
    """The origin (scheme, host, port) of REFEREE_PUBLIC_URL: where forms are served from."""
    parts = urlsplit(referee().settings.public_url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def secure_cookies() -> bool:
    """Cookies go over HTTPS only when the public URL is https (a proxy may end TLS before us)."""
    return request.is_secure or referee().settings.public_url.lower().startswith("https://")


def check_csrf(referrerless: bool = False) -> None:
    """Refuse a form not sent from this site. `referrerless`: the form's page is sent
    with `Referrer-Policy: no-referrer`, so a browser sends its Origin as "null"; the
    form token, a SameSite=Strict cookie, still proves the form is this site's."""
    # The Origin a browser sends is compared with the configured public URL, not
    # with the Host header, which the sender controls. A request without one
    # (an old browser, a script) still needs the form token below.
    origin = request.headers.get("Origin")
    if referrerless and origin == "null":
        origin = None
    if origin is not None and origin.rstrip("/").lower() != public_origin():
        raise Problem(403, "forbidden", "This form was sent from another site.")
    cookie = request.cookies.get(CSRF_COOKIE, "")
    given = request.form.get("csrf", "")
    if not cookie or not hmac.compare_digest(cookie.encode(), given.encode()):
        raise Problem(
            403,
            "forbidden",
            "This form has expired or was not sent from this site: reload the page and try again.",
        )


def _seat_cookie_path(game_id: str) -> str:
    return url_for("web.game", game_id=game_id)


def cookie_seat(db: Session, game_id: str) -> int | None:
    """The seat whose token this browser holds for this game, if any."""
    token = request.cookies.get(SEAT_COOKIE)
    if not token or len(token) > 200:
        return None
    return keys.seat_of_token(db, game_id, token)


NO_SEAT_HERE = "This browser holds no seat of this game: open your personal link first."


def keep_csrf_cookie(response: Response) -> None:
    """Set the form token this request made (`csrf_token`) as the browser's cookie."""
    token = getattr(g, "csrf", None)
    if token is not None and request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(
            CSRF_COOKIE, token, httponly=True, samesite="Strict", secure=secure_cookies()
        )


_SECRET_PAGES = ("web.seat", "web.play", "sign_in_pages.link")


@bp.after_request
def _headers(response: Response) -> Response:
    keep_csrf_cookie(response)
    response.headers.setdefault("Content-Security-Policy", CSP)
    # The pages whose URL holds a secret (the personal, play-now and sign-in links) send
    # no referrer at all; other pages send it only to this site (no-referrer everywhere
    # would make forms' Origin "null").
    policy = "no-referrer" if request.endpoint in _SECRET_PAGES else "same-origin"
    response.headers["Referrer-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    if request.endpoint != "web.static":
        response.headers["Cache-Control"] = "no-store"
    return response


@bp.app_context_processor
def _template_globals() -> dict[str, Any]:
    return {"csrf_token": csrf_token}


@bp.errorhandler(Problem)
def _problem_page(error: Problem) -> tuple[str, int, dict[str, str]]:
    page = render_template("web/error.html", status=error.status, detail=error.detail)
    return page, error.status, error.headers


@bp.errorhandler(refusals.Refusal)
def _refusal_page(refused: refusals.Refusal) -> tuple[str, int]:
    status = status_of(refused)
    return render_template("web/error.html", status=status, detail=refused.reason), status


@bp.errorhandler(HTTPException)
def _http_page(error: HTTPException) -> tuple[str, int]:
    status = error.code or 500
    return render_template("web/error.html", status=status, detail=error.description), status


def as_pages(blueprint: Blueprint) -> None:
    """Serve another blueprint's pages as these: the same headers (CSP, cookies, no-store)
    and the same error pages."""
    blueprint.after_request(_headers)
    blueprint.register_error_handler(Problem, _problem_page)
    blueprint.register_error_handler(refusals.Refusal, _refusal_page)
    blueprint.register_error_handler(HTTPException, _http_page)


# -- the lobby -----------------------------------------------------------------


@bp.get("/")
def lobby() -> str:
    with session() as db:
        found = reads.list_games(db, None, None, None, LOBBY_GAMES)
        rows = [
            {
                "game": game,
                "title": _title(game.name),
                "names": shown_names(reads.seats(db, game.id)),
            }
            for game in found
        ]
    return render_template(
        "web/lobby.html", rules=[describe(r) for r in games.all_games()], rows=rows
    )


@bp.get("/favicon.ico")
def favicon() -> Response:
    """Browsers ask for /favicon.ico whatever a page links: send them to the SVG icon."""
    response = make_response("", 301)
    # Relative, so that it still points right when a proxy serves the site under a prefix.
    response.headers["Location"] = "assets/favicon.svg"
    return response


def _title(name: str) -> str:
    try:
        return games.get(name).title
    except KeyError:
        return name


def _rules(name: str) -> AnyGame:
    try:
        return games.get(name)
    except KeyError:
        raise Problem(404, "not_found", f"There is no game called {name!r} here.") from None


@bp.get("/new/<name>")
def new_game(name: str) -> str:
    rules = _rules(name)
    return render_template("web/new.html", **_form_context(rules, {}, {}))


def _widget(spec: JSONish) -> str:
    """How an option is asked for: a box, a choice, a number, JSON, or text."""
    if spec.get("type") == "boolean":
        return "checkbox"
    if spec.get("enum"):
        return "select"
    if spec.get("type") == "integer":
        return "number"
    if isinstance(spec["default"], dict | list) or spec.get("type") in ("array", "object"):
        return "json"
    return "text"


def _shown(spec: JSONish) -> str:
    """An option's default as its field shows it."""
    default = spec["default"]
    if _widget(spec) == "json":
        return json.dumps(default, indent=1, sort_keys=True)
    return "" if default is None else str(default)


def _form_context(rules: AnyGame, values: Mapping[str, str], errors: dict[str, str]) -> JSONish:
    described = describe(rules)
    options = [
        {
            "name": name,
            "key": f"opt-{name}",
            "label": name.replace("_", " ").capitalize(),
            "widget": _widget(spec),
            "default": _shown(spec),
            "checked": (f"opt-{name}" in values) if values else bool(spec["default"]),
            "spec": spec,
        }
        for name, spec in described["options"].items()
    ]
    return {
        "rules": described,
        "options": options,
        "seats": max(rules.players),
        "values": values,
        "errors": errors,
        "needs_key": bool(_api_key()),
        "on_timeout": ON_TIMEOUT,
        "bots": described["bots"],
    }


def _api_key() -> str | None:
    key = current_app.config.get("REFEREE_API_KEY")
    return str(key) if key else None


def _read_players(form: Mapping[str, str], seats: int, errors: dict[str, str]) -> list[JSONish]:
    players: list[JSONish] = []
    for n in range(seats):
        name = form.get(f"name-{n}", "").strip()
        email = form.get(f"email-{n}", "").strip()
        # "person", or a bot's level; a bot's seat may go unnamed.
        bot = form.get(f"bot-{n}", "person").strip() or "person"
        if bot != "person" and not name:
            name = f"Bot {n + 1}"
        if not name:
            if email:
                errors[f"name-{n}"] = "Give this player a name (or clear the mail address)."
            continue
        if bot != "person" and email:
            errors[f"email-{n}"] = "A bot has no mail address: clear it, or choose a person."
            continue
        try:
            loaded = {"name": name, "email": email or None, "bot": None if bot == "person" else bot}
            players.append(PlayerIn().load(loaded))
        except ValidationError as error:
            found = error.messages if isinstance(error.messages, dict) else {"name": error.messages}
            for field, messages in found.items():
                errors[f"{field}-{n}"] = " ".join(map(str, messages))
    return players


def _read_options(form: Mapping[str, str], described: JSONish, errors: dict[str, str]) -> JSONish:
    options: JSONish = {}
    for name, spec in described["options"].items():
        key = f"opt-{name}"
        if spec.get("type") == "boolean":
            options[name] = key in form
            continue
        if key not in form:
            continue  # the option's default applies
        raw = form.get(key, "").strip()
        widget = _widget(spec)
        if widget == "number":
            if _INTEGER.fullmatch(raw):
                options[name] = int(raw)
            else:
                errors[key] = f"{name}: give a whole number."
        elif widget == "json":
            try:
                options[name] = bodies.loads(raw)
            except bodies.BadJSON as error:
                errors[key] = f"{name}: {error}"
        else:
            options[name] = raw
    return options


def _said(field: str, messages: Any) -> str:
    """Marshmallow's messages (nested for lists and objects) as one sentence."""
    if isinstance(messages, dict):
        return " ".join(_said(f"{field}[{key}]", inner) for key, inner in messages.items())
    if isinstance(messages, list | tuple):
        text = " ".join(str(m) for m in messages)
    else:
        text = str(messages)
    return text if field.startswith("_") else f"{field}: {text}"


def _form_errors(refused: refusals.Refusal) -> dict[str, str]:
    """The new-game form's messages for a refusal of the service, by field."""
    if isinstance(refused, refusals.BadRequest):
        return {"deadline": f"Time per turn: {refused.reason}"}
    if isinstance(refused, refusals.Unauthorized):
        # Bots alone, without the server's key.
        return {"players": refused.reason[:1].upper() + refused.reason[1:] + "."}
    said = {}
    for field, messages in refused.extra.get("errors", {}).items():
        seat = _SEAT_FIELD.fullmatch(field)
        if seat is not None:
            # A seat's field (`players.1.bot`): said beside that seat's row.
            said[f"{seat[2]}-{seat[1]}"] = " ".join(map(str, messages))
            continue
        target = "players" if field in ("_players", "players") else f"opt-{field}"
        said[target] = _said(field, messages) if target != "players" else " ".join(messages)
    return said


_SEAT_FIELD = re.compile(r"players\.([0-9]+)\.(bot|email|name)")


def _form_game(rules: AnyGame, form: Mapping[str, str], errors: dict[str, str]) -> JSONish:
    """The new game the form asks for, as the service's command fields; notes what is wrong."""
    key = _api_key()
    given = form.get("api_key", "")
    if key and not hmac.compare_digest(given.encode(), key.encode()):
        errors["api_key"] = "This server needs its API key to create games."
    players = _read_players(form, max(rules.players), errors)
    options = _read_options(form, describe(rules), errors)
    counts = ", ".join(map(str, rules.players))
    if len(players) not in rules.players and "players" not in errors:
        errors["players"] = (
            f"{rules.title} is played by {counts} players; you named {len(players)}."
        )
    on_timeout = form.get("on_timeout", "random")
    if on_timeout not in ON_TIMEOUT:
        errors["on_timeout"] = "Choose what happens when time runs out."
    return {
        "game": rules.name,
        "players": [creating.Player(p["name"], p["email"], p["bot"]) for p in players],
        "options": options,
        "deadline": form.get("deadline", "").strip() or None,
        "on_timeout": on_timeout,
        # With the server's key this is a trusted client, as for the API.
        "trusted": key is not None,
    }


@bp.post("/new/<name>")
def create_game(name: str) -> tuple[str, int]:
    check_csrf()
    rules = _rules(name)
    form = request.form
    errors: dict[str, str] = {}
    command = creating.NewGame(**_form_game(rules, form, errors))
    if not errors and not command.trusted:
        throttle.check("create")
    created = None
    try:
        if not errors:
            created = creating.create_game(referee(), command)
    except (
        refusals.BadPlayers,
        refusals.BadOptions,
        refusals.BadRequest,
        refusals.Unauthorized,
    ) as refused:
        errors |= _form_errors(refused)
    if created is None:
        values = {k: v for k, v in form.items() if k not in ("csrf", "api_key")}
        return render_template("web/new.html", **_form_context(rules, values, errors)), 422
    game_id = created.game.id
    # A seat with a mail address gets its link there, not on this page.
    links = [
        {
            "seat": n,
            "name": shown_name(player.name) or f"Seat {n}",
            "link": None
            if (player.email and not command.trusted) or player.bot
            else url_for(".seat", game_id=game_id, token=token, _external=True),
            "bot": player.bot,
        }
        for n, (player, token) in enumerate(zip(command.players, created.tokens, strict=True))
    ]
    page = render_template("web/created.html", rules=describe(rules), game_id=game_id, links=links)
    return page, 201


# -- a seat's personal link ------------------------------------------------------


@bp.get("/g/<game_id>/seat/<token>")
def seat(game_id: str, token: str) -> Response:
    with session() as db:
        game = find(db, game_id)
        number = keys.seat_of_token(db, game.id, token) if len(token) <= 200 else None
        seats = reads.seats(db, game.id)
        name = next((shown_name(s.name) for s in seats if s.seat == number), None)
    if number is None:
        raise Problem(404, "not_found", "This personal link is not a seat of this game.")
    target = url_for(".game", game_id=game.id)
    response = make_response(render_template("web/opening.html", target=target, name=name))
    return _with_seat_cookie(response, game.id, token)


@bp.get("/g/<game_id>/play/<token>")
def play(game_id: str, token: str) -> Response:
    """A mail's play-now link: the browser gets the seat by the personal link's hop."""
    opened = open_seat(referee(), game_id, token)
    target = url_for(".game", game_id=opened.game_id)
    name = shown_name(opened.name)
    response = make_response(render_template("web/opening.html", target=target, name=name))
    return _with_seat_cookie(response, opened.game_id, opened.token)


def _with_seat_cookie(response: Response, game_id: str, token: str) -> Response:
    """`response`, storing the seat's token for the pages of that game alone."""
    response.set_cookie(
        SEAT_COOKIE,
        token,
        max_age=SEAT_COOKIE_DAYS * 24 * 3600,
        path=_seat_cookie_path(game_id),
        httponly=True,
        samesite="Strict",
        secure=secure_cookies(),
    )
    return response


def _cookie_token() -> str | None:
    """This browser's seat token for the game of the page, if it holds a plausible one."""
    token = request.cookies.get(SEAT_COOKIE)
    return token if token and len(token) <= 200 else None


@bp.post("/g/<game_id>/leave")
def leave(game_id: str) -> Response:
    check_csrf()
    response = make_response("", 303)
    response.headers["Location"] = url_for(".game", game_id=game_id)
    response.delete_cookie(
        SEAT_COOKIE,
        path=_seat_cookie_path(game_id),
        secure=secure_cookies(),
        httponly=True,
        samesite="Strict",
    )
    return response


# -- the game page ---------------------------------------------------------------


def _at(game: Game) -> int:
    raw = request.args.get("at")
    if raw is None or raw == "":
        return game.version
    if not whole_number(raw) or int(raw) > game.version:
        raise Problem(
            400, "bad_request", f"'at' is a move number from 0 to {game.version}, not {raw[:20]!r}."
        )
    return int(raw)


def whole_number(text: str) -> bool:
    """ASCII digits, few enough for `int` (str.isdigit also takes '²' and other scripts' digits)."""
    return _WHOLE.fullmatch(text) is not None


@dataclass(frozen=True, slots=True)
class LogWindow:
    """The moves a game page lists: those after `start` up to `end`, and where to page next."""

    start: int
    end: int
    earlier: int | None  # the position whose page lists the moves before, if any
    later: int | None  # the position whose page lists the moves after, if any


def log_window(at: int, version: int) -> LogWindow:
    """LOG_PAGE moves with move `at` among them, so a page's cost does not grow with the log."""
    start = max(0, min(at - LOG_PAGE // 2, version - LOG_PAGE))
    end = min(version, start + LOG_PAGE)
    return LogWindow(
        start,
        end,
        earlier=max(0, start - LOG_PAGE // 2) if start > 0 else None,
        later=min(version, end + LOG_PAGE // 2) if end < version else None,
    )


@dataclass(frozen=True, slots=True)
class _PageReads:
    """What a game page reads from the database, in one reading session."""

    game: Game
    seat: int | None
    at: int
    rules: AnyGame
    seats: list[Any]
    state: Any
    previous: Any  # the state a move before `state` (None at 0): the board marks the last move
    head: Any
    first_sealed: int
    shown: LogWindow
    rows: list[Any]
    answer: JSONish | None
    unreachable: frozenset[int]
    # A finished game's end: the start and every move with its state (for the breakdown).
    history: tuple[Any, list[Played[Any, Any]]] | None
    # A finished game's rematch: who accepted, and the new game once all have.
    rematch: Rematch | None


def _page_reads(game_id: str) -> _PageReads:
    with session() as db:
        game = find(db, game_id)
        seat = cookie_seat(db, game.id)
        at = _at(game)
        history = (
            game_states.history(db, game) if game.status == "over" and at == game.version else None
        )
        if history is None:
            state, previous = game_states.state_and_previous(db, game, at)
        else:
            # The breakdown's one replay gives the last two states too.
            state, previous = _last_two(*history)
        head = state if at == game.version else game_states.state_at(db, game, game.version)
        shown = log_window(at, game.version)
        rules = reads.rules_of(game)
        return _PageReads(
            game=game,
            seat=seat,
            at=at,
            rules=rules,
            seats=reads.seats(db, game.id),
            state=state,
            previous=previous,
            head=head,
            first_sealed=records.sealed_from(game, head),
            shown=shown,
            rows=reads.log(db, game.id, after=shown.start, limit=LOG_PAGE),
            answer=_answer(db, game, seat, rules),
            unreachable=reachability.unreachable_seats(db, game.id),
            history=history,
            rematch=rematch_of(db, game) if game.status == "over" else None,
        )


def _last_two(start: Any, played: list[Played[Any, Any]]) -> tuple[Any, Any | None]:
    """The state after the last move and the one a move earlier (None with no move)."""
    states = [start] + [step.state for step in played]
    return states[-1], (states[-2] if len(states) > 1 else None)


def _log_lines(page: _PageReads, names: list[str]) -> list[JSONish]:
    """The moves the page lists, sealed ones without their notation."""
    return [
        {
            "seq": row.seq,
            "seat": row.seat,
            "name": names[row.seat] if 0 <= row.seat < len(names) else f"Seat {row.seat}",
            "notation": SEALED_NOTATION if row.seq >= page.first_sealed else row.notation,
            "sealed": row.seq >= page.first_sealed,
            "at": row.created_at[:16].replace("T", " "),
        }
        for row in page.rows
    ]


def _player_lines(page: _PageReads, env: JSONish, names: list[str]) -> list[JSONish]:
    """Each seat with its score, whether it acts, resigned or won, and whether it is you."""
    scores = page.rules.scores(page.state)
    resigned = page.rules.resigned(page.state)
    result = env["result"]
    return [
        {
            "seat": s.seat,
            "name": names[s.seat],
            "score": scores[s.seat] if s.seat < len(scores) else None,
            "to_act": s.seat in env["to_act"],
            "resigned": s.seat in resigned,
            "winner": result is not None and s.seat in result["winners"],
            "you": s.seat == page.seat,
            "unreachable": s.seat in page.unreachable,
        }
        for s in page.seats
    ]


def _breakdown(page: _PageReads, names: list[str]) -> list[JSONish]:
    """Each seat's final score line by line, as the rules count it: only on the
    page of a finished game's end (a position in its history shows none)."""
    result = page.rules.result(page.state)
    if result is None or page.history is None:
        return []
    start, played = page.history
    resigned = page.rules.resigned(page.state)
    return [
        {
            "name": names[seat] if seat < len(names) else f"Seat {seat}",
            "lines": lines,
            "total": result.scores[seat],
            "winner": seat in result.winners,
            "resigned": seat in resigned,
        }
        for seat, lines in enumerate(page.rules.breakdown(start, played))
    ]


def _rematch(page: _PageReads, names: list[str]) -> JSONish | None:
    """The rematch offer at a finished game's end (a position in its history shows none)."""
    standing = page.rematch
    if standing is None or page.at != page.game.version:
        return None
    return {
        "game_id": standing.game_id,
        "accepted": [names[seat] for seat in standing.accepted if seat < len(names)],
        "waiting_for": [names[seat] for seat in standing.waiting_for if seat < len(names)],
        "mine": page.seat in standing.accepted,
    }


def _acting(page: _PageReads) -> bool:
    """Whether this browser's seat may move now, on the page of the game's present."""
    game, seat = page.game, page.seat
    latest = page.at == game.version
    return seat is not None and latest and game.status == "active" and seat in game.to_act


def _before(page: _PageReads) -> JSONish | None:
    """The seat's own view a move earlier, so the board marks what the last move did."""
    return None if page.previous is None else page.rules.view(page.previous, page.seat)


def _first_steps(page: _PageReads) -> Building[Any] | None:
    """The choices of a move built on the board, where this browser's seat may move now."""
    if not _acting(page) or page.seat is None:
        return None
    return page.rules.build(page.head, page.seat, ())


def _building_key(page: _PageReads) -> str:
    """A short digest of what the seat answers now (`Game.decision_key`): a move
    half built on the page is dropped when a live update changes it."""
    assert page.seat is not None
    key = page.rules.decision_key(page.head, page.seat)
    text = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def game_context(game_id: str, message: str | None = None, typed: str = "") -> JSONish:
    page = _page_reads(game_id)
    game, rules, seat = page.game, page.rules, page.seat
    names = shown_names(page.seats)
    standing = _clock(game)
    env = envelope(rules, page.state, page.at, seat)
    view = env["state"]
    acting = _acting(page)
    building = _first_steps(page)
    moves = (
        [rules.written(m, game.options) for m in rules.legal_moves(page.head, seat)]
        if acting and seat is not None
        else []
    )
    return {
        "game": game,
        "title": rules.title,
        "notation_help": rules.notation_help,
        "seat": seat,
        "seat_name": names[seat] if seat is not None else None,
        "at": page.at,
        "latest": page.at == game.version,
        "version": game.version,
        "env": env,
        "svg": render.render_svg(game.name, view, names, _before(page), building),
        "building": building,
        "building_key": _building_key(page) if building is not None else "",
        "text_board": render.render_text(game.name, view, names),
        "score_label": rules.score_label if rules.scores(page.state) else "",
        "players": _player_lines(page, env, names),
        "breakdown": _breakdown(page, names),
        "rematch": _rematch(page, names),
        "to_act_names": [names[n] for n in env["to_act"] if n < len(names)],
        "log": _log_lines(page, names),
        "log_window": page.shown,
        "acting": acting,
        "moves": moves[:MOVE_BUTTONS],
        "complete": rules.lists_every_move and len(moves) <= MOVE_BUTTONS,
        "answer": page.answer,
        "message": message,
        "typed": typed,
        "seed": game.seed if game.status == "over" else None,
        "deadline": _deadline(game, standing.due_at),
        "away": _away(standing, names, game.to_act),
    }


def _clock(game: Game) -> GameClock:
    with session() as db:
        return game_clock(db, game)


def _away(standing: GameClock, names: list[str], to_act: list[int]) -> list[JSONish]:
    """The seats on vacation now, when each is back, and whether it holds the turn's clock."""
    return [
        {
            "name": names[seat] if seat < len(names) else f"Seat {seat}",
            "until": clock.stamp(until),
            "until_text": until.strftime("%Y-%m-%d %H:%M UTC"),
            "holds": seat in to_act,
        }
        for seat, until in sorted(standing.away_until.items())
    ]


def _deadline(game: Game, due: datetime | None) -> JSONish | None:
    """The turn's time limit, for the page (None: the game has none); its clock stands
    still while a seat to act is on vacation."""
    if game.deadline_seconds is None:
        return None
    hours = game.deadline_seconds / 3600
    per_turn = f"{hours:g} hours" if hours >= 1 else f"{game.deadline_seconds // 60} minutes"
    return {
        "per_turn": per_turn,
        "due": None if due is None else clock.stamp(due),
        "due_text": None if due is None else due.strftime("%Y-%m-%d %H:%M UTC"),
        "then": ON_TIMEOUT.get(game.on_timeout or "", game.on_timeout),
    }


def _answer(db: Session, game: Game, seat: int | None, rules: AnyGame) -> JSONish | None:
    """The referee's answer to this seat's submission named in `?sub=`."""
    wanted = request.args.get("sub", "")
    if seat is None or not wanted or len(wanted) > 32:
        return None
    found = db.get(Submission, wanted)
    if found is None or found.game_id != game.id or found.seat != seat:
        return None
    try:
        notation = rules.notate(rules.move_from_json(found.move))
    except Exception:  # an old submission of another rules version: say nothing of its move
        notation = ""
    return {"status": found.status, "reason": found.reason, "seq": found.seq, "notation": notation}


@bp.get("/g/<game_id>")
@taking_turns
def game(game_id: str) -> str:
    return render_template("web/game.html", **game_context(game_id))


def _submitted(game_id: str, move: Any, expected: int | None) -> Response | tuple[str, int]:
    """Submit this browser's seat's move and show its answer, or the page with the refusal."""
    typed = move if isinstance(move, str) else ""
    try:
        command = SubmitMove(game_id, SeatToken(_cookie_token()), move, expected_version=expected)
        submission = submit_move(referee(), command, WAIT)
    except refusals.NotFound:
        raise
    except refusals.Refusal as refused:
        said = NO_SEAT_HERE if isinstance(refused, refusals.Unauthorized) else refused.reason
        page = render_template("web/game.html", **game_context(game_id, message=said, typed=typed))
        return page, status_of(refused)
    return _to_answer(game_id, submission.id)


def _to_answer(game_id: str, submission_id: str) -> Response:
    response = make_response("", 303)
    response.headers["Location"] = url_for(".game", game_id=game_id, sub=submission_id)
    return response


@bp.get("/g/<game_id>/build")
@taking_turns
def build(game_id: str) -> Response:
    """The board with the move this browser's seat has built so far, for the page's script.

    JSON, and refusals as problem+json, since only a script asks: the board
    (with the next choices as targets), the move's notation once the steps
    make one, and what to click next.
    """
    steps = request.args.getlist("step")
    try:
        with session() as db:
            game = find(db, game_id)
            seat = cookie_seat(db, game.id)
            built = build_move(db, game, seat, steps)
            names = shown_names(reads.seats(db, game.id))
            # With no step taken, the board marks the last move, as the page does.
            previous = None if steps else game_states.state_and_previous(db, game, game.version)[1]
    except refusals.Refusal as refused:
        return errors.from_refusal(refused)
    rules = reads.rules_of(game)
    before = None if previous is None else rules.view(previous, seat)
    return jsonify(
        {
            "version": game.version,
            "steps": list(built.steps),
            "prompt": built.prompt,
            # Written as this game's players write it: the form sends it as typed.
            "notation": None if built.move is None else rules.written(built.move, game.options),
            "svg": render.render_svg(game.name, built.view, names, before, built),
        }
    )


@bp.post("/g/<game_id>/move")
def move(game_id: str) -> Response | tuple[str, int]:
    check_csrf()
    notation = request.form.get("notation", "").strip()
    raw_expected = request.form.get("expected_version", "")
    problem = None
    if not notation:
        problem = "Type a move, or choose one of the legal moves."
    elif len(notation) > MAX_NOTATION:
        problem = f"A move is at most {MAX_NOTATION} characters long."
    elif raw_expected and not whole_number(raw_expected):
        problem = "This form is damaged: reload the page and try again."
    if problem is not None:
        page = render_template(
            "web/game.html", **game_context(game_id, message=problem, typed=notation[:MAX_NOTATION])
        )
        return page, 422
    return _submitted(game_id, notation, int(raw_expected) if raw_expected else None)


@bp.post("/g/<game_id>/rematch")
def rematch(game_id: str) -> Response:
    """This browser's seat accepts a rematch; the last to accept goes straight to it."""
    check_csrf()
    standing = accept_rematch(referee(), game_id, SeatToken(_cookie_token()))
    target = ".open_rematch" if standing.game_id is not None else ".game"
    response = make_response("", 303)
    response.headers["Location"] = url_for(target, game_id=game_id)
    return response


@bp.get("/g/<game_id>/rematch")
def open_rematch(game_id: str) -> Response:
    """This browser's seat of the rematch: its cookie is set, and its page opened."""
    rematch_id, token = rematch_seat(referee(), game_id, SeatToken(_cookie_token()))
    response = make_response("", 303)
    response.headers["Location"] = url_for(".game", game_id=rematch_id)
    return _with_seat_cookie(response, rematch_id, token)


@bp.post("/g/<game_id>/resign")
def resign(game_id: str) -> Response | tuple[str, int]:
    check_csrf()
    if request.form.get("confirm") != "yes":
        page = render_template(
            "web/game.html",
            **game_context(game_id, message="Tick the box to confirm that you resign."),
        )
        return page, 422
    return _submitted(game_id, {"type": "resign"}, None)
