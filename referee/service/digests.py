"""The digest sweep: at each hour a player chose, one mail listing every game where it is its turn.

Run with the other sweeps (`referee.digests`, every `REFEREE_SWEEP_EVERY`
seconds) and handed the time, so tests move the clock. The hours are the
player's own, on the clocks of its time zone (`Address.time_zone`, UTC when
it chose none or names none): at `moment`, for the few distinct zones of
the digest players, it reckons the local hour (`local_hours`, through the
changes of daylight-saving time: one digest per chosen hour per local day,
never two, never none), takes every address whose `turn_mail` is `digest`
and whose `digest_hours` hold its zone's hour, claims that local hour for
it (stamped with the hour's UTC start) with one conditional UPDATE (two
sweeps never write two digests for one hour), and
writes, in the same transaction, one `digest` notice listing the games
where it is that player's turn: running games, not muted, whose mail it
may get in full, and what happened to its open games since its last digest
(`referee.service.seek_telling.digest_news`: invitations, withdrawals,
expiries, and the new public seeks of the games it chose). A player with
none of these gets nothing for that hour.

The notice is carried by one of the player's seats, the first game it
lists (the one whose time runs out first; with no game, the seat
`player_seats.mailing_seat` would choose), so it goes out through the
delivery channels like every notice: the mail channel sends it, the
webhook channel never carries it. Players are handled in batches, each one
transaction of a few statements, whatever the number of their games.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

from referee.i18n import known_zone
from referee.service.notifying import write
from referee.service.publishing import Published, publish
from referee.service.seek_telling import DigestNews, digest_news
from referee.service.vacations import due_times
from referee.store import digest_rows, table_messages
from referee.store.appending import outbox_row
from referee.store.clock import parse_stamp, stamp
from referee.store.digest_rows import HeldSeat
from referee.store.tables import OutboxKind

if TYPE_CHECKING:
    from referee.service import Referee

# Players per transaction: large enough that 10,000 take a few dozen statements,
# small enough that SQLite's one write lock is never held long.
BATCH = 500


def hour_of(moment: datetime) -> datetime:
    """The hour (UTC) a moment falls in: the digests it is the time of."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def local_hours(moment: datetime, zone: tzinfo) -> tuple[tuple[int, ...], datetime]:
    """The hours of the day in `zone` whose digests are due at `moment`, and the UTC
    start of the local hour it falls in (the digest's stamp).

    The hour of `moment` on the zone's clocks, and with it the hours the clocks just
    skipped (spring forward: 02:00 becomes 03:00, and a digest at 2 goes out at 3, the
    first hour that exists after it). An hour the clocks live twice (fall back) starts
    at its first time: its second time has the same stamp, already written, so the
    repeated hour sends once."""
    local = moment.astimezone(zone)
    start = local.replace(minute=0, second=0, microsecond=0, fold=0)
    hours = [local.hour]
    while hours[0] > 0 and not _shown(local.replace(hour=hours[0] - 1, minute=59, fold=0)):
        hours.insert(0, hours[0] - 1)
    return tuple(hours), start.astimezone(UTC)


def _shown(wall: datetime) -> bool:
    """Whether the clocks of `wall`'s zone ever show that time (not skipped forward)."""
    return wall.astimezone(UTC).astimezone(wall.tzinfo).replace(fold=0) == wall


def digest_slots(zones: Iterable[str | None], moment: datetime) -> list[digest_rows.Slot]:
    """The slots of `moment` for the players' zones: zones alike at that moment (the
    same local hours and the same stamp) share one. A zone that names none is UTC."""
    alike: dict[tuple[tuple[int, ...], str], list[str | None]] = defaultdict(list)
    for name in zones:
        hours, start = local_hours(moment, known_zone(name) or UTC)
        alike[hours, stamp(start)].append(name)
    return [digest_rows.Slot(tuple(named), hours, at) for (hours, at), named in alike.items()]


