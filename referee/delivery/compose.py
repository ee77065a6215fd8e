"""Every notice the referee sends, built once for its seat; each channel renders it.

A message shows only what `view(state, seat)` shows that seat: the board
(as monospace text, as a picture and as the state envelope in JSON), the
last moves with those of an undecided sealed round hidden, and the hash of
the last move the seat may see; a round-over mail adds the game's
`round_summary` and `scores`, which every seat may see. Building a notice
again gives the same message (same Message-ID, Date and body), so a retry
after a crash is a copy a mail client recognises, never a different message.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape
from sqlmodel import Session, col, select

from referee import i18n
from referee.automatic import FORCED
from referee.delivery import reachable, talk_lines, wording
from referee.delivery.channel import Consent
from referee.delivery.mail import message_id as notice_message_id
from referee.delivery.play_links import play_url, works_until
from referee.engine import JSON
from referee.games import AnyGame
from referee.games.reasons import reason_words
from referee.i18n import N_, _
from referee.names import plain as plain_name
from referee.names import shown as shown_name
from referee.names import with_bot
from referee.record import canonical_json
from referee.render import render_png, render_text
from referee.replay import SEALED_NOTATION, envelope
from referee.service import game_states, turn_clock
from referee.settings import Settings
from referee.store import handover_rows, keys, reads, unreached_seats, vacation_rows
from referee.store.tables import (
    Game,
    GameStatus,
    Inbound,
    Move,
    Outbox,
    OutboxKind,
    Seat,
    SeatHandover,
    Source,
    Submission,
    SubmissionStatus,
)

_TEMPLATES = Path(__file__).resolve().parent / "templates"
LAST_MOVES = 8
# A player who took a bot's seat over is sent the moves so far: at most this many, the latest.
SO_FAR_MOST = 400
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
# Every word of the templates comes from the catalogues, in the reader's language.
i18n.install(_text)
i18n.install(_html)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> Markup:
    """A game's help as HTML: its Markdown code spans (`take 17`) as `<code>`, the rest
    escaped; no backtick is shown."""
    pieces = _CODE_SPAN.split(str(text))
    return Markup("").join(
        Markup("<code>{}</code>").format(piece) if odd else escape(piece)
        for odd, piece in ((index % 2 == 1, piece) for index, piece in enumerate(pieces))
    )


def quoted_code(text: str) -> str:
    """A game's help as plain text: its Markdown code spans in double quotes."""
    return _CODE_SPAN.sub(r'"\1"', str(text))


# French puts a space inside « » and before : ; ? !: a line is never broken there.
_TIED = re.compile(r"(?<=\u00ab) | (?=[\u00bb:;?!])")


def paragraph(text: str) -> str:
    """A paragraph of a plain-text mail (one translated sentence or more), wrapped at
    72 columns as mail is read, a link never broken, and ended with its line break."""
    return (
        "\n".join(
            textwrap.fill(
                _TIED.sub("\u00a0", line), 72, break_long_words=False, break_on_hyphens=False
            )
            for line in str(text).split("\n")
        )
        + "\n"
    )


_html.filters["code_spans"] = code_spans
_text.filters["quoted_code"] = quoted_code
_text.filters["paragraph"] = paragraph


@dataclass(frozen=True, slots=True)
class Site:
    """Where the referee's mail comes from and where its links lead, as the settings say."""

    domain: str
    sender: Address
    public_url: str

    @classmethod
    def of(cls, chosen: Settings) -> Site:
        return cls(
            chosen.mail_domain, Address("Referee", addr_spec=chosen.sender), chosen.public_url
        )


def reply_address(site: Site, secret: bytes, game_id: str, seat: int, version: int) -> str:
    """The seat's reply address for a mail showing `version`: a reply answers that position."""
    return f"play+{keys.reply_token(secret, game_id, seat, version)}@{site.domain}"


def message_id(site: Site, row: Outbox) -> str:
    """Stable for a notice: every attempt on every channel carries the same id."""
    assert row.id is not None
    return notice_message_id(site.domain, row.id, row.game_id)


def unsubscribe_url(site: Site, consent: Consent) -> str:
    return f"{site.public_url}/unsubscribe/{consent.stop_token}"


def accept_url(site: Site, consent: Consent) -> str:
    return f"{site.public_url}/accept/{consent.accept_token}"


