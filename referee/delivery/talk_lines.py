"""The seats' messages a mail shows its seat, and marking them seen once it went out.

A turn mail, a reminder, an answer, the board, the mail of a reply's words
passed on, the short mail of unseen messages and the digest show the
messages their seat has not seen: the others' messages after the last it
saw, but those of seats it muted, written no later than the notice (so that
building a notice again gives the same mail). At most `SHOWN_MOST`, the
latest, are shown, with how many earlier ones the game's page holds. The
names are those of the game's mail (`compose.mail_names`: an untrusted
game's plainly). Once the mail is taken by the server, the seat has seen them
(`mark_seen`, never backwards): a webhook carrying the same notice marks
nothing, as the seat may not read it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from referee import i18n
from referee.store import table_messages
from referee.store.clock import parse_stamp
from referee.store.db import Database

SHOWN_MOST = 20
_TRIES = 3


@dataclass(frozen=True, slots=True)
class TalkLine:
    """One message as a mail shows it."""

    name: str
    text: str
    at: str


@dataclass(frozen=True, slots=True)
class Unseen:
    """A seat's unseen messages in one game, as a mail shows them; `upto` is the number
    of the latest, which the seat has seen once the mail went out."""

    game_id: str
    seat: int
    lines: list[TalkLine]
    earlier: int
    upto: int


def unseen(
    session: Session, game_id: str, seat: int, names: Sequence[str], until: str
) -> Unseen | None:
    """The messages of `game_id` that `seat` has not seen, written no later than `until`
    (a notice's creation), or None when there are none."""
    hidden = {seat, *table_messages.muted(session, game_id, seat)}
    after = table_messages.seen_seq(session, game_id, seat)
    rows = [
        row
        for row in table_messages.listed(session, game_id, after=after, hidden_seats=hidden)
        if row.created_at <= until
    ]
    if not rows:
        return None
    shown = rows[-SHOWN_MOST:]
    lines = [
        TalkLine(
            names[row.seat]
            if 0 <= row.seat < len(names)
            else i18n._("Player %(number)d") % {"number": row.seat + 1},
            row.text,
            # In the reader's zone and language (the notice is built speaking them).
            i18n.when(parse_stamp(row.created_at), parse_stamp(until)),
        )
        for row in shown
    ]
    return Unseen(game_id, seat, lines, len(rows) - len(shown), rows[-1].seq)


def seen_marks(found: Iterable[Unseen | None]) -> tuple[tuple[str, int, int], ...]:
    """What marking `found` seen writes: (game, seat, latest number) of each."""
    return tuple((one.game_id, one.seat, one.upto) for one in found if one is not None)


def mark_seen(db: Database, marks: Sequence[tuple[str, int, int]]) -> None:
    """The seats saw the messages up to each number (never backwards), in one transaction;
    two writers of a seat's first row race: the later tries again."""
    if not marks:
        return
    for attempt in range(_TRIES):
        try:
            with db.transaction() as session:
                for game_id, seat, seq in marks:
                    table_messages.see(session, game_id, seat, seq)
            return
        except IntegrityError:
            if attempt + 1 == _TRIES:
                raise
            time.sleep(0.05 * (attempt + 1))
