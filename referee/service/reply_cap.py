"""The cap on answers to a seat's replies, so that a robot's replies never make a mail loop.

An autoresponder that ignores RFC 3834 (no `Auto-Submitted`, no
`Precedence`) answers every mail it gets, and the referee answers every
reply it cannot use ("could not be read", "not your turn"): each mail makes
the next one. So (RFC 3834, 2: limit repeated responses) at most
`REFEREE_MAIL_ANSWERS` of a seat's replies in any `REFEREE_MAIL_ANSWERS_WINDOW`
seconds are answered. A seat's answers all go to its one address, so the
cap per seat is the cap per seat and address. A reply whose move was played
does not count, and is answered even past the cap: a move played is a
player's progress, and needs the game to move on before another can be.

Past the cap a reply is still read and taken: its move, if it holds one, is
still judged and played as it would have been. Only the answer to a reply
that played nothing is not written. The
last answer before the cap says so, and when answers resume (when the
first answer counted is a window old).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from referee.settings import Settings
from referee.store import answered_replies
from referee.store.clock import parse_stamp, stamp


@dataclass(frozen=True, slots=True)
class Allowance:
    """Whether a reply is answered, and on the last answer before the cap, until when
    none follows."""

    answer: bool
    quiet_until: str | None = None


def allowance(
    session: Session, settings: Settings, game_id: str, seat: int, moment: datetime
) -> Allowance:
    """Whether the seat's reply taken at `moment` may be answered (locks the seat)."""
    window = timedelta(seconds=settings.mail_answers_window)
    found = answered_replies.answered_since(session, game_id, seat, stamp(moment - window))
    if found.count >= settings.mail_answers:
        return Allowance(False)
    if found.count + 1 < settings.mail_answers:
        return Allowance(True)
    first = moment if found.first_at is None else parse_stamp(found.first_at)
    return Allowance(True, stamp(first + window))


def mail_answer(session: Session, answer: dict[str, Any], played: bool) -> dict[str, Any] | None:
    """The answer notice to a move that came by mail, as the cap allows it.

    A move played is always answered and never counts (the game must move on
    for another to be played: no loop). Otherwise None when its reply is past
    the cap, and on the last answer, until when none follows.
    """
    found = answered_replies.of_submission(session, answer["payload"]["submission"])
    if played or found is None:
        return answer
    answered, quiet_until = found
    if not answered:
        return None
    if quiet_until is None:
        return answer
    return {**answer, "payload": {**answer["payload"], "quiet_until": quiet_until}}
