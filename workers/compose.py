"""Every message the referee sends, built for one recipient from one outbox row.

A message shows only what `view(state, seat)` shows that seat: the board
(as monospace text, as a picture and as the state envelope in JSON), the
last moves with those of an undecided sealed round hidden, and the hash of
the last move the seat may see; a round-over mail adds the game's
`round_summary` and `scores`, which every seat may see. Building a row's
message again gives the same message (same Message-ID, Date and body), so
a retry after a crash is a copy a mail client recognises, never a
different message.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import jinja2
from sqlmodel import Session, col, select

from referee import settings
from referee.engine import JSON
from referee.games import AnyGame
from referee.record import canonical_json
from referee.render import render_png, render_text
from referee.replay import SEALED_NOTATION, envelope
from referee.store import deadlines, keys, reads
from referee.store.tables import (
    Game,
    Inbound,
    Move,
    Outbox,
    OutboxKind,
    Seat,
    Source,
    Submission,
    SubmissionStatus,
)
from workers import wording

_TEMPLATES = Path(__file__).resolve().parent / "templates"
LAST_MOVES = 8
MAX_LISTED = 40

_text = jinja2.Environment(
    loader=jinja2.FileSystemLoader(_TEMPLATES),
    autoescape=False,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
_html = jinja2.Environment(
    loader=jinja2.FileSystemLoader(_TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def domain() -> str:
    return settings.active().mail_domain


def sender() -> Address:
    return Address("Referee", addr_spec=settings.active().sender)


def public_url() -> str:
    return settings.active().public_url


def reply_address(secret: bytes, game_id: str, seat: int, version: int) -> str:
    """The seat's reply address for a mail showing `version`: a reply answers that position."""
    return f"play+{keys.reply_token(secret, game_id, seat, version)}@{domain()}"


def message_id(row: Outbox) -> str:
    """Stable for a row: every attempt to send it carries the same Message-ID."""
    return f"<referee.{row.id}.{row.game_id}@{domain()}>"


@dataclass(frozen=True, slots=True)
class Consent:
    """What a seat's address said about the referee's mail, as a message needs it.

    `ask`: the address has not accepted, and this is its one invitation
    asking it to (nothing of the game but its name and size). `link`: the
    seat's personal link, in the first full mail that reaches the seat.
    """

    ask: bool
    accept_token: str
    stop_token: str
    link: str | None = None


def unsubscribe_url(consent: Consent) -> str:
    return f"{public_url()}/unsubscribe/{consent.stop_token}"


def accept_url(consent: Consent) -> str:
    return f"{public_url()}/accept/{consent.accept_token}"


# What a name typed by a stranger may keep when quoted in an invitation: no
# dots, slashes, colons or @, so that no mail program shows it as a link or
# an address, and short.
_PLAIN_NAME = 32


def plain(text: str) -> str:
    kept = "".join(c if c.isalnum() or c in " -'_" else " " for c in text)
    return " ".join(kept.split())[:_PLAIN_NAME].strip() or "(no name)"


@dataclass(frozen=True, slots=True)
class Notice:
    """One row's message to one seat: the mail (None: the seat has no address) and its JSON."""

    mail: EmailMessage | None
    data: JSON


def subject(title: str, names: list[str], game_id: str) -> str:
    """One subject for every mail of a game, so mail programs keep them in one thread."""
    return f"{title}: {wording.joined(names)} (game {game_id[:8]})"


def list_id(title: str, game_id: str) -> str:
    """A List-Id per game (RFC 2919), which mail filters and programs can sort by."""
    return f"{title} game {game_id[:8]} <{game_id}.games.{domain()}>"


def _thread_root(session: Session, row: Outbox) -> str | None:
    """The Message-ID of the first mail of this game actually sent to this seat, before `row`.

    None when `row` is the first: it then starts the thread.
    """
    first = session.exec(
        select(Outbox.id)
        .where(
            Outbox.game_id == row.game_id,
            Outbox.seat == row.seat,
            col(Outbox.mail_at).is_not(None),
            col(Outbox.id) < row.id,
        )
        .order_by(col(Outbox.id))
        .limit(1)
    ).first()
    return None if first is None else f"<referee.{first}.{row.game_id}@{domain()}>"


def _their_reply(session: Session, row: Outbox, submission: Submission | None) -> str | None:
    """The Message-ID of the player's mail that `row` answers, if it came by mail."""
    if submission is None:
        found = row.payload.get("in_reply_to")
        return found if isinstance(found, str) else None
    return session.exec(
        select(Inbound.message_id).where(Inbound.submission_id == submission.id).limit(1)
    ).first()


