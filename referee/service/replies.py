"""Taking a mail reply: the seat's words become a submission, an acceptance or an answer.

The mail-in server reads the message (`mailin.reading`) and hands over
what it found; this use case checks that the reply may come from the seat,
takes each message once (by its Message-ID), and then: `accept` says yes
to the referee's mail, `help` and `board` are answered at once, a move is
submitted like any other (seen at the answered mail's version; the worker
decides it and mails the answer), and text that is no move gets a mail
saying why. Mail from a machine is taken and dropped without an answer.

Words to people beside the move (`referee.reply_words`) are passed on to the
other seats as a message (`table_talk.post_message`, via "mail") once the
reply is taken; a reply of words alone is answered that they were passed on
(and whether it is still the seat's turn), and words that could not be (too
many messages this hour, too long) are answered so. A refused reply passes
nothing on. Against a robot that answers every mail without saying so (RFC
3834), words are not passed on past the cap on answers (`reply_cap`), nor
when they are the seat's last message again, within `REPEAT_WINDOW`: an
autoresponder's second and later answers say what its first said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from referee import talk_text
from referee.delivery import speech
from referee.i18n import _, speaking
from referee.reply_text import Command, Read, Unread, same_address
from referee.reply_words import split_reply
from referee.service import consent, refusals, rematching, reply_cap, table_talk
from referee.service.notifying import write
from referee.service.publishing import Published, publish
from referee.service.submitting import KnownSeat, SubmitMove, record_move
from referee.store import addresses, bounce_reports, keys, message_mail_rows, reads, rematches
from referee.store.appending import outbox_row
from referee.store.clock import now, parse_stamp, stamp
from referee.store.tables import Game, Inbound, OutboxKind, Source

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply as the mail-in server read it."""

    # The token of its `play+<token>@` address.
    token: str
    # What names the message across copies, and its own Message-ID (None: unusable).
    message_key: str
    message_id: str | None
    # The address in its From header.
    sender: str
    # The player's own paragraphs, as lines (`mailin.reading.own_paragraphs`), and the
    # subject without its `Re:`, read only when they are empty.
    paragraphs: Sequence[Sequence[str]] = ()
    subject: str = ""
    # Why it is a machine's mail (an auto-reply, a bounce), or None for a person's.
    automatic: str | None = None


@dataclass(frozen=True, slots=True)
class Taken:
    """What became of a reply: its outcome, for the mail-in server's log and answer."""

    outcome: str
    game_id: str
    seat: int


DROPPED = "dropped"
DUPLICATE = "duplicate"
SCREENED = "screened"
PASSED_ON = "passed on"
NOT_PASSED_ON = "not passed on"
REPEAT_WINDOW = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class _Words:
    """Words of a reply to pass on once it is taken, and how its answer may go."""

    text: str
    alone: bool
    # Why they are held back before anything is tried (a robot's, most likely), or None.
    held: str | None
    answer: bool
    quiet_until: str | None
    in_reply_to: str | None


def reply_seat(referee: Referee, token: str) -> keys.ReplyKey:
    """The game and seat a reply address names; refused for a forged or unknown one."""
    named = keys.read_token(referee.secret(), token)
    if named is None:
        raise refusals.NotFound(_("this reply address is not valid"))
    return named


def take_reply(referee: Referee, reply: Reply) -> Taken:
    """Take one reply for the seat its address names (each message once). Why a reply is
    refused is written in the seat's mail language, which its answer speaks; the move
    and the game's log are the same in every language."""
    named = reply_seat(referee, reply.token)
    if reply.automatic is not None:
        # Taken and dropped: a bounce or an answer would only feed a mail loop.
        return Taken(f"{DROPPED} ({reply.automatic})", named.game_id, named.seat)
    with referee.db.reading() as session:
        told = speech.of_seat(session, named.game_id, named.seat)
    with speaking(told.language, told.zone):
        return _take(referee, reply, named)