def sweep_digests(referee: Referee, moment: datetime) -> int:
    """Write the digests due at `moment`, each player's hours in its own time zone;
    returns how many were written."""
    with referee.db.reading() as session:
        due = digest_rows.due(session, digest_slots(digest_rows.zones(session), moment))
    by_stamp: dict[str, list[str]] = defaultdict(list)
    for address, hour_stamp in due:
        by_stamp[hour_stamp].append(address)
    written = 0
    for hour_stamp, addresses in sorted(by_stamp.items()):
        for start in range(0, len(addresses), BATCH):
            written += _write(referee, addresses[start : start + BATCH], hour_stamp, moment)
    publish(referee, Published(news=written > 0))
    return written


def _write(referee: Referee, batch: list[str], hour_stamp: str, moment: datetime) -> int:
    """Claim the hour stamped `hour_stamp` for `batch` and write their digests, in one
    transaction; returns how many were written."""
    hour = parse_stamp(hour_stamp)
    with referee.db.transaction() as session:
        connection = session.connection()
        last = digest_rows.last_hours(connection, batch)
        claimed = digest_rows.claim(connection, batch, hour_stamp)
        held = digest_rows.running_seats(connection, claimed)
        # Deadlines as they stand, vacations counted, as every page shows them.
        dues = due_times(session, held, moment)
        seeks = digest_news(session, {address: last.get(address) for address in claimed}, hour)
        turning = {seat.address for seat in held if seat.seat in seat.to_act}
        waiting = [(seat.game_id, seat.seat) for seat in held if seat.seat not in seat.to_act]
        talk = {(found.game_id, found.seat) for found in table_messages.unread(session, waiting)}
        carriers = digest_rows.carriers(connection, [a for a in seeks if a not in turning])
        notices = digest_notices(held, dues, hour_stamp, stamp(moment), seeks, carriers, talk)
        write(connection, None, notices)
    return len(notices)


def digest_notices(
    held: list[HeldSeat],
    dues: Mapping[str, datetime | None],
    hour_stamp: str,
    at: str,
    seeks: Mapping[str, DigestNews] | None = None,
    carriers: Mapping[str, tuple[str, int]] | None = None,
    talk: Collection[tuple[str, int]] = (),
) -> list[dict[str, Any]]:
    """One notice per player with a turn in `held`, news of open games in `seeks`, or
    messages it has not seen in one of its other games (`talk`, game and seat): its
    turns, the soonest deadline first (then the oldest game), carried by the seat of the
    first; with no turn, by a game with messages, else its seat in `carriers`."""
    seeks, carriers = seeks or {}, carriers or {}
    turns: dict[str, list[tuple[HeldSeat, str | None]]] = defaultdict(list)
    talking: dict[str, list[HeldSeat]] = defaultdict(list)
    for seat in held:
        if seat.seat in seat.to_act:
            due = dues.get(seat.game_id)
            turns[seat.address].append((seat, None if due is None else stamp(due)))
        elif (seat.game_id, seat.seat) in talk:
            talking[seat.address].append(seat)
    notices = []
    for address in sorted(turns.keys() | seeks.keys() | talking.keys()):
        listed = sorted(
            turns[address],
            key=lambda turn: (turn[1] is None, turn[1] or "", turn[0].created_at, turn[0].game_id),
        )
        games = [
            {"game": seat.game_id, "seat": seat.seat, "version": seat.version, "due_at": due}
            for seat, due in listed
        ]
        payload: dict[str, Any] = {"hour": hour_stamp, "games": games}
        news = seeks.get(address)
        if news:
            payload |= {"seeks": news.told, "new_seeks": news.new}
        others = sorted(talking[address], key=lambda seat: (seat.created_at, seat.game_id))
        if others:
            payload["talk"] = [
                {"game": seat.game_id, "seat": seat.seat, "version": seat.version}
                for seat in others
            ]
        carrier = _carrier([seat for seat, _due in listed] + others, carriers.get(address))
        if carrier is None:
            # No seat reaches it in full (its games are all of untrusted clients).
            continue
        notices.append(outbox_row(carrier[0], OutboxKind.DIGEST, carrier[1], payload, at))
    return notices


def _carrier(shown: list[HeldSeat], fallback: tuple[str, int] | None) -> tuple[str, int] | None:
    """The seat carrying a digest: that of the first game it shows, else `fallback`."""
    if shown:
        return shown[0].game_id, shown[0].seat
    return fallback