# Mail pictures at three quarters of the drawing's size (585 to 820 pixels
# wide): as wide as a mail reader shows them, at 60% of the drawing's cost.
PICTURE_ZOOM = 0.75
_PICTURES: dict[str, bytes] = {}
_PICTURES_KEPT = 256
_pictures_lock = threading.Lock()


def board_png(game_name: str, view_state: JSON, names: list[str]) -> bytes:
    """The board's PNG, drawn once per distinct picture in this process.

    Every seat that sees the same thing, and each mail of a seat until the
    position changes, shares one drawing: resvg takes most of a mail's CPU.
    The key is the hash of what is drawn, so no view can get another's picture.
    """
    key = hashlib.sha256(
        canonical_json({"game": game_name, "view": view_state, "names": names}).encode()
    ).hexdigest()
    found = _PICTURES.get(key)
    if found is None:
        found = render_png(game_name, view_state, names, zoom=PICTURE_ZOOM)
        with _pictures_lock:
            if len(_PICTURES) >= _PICTURES_KEPT:
                del _PICTURES[next(iter(_PICTURES))]
            _PICTURES[key] = found
    return found


def grouped_moves(rules: AnyGame, moves: list[Any], limit: int) -> tuple[list[str], list[str]]:
    """At most `limit` moves to list, with every kind (the JSON `type`) among them.

    Each kind gets its share in turn, so a long list of one kind cannot hide
    the others; they are listed kind by kind, each in the game's order.
    Returns the moves and, when some were left out, a line per kind saying how many shown.
    """
    kinds: dict[str, list[str]] = {}
    for move in moves:
        kinds.setdefault(str(rules.move_to_json(move).get("type", "")), []).append(
            rules.notate(move)
        )
    if len(moves) <= limit:
        return [notation for listed in kinds.values() for notation in listed], []
    taken = dict.fromkeys(kinds, 0)
    left = limit
    while left > 0:
        grew = False
        for kind, listed in kinds.items():
            if left > 0 and taken[kind] < len(listed):
                taken[kind] += 1
                left -= 1
                grew = True
        if not grew:
            break
    shown = [notation for kind, listed in kinds.items() for notation in listed[: taken[kind]]]
    counts = [f"{taken[kind]} of {len(listed)} {kind}" for kind, listed in kinds.items()]
    return shown, counts


def _last_moves(session: Session, game: Game, version: int, first_sealed: int) -> list[str]:
    rows = list(
        session.exec(
            select(Move)
            .where(Move.game_id == game.id, Move.seq <= version, Move.seq > version - LAST_MOVES)
            .order_by(col(Move.seq))
        )
    )
    timed_out = {
        sub.id
        for sub in session.exec(
            select(Submission).where(
                col(Submission.id).in_([r.submission_id for r in rows if r.submission_id]),
                Submission.source == Source.TIMEOUT,
            )
        )
    }
    lines = []
    for row in rows:
        shown = SEALED_NOTATION if row.seq >= first_sealed else row.notation
        note = "  (played by the referee: time ran out)" if row.submission_id in timed_out else ""
        note = note or ("  (recorded by the referee)" if row.submission_id is None else "")
        lines.append(f"{row.seq}. seat {row.seat}: {shown}{note}")
    return lines


def _head(session: Session, game: Game, upto: int) -> tuple[int, str]:
    """The last move a seat may see now and its hash (the seed commitment before any)."""
    if upto <= 0:
        return 0, game.seed_commitment
    row = session.exec(select(Move).where(Move.game_id == game.id, Move.seq == upto)).first()
    assert row is not None
    return upto, row.hash


_PICTURED = frozenset(
    {
        OutboxKind.INVITATION,
        OutboxKind.YOUR_TURN,
        OutboxKind.REMINDER,
        OutboxKind.BOARD,
        OutboxKind.ROUND_OVER,
        OutboxKind.GAME_OVER,
        OutboxKind.ANSWER,
        OutboxKind.REFUSED,
    }
)
# The kinds that list the seat's legal moves when it is to act.
_LISTING = frozenset(
    {
        OutboxKind.YOUR_TURN,
        OutboxKind.REMINDER,
        OutboxKind.BOARD,
        OutboxKind.ANSWER,
        OutboxKind.REFUSED,
    }
)


