"""Standing seeks: a kind of game a player wants to be in `count` of at all times.

A player keeps a short list of them (`set_standing_seeks` replaces it
whole). The periodic sweep (`top_up`, the `referee.seeks` task) posts a
seek for a standing seek whenever the games it keeps going fall short of
its count: the seeks it posted that are still open, and the games they
started that are still in play. It posts no more than the player's
`REFEREE_SEEKS_PER_PLAYER` leaves room for, and nothing at all for a
player not seen (a page, a token, a sign-in) for `PAUSED_AFTER`: a player
who went away does not keep strangers waiting on games it will not play.

A standing seek's terms are checked as posting the same seek would be
(`referee.service.seeks.checked_terms`), so a sweep never meets terms the
rules refuse; should the rules change under it, that one is skipped.
Putting the list again with a standing seek's terms unchanged keeps it
and the games it posted; one left out is removed, and the open seeks it
posted are withdrawn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from referee.engine import JSON
from referee.i18n import _
from referee.service import refusals
from referee.service.players import Player
from referee.service.seeks import NewSeek, SeekTerms, checked_terms, name_of, open_seek
from referee.store import seek_rows, standing_rows
from referee.store.clock import stamp
from referee.store.tables import StandingSeek

if TYPE_CHECKING:
    from referee.service import Referee

# The most standing seeks one player keeps, and the most games one keeps going.
MOST_STANDING = 10
MOST_COUNT = 10
# A player not seen for this long has its standing seeks paused.
PAUSED_AFTER = timedelta(days=14)
# Standing seeks one sweep tops up at most (the next sweep does the rest).
SWEPT_MOST = 200

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Standing:
    """A standing seek: the terms of the seeks to post, and how many games to keep going."""

    game: str
    count: int
    min_players: int | None = None
    max_players: int | None = None
    options: JSON | None = None
    deadline: str | None = None


def standing_seeks(referee: Referee, player: Player) -> list[Standing]:
    """The player's standing seeks, in the order it listed them."""
    with referee.db.reading() as session:
        return [_shown(row) for row in standing_rows.of_player(session, player.address)]


def set_standing_seeks(
    referee: Referee, player: Player, wanted: Sequence[Standing]
) -> list[Standing]:
    """Replace the player's standing seeks with `wanted`; refused whole, changing
    nothing, when one of them would be."""
    if len(wanted) > MOST_STANDING:
        reason = _("{most} standing seeks at most").format(most=MOST_STANDING)
        raise refusals.BadRequest(reason, errors={"_schema": [reason]})
    terms = [_checked(number, one) for number, one in enumerate(wanted)]
    keys = [_key(one) for one in terms]
    twice = next((number for number, key in enumerate(keys) if key in keys[:number]), None)
    if twice is not None:
        reason = _("the same terms as an earlier standing seek: raise its count instead")
        raise refusals.BadRequest(reason, errors={f"{twice}": [reason]})
    moment = stamp(datetime.now(UTC))
    with referee.db.transaction() as session:
        if wanted:
            name_of(session, player.address)
        standing_rows.lock_player(session, player.address)
        kept = {_key(_terms(row)): row for row in standing_rows.of_player(session, player.address)}
        for one, checked, key in zip(wanted, terms, keys, strict=True):
            row = kept.pop(key, None)
            if row is None:
                row = _row(player.address, checked, moment)
            row.count = one.count
            session.add(row)
        standing_rows.remove(session, [row.id for row in kept.values() if row.id], moment)
        session.flush()
        rows = {_key(_terms(row)): row for row in standing_rows.of_player(session, player.address)}
        # In the order asked for, whatever order the rows were made in.
        return [_shown(rows[key]) for key in keys]


def top_up(referee: Referee, moment: datetime, most: int = SWEPT_MOST) -> list[str]:
    """Post the seeks that standing seeks fall short of; the new seeks' ids."""
    seen_since = stamp(moment - PAUSED_AFTER)
    with referee.db.reading() as session:
        short = standing_rows.short(session, seen_since, most)
    posted: list[str] = []
    for standing_id in short:
        try:
            posted.extend(_top_up_one(referee, standing_id, moment))
        except refusals.Refusal as refused:
            _log.warning("standing seek %s skipped: %s", standing_id, refused.reason)
    return posted


def _top_up_one(referee: Referee, standing_id: int, moment: datetime) -> list[str]:
    """Top up one standing seek under its lock, so that two sweeps at once post once."""
    with referee.db.transaction() as session:
        row = standing_rows.locked(session, standing_id)
        if row is None:
            return []
        name_of(session, row.address)
        room = referee.settings.seeks_per_player - seek_rows.open_by(session, row.address)
        wanted = min(row.count - standing_rows.running(session, standing_id), room)
        terms = checked_terms(_new_seek(_terms(row)))
        return [
            open_seek(session, referee, row.address, terms, moment, standing_id=standing_id).id
            for _ in range(wanted)
        ]


def _checked(number: int, one: Standing) -> SeekTerms:
    """The standing seek's terms checked as a seek's, a refusal naming which one it is."""
    if not 1 <= one.count <= MOST_COUNT:
        reason = _("count: from 1 to {most} games").format(most=MOST_COUNT)
        raise refusals.BadRequest(reason, errors={f"{number}.count": [reason]})
    new = NewSeek(one.game, one.min_players, one.max_players, one.options, one.deadline)
    try:
        return checked_terms(new)
    except refusals.Refusal as refused:
        errors = refused.extra.get("errors") or {"_schema": [refused.reason]}
        raise type(refused)(
            _("standing seek {number}: {why}").format(number=number, why=refused.reason),
            errors={f"{number}.{field}": found for field, found in errors.items()},
        ) from None


def _terms(row: StandingSeek) -> SeekTerms:
    return SeekTerms(
        row.game, row.min_players, row.max_players, dict(row.options), row.deadline_seconds
    )


def _key(terms: SeekTerms) -> tuple[object, ...]:
    """What tells two standing seeks apart: their terms, options compared as JSON."""
    options = json.dumps(terms.options, sort_keys=True, separators=(",", ":"))
    return (terms.game, terms.min_players, terms.max_players, options, terms.deadline_seconds)


def _row(address: str, terms: SeekTerms, moment: str) -> StandingSeek:
    return StandingSeek(
        address=address,
        game=terms.game,
        min_players=terms.min_players,
        max_players=terms.max_players,
        options=dict(terms.options),
        deadline_seconds=terms.deadline_seconds,
        count=1,
        created_at=moment,
    )


def _new_seek(terms: SeekTerms) -> NewSeek:
    seconds = terms.deadline_seconds
    deadline = None if seconds is None else f"{seconds}s"
    return NewSeek(terms.game, terms.min_players, terms.max_players, terms.options, deadline)


def _shown(row: StandingSeek) -> Standing:
    seconds = row.deadline_seconds
    return Standing(
        game=row.game,
        count=row.count,
        min_players=row.min_players,
        max_players=row.max_players,
        options=dict(row.options),
        deadline=None if seconds is None else f"{seconds}s",
    )
