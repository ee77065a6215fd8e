"""Table talk: seats' messages to each other, mutes, and each seat's private note.

Only a game's seats read or write its messages: a spectator, another
game's seat or a stranger is refused (`NotASeat`) and no channel shows
them one. Messages live in their own append-only table, numbered per
game, apart from the move log: writing one changes no state, record,
hash or verification. Their text is kept as every place shows it
(`referee.talk_text.shown`), one to 1000 characters, at most
`PER_HOUR` per seat in any hour.

A message is announced after its commit like a change of its game: the
game's stream sends it to the seats that follow the game (not to a seat
that muted its writer), and each seat's player stream tells its player.
Each seat keeps the last message it has seen (`mark_seen`), which never
moves backwards: what is after it, from others and not muted, is unseen.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from referee import talk_text
from referee.i18n import _
from referee.names import shown as shown_name
from referee.service import refusals
from referee.service.players import PLAY, READ
from referee.service.publishing import Published, publish
from referee.service.submitting import KnownSeat, SeatRef, seat_of, well_formed
from referee.store import clock, reads, table_messages
from referee.store.tables import Game, TableMessage

if TYPE_CHECKING:
    from referee.service import Referee

PER_HOUR = 30
_HOUR = timedelta(hours=1)
# The most messages one read returns: a client pages on with `after`.
PAGE = 200
# Tries at a seat's first row (seen, note) when two requests of one seat race to add it.
_TRIES = 5

Via = Literal["api", "page", "mail"]
VIAS: tuple[Via, ...] = ("api", "page", "mail")


@dataclass(frozen=True, slots=True)
class MessageShown:
    """A message as its readers see it: its number, its seat and the seat's name."""

    seq: int
    seat: int
    name: str
    text: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "seat": self.seat,
            "name": self.name,
            "text": self.text,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class Note:
    """A seat's private note ("" and no time: none)."""

    text: str
    updated_at: str | None


def _names(session: Session, game_id: str) -> list[str]:
    return [shown_name(seat.name) or f"Seat {seat.seat}" for seat in reads.seats(session, game_id)]


def _shown(row: TableMessage, names: list[str]) -> MessageShown:
    name = names[row.seat] if 0 <= row.seat < len(names) else f"Seat {row.seat}"
    return MessageShown(row.seq, row.seat, name, row.text, row.created_at)


def _seated(session: Session, game_id: str, seat: int | SeatRef, scope: str) -> tuple[int, int]:
    """The caller's seat and the game's count of seats; `NotASeat` for anyone but a seat."""
    game = session.get(Game, game_id) if well_formed(game_id) else None
    if game is None:
        raise refusals.NotFound.game()
    seats = len(reads.seats(session, game_id))
    asked = KnownSeat(seat) if isinstance(seat, int) else seat
    try:
        found = seat_of(session, game_id, asked, scope)
    except refusals.Unauthorized as refused:
        raise refusals.NotASeat(
            _("only the game's seats read and write its messages and notes ({why})").format(
                why=refused.reason
            )
        ) from None
    if not 0 <= found < seats:
        raise refusals.NotASeat(_("this game has no seat {seat}").format(seat=found))
    return found, seats


def post_message(
    referee: Referee, game_id: str, seat: int | SeatRef, text: str, *, via: Via
) -> MessageShown:
    """`seat` writes `text` to the game's other seats; refused for anyone but a seat,
    for text that shows nothing or holds too much, and past `PER_HOUR` in an hour."""
    shown = talk_text.shown(text)
    with referee.db.transaction() as session:
        found, _seats = _seated(session, game_id, seat, PLAY)
        refused = talk_text.message_refusal(shown)
        if refused is not None:
            raise refusals.BadMessage(refused)
        # One writer of the game at a time: the count of the hour and the next number hold.
        table_messages.locked_game(session, game_id)
        moment = clock.parse_stamp(clock.now())
        _check_rate(session, game_id, found, moment)
        row = table_messages.append(session, game_id, found, shown, via, clock.stamp(moment))
        message = _shown(row, _names(session, game_id))
    publish(referee, Published(changed=[game_id]))
    return message


def _check_rate(session: Session, game_id: str, seat: int, moment: Any) -> None:
    sent = table_messages.sent_since(session, game_id, seat, clock.stamp(moment - _HOUR))
    if len(sent) < PER_HOUR:
        return
    # Free again when the oldest of the hour's messages is an hour old.
    free_at = clock.parse_stamp(sent[-PER_HOUR]) + _HOUR
    wait = max(1, math.ceil((free_at - moment).total_seconds()))
    raise refusals.TooManyMessages(
        _("a seat writes at most %(most)d messages an hour; try again in %(wait)d s")
        % {"most": PER_HOUR, "wait": wait},
        retry_after=wait,
    )


def messages(
    referee: Referee, game_id: str, seat: int | SeatRef, after: int = 0
) -> list[MessageShown]:
    """The game's messages after number `after` as `seat` sees them (none of the seats it
    muted), oldest first, at most `PAGE`."""
    with referee.db.reading() as session:
        found, _seats = _seated(session, game_id, seat, READ)
        hidden = table_messages.muted(session, game_id, found)
        rows = table_messages.listed(session, game_id, after=after, hidden_seats=hidden, limit=PAGE)
        names = _names(session, game_id)
    return [_shown(row, names) for row in rows]


@dataclass(frozen=True, slots=True)
class Table:
    """What a seat's game page shows of the table talk: the latest messages (none of the
    seats it muted), every seat's name, those it muted, and its note."""

    seat: int
    messages: list[MessageShown]
    names: list[str]
    muted: tuple[int, ...]
    note: Note


