"""The rows behind play by email: outbox delivery, reply tokens, inbound replies, deadlines.

Outbox rows are delivered through a small state machine: `pending` (due at
`next_attempt_at`) → `sending` (claimed by one worker until `lease_until`)
→ `sent`, or back to `pending` with a later `next_attempt_at` when the mail
server or the webhook refused, or `failed` after too many attempts. A
worker that dies while sending leaves its rows `sending`; once the lease
has run out another worker claims them again, so nothing is lost. Each
channel (mail, webhook) is marked done on its own as soon as it went out,
so a retry never repeats what already succeeded.

Deadlines live on the game row and are applied by a sweep that is handed
the time, so tests move the clock instead of sleeping.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from referee.engine import Resign
from referee.rng import Rng
from referee.store import ops
from referee.store.db import engine, now, transaction
from referee.store.tables import (
    ACCEPTED,
    FAILED,
    PENDING,
    SENDING,
    SENT,
    TIMEOUT,
    Game,
    Outbox,
    Setting,
    Submission,
)

POLICIES = ("pass", "random", "forfeit")
_SECRET_KEY = "mail_secret"


def stamp(moment: datetime) -> str:
    """A time as the store keeps it (see `db.now`)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- the server secret and the tokens derived from it --------------------------


def server_secret(url: str | None = None) -> bytes:
    """`REFEREE_SECRET`, or a random secret made once and kept in the database."""
    configured = os.environ.get("REFEREE_SECRET")
    if configured:
        return configured.encode("utf-8")
    with Session(engine(url)) as session:
        found = session.get(Setting, _SECRET_KEY)
        if found is None:
            session.add(Setting(key=_SECRET_KEY, value=secrets.token_hex(32)))
            try:
                session.commit()
            except IntegrityError:
                # Another process made it first; theirs stands.
                session.rollback()
            found = session.get(Setting, _SECRET_KEY)
        assert found is not None
        return found.value.encode("utf-8")


def _mac(secret: bytes, purpose: str, game_id: str, seat: int) -> bytes:
    message = f"{purpose}:{game_id}:{seat}".encode()
    return hmac.new(secret, message, hashlib.sha256).digest()


def reply_token(secret: bytes, game_id: str, seat: int) -> str:
    """The secret part of a seat's reply address: game, seat and a MAC, in lower-case base32.

    It is derived, not stored, so every mail can carry it; it is not the
    REST token (which the server cannot recover: it keeps only its hash).
    """
    raw = bytes.fromhex(game_id) + bytes([seat]) + _mac(secret, "reply", game_id, seat)[:12]
    return base64.b32encode(raw).decode("ascii").rstrip("=").lower()


def read_token(secret: bytes, token: str) -> tuple[str, int] | None:
    """The (game id, seat) a reply token names; None for anything forged or malformed."""
    text = token.strip().upper()
    if len(text) != 47 or not text.isalnum():
        return None
    try:
        raw = base64.b32decode(text + "=")
    except ValueError:
        return None
    game_id, seat = raw[:16].hex(), raw[16]
    # Compared as text, so another spelling of the same bits is refused too.
    if not hmac.compare_digest(text.lower(), reply_token(secret, game_id, seat)):
        return None
    return game_id, seat


def webhook_secret(secret: bytes, game_id: str, seat: int) -> str:
    """The key a seat's webhook deliveries are signed with (HMAC-SHA256)."""
    return _mac(secret, "webhook", game_id, seat).hex()


# -- delivery ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """Rows one worker claimed, and the lease end that marks them as its own."""

    ids: list[int]
    lease_until: str


def claim_due(moment: datetime, lease: float, limit: int = 20, url: str | None = None) -> Claim:
    """Claim due rows for one worker: pending and due, or `sending` with a lapsed lease."""
    at = stamp(moment)
    until = stamp(moment + timedelta(seconds=lease))
    with transaction(url) as session:
        query = (
            select(Outbox.id)
            .where(
                or_(
                    (col(Outbox.status) == PENDING) & (col(Outbox.next_attempt_at) <= at),
                    (col(Outbox.status) == SENDING) & (col(Outbox.lease_until) < at),
                )
            )
            .order_by(col(Outbox.id))
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        ids = [found for found in session.exec(query) if found is not None]
        if ids:
            session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(ids))
                .values(
                    status=SENDING,
                    lease_until=until,
                    attempts=col(Outbox.attempts) + 1,
                )
            )
    return Claim(ids, until)


def hold(row_id: int, claim: Claim, lease: float, url: str | None = None) -> bool:
    """Renew the lease of a claimed row right before sending it, if it is still ours.

    A claim's rows are sent one after the other; a row whose lease ran out
    meanwhile may have been claimed by another worker (its lease end then
    differs from ours), and sending it here as well would send it twice.
    """
    renewed = stamp(datetime.now(UTC) + timedelta(seconds=lease))
    with transaction(url) as session:
        result = session.connection().execute(
            update(Outbox)
            .where(
                (col(Outbox.id) == row_id)
                & (col(Outbox.status) == SENDING)
                & (col(Outbox.lease_until) == claim.lease_until)
            )
            .values(lease_until=renewed)
        )
        return result.rowcount == 1


def channel_done(row_id: int, *channels: str, url: str | None = None) -> None:
    """Mark channels ("mail", "hook") of a row as done, the row sent once both are."""
    with transaction(url) as session:
        row = session.get(Outbox, row_id)
        if row is None:
            return
        done = now()
        if "mail" in channels:
            row.mail_at = row.mail_at or done
        if "hook" in channels:
            row.hook_at = row.hook_at or done
        if row.mail_at and row.hook_at:
            row.status = SENT
            row.sent_at = done
            row.lease_until = None
            row.error = None
        session.add(row)