def _take(referee: Referee, reply: Reply, named: keys.ReplyKey) -> Taken:
    game_id, seat = named.game_id, named.seat
    published = Published()
    with referee.db.transaction() as session:
        game, address = _seat_address(referee, session, reply, named)
        if same_address(reply.sender, address):
            # The seat's own address wrote: it is alive, whatever bounced before.
            bounce_reports.alive(session.connection(), address)
        inbound = Inbound(
            message_key=reply.message_key,
            game_id=game_id,
            seat=seat,
            received_at=now(),
            outcome="",
            message_id=reply.message_id,
        )
        session.add(inbound)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            return Taken(DUPLICATE, game_id, seat)
        allowed = reply_cap.allowance(session, referee.settings, game_id, seat, datetime.now(UTC))
        parts = split_reply(reads.rules_of(game), game.options, reply.paragraphs, reply.subject)
        words = None
        if parts.words:
            held = _held(session, game_id, seat, parts.words, allowed)
            alone = parts.read is None
            words = _Words(
                parts.words, alone, held, allowed.answer, allowed.quiet_until, reply.message_id
            )
        if parts.read is None:
            # Words alone (there is no read only with words): passed on below, once this
            # reply is taken for good.
            assert words is not None
            outcome = PASSED_ON if words.held is None else NOT_PASSED_ON
            inbound.submission_id = None
        else:
            outcome, inbound.submission_id = _act(
                session, game, seat, address, reply, parts.read, named.version, published, allowed
            )
        inbound.answered = allowed.answer and outcome != "accepted"
        inbound.quiet_until = allowed.quiet_until if inbound.answered else None
        if not allowed.answer and outcome != "accepted":
            outcome = f"{outcome} (past the answer cap)"
        inbound.outcome = outcome
        session.add(inbound)
    publish(referee, published)
    for finished, rematch_id in published.rematches:
        rematching.start_rematch(referee, finished, rematch_id)
    if words is not None:
        outcome = _pass_on(referee, game_id, seat, words, outcome)
    return Taken(outcome, game_id, seat)


def _pass_on(referee: Referee, game_id: str, seat: int, words: _Words, outcome: str) -> str:
    """Pass a reply's words on to the other seats; answer the sender when they came alone
    or could not be passed on. Returns the reply's outcome with what became of them."""
    if words.held is not None and not words.answer:
        return outcome if words.alone else f"{outcome}, words not passed on"
    refused = words.held
    if refused is None:
        try:
            table_talk.post_message(referee, game_id, seat, words.text, via="mail")
        except (refusals.BadMessage, refusals.TooManyMessages) as problem:
            refused = problem.reason
    if words.alone or refused is not None:
        with referee.db.transaction() as session:
            game = session.get(Game, game_id)
            assert game is not None
            answer: dict[str, Any] = {
                "in_reply_to": words.in_reply_to,
                "version": game.version,
                "passed_on": refused is None,
            }
            if refused is not None:
                answer["reason"] = refused
            if words.quiet_until is not None:
                answer["quiet_until"] = words.quiet_until
            notice = outbox_row(game_id, OutboxKind.PASSED_ON, seat, answer, now())
            write(session.connection(), None, [notice])
        publish(referee, Published(news=True))
    if refused is None:
        return outcome if words.alone else f"{outcome}, words passed on"
    if words.alone:
        return f"{NOT_PASSED_ON} ({refused})"
    return f"{outcome}, words not passed on ({refused})"


def _held(
    session: Session, game_id: str, seat: int, text: str, allowed: reply_cap.Allowance
) -> str | None:
    """Why a reply's words are not passed on before anything is tried: past the cap on
    answers, or the seat's last message again (a robot's, most likely)."""
    if not allowed.answer:
        return _("past the answer cap")
    since = stamp(parse_stamp(now()) - REPEAT_WINDOW)
    last = message_mail_rows.last_text(session, game_id, seat, since)
    if last is not None and last == talk_text.shown(text):
        return _("they are the same as your last message, which the other players have")
    return None