def build(session: Session, row: Outbox, secret: bytes, consent: Consent | None) -> Notice:
    """The message of outbox row `row`, as its seat may see it.

    `consent` None: no mail (the seat has no address, or may not be mailed
    now); the webhook's JSON is built all the same.
    """
    game = session.get(Game, row.game_id)
    assert game is not None and row.seat is not None and row.id is not None
    seats = reads.seats(session, game.id)
    seat: Seat = seats[row.seat]
    names = [s.name for s in seats]
    rules = reads.rules_of(game)
    payload = row.payload
    kind = OutboxKind(row.kind)
    over_now = kind == OutboxKind.GAME_OVER
    version = game.version if over_now else int(payload.get("version", game.version))
    if kind in (OutboxKind.INVITATION, OutboxKind.ANSWER, OutboxKind.HELP, OutboxKind.REFUSED):
        version = min(version, game.version)
    state = reads.state_at(session, game, version)
    first_sealed = version - rules.hidden_tail(state) + 1
    head_seq, head_hash = _head(session, game, first_sealed - 1)
    view = envelope(rules, state, version, row.seat)
    sent = datetime.fromisoformat(row.created_at)
    context: dict[str, Any] = {
        "kind": kind,
        "title": rules.title,
        "game_id": game.id,
        "name": seat.name,
        "seat": row.seat,
        "names": names,
        "version": version,
        "after": wording.counted(version, "move"),
        "link": f"{public_url()}/g/{game.id}",
        "head_seq": head_seq,
        "head_hash": head_hash,
        "seed_commitment": game.seed_commitment,
        "seed_value": None,
        "witness": wording.wrapped(f"Log witness: move {head_seq} has hash", head_hash),
        "commitment": wording.wrapped("Seed commitment (SHA-256):", game.seed_commitment),
        "board": render_text(game.name, view["state"], names),
        "last_moves": _last_moves(session, game, version, first_sealed),
        "to_act": [f"seat {s} ({names[s]})" for s in view["to_act"]],
        "notation_help": rules.notation_help,
        "reply_to": reply_address(secret, game.id, row.seat, version),
        "deadline": None,
        "result": None,
        "round": [],
        "seed": None,
        "legal": [],
        "legal_counts": [],
        "lists_every_move": rules.lists_every_move,
        "status": None,
        "code": None,
        "reason": None,
        "note": None,
        "timed_out": False,
        "move": None,
        "due_at": None,
        "problem": payload.get("reason"),
        "personal_link": None if consent is None else consent.link,
        "unsubscribe": None if consent is None else unsubscribe_url(consent),
    }
    if payload.get("due_at"):
        context["due_at"] = wording.moment(datetime.fromisoformat(payload["due_at"]), sent)
    due = deadlines.due_at(game) if version == game.version else None
    if game.deadline_seconds is not None:
        context["deadline"] = {
            "length": wording.duration(game.deadline_seconds),
            "policy": game.on_timeout or "random",
            "due_at": None if due is None else wording.moment(due, sent),
        }
    if row.seat in view["to_act"] and kind in _LISTING:
        moves = rules.legal_moves(state, row.seat)
        context["legal"], context["legal_counts"] = grouped_moves(rules, moves, MAX_LISTED)
    submission = None
    if kind == OutboxKind.ANSWER:
        submission = session.get(Submission, payload["submission"])
        assert submission is not None
        context["status"] = submission.status
        context["code"] = submission.code
        context["reason"] = submission.reason
        context["timed_out"] = submission.source == Source.TIMEOUT
        context["move"] = rules.notate(rules.move_from_json(submission.move))
        if submission.status == SubmissionStatus.ACCEPTED and submission.seq is not None:
            before = reads.state_at(session, game, submission.seq - 1)
            after = reads.state_at(session, game, submission.seq)
            context["note"] = rules.answer_note(before, after, row.seat)
    if kind == OutboxKind.ROUND_OVER:
        context["round"] = _round_lines(rules, state, names)
    if over_now:
        context["result"] = _result_lines(game, names)
        context["seed"] = wording.wrapped("The seed was", game.seed or "")
        context["seed_value"] = game.seed
    text = _text.get_template("mail.txt.j2").render(context)
    data = {
        "id": message_id(row),
        "kind": row.kind,
        "game_id": game.id,
        "game": game.name,
        "seat": row.seat,
        "version": version,
        "head_seq": head_seq,
        "head_hash": head_hash,
        "envelope": view,
        "last_moves": context["last_moves"],
        "legal_moves": context["legal"],
        "result": game.result if over_now else None,
        "seed": game.seed if over_now else None,
        "text": text,
    }
    if not seat.email or consent is None:
        return Notice(None, data)
    if consent.ask:
        return Notice(_ask(row, seat.email, names, rules.title, consent, context), data)
    mail = EmailMessage()
    mail["Subject"] = subject(rules.title, names, game.id)
    mail["From"] = sender()
    mail["To"] = Address(seat.name, addr_spec=seat.email)
    mail["Reply-To"] = context["reply_to"]
    mail["Message-ID"] = message_id(row)
    mail["Date"] = format_datetime(sent)
    # One thread per game and seat: every mail refers to the first one sent,
    # and an answer also to the player's own reply.
    root = _thread_root(session, row)
    theirs = _their_reply(session, row, submission)
    references = [found for found in (root, theirs) if found is not None]
    if references:
        mail["References"] = " ".join(references)
        mail["In-Reply-To"] = references[-1]
    # A machine's mail (RFC 3834): no vacation notice or read receipt answers it.
    mail["Auto-Submitted"] = "auto-generated"
    mail["X-Auto-Response-Suppress"] = "All"
    mail["List-Id"] = list_id(rules.title, game.id)
    mail["X-Referee-Game"] = game.id
    mail["X-Referee-Seat"] = str(row.seat)
    mail["X-Referee-Version"] = str(version)
    mail["X-Referee-Kind"] = row.kind
    mail["X-Referee-Head"] = f"{head_seq} {head_hash}"
    _unsubscribe_headers(mail, consent)
    mail.set_content(text)
    cid = f"board.{row.id}@{domain()}" if kind in _PICTURED else None
    html = _html.get_template("mail.html.j2").render({**context, "cid": cid})
    mail.add_alternative(html, subtype="html")
    if cid is not None:
        html_part = mail.get_payload()[1]  # type: ignore[index]
        assert isinstance(html_part, EmailMessage)
        png = board_png(game.name, view["state"], names)
        html_part.add_related(png, "image", "png", cid=f"<{cid}>", filename="board.png")
    mail.add_attachment(
        json.dumps(view, sort_keys=True, indent=1).encode("utf-8"),
        "application",
        "json",
        filename="state.json",
    )
    return Notice(mail, data)