def mail_names(game: Game, typed: list[str]) -> list[str]:
    """The players' names as every mail of `game` shows them, in every part
    (subject, To, both bodies, the text board and the picture).

    A game made without the API key was made by anyone: its names are the
    words of a stranger to the players it mails, who may have accepted
    another game's mail and not this one's. They are quoted plainly
    (`referee.names.plain`: no link, domain or address, at most 32 characters).
    A trusted game's names are shown as typed, less what no name may hold
    (`referee.names.shown`). A seat left with nothing is called `Player N`, counted
    from 1 as people count (the API's seats count from 0)."""
    tidy = shown_name if game.trusted else plain_name
    return [tidy(name) or player_number(seat) for seat, name in enumerate(typed)]


def player_number(seat: int) -> str:
    """`Player 2` for seat 1: what a seat without a name is called."""
    return _("Player %(number)d") % {"number": seat + 1}


def subject(title: str, names: list[str], game_id: str) -> str:
    """One subject for every mail of a game, so mail programs keep them in one thread."""
    return _("%(title)s: %(names)s (game %(game)s)") % {
        "title": title,
        "names": wording.joined(names),
        "game": game_id[:8],
    }


def list_id(site: Site, title: str, game_id: str) -> str:
    """A List-Id per game (RFC 2919), which mail filters and programs can sort by."""
    return f"{title} game {game_id[:8]} <{game_id}.games.{site.domain}>"


def _reply_to_submission(session: Session, submission: Submission) -> str | None:
    """The Message-ID of the player's mail a submission came in, if it came by mail."""
    return session.exec(
        select(Inbound.message_id).where(Inbound.submission_id == submission.id).limit(1)
    ).first()


# Mail pictures at five quarters of the drawing's size: the boards are drawn
# about 420 units wide for phones, so a picture is about 525 pixels wide, as
# wide as a mail reader shows it, and its smallest text (13 units) still
# reads at 11 px on a phone that shrinks it to its width.
PICTURE_ZOOM = 1.25
_PICTURES: dict[str, bytes] = {}
_PICTURES_KEPT = 256
_pictures_lock = threading.Lock()


def board_png(
    game_name: str, view_state: JSON, names: list[str], before: JSON | None = None
) -> bytes:
    """The board's PNG, marking what the last move changed since `before` (the same
    seat's view a move earlier) as the game page does; drawn once per distinct
    picture in this process.

    Every seat that sees the same thing, and each mail of a seat until the
    position changes, shares one drawing: resvg takes most of a mail's CPU.
    The key is the hash of what is drawn, so no view can get another's picture.
    """
    drawn = {"game": game_name, "view": view_state, "names": names, "before": before}
    key = hashlib.sha256(canonical_json(drawn).encode()).hexdigest()
    found = _PICTURES.get(key)
    if found is None:
        found = render_png(game_name, view_state, names, zoom=PICTURE_ZOOM, before=before)
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
    counts = [
        _("%(shown)d of %(all)d %(kind)s")
        % {"shown": taken[kind], "all": len(listed), "kind": kind}
        for kind, listed in kinds.items()
    ]
    return shown, counts


def _last_moves(
    session: Session,
    game: Game,
    version: int,
    first_sealed: int,
    handed: list[SeatHandover],
    names: list[str],
    count: int = LAST_MOVES,
) -> list[str]:
    """The last `count` moves up to `version`, each by its player's name, sealed ones
    hidden, each noted when the referee played or recorded it, or a bot a person took
    the seat over from played it."""
    rows = list(
        session.exec(
            select(Move)
            .where(Move.game_id == game.id, Move.seq <= version, Move.seq > version - count)
            .order_by(col(Move.seq))
        )
    )
    bot_until = {found.seat: found.from_seq or 0 for found in handed}
    lines = []
    for row in rows:
        shown = SEALED_NOTATION if row.seq >= first_sealed else row.notation
        lines.append(f"{row.seq}. {names[row.seat]}: {shown}{_move_note(row, bot_until)}")
    return lines