def retry_later(
    row_id: int, error: str, moment: datetime, backoff: float, give_up_after: int, url: str | None
) -> None:
    """Put a row back for later (exponential backoff), or give up on it."""
    with transaction(url) as session:
        row = session.get(Outbox, row_id)
        if row is None or row.status != SENDING:
            return
        row.error = error[:1000]
        row.lease_until = None
        if row.attempts >= give_up_after:
            row.status = FAILED
        else:
            row.status = PENDING
            row.next_attempt_at = stamp(moment + timedelta(seconds=backoff))
        session.add(row)


# -- deadlines -------------------------------------------------------------------


def parse_deadline(text: str) -> int:
    """Seconds from `72h`, `90m`, `2d`, `45s` or a bare number of hours; ValueError otherwise."""
    text = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "h")
    try:
        seconds = round(float(number) * units[unit])
    except ValueError:
        raise ValueError(f"{text!r} is not a duration such as 72h, 90m or 2d") from None
    if not 60 <= seconds <= 366 * 86400:
        raise ValueError("a deadline lies between 1 minute and 366 days")
    return seconds


def due_at(game: Game) -> datetime | None:
    """When the seats to act now run out of time (None: no deadline)."""
    if game.deadline_seconds is None or game.status != "active":
        return None
    return parse_stamp(game.updated_at) + timedelta(seconds=game.deadline_seconds)


@dataclass(frozen=True, slots=True)
class Swept:
    reminded: list[str]
    timed_out: list[str]


def sweep_deadlines(moment: datetime, url: str | None = None) -> Swept:
    """Send the reminders due at 80% of a turn's time and apply the timeouts due at `moment`."""
    with Session(engine(url)) as session:
        games = list(
            session.exec(
                select(Game).where(Game.status == "active", col(Game.deadline_seconds).is_not(None))
            )
        )
    reminded, timed_out = [], []
    for game in games:
        due = due_at(game)
        assert due is not None and game.deadline_seconds is not None
        if due <= moment and game.timed_out_version != game.version:
            if _time_out(game.id, game.version, moment, url):
                timed_out.append(game.id)
        elif (
            due - timedelta(seconds=game.deadline_seconds * 0.2) <= moment
            and game.reminded_version != game.version
            and _remind(game.id, game.version, url)
        ):
            reminded.append(game.id)
    return Swept(reminded, timed_out)


def _locked(session: Session, game_id: str, version: int) -> Game | None:
    """The game under its lock, if it is still at `version` and running."""
    game = session.exec(
        select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    ).first()
    if game is None or game.version != version or game.status != "active":
        return None
    return game


def _remind(game_id: str, version: int, url: str | None) -> bool:
    with transaction(url) as session:
        game = _locked(session, game_id, version)
        if game is None or game.reminded_version == version:
            return False
        game.reminded_version = version
        session.add(game)
        due = due_at(game)
        assert due is not None
        for seat in game.to_act:
            session.add(
                Outbox(
                    game_id=game.id,
                    kind="reminder",
                    seat=seat,
                    payload={"version": version, "due_at": stamp(due)},
                    created_at=now(),
                )
            )
        return True


def timeout_move(rules: Any, state: Any, seat: int, policy: str, seed: str, version: int) -> Any:
    """The move the referee plays for a seat out of time.

    `pass` where the rules have one and allow it now (`Game.pass_move`),
    `random` otherwise; `random` draws from an rng seeded with the
    secret seed, the version and the seat, so it is fixed by stored data.
    """
    if policy == "forfeit":
        return Resign()
    passing = rules.pass_move(state, seat) if policy == "pass" else None
    if passing is not None:
        return passing
    return rules.random_move(state, seat, Rng(f"{seed}:timeout:{version}:{seat}"))


def _time_out(game_id: str, version: int, moment: datetime, url: str | None) -> bool:
    at = stamp(moment)
    with transaction(url) as session:
        game = _locked(session, game_id, version)
        if game is None or game.timed_out_version == version:
            return False
        due = due_at(game)
        if due is None or due > moment:
            return False
        rules = ops.rules_of(game)
        state = ops.state_at(session, game, version)
        rounds_before = rules.rounds_decided(state)
        played: list[tuple[int, Any, str | None]] = []
        for seat in game.to_act:
            if rules.result(state) is not None or seat not in rules.actors(state):
                continue
            move = timeout_move(rules, state, seat, game.on_timeout or "random", game.seed, version)
            state = rules.play(state, seat, move)
            move_json = rules.move_to_json(move)
            submission = Submission(
                id=ops.new_id(),
                game_id=game.id,
                seat=seat,
                move=move_json,
                request_hash=ops.request_hash({"move": move_json, "expected_version": None}),
                status=ACCEPTED,
                seq=version + len(played) + 1,
                created_at=at,
                decided_at=at,
                source=TIMEOUT,
            )
            session.add(submission)
            played.append((seat, move, submission.id))
        if played:
            # Appended like any decided move: one transaction, the game locked.
            ops.append_moves(
                session,
                game,
                rules,
                state,
                played,
                at,
                rounds_before=rounds_before,
                changes={"timed_out_version": version},
            )
        else:
            game.timed_out_version = version
            session.add(game)
        return bool(played)