def screen_reply(referee: Referee, reply: Reply) -> Taken:
    """The checks of `take_reply` that need none of the message's text, so that a
    stranger's message or a second copy costs no reading: the address and the sender
    (refused alike), then whether a copy was taken already (`DUPLICATE`, else `SCREENED`)."""
    named = reply_seat(referee, reply.token)
    with referee.db.reading() as session:
        _seat_address(referee, session, reply, named)
        taken = session.get(Inbound, reply.message_key) is not None
    return Taken(DUPLICATE if taken else SCREENED, named.game_id, named.seat)


def _seat_address(
    referee: Referee, session: Session, reply: Reply, named: keys.ReplyKey
) -> tuple[Game, str]:
    """The game and the seat's address; refused when the reply may not come from it."""
    game = session.get(Game, named.game_id)
    seats = reads.seats(session, named.game_id) if game is not None else []
    if game is None or named.seat >= len(seats):
        raise refusals.NotFound(_("this reply address is not valid"))
    address = seats[named.seat].email or ""
    checks = referee.settings.mail_check_sender
    if checks and not same_address(reply.sender, address):
        raise refusals.Unauthorized(
            _("this address takes replies only from the seat's own mail address"),
            game_id=named.game_id,
            seat=named.seat,
        )
    return game, address


def _rematch(
    session: Session, game: Game, seat: int, answer: dict[str, Any], published: Published
) -> OutboxKind | None:
    """The seat accepts a rematch: answered with who is awaited, or refused while the
    game runs; none when it was the last (the new game's invitation tells it)."""
    locked = rematches.locked(session, game.id)
    assert locked is not None
    try:
        standing, claimed = rematching.record_acceptance(session, locked, seat)
    except refusals.StillInPlay as refused:
        answer["reason"] = refused.reason
        return OutboxKind.REFUSED
    if claimed is not None:
        published.rematches.append((locked, claimed))
        return None
    answer["waiting_for"] = list(standing.waiting_for)
    # The finished game's followers (its seats' pages) show who accepted as they do.
    published.changed.append(game.id)
    return OutboxKind.REMATCH


def _act(
    session: Session,
    game: Game,
    seat: int,
    address: str,
    reply: Reply,
    read: Read,
    seen: int | None,
    published: Published,
    allowed: reply_cap.Allowance,
) -> tuple[str, str | None]:
    """Do what the reply's move or command says (`read`); returns the outcome and the
    submission it made, if any. Fills `published` with what to publish; answers only as
    `allowed`."""
    if read == Command("accept"):
        # The seat's own address (the sender check) says yes to our mail.
        known = addresses.find(session, address) if address else None
        if known is not None:
            consent.accept(session, known)
        # Mail held back until the address said yes may go now.
        published.news = True
        return "accepted", None
    answer: dict[str, Any] = {"in_reply_to": reply.message_id}
    kind: OutboxKind | None = OutboxKind.REFUSED
    if isinstance(read, Unread):
        answer["reason"] = read.problem
    elif read == Command("rematch"):
        kind = _rematch(session, game, seat, answer, published)
    elif isinstance(read, Command):
        kind = OutboxKind(read.word)
        answer["version"] = game.version
    else:
        command = SubmitMove(
            game.id,
            KnownSeat(seat),
            read.move,
            source=Source.MAIL,
            # The version the answered mail showed: a move is judged against it.
            seen_version=seen,
            idempotency_key=f"mail:{reply.message_key}",
        )
        submission, _fresh = record_move(session, command)
        published.to_decide.append(submission.id)
        return "submitted", submission.id
    if kind is None:
        return "rematch", None
    if not allowed.answer:
        return str(kind), None
    if allowed.quiet_until is not None:
        answer["quiet_until"] = allowed.quiet_until
    write(session.connection(), None, [outbox_row(game.id, kind, seat, answer, now())])
    published.news = True
    return str(kind), None