def _move_note(row: Move, bot_until: dict[int, int]) -> str:
    """What a listed move says of who played it, when it was not its player."""
    if row.source == Source.TIMEOUT:
        return "  " + _("(played by the referee: time ran out)")
    if row.source == FORCED:
        return "  " + _("(recorded by the referee)")
    if row.seq < bot_until.get(row.seat, 0):
        return "  " + _("(played by the bot)")
    return ""


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
        OutboxKind.SEAT_TAKEN,
        OutboxKind.PASSED_ON,
    }
)
# The kinds that list the seat's legal moves when it is to act.
_LISTING = frozenset(
    {
        OutboxKind.SEAT_TAKEN,
        OutboxKind.YOUR_TURN,
        OutboxKind.REMINDER,
        OutboxKind.BOARD,
        OutboxKind.ANSWER,
        OutboxKind.REFUSED,
        OutboxKind.PASSED_ON,
    }
)


def _shown_version(game: Game, row: Outbox) -> int:
    """The version a notice shows: the game's end, or the one it was written for
    (never beyond the head, for what answers a reply)."""
    kind = OutboxKind(row.kind)
    if kind == OutboxKind.GAME_OVER:
        return game.version
    version = int(row.payload.get("version", game.version))
    if kind in (
        OutboxKind.INVITATION,
        OutboxKind.ANSWER,
        OutboxKind.HELP,
        OutboxKind.REFUSED,
        OutboxKind.PASSED_ON,
        OutboxKind.MESSAGES,
    ):
        version = min(version, game.version)
    return version


@dataclass(frozen=True, slots=True)
class _Position:
    """What a seat may see of the game at the version a notice shows."""

    version: int
    state: Any
    first_sealed: int
    head_seq: int
    head_hash: str
    view: JSON
    # The seat's view a move earlier (None at the start): the picture marks the last move.
    before: JSON | None


def _position(session: Session, game: Game, rules: AnyGame, row: Outbox) -> _Position:
    assert row.seat is not None
    version = _shown_version(game, row)
    state, previous = game_states.state_and_previous(session, game, version)
    first_sealed = version - rules.hidden_tail(state) + 1
    head_seq, head_hash = _head(session, game, first_sealed - 1)
    view = envelope(rules, state, version, row.seat)
    # The seat's own view, as the game page compares: nothing it could not see already.
    before = None if previous is None else rules.view(previous, row.seat)
    return _Position(version, state, first_sealed, head_seq, head_hash, view, before)


def _base_context(
    session: Session,
    game: Game,
    rules: AnyGame,
    row: Outbox,
    shown: _Position,
    names: list[str],
    handed: list[SeatHandover],
    secret: bytes,
    site: Site,
) -> dict[str, Any]:
    """What every notice's text says, before what its kind adds."""
    assert row.seat is not None
    version, head_seq, head_hash = shown.version, shown.head_seq, shown.head_hash
    # A seat's newcomer is told what happened so far; the others, the last moves.
    count = SO_FAR_MOST if row.kind == OutboxKind.SEAT_TAKEN else LAST_MOVES
    moves = _last_moves(session, game, version, shown.first_sealed, handed, names, count)
    return {
        "kind": OutboxKind(row.kind),
        "title": _(rules.title),
        "game_id": game.id,
        "name": names[row.seat],
        "seat": row.seat,
        "names": names,
        "version": version,
        "after": wording.moves(version),
        "link": f"{site.public_url}/g/{game.id}",
        "head_seq": head_seq,
        "head_hash": head_hash,
        "seed_commitment": game.seed_commitment,
        "seed_value": None,
        "witness": wording.wrapped(
            _("Log witness: move %(seq)d has hash") % {"seq": head_seq}, head_hash
        ),
        "commitment": wording.wrapped(_("Seed commitment (SHA-256):"), game.seed_commitment),
        "board": render_text(game.name, shown.view["state"], names),
        "last_moves": moves,
        "to_act": _to_act(session, game, shown.view["to_act"], names),
        "notation_help": _(rules.notation_help),
        "reply_to": reply_address(site, secret, game.id, row.seat, version),
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
        "away": [],
        "quiet_until": _quiet_until(row),
        "problem": row.payload.get("reason"),
        "talk": None,
        "passed_on": row.payload.get("passed_on"),
        "my_turn": row.seat in shown.view["to_act"],
        "waiting_for": [],
        "personal_link": None,
        # The seat's play-now link: a full mail's alone, never the webhook's text.
        "play_link": None,
        "play_until": _play_until(game),
        "unsubscribe": None,
        # What earlier notices told, when one mail tells several (`together`).
        "earlier": (),
    }


def _play_until(game: Game) -> str | None:
    """When a finished game's play-now links stop working, as mails say it."""
    until = works_until(game)
    return None if until is None else i18n.when(until)


