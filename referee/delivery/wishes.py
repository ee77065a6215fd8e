"""What a player asked about its mail, and which notices that withholds: one rule.

The mail channel asks `withheld` when a notice's turn comes to be sent
(like consent), so a change of settings or a mute applies to mail already
queued. Webhooks do not ask: a seat's webhook is its own choice, made for
that seat, and hears everything as before.

- A turn (`your_turn`), a round's end (`round_over`) and the short mail of
  messages not seen for an hour (`messages`) are mailed only with
  `turn_mail` = `each`: under `digest` the digest tells of turns instead, under
  `off` nothing does.
- A deadline reminder follows `reminders` alone (so it still comes under
  `digest` and `off`).
- The game's end follows `turn_mail` = `off` (no mail), not `digest`: the
  digest lists turns, and an ended game has none.
- A muted game mails none of these, nor that a seat changed hands (`bot_seat`,
  `arrived`).
- The invitation, the mail telling a player which bot's seat it took over
  (`seat_taken`, its first of the game), answers to the player's own doing (a reply, help, the
  board, a rematch, words passed on, a move the referee played for it when time ran out)
  always go: they carry a game's first link, or answer what the player did.
- The digest goes while `turn_mail` is still `digest`; a sign-in link always.
- What is told of open games one by one (an invitation to a private seek, a
  withdrawal, an expiry, the day's new seeks) goes only with `turn_mail` =
  `each`: under `digest` the digest lists it, under `off` nothing does.
"""

from __future__ import annotations

from referee.store.mail_settings import TurnMailSettings
from referee.store.tables import TOLD_OF_SEEKS, OutboxKind, TurnMail

MUTED = "the player muted this game"
_TURN_MAIL = {
    TurnMail.DIGEST: "the player is told of turns by its digest",
    TurnMail.OFF: "the player turned turn mail off",
}
_OF_SEEKS = {
    TurnMail.DIGEST: "the player is told of open games by its digest",
    TurnMail.OFF: "the player turned turn mail off",
}
_PER_TURN = frozenset({OutboxKind.YOUR_TURN, OutboxKind.ROUND_OVER, OutboxKind.MESSAGES})
_FOLLOW_MUTE = frozenset(
    {
        *_PER_TURN,
        OutboxKind.REMINDER,
        OutboxKind.GAME_OVER,
        OutboxKind.BOT_SEAT,
        OutboxKind.ARRIVED,
        OutboxKind.UNREACHED,
    }
)


def withheld(kind: str, chosen: TurnMailSettings, muted: bool) -> str | None:
    """Why a notice of `kind` is not mailed to a player who chose `chosen` (and muted the
    notice's game, or not); None when it goes."""
    if kind in _FOLLOW_MUTE and muted:
        return MUTED
    if kind in _PER_TURN and chosen.turn_mail != TurnMail.EACH:
        return _TURN_MAIL[chosen.turn_mail]
    if kind == OutboxKind.REMINDER and not chosen.reminders:
        return "the player turned deadline reminders off"
    if kind == OutboxKind.GAME_OVER and chosen.turn_mail == TurnMail.OFF:
        return _TURN_MAIL[TurnMail.OFF]
    if kind in TOLD_OF_SEEKS and chosen.turn_mail != TurnMail.EACH:
        return _OF_SEEKS[chosen.turn_mail]
    if kind == OutboxKind.DIGEST and chosen.turn_mail != TurnMail.DIGEST:
        return "the player no longer takes a digest"
    return None