def table(referee: Referee, game_id: str, seat: int | SeatRef, most: int) -> Table:
    """The seat's table talk as its page shows it: at most `most` of the latest messages."""
    with referee.db.reading() as session:
        found, _seats = _seated(session, game_id, seat, READ)
        hidden = table_messages.muted(session, game_id, found)
        rows = table_messages.latest(session, game_id, most, hidden_seats=hidden)
        names = _names(session, game_id)
        kept = table_messages.note(session, game_id, found)
    return Table(
        seat=found,
        messages=[_shown(row, names) for row in rows],
        names=names,
        muted=hidden,
        note=Note("", None) if kept is None else Note(kept.text, kept.updated_at),
    )


def unseen_messages(referee: Referee, game_id: str, seat: int | SeatRef) -> list[MessageShown]:
    """The others' messages `seat` has not seen, but of the seats it muted, oldest first."""
    with referee.db.reading() as session:
        found, _seats = _seated(session, game_id, seat, READ)
        hidden = {found, *table_messages.muted(session, game_id, found)}
        after = table_messages.seen_seq(session, game_id, found)
        rows = table_messages.listed(session, game_id, after=after, hidden_seats=hidden)
        names = _names(session, game_id)
    return [_shown(row, names) for row in rows]


@dataclass(frozen=True, slots=True)
class Said:
    """A message as a game's stream tells it: shown, with the seats that muted its writer
    (which are not told)."""

    message: MessageShown
    muted_by: frozenset[int]


def last_seqs(referee: Referee, game_ids: Collection[str]) -> dict[str, int]:
    """The number of each game's latest message (games without any left out)."""
    with referee.db.reading() as session:
        return table_messages.last_seqs(session, game_ids)


def said_after(referee: Referee, after: Mapping[str, int]) -> dict[str, list[Said]]:
    """For streams: each game's messages after the number `after` gives it, oldest first
    (at most `PAGE`), each with the seats that muted its writer. Only a game's seats may be
    told them: the caller sends them to no one else."""
    found: dict[str, list[Said]] = {}
    with referee.db.reading() as session:
        for game_id, seq in sorted(after.items()):
            rows = table_messages.listed(session, game_id, after=seq, limit=PAGE)
            if not rows:
                continue
            names = _names(session, game_id)
            mutes = table_messages.mutes_of(session, game_id)
            found[game_id] = [
                Said(
                    _shown(row, names),
                    frozenset(seat for seat, muted in mutes.items() if row.seat in muted),
                )
                for row in rows
            ]
    return found


def mark_seen(referee: Referee, game_id: str, seat: int | SeatRef, seq: int) -> None:
    """`seat` has seen the game's messages up to number `seq` (never backwards, never
    past the latest)."""
    for attempt in range(_TRIES):
        try:
            with referee.db.transaction() as session:
                found, _seats = _seated(session, game_id, seat, READ)
                upto = min(seq, table_messages.last_seq(session, game_id))
                if upto > table_messages.seen_seq(session, game_id, found):
                    table_messages.see(session, game_id, found, upto)
            return
        except IntegrityError:
            # Seen from two places at once: the other row is there now.
            if attempt + 1 == _TRIES:
                raise


def muted(referee: Referee, game_id: str, seat: int | SeatRef) -> tuple[int, ...]:
    """The seats whose messages `seat` hides from itself."""
    with referee.db.reading() as session:
        found, _seats = _seated(session, game_id, seat, READ)
        return table_messages.muted(session, game_id, found)


def set_mute(
    referee: Referee, game_id: str, seat: int | SeatRef, other: int, *, on: bool
) -> tuple[int, ...]:
    """`seat` hides (`on`) or shows again another seat's messages; the muted seats after."""
    try:
        with referee.db.transaction() as session:
            found, seats = _seated(session, game_id, seat, PLAY)
            if not 0 <= other < seats or other == found:
                raise refusals.BadRequest(
                    _("a seat mutes another seat of its game, 0 to {last} but {seat}").format(
                        last=seats - 1, seat=found
                    )
                )
            if on:
                table_messages.mute(session, game_id, found, other, clock.now())
            else:
                table_messages.unmute(session, game_id, found, other)
            return table_messages.muted(session, game_id, found)
    except IntegrityError:
        # The same mute from two places at once: it is there.
        return muted(referee, game_id, seat)


def note(referee: Referee, game_id: str, seat: int | SeatRef) -> Note:
    """The seat's private note on the game."""
    with referee.db.reading() as session:
        found, _seats = _seated(session, game_id, seat, READ)
        kept = table_messages.note(session, game_id, found)
    return Note("", None) if kept is None else Note(kept.text, kept.updated_at)


def set_note(referee: Referee, game_id: str, seat: int | SeatRef, text: str) -> Note:
    """Keep the seat's private note (empty: none); the note as kept."""
    shown = talk_text.shown(text)
    refused = talk_text.note_refusal(shown)
    for attempt in range(_TRIES):
        try:
            with referee.db.transaction() as session:
                found, _seats = _seated(session, game_id, seat, PLAY)
                if refused is not None:
                    raise refusals.BadMessage(refused)
                table_messages.set_note(session, game_id, found, shown, clock.now())
            break
        except IntegrityError:
            # Two first notes at once: the other is kept now, and this one replaces it.
            if attempt + 1 == _TRIES:
                raise
    return note(referee, game_id, seat)


def unread(
    referee: Referee, seats: Collection[tuple[str, int]]
) -> dict[tuple[str, int], table_messages.Unread]:
    """Of `seats` (game and seat pairs, already checked as the caller's), those with
    messages they have not seen, and how many."""
    if not seats:
        return {}
    with referee.db.reading() as session:
        found = table_messages.unread(session, seats)
    return {(row.game_id, row.seat): row for row in found}