def _quiet_until(row: Outbox) -> str | None:
    """On the last answer before the cap on answers (`referee.service.reply_cap`), when
    answers resume: the date, and how far from the mail's own."""
    until = row.payload.get("quiet_until")
    if not until:
        return None
    at, sent = datetime.fromisoformat(until), datetime.fromisoformat(row.created_at)
    return _("%(moment)s (in %(length)s)") % {
        "moment": i18n.when(at, sent),
        "length": wording.duration((at - sent).total_seconds()),
    }


def _to_act(session: Session, game: Game, seats: list[int], names: list[str]) -> list[str]:
    """The seats to act, each marked when the referee's mail no longer reaches it."""
    unreachable = unreached_seats.unreachable_seats(session, game.id, reachable)
    marked = " " + _("(unreachable: mail to this player bounces)")
    return [names[s] + (marked if s in unreachable else "") for s in seats]


# What the referee plays when time runs out (`game.on_timeout`), as mails name it: the
# policy's own word in English.
_POLICIES = {
    "pass": N_("pass"),
    "random": N_("random"),
    "forfeit": N_("forfeit"),
    "bot": N_("bot"),
}


def _deadline_context(
    session: Session, game: Game, row: Outbox, version: int, names: list[str]
) -> dict[str, Any]:
    """When the reminded turn runs out, and the game's deadline rule (its clock standing
    still while a seat to act is on vacation); the other seats away when it was written."""
    sent = datetime.fromisoformat(row.created_at)
    away = vacation_rows.seats_away(session, [game], sent).get(game.id, {})
    back = turn_clock.seats_away_at(away, sent) if game.status == GameStatus.ACTIVE else {}
    found: dict[str, Any] = {
        "away": [
            _("%(name)s is on vacation until %(moment)s.")
            % {"name": names[seat], "moment": wording.moment(until, sent)}
            for seat, until in sorted(back.items())
            if seat != row.seat and seat < len(names)
        ]
    }
    if row.payload.get("due_at"):
        found["due_at"] = wording.moment(datetime.fromisoformat(row.payload["due_at"]), sent)
    if game.deadline_seconds is not None:
        due = turn_clock.due_at(game, away) if version == game.version else None
        found["deadline"] = {
            "length": wording.duration(game.deadline_seconds),
            "policy": _(_POLICIES.get(game.on_timeout or "random", game.on_timeout or "random")),
            "due_at": None if due is None else wording.moment(due, sent),
        }
    return found


def _answer_context(
    session: Session, game: Game, rules: AnyGame, seat: int, submission: Submission
) -> dict[str, Any]:
    """How the seat's move was decided, for an answer."""
    found: dict[str, Any] = {
        "status": submission.status,
        "code": submission.code,
        "reason": None if submission.reason is None else reason_words(submission.reason),
        "timed_out": submission.source == Source.TIMEOUT,
        "move": rules.notate(rules.move_from_json(submission.move)),
    }
    if submission.status == SubmissionStatus.ACCEPTED and submission.seq is not None:
        before = game_states.state_at(session, game, submission.seq - 1)
        after = game_states.state_at(session, game, submission.seq)
        found["note"] = rules.answer_note(before, after, seat)
    return found


def _kind_context(
    game: Game, rules: AnyGame, row: Outbox, shown: _Position, names: list[str]
) -> dict[str, Any]:
    """What the notice's kind adds: the seat's legal moves, the round, the result."""
    assert row.seat is not None
    kind = OutboxKind(row.kind)
    found: dict[str, Any] = {}
    if row.seat in shown.view["to_act"] and kind in _LISTING:
        moves = rules.legal_moves(shown.state, row.seat)
        found["legal"], found["legal_counts"] = grouped_moves(rules, moves, MAX_LISTED)
    if kind == OutboxKind.ROUND_OVER:
        found["round"] = _round_lines(rules, shown.state, names)
    if kind == OutboxKind.REMATCH:
        found["waiting_for"] = [names[seat] for seat in row.payload.get("waiting_for", [])]
    if kind == OutboxKind.BOT_SEAT:
        handed = int(row.payload["seat"])
        found["handed"] = _("you") if handed == row.seat else names[handed]
        found["timeouts"] = row.payload.get("timeouts")
    if kind == OutboxKind.UNREACHED:
        unreached = int(row.payload["seat"])
        found["unreached"] = names[unreached]
    if kind in (OutboxKind.SEAT_TAKEN, OutboxKind.ARRIVED):
        taken = int(row.payload["seat"])
        found["taken"] = {"seat": taken, "name": names[taken], "bot": row.payload["bot"]}
    if kind == OutboxKind.GAME_OVER:
        found["result"] = _result_lines(game, names)
        found["seed"] = wording.wrapped(_("The seed was"), game.seed or "")
        found["seed_value"] = game.seed
    return found


