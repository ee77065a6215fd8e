"""A game's page (`/g/<id>`: the board, the log, the players, the move form), the board a
move is built on (`/g/<id>/build`), and the forms of a seat: move, rematch, resign.

Server-rendered HTML that works without JavaScript (a small script follows
the game's event stream and updates the page in place, and fills the move field).
A browser is a seat's when it holds the seat's cookie (`seat_links`); any other
is a spectator's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import (
    Blueprint,
    Response,
    jsonify,
    make_response,
    render_template,
    request,
    url_for,
)
from sqlmodel import Session

from api.http import errors
from api.http.context import find, referee, session
from api.http.errors import Problem
from api.http.expensive import taking_turns
from api.http.seat_auth import cookie_token
from api.pages.in_words import bot_names, on_timeout_words, per_turn_words, seat_words, shown_names
from api.pages.kit import JSONish, check_csrf, forget_cookie, secure_cookies, whole_number
from api.pages.seat_links import NO_SEAT_HERE, cookie_seat, with_seat_cookie
from api.pages.talk import talk_context
from referee import render
from referee.engine import Building, Played
from referee.games import AnyGame
from referee.games.reasons import reason_words
from referee.i18n import _, when
from referee.replay import SEALED_NOTATION, envelope
from referee.service import game_states, page_presence, reachability, refusals
from referee.service.building import build_move
from referee.service.profile_view import seat_profiles
from referee.service.rematching import Rematch, accept_rematch, rematch_of, rematch_seat
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.service.vacations import GameClock, game_clock
from referee.store import clock, handover_rows, reads, records, rematches
from referee.store.tables import Game, SeatHandover, Submission

bp = Blueprint("game", __name__)

# How long a form waits for the referee's answer before showing "recorded".
WAIT = 10.0
# A game's id shortened as mail subjects show it (ids are 32 hexadecimal digits).
SHORT_ID = re.compile(r"[0-9a-f]{8,31}")
MAX_NOTATION = 400
# Moves of the log a page lists: a window around the position shown, not the whole log.
LOG_PAGE = 50
# Legal moves offered as buttons up to this many; beyond it, only the text field is quick.
MOVE_BUTTONS = 400
# A refused form's message and text, carried by its redirect to the page (`_to_refusal`):
# the cookie's name, and how long it lives (the redirect follows at once).
REFUSED_COOKIE = "refused"
REFUSED_SECONDS = 60
# A typed move is quoted in its refusal up to this many characters.
QUOTED = 60


def _at(game: Game) -> int:
    raw = request.args.get("at")
    if raw is None or raw == "":
        return game.version
    if not whole_number(raw) or int(raw) > game.version:
        raise Problem(
            400,
            "bad_request",
            _("'at' is a move number from 0 to %(last)d, not %(given)r.")
            % {"last": game.version, "given": raw[:20]},
        )
    return int(raw)


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
    # The seats people took over from bots: their moves before `from_seq` were the bots'.
    handed: list[SeatHandover]
    answer: JSONish | None
    unreachable: frozenset[int]
    # A finished game's end: the start and every move with its state (for the breakdown).
    history: tuple[Any, list[Played[Any, Any]]] | None
    # A finished game's rematch: who accepted, and the new game once all have.
    rematch: Rematch | None
    # Its standing as the seat's stream tells it (`rematches.standing_keys`), "" in play.
    rematch_key: str
    # The public names of the seats' players, for the seats a person holds who chose one.
    profiles: dict[int, str]


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
        seats = reads.seats(db, game.id)
        return _PageReads(
            game=game,
            seat=seat,
            at=at,
            rules=rules,
            seats=seats,
            state=state,
            previous=previous,
            head=head,
            first_sealed=records.sealed_from(game, head),
            shown=shown,
            rows=reads.log(db, game.id, after=shown.start, limit=LOG_PAGE),
            handed=handover_rows.done(db, game.id),
            answer=_answer(db, game, seat, rules),
            unreachable=reachability.unreachable_seats(db, game.id),
            history=history,
            rematch=rematch_of(db, game) if game.status == "over" else None,
            rematch_key=rematches.standing_keys(db, [game.id])[game.id]
            if game.status == "over"
            else "",
            profiles=seat_profiles(db, seats),
        )


def _last_two(start: Any, played: list[Played[Any, Any]]) -> tuple[Any, Any | None]:
    """The state after the last move and the one a move earlier (None with no move)."""
    states = [start] + [step.state for step in played]
    return states[-1], (states[-2] if len(states) > 1 else None)


def _log_lines(page: _PageReads, names: list[str]) -> list[JSONish]:
    """The moves the page lists, sealed ones without their notation, each under the name
    of who played it (a bot a person took the seat over from, for the moves before)."""
    bots = bot_names(page.handed)

    def name(seat: int, seq: int) -> str:
        if seat in bots and seq < bots[seat][1]:
            return bots[seat][0]
        return names[seat] if 0 <= seat < len(names) else seat_words(seat)

    return [
        {
            "seq": row.seq,
            "seat": row.seat,
            "name": name(row.seat, row.seq),
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
            "profile": page.profiles.get(s.seat),
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
            "name": names[seat] if seat < len(names) else seat_words(seat),
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
    # The new game once it is made (its id is claimed a moment before).
    begun = standing.game_id is not None and ";" in page.rematch_key
    return {
        "game_id": standing.game_id if begun else None,
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


def game_context(
    game_id: str, message: str | None = None, typed: str = "", form: str = "move"
) -> JSONish:
    page = _page_reads(game_id)
    game, rules, seat = page.game, page.rules, page.seat
    if seat is not None and game.status == "active":
        # Its turn answered here soon, the seat is not mailed about it too.
        page_presence.seen(referee(), game.id, seat)
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
        "title": _(rules.title),
        "notation_help": _(rules.notation_help),
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
        "score_label": _(rules.score_label) if rules.scores(page.state) else "",
        "players": _player_lines(page, env, names),
        "breakdown": _breakdown(page, names),
        "rematch": _rematch(page, names),
        "rematch_key": page.rematch_key,
        "to_act_names": [names[n] for n in env["to_act"] if n < len(names)],
        "log": _log_lines(page, names),
        "log_window": page.shown,
        "acting": acting,
        "moves": moves[:MOVE_BUTTONS],
        "complete": rules.lists_every_move and len(moves) <= MOVE_BUTTONS,
        "answer": page.answer,
        "message": message,
        # Which form the refusal answers: "move" (shown at the move field) or another.
        "message_form": form,
        # A move the referee refused comes back in the field, to be put right.
        "typed": typed or _refused_text(page.answer),
        "seed": game.seed if game.status == "over" else None,
        "deadline": _deadline(game, standing.due_at),
        "away": _away(standing, names, game.to_act),
        "talk": talk_context(game.id, seat),
    }


def _refused_text(answer: JSONish | None) -> str:
    if answer is None or answer["status"] != "rejected":
        return ""
    return str(answer["notation"])


def _clock(game: Game) -> GameClock:
    with session() as db:
        return game_clock(db, game)


def _away(standing: GameClock, names: list[str], to_act: list[int]) -> list[JSONish]:
    """The seats on vacation now, when each is back, and whether it holds the turn's clock."""
    return [
        {
            "name": names[seat] if seat < len(names) else seat_words(seat),
            "until": clock.stamp(until),
            "until_text": when(until),
            "holds": seat in to_act,
        }
        for seat, until in sorted(standing.away_until.items())
    ]