def _unsubscribe_headers(mail: EmailMessage, consent: Consent) -> None:
    """RFC 8058 one-click: a mail program may POST to the link to stop every mail."""
    mailto = f"mailto:stop+{consent.stop_token}@{domain()}"
    mail["List-Unsubscribe"] = f"<{unsubscribe_url(consent)}>, <{mailto}>"
    mail["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"


def _ask(
    row: Outbox,
    address: str,
    names: list[str],
    title: str,
    consent: Consent,
    context: dict[str, Any],
) -> EmailMessage:
    """The one mail an address that has not accepted gets: who invites it to
    what, and how to accept. The names in it were typed by whoever made the
    game, a stranger to the recipient: only the first player's is quoted,
    plainly (`plain`), and the recipient's own is not used at all."""
    assert row.seat is not None
    facts = {
        "title": title,
        "game_id": row.game_id,
        "players": len(names),
        "inviter": plain(names[0]),
        "first": row.seat == 0,
        "site": public_url(),
        "accept": accept_url(consent),
        "unsubscribe": unsubscribe_url(consent),
        "reply_to": context["reply_to"],
    }
    mail = EmailMessage()
    mail["Subject"] = f'[{title}] An invitation to play: reply "accept" to join'
    mail["From"] = sender()
    mail["To"] = Address(addr_spec=address)
    mail["Reply-To"] = context["reply_to"]
    mail["Message-ID"] = message_id(row)
    mail["Date"] = format_datetime(datetime.fromisoformat(row.created_at))
    mail["X-Referee-Game"] = row.game_id
    mail["X-Referee-Seat"] = str(row.seat)
    mail["X-Referee-Kind"] = row.kind
    _unsubscribe_headers(mail, consent)
    mail.set_content(_text.get_template("ask.txt.j2").render(facts))
    mail.add_alternative(_html.get_template("ask.html.j2").render(facts), subtype="html")
    return mail


def _round_lines(rules: AnyGame, state: Any, names: list[str]) -> list[str]:
    """How the round went: the game's summary of it, then the scores."""
    summary = rules.round_summary(state)
    lines = []
    if summary.winners is not None:
        won = ", ".join(f"seat {s} ({names[s]})" for s in summary.winners)
        lines.append(f"winner: {won or 'nobody'}")
    lines += [f"{label}: {'-' if value is None else value}" for label, value in summary.facts]
    scores = rules.scores(state)
    lines += [f"score of seat {s} ({names[s]}): {score}" for s, score in enumerate(scores)]
    return lines


def _result_lines(game: Game, names: list[str]) -> list[str]:
    assert game.result is not None
    winners = set(game.result["winners"])
    return [
        f"seat {s} ({names[s]}): {score}" + ("  winner" if s in winners else "")
        for s, score in enumerate(game.result["scores"])
    ]