def _data(
    site: Site, game: Game, row: Outbox, shown: _Position, context: dict[str, Any]
) -> dict[str, Any]:
    """The notice as JSON (what a webhook gets), but for its text (`Composed.json`)."""
    over = row.kind == OutboxKind.GAME_OVER
    return {
        "id": message_id(site, row),
        "kind": row.kind,
        "game_id": game.id,
        "game": game.name,
        "seat": row.seat,
        "version": shown.version,
        "head_seq": shown.head_seq,
        "head_hash": shown.head_hash,
        "envelope": shown.view,
        "last_moves": context["last_moves"],
        "legal_moves": context["legal"],
        "result": game.result if over else None,
        "seed": game.seed if over else None,
    }


def build(session: Session, row: Outbox, secret: bytes, site: Site) -> Composed | SignInLink:
    """The content of notice `row`, as its seat may see it: built once, rendered by
    each channel (`Composed.json`, `Composed.mail`)."""
    if row.kind == OutboxKind.SIGN_IN:
        return sign_in_link(row, secret, site)
    game = session.get(Game, row.game_id)
    assert game is not None and row.seat is not None and row.id is not None
    seats = reads.seats(session, game.id)
    typed = mail_names(game, [s.name for s in seats])
    # A bot's seat is called `Name (bot, LEVEL)` everywhere but in its own greeting.
    names = [with_bot(name, seat.bot) for name, seat in zip(typed, seats, strict=True)]
    rules = reads.rules_of(game)
    shown = _position(session, game, rules, row)
    handed = handover_rows.done(session, game.id)
    context = _base_context(session, game, rules, row, shown, names, handed, secret, site)
    context["name"] = typed[row.seat]
    context["thread_names"] = _thread_names(game, seats, typed, handed)
    context |= _deadline_context(session, game, row, shown.version, names)
    context |= _kind_context(game, rules, row, shown, names)
    # The seats' messages this seat has not seen, up to the notice's own time.
    talk = talk_lines.unseen(session, game.id, row.seat, names, row.created_at)
    context["talk"] = talk
    their_reply = row.payload.get("in_reply_to")
    if row.kind == OutboxKind.ANSWER:
        submission = session.get(Submission, row.payload["submission"])
        assert submission is not None
        context |= _answer_context(session, game, rules, row.seat, submission)
        their_reply = _reply_to_submission(session, submission)
    return Composed(
        message_id=message_id(site, row),
        notice_id=row.id,
        game_id=game.id,
        seat=row.seat,
        kind=row.kind,
        created_at=row.created_at,
        game_name=game.name,
        context=context,
        data=_data(site, game, row, shown, context),
        site=site,
        play_link=play_url(site.public_url, secret, game.id, row.seat),
        their_reply=their_reply if isinstance(their_reply, str) else None,
        talk_seen=talk_lines.seen_marks([talk]),
        before=shown.before,
        speech=here(),
    )


def _thread_names(
    game: Game, seats: list[Seat], typed: list[str], handed: list[SeatHandover]
) -> list[str]:
    """The names in the subject, which keeps a game's mails in one thread: as when the
    game began. A seat handed to a bot midway keeps its person's name there, and a seat
    a person took over from a bot its bot's."""
    bots = {found.seat: found for found in handed}
    first = [
        with_bot(name, seat.bot if seat.bot_since is None else None)
        for name, seat in zip(typed, seats, strict=True)
    ]
    tidy = shown_name if game.trusted else plain_name
    for number, found in bots.items():
        first[number] = with_bot(tidy(found.bot_name) or player_number(number), found.bot)
    return first