def _deadline(game: Game, due: datetime | None) -> JSONish | None:
    """The turn's time limit, for the page (None: the game has none); its clock stands
    still while a seat to act is on vacation."""
    if game.deadline_seconds is None:
        return None
    return {
        "per_turn": per_turn_words(game.deadline_seconds),
        "due": None if due is None else clock.stamp(due),
        "due_text": None if due is None else when(due),
        "then": _timeout_words(game.on_timeout),
    }


def _timeout_words(policy: str | None) -> str:
    """What the referee does for a seat out of time, in words."""
    try:
        return on_timeout_words(policy or "")
    except KeyError:
        return policy or ""


def _answer(db: Session, game: Game, seat: int | None, rules: AnyGame) -> JSONish | None:
    """The referee's answer to this seat's submission named in `?sub=`."""
    wanted = request.args.get("sub", "")
    if seat is None or not wanted or len(wanted) > 32:
        return None
    found = db.get(Submission, wanted)
    if found is None or found.game_id != game.id or found.seat != seat:
        return None
    if found.status == "accepted" and found.seq is not None and game.version > found.seq:
        # Old news once another move was played: the banner goes with the next move.
        return None
    try:
        notation = rules.notate(rules.move_from_json(found.move))
    except Exception:  # an old submission of another rules version: say nothing of its move
        notation = ""
    reason = None if found.reason is None else reason_words(found.reason)
    return {"status": found.status, "reason": reason, "seq": found.seq, "notation": notation}


@bp.get("/g/<game_id>")
@taking_turns
def game(game_id: str) -> str | Response:
    # A mail's subject names its game by the first 8 digits of its id: typed into the
    # address bar, they open the game when no other game's id begins alike.
    if SHORT_ID.fullmatch(game_id):
        with session() as db:
            found = reads.ids_starting(db, game_id, 2)
        if len(found) == 1 and found[0] != game_id:
            response = make_response("", 302)
            response.headers["Location"] = url_for(".game", game_id=found[0])
            return response
    refused = _refusal_told(game_id)
    if refused is None:
        return render_template("web/game.html", **game_context(game_id))
    page = render_template("web/game.html", **game_context(game_id, *refused))
    # Told once: a reload shows the page as it is.
    return forget_cookie(make_response(page), REFUSED_COOKIE, _refused_path(game_id))


