"""Telling players of open games: invitations, starts, withdrawals, expiries, new seeks.

Who is told what (`referee.store.seek_told` reads it from the seeks):

- a private seek's invited players, when it is posted;
- every player seated at a seek, when it starts, expires, or is withdrawn
  (its creator is not told of its own withdrawal);
- a player that chose games in `seek_news`, of the new public seeks of those
  games (not its own, none of a player it blocks or that blocks it).

How, by the player's `turn_mail`: with `each`, a mail now (`seek_invited`,
`seek_withdrawn`, `seek_expired`), and the new seeks in one mail a day at
most (`seek_news`, `Address.seek_news_at`); with `digest`, all of it is
listed in the next digest (`referee.service.digests` asks `digest_news`);
with `off`, no mail. A start is told by the new game's first mail, which
every seat gets whatever its settings (`referee.service.creating`). Every
player also hears each of these but the news on its stream (`GET
/v1/me/events`, `referee.service.my_events`), whatever its settings.

A mail goes only to a player the referee may mail in full: one of its
seats carries the notice (`player_seats.mailing_seat`), and an address
that has none (no player, stopped, bounced out) is told nothing by mail.
The notice holds only the seek's id; what the mail says of it (names
quoted plainly, never an address) is read when it is sent
(`referee.delivery.seek_mail`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from referee.service import notifying
from referee.service.publishing import Published, publish
from referee.store import mail_settings, player_rows, player_seats, seek_rows, seek_told
from referee.store.appending import outbox_row
from referee.store.clock import stamp
from referee.store.seek_told import SeekNews
from referee.store.tables import OutboxKind, Seek, TurnMail

if TYPE_CHECKING:
    from referee.service import Referee

# At most one mail of new seeks a day for a player told of turns one by one.
NEWS_EVERY = timedelta(days=1)
# How far back a digest or a news mail looks at most: a player that has not had
# one for longer (it just chose a digest) hears of the last days only.
LOOK_BACK = timedelta(days=7)

_MAILED = {
    SeekNews.INVITED: OutboxKind.SEEK_INVITED,
    SeekNews.WITHDRAWN: OutboxKind.SEEK_WITHDRAWN,
    SeekNews.EXPIRED: OutboxKind.SEEK_EXPIRED,
}


def tell(session: Session, seek: Seek, news: SeekNews, addresses: Iterable[str], at: str) -> int:
    """In the transaction that changed `seek`, write the mails `news` makes to those of
    `addresses` told of it one by one (`turn_mail: each`) that may be mailed; how many.
    The caller publishes the seek (`published`) once committed."""
    notices = []
    for address in addresses:
        if mail_settings.read(session, address).turn_mail != TurnMail.EACH:
            continue
        seat = player_seats.mailing_seat(session, address)
        if seat is None:
            continue
        game_id, number = seat
        # Anchored on a seat only to reach the address: the mail is of the seek alone.
        payload = {"seek": seek.id}
        notices.append(outbox_row(game_id, _MAILED[news], number, payload, at))
    notifying.write(session.connection(), None, notices)
    return len(notices)


def seated_but_creator(session: Session, seek: Seek) -> list[str]:
    """Those told of a withdrawal: every seated player but the creator, who withdrew."""
    return [address for address in seek_rows.seated(session, seek.id) if address != seek.by_address]


def published(referee: Referee, seek_ids: list[str], mailed: int) -> None:
    """Once committed: wake the players' streams for these seeks, and delivery for the mail."""
    publish(referee, Published(seeks=seek_ids, news=mailed > 0))


# -- the digest's part ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DigestNews:
    """What one player's digest lists of open games: the seeks that told it something
    (each with what), and the new public seeks of the games it chose."""

    told: list[dict[str, Any]]
    new: list[str]

    def __bool__(self) -> bool:
        return bool(self.told or self.new)


def digest_news(
    session: Session, last_hours: dict[str, str | None], hour: datetime
) -> dict[str, DigestNews]:
    """For each player of a digest (by address, with the hour of its last digest), what
    happened to its open games since that one and by `hour`, and the new public seeks of
    its games; those with nothing are left out. A few statements for all of them."""
    until = stamp(hour)
    # A player's first digest looks back a day, any other to the one before it.
    starts = {
        address: stamp(hour - NEWS_EVERY) if last is None else max(last, stamp(hour - LOOK_BACK))
        for address, last in last_hours.items()
    }
    if not starts:
        return {}
    earliest = min(starts.values())
    told: dict[str, list[dict[str, Any]]] = {address: [] for address in starts}
    found = seek_told.told(session, list(starts), since=earliest)
    for row in sorted(found, key=lambda row: (row.at, row.seek_id)):
        # A start is told by the game's own first mail.
        if row.kind != SeekNews.STARTED and starts[row.address] < row.at <= until:
            told[row.address].append({"seek": row.seek_id, "kind": row.kind.value})
    new = _new_seeks(session, starts, until)
    news = {address: DigestNews(told[address], new.get(address, [])) for address in starts}
    return {address: listed for address, listed in news.items() if listed}


def _new_seeks(session: Session, starts: dict[str, str], until: str) -> dict[str, list[str]]:
    """The new public seeks each player (posted after its start, by `until`) hears of."""
    chosen = seek_told.chosen_games(session.connection(), list(starts))
    if not chosen:
        return {}
    games = {game for listed in chosen.values() for game in listed}
    seeks = seek_told.new_public(session, games, min(starts[a] for a in chosen), until)
    apart = player_rows.apart_of(session, list(chosen))
    return {
        address: [
            seek.id for seek in seeks if _news_for(address, seek, games_of, apart, starts[address])
        ]
        for address, games_of in chosen.items()
    }


def _news_for(
    address: str, seek: Seek, games: Collection[str], apart: dict[str, set[str]], after: str
) -> bool:
    return (
        seek.game in games
        and seek.created_at > after
        and seek.by_address != address
        and seek.by_address not in apart[address]
    )


# -- new seeks, one mail a day -------------------------------------------------------


def sweep_seek_news(referee: Referee, moment: datetime) -> int:
    """Mail the players told of turns one by one (`turn_mail: each`) that chose games in
    `seek_news` and had no such mail for a day the public seeks of those games posted
    since their last (at most `LOOK_BACK` ago); how many mails were written. Run with
    the digests, every sweep: nothing is written while there is nothing new."""
    at = stamp(moment)
    cut = stamp(moment - NEWS_EVERY)
    with referee.db.reading() as session:
        due = seek_told.news_due(session, cut)
        if not due:
            return 0
        earliest = stamp(moment - LOOK_BACK)
        games = {game for wanting in due for game in wanting.games}
        seeks = seek_told.new_public(session, games, earliest, at)
        if not seeks:
            return 0
        apart = player_rows.apart_of(session, [wanting.address for wanting in due])
    written = 0
    for wanting in due:
        after = max(wanting.last or cut, earliest)
        listed = [
            seek.id
            for seek in seeks
            if _news_for(wanting.address, seek, wanting.games, apart, after)
        ]
        if not listed:
            continue
        with referee.db.transaction() as session:
            seat = player_seats.mailing_seat(session, wanting.address)
            if seat is None or not seek_told.claim_news(session, wanting.address, cut, at):
                continue
            game_id, number = seat
            notice = outbox_row(game_id, OutboxKind.SEEK_NEWS, number, {"seeks": listed}, at)
            notifying.write(session.connection(), None, [notice])
        written += 1
    publish(referee, Published(news=written > 0))
    return written