@dataclass(frozen=True, slots=True)
class Composed:
    """A notice's content, built once; every channel renders it its own way."""

    message_id: str
    notice_id: int
    game_id: str
    seat: int
    kind: str
    created_at: str
    game_name: str
    context: dict[str, Any]
    data: dict[str, Any]
    # The Message-ID of the player's mail this notice answers, if it came by mail.
    their_reply: str | None
    site: Site
    # The seat's play-now link (`referee.delivery.play_links`): in its full mails only.
    play_link: str
    # The messages it shows, seen by the seat once its full mail went out.
    talk_seen: tuple[tuple[str, int, int], ...] = ()
    # The notices told before it in the same mail (`together`), oldest first.
    earlier: tuple[Composed, ...] = ()
    # The seat's view a move before the one shown: its picture marks the last move.
    before: JSON | None = None
    # The language and zone it speaks (`referee.delivery.speech`), as it was built.
    speech: tuple[str, str] = (i18n.SOURCE_LANGUAGE, i18n.UTC_ZONE)

    @property
    def kinds(self) -> list[str]:
        """The kinds of the notices its mail tells, in order."""
        return [part.kind for part in self.earlier] + [self.kind]

    @property
    def notices(self) -> list[int]:
        """The notices its mail tells, in order."""
        return [part.notice_id for part in self.earlier] + [self.notice_id]

    def json(self) -> bytes:
        """The notice as JSON, with the mail's text less anything personal (links, consent)."""
        with i18n.speaking(*self.speech):
            text = _text.get_template("mail.txt.j2").render(self.context)
        return json.dumps({**self.data, "text": text}, sort_keys=True).encode("utf-8")

    def mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        """The notice as a mail to `address`: the one invitation asking to accept, or in full."""
        with i18n.speaking(*self.speech):
            if consent.ask:
                return _ask(self, address, consent)
            return _full_mail(self, address, consent, thread_root)


# Kinds whose news is only that the position is the seat's to answer: told before
# another notice that shows the board, they say nothing more.
_SHOWN_BY_THE_LAST = frozenset({OutboxKind.YOUR_TURN, OutboxKind.BOARD, OutboxKind.REMINDER})


def together(parts: Sequence[Composed]) -> Composed:
    """Notices due to one seat of one game at once, as one mail: what each earlier one
    tells, in turn, then the last one in full (its board, moves, reply address: the
    latest position, which a reply answers).

    The mail's Message-ID is its first notice's, which the thread's later mails
    refer to (`referee.store.delivery.first_sent` finds the first notice sent);
    it answers the player's latest reply among them.
    """
    *earlier, last = parts
    replies = [part.their_reply for part in parts if part.their_reply is not None]
    return replace(
        last,
        message_id=parts[0].message_id,
        their_reply=replies[-1] if replies else last.their_reply,
        earlier=tuple(earlier),
    )


def _earlier_news(composed: Composed, html: bool) -> list[str]:
    """What the mail's earlier notices tell, each rendered as its own (HTML escaped)."""
    shows_board = composed.kind not in (OutboxKind.HELP, OutboxKind.MESSAGES)
    told = [
        part for part in composed.earlier if not (shows_board and part.kind in _SHOWN_BY_THE_LAST)
    ]
    if html:
        template = _html.get_template("news.html.j2")
        return [Markup(template.render(part.context)) for part in told]
    return [_text.get_template("news.txt.j2").render(part.context) for part in told]


def _full_mail(
    composed: Composed, address: str, consent: Consent, thread_root: str | None
) -> EmailMessage:
    site = composed.site
    context = {
        **composed.context,
        "personal_link": consent.link,
        "play_link": composed.play_link,
        "unsubscribe": unsubscribe_url(site, consent),
    }
    mail = EmailMessage()
    _mail_headers(mail, composed, address, thread_root)
    _unsubscribe_headers(site, mail, consent)
    text_context = {**context, "earlier": _earlier_news(composed, html=False)}
    mail.set_content(_text.get_template("mail.txt.j2").render(text_context))
    cid = f"board.{composed.notice_id}@{site.domain}" if composed.kind in _PICTURED else None
    html_context = {**context, "cid": cid, "earlier": _earlier_news(composed, html=True)}
    html = _html.get_template("mail.html.j2").render(html_context)
    mail.add_alternative(html, subtype="html")
    view = composed.data["envelope"]
    if cid is not None:
        html_part = mail.get_payload()[1]  # type: ignore[index]
        assert isinstance(html_part, EmailMessage)
        png = board_png(composed.game_name, view["state"], context["names"], composed.before)
        # Shown in the HTML only: inline, so no mail program lists it as an attachment too.
        html_part.add_related(
            png, "image", "png", cid=f"<{cid}>", disposition="inline", filename="board.png"
        )
    mail.add_attachment(
        json.dumps(view, sort_keys=True, indent=1).encode("utf-8"),
        "application",
        "json",
        filename="state.json",
    )
    return spoken(mail)