def _submitted(game_id: str, move: Any, expected: int | None) -> Response:
    """Submit this browser's seat's move and show its answer, or the page with the refusal."""
    typed = move if isinstance(move, str) else ""
    try:
        command = SubmitMove(game_id, SeatToken(cookie_token()), move, expected_version=expected)
        submission = submit_move(referee(), command, WAIT)
    except refusals.NotFound:
        raise
    except refusals.Refusal as refused:
        unauthorized = isinstance(refused, refusals.Unauthorized)
        said = _(NO_SEAT_HERE) if unauthorized else reason_words(refused.reason)
        return _to_refusal(game_id, _quoting(typed, said), typed, "move" if typed else "resign")
    return _to_answer(game_id, submission.id)


def _quoting(typed: str, said: str) -> str:
    """The refusal of a typed move, quoting what was typed (shortened if long)."""
    if not typed:
        return said
    shown = typed if len(typed) <= QUOTED else typed[: QUOTED - 1] + "…"
    return _("Your move “%(move)s” was not played: %(reason)s") % {"move": shown, "reason": said}


def _refused_path(game_id: str) -> str:
    return url_for(".game", game_id=game_id)


def _sealed(message: str, typed: str, form: str) -> str:
    """The refusal and the text typed, as the cookie carries them: signed with the
    server's secret, so that no other page can make the game page say anything."""
    body = base64.urlsafe_b64encode(json.dumps([message, typed, form]).encode()).decode()
    mac = hmac.new(referee().secret(), f"{REFUSED_COOKIE}:{body}".encode(), "sha256")
    return f"{body}.{mac.hexdigest()[:32]}"


def _refusal_told(game_id: str) -> tuple[str, str, str] | None:
    """The refusal a form's redirect carried to this page (`_to_refusal`), if any."""
    raw = request.cookies.get(REFUSED_COOKIE, "")
    body, _dot, mac = raw.partition(".")
    if not body or len(raw) > 4000:
        return None
    expected = hmac.new(referee().secret(), f"{REFUSED_COOKIE}:{body}".encode(), "sha256")
    if not hmac.compare_digest(mac, expected.hexdigest()[:32]):
        return None
    try:
        message, typed, form = json.loads(base64.urlsafe_b64decode(body.encode()))
    except ValueError:
        return None
    return str(message), str(typed)[:MAX_NOTATION], str(form)


def _to_refusal(game_id: str, message: str, typed: str = "", form: str = "move") -> Response:
    """Back to the game page, which shows the refusal and the text typed, open: a
    redirect after the POST, so that a reload never sends the move again. The refusal
    rides in a short-lived cookie of the game's pages, not in the address (a sealed
    answer typed must not land in the history or a log)."""
    response = make_response("", 303)
    response.headers["Location"] = url_for(
        ".game", game_id=game_id, _anchor="your-move" if form == "move" else "status"
    )
    response.set_cookie(
        REFUSED_COOKIE,
        _sealed(message, typed[:MAX_NOTATION], form),
        max_age=REFUSED_SECONDS,
        path=_refused_path(game_id),
        httponly=True,
        samesite="Strict",
        secure=secure_cookies(),
    )
    return response


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
    typed = notation[:MAX_NOTATION]
    if raw_expected and not whole_number(raw_expected):
        # Not a player's slip but a form no page of ours sends: answered as it is, 422.
        said = _("This form is damaged: reload the page and try again.")
        return render_template("web/game.html", **game_context(game_id, said, typed)), 422
    problem = None
    if not notation:
        problem = _("Type a move, or choose one of the legal moves.")
    elif len(notation) > MAX_NOTATION:
        problem = _("A move is at most %(most)d characters long.") % {"most": MAX_NOTATION}
    if problem is not None:
        with session() as db:
            find(db, game_id)
        return _to_refusal(game_id, problem, typed)
    return _submitted(game_id, notation, int(raw_expected) if raw_expected else None)


@bp.post("/g/<game_id>/rematch")
def rematch(game_id: str) -> Response:
    """This browser's seat accepts a rematch; the last to accept goes straight to it."""
    check_csrf()
    standing = accept_rematch(referee(), game_id, SeatToken(cookie_token()))
    target = ".open_rematch" if standing.game_id is not None else ".game"
    response = make_response("", 303)
    response.headers["Location"] = url_for(target, game_id=game_id)
    return response


@bp.get("/g/<game_id>/rematch")
def open_rematch(game_id: str) -> Response:
    """This browser's seat of the rematch: its cookie is set, and its page opened."""
    rematch_id, token = rematch_seat(referee(), game_id, SeatToken(cookie_token()))
    response = make_response("", 303)
    response.headers["Location"] = url_for(".game", game_id=rematch_id)
    return with_seat_cookie(response, rematch_id, token)


@bp.post("/g/<game_id>/resign")
def resign(game_id: str) -> Response:
    check_csrf()
    if request.form.get("confirm") != "yes":
        with session() as db:
            find(db, game_id)
        return _to_refusal(game_id, _("Tick the box to confirm that you resign."), form="resign")
    return _submitted(game_id, {"type": "resign"}, None)