def _mail_headers(
    mail: EmailMessage, composed: Composed, address: str, thread_root: str | None
) -> None:
    context, game_id, title = composed.context, composed.game_id, composed.context["title"]
    site = composed.site
    mail["Subject"] = subject(title, context["thread_names"], game_id)
    mail["From"] = site.sender
    mail["To"] = Address(context["name"], addr_spec=address)
    mail["Reply-To"] = context["reply_to"]
    mail["Message-ID"] = composed.message_id
    mail["Date"] = format_datetime(datetime.fromisoformat(composed.created_at))
    # One thread per game and seat: every mail refers to the first one sent,
    # and an answer also to the player's own reply.
    references = [found for found in (thread_root, composed.their_reply) if found is not None]
    if references:
        mail["References"] = " ".join(references)
        mail["In-Reply-To"] = references[-1]
    # A machine's mail (RFC 3834): no vacation notice or read receipt answers it.
    mail["Auto-Submitted"] = "auto-generated"
    mail["X-Auto-Response-Suppress"] = "All"
    mail["List-Id"] = list_id(site, title, game_id)
    mail["X-Referee-Game"] = game_id
    mail["X-Referee-Seat"] = str(composed.seat)
    mail["X-Referee-Version"] = str(context["version"])
    mail["X-Referee-Kind"] = composed.kind
    # Every notice the mail tells, in order (its kind is the last one's).
    mail["X-Referee-Kinds"] = " ".join(composed.kinds)
    # And which they are: a mail sent again after a worker died may tell some of them
    # beside newer ones, under another first notice's Message-ID.
    mail["X-Referee-Notices"] = " ".join(str(notice) for notice in composed.notices)
    mail["X-Referee-Head"] = f"{context['head_seq']} {context['head_hash']}"


def _unsubscribe_headers(site: Site, mail: EmailMessage, consent: Consent) -> None:
    """RFC 8058 one-click: a mail program may POST to the link to stop every mail."""
    mailto = f"mailto:stop+{consent.stop_token}@{site.domain}"
    mail["List-Unsubscribe"] = f"<{unsubscribe_url(site, consent)}>, <{mailto}>"
    mail["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"


def _ask(composed: Composed, address: str, consent: Consent) -> EmailMessage:
    """The one mail an address that has not accepted gets: who invites it to
    what, and how to accept. The names in it were typed by whoever made the
    game, a stranger to the recipient: only the first player's is quoted,
    plainly (`mail_names`), and the recipient's own is not used at all."""
    context, site = composed.context, composed.site
    title, names = context["title"], context["names"]
    facts = {
        "title": title,
        "game_id": composed.game_id,
        "players": len(names),
        "inviter": names[0],
        "first": composed.seat == 0,
        "site": site.public_url,
        "accept": accept_url(site, consent),
        "unsubscribe": unsubscribe_url(site, consent),
        "reply_to": context["reply_to"],
    }
    mail = EmailMessage()
    mail["Subject"] = _('[%(title)s] An invitation to play: reply "accept" to join') % {
        "title": title
    }
    mail["From"] = site.sender
    mail["To"] = Address(addr_spec=address)
    mail["Reply-To"] = context["reply_to"]
    mail["Message-ID"] = composed.message_id
    mail["Date"] = format_datetime(datetime.fromisoformat(composed.created_at))
    mail["X-Referee-Game"] = composed.game_id
    mail["X-Referee-Seat"] = str(composed.seat)
    mail["X-Referee-Kind"] = composed.kind
    _unsubscribe_headers(site, mail, consent)
    mail.set_content(_text.get_template("ask.txt.j2").render(facts))
    mail.add_alternative(_html.get_template("ask.html.j2").render(facts), subtype="html")
    return spoken(mail)


def _round_lines(rules: AnyGame, state: Any, names: list[str]) -> list[str]:
    """How the round went: the game's summary of it, then the scores."""
    summary = rules.round_summary(state)
    lines = []
    if summary.winners is not None:
        won = ", ".join(names[s] for s in summary.winners)
        lines.append(_("winner: %(names)s") % {"names": won or _("nobody")})
    lines += [f"{label}: {'-' if value is None else value}" for label, value in summary.facts]
    scores = rules.scores(state)
    lines += [
        _("score of %(name)s: %(score)s") % {"name": names[s], "score": score}
        for s, score in enumerate(scores)
    ]
    return lines


def _result_lines(game: Game, names: list[str]) -> list[str]:
    assert game.result is not None
    winners = set(game.result["winners"])
    return [
        f"{names[s]}: {score}" + ("  " + _("winner") if s in winners else "")
        for s, score in enumerate(game.result["scores"])
    ]


# -- a player's sign-in link ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SignInLink:
    """A sign-in link mailed to a player (`referee.service.signing_in`). It names nothing
    of the game whose seat carries it, and starts a thread of its own."""

    message_id: str
    created_at: str
    link: str
    minutes: int
    site: Site
    # It shows no messages.
    talk_seen: tuple[tuple[str, int, int], ...] = ()
    # The language and zone it speaks (`referee.delivery.speech`).
    speech: tuple[str, str] = (i18n.SOURCE_LANGUAGE, i18n.UTC_ZONE)

    def json(self) -> bytes:
        """What a webhook would get, were it sent one (it is not): never the link."""
        return json.dumps({"id": self.message_id, "kind": OutboxKind.SIGN_IN}).encode("utf-8")

    def mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        """The mail, whatever thread the seat's mail has: it joins none."""
        with i18n.speaking(*self.speech):
            return self._mail(address, consent)

    def _mail(self, address: str, consent: Consent) -> EmailMessage:
        site = self.site
        facts = {
            "link": self.link,
            "minutes": self.minutes,
            "site": site.public_url,
            "unsubscribe": unsubscribe_url(site, consent),
        }
        mail = player_mail(
            site, address, consent, _("Sign in to the referee"), self.message_id, self.created_at
        )
        mail["X-Referee-Kind"] = OutboxKind.SIGN_IN
        mail.set_content(_text.get_template("sign_in.txt.j2").render(facts))
        mail.add_alternative(_html.get_template("sign_in.html.j2").render(facts), subtype="html")
        return spoken(mail)


def player_mail(
    site: Site,
    address: str,
    consent: Consent,
    subject: str,
    message_id: str,
    created_at: str,
    thread_root: str | None = None,
) -> EmailMessage:
    """The headers of a mail told to a player rather than of one game (a sign-in link,
    a digest, news of open games): automatic, with one-click unsubscribe. No Reply-To:
    a reply goes to the referee's own address, never to a game (`referee mail-in`
    takes replies at play+ addresses alone)."""
    mail = EmailMessage()
    mail["Subject"] = subject
    mail["From"] = site.sender
    mail["To"] = Address(addr_spec=address)
    mail["Message-ID"] = message_id
    mail["Date"] = format_datetime(datetime.fromisoformat(created_at))
    if thread_root is not None:
        mail["References"] = thread_root
        mail["In-Reply-To"] = thread_root
    mail["Auto-Submitted"] = "auto-generated"
    mail["X-Auto-Response-Suppress"] = "All"
    _unsubscribe_headers(site, mail, consent)
    return mail


def sign_in_link(row: Outbox, secret: bytes, site: Site) -> SignInLink:
    """The sign-in mail of notice `row`: its token is derived again from the nonce it keeps."""
    assert row.id is not None
    token = keys.sign_in_token(secret, row.payload["nonce"])
    created, expires = row.created_at, row.payload["expires_at"]
    life = datetime.fromisoformat(expires) - datetime.fromisoformat(created)
    minutes = round(life.total_seconds() / 60)
    return SignInLink(
        message_id=f"<referee.sign-in.{row.id}@{site.domain}>",
        created_at=created,
        link=f"{site.public_url}/me/sign-in/{token}",
        minutes=minutes,
        site=site,
        speech=here(),
    )


def here() -> tuple[str, str]:
    """The language and zone spoken here, kept by a built notice to render it later."""
    return i18n.language(), i18n.zone().key


def spoken(mail: EmailMessage) -> EmailMessage:
    """`mail`, saying the language it speaks (RFC 3282): set once its body is made, which
    would move the header into its first part."""
    mail["Content-Language"] = i18n.language()
    return mail
