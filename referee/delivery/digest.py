"""The digest: one mail listing every game where it is a player's turn, built at send time.

The notice (`outbox` kind `digest`, written by `referee.service.digests`)
holds the games as they stood when it was written: each game, the seat the
player holds in it, the version and when its time runs out. Building it
reads all its games in two queries (`referee.store.digest_rows.listed_games`),
and shows of each only what any seat may see (the title, the players, who
is to act, the scores, the time left) with the seat's play-now link:
nothing of the board that the seat's own view would hide. It is mailed to
the player's address through the seat that carries it, threaded apart from
every game (`referee.delivery.mail`), with Auto-Submitted and one-click
unsubscribe like every mail. It also lists what happened to the player's
open games since its last digest and the new public seeks of the games it
chose, as the mails of open games show them (`referee.delivery.seek_mail`);
a digest may hold those alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from typing import Any

from sqlmodel import Session

from referee import i18n
from referee.delivery import talk_lines, wording
from referee.delivery.channel import Consent
from referee.delivery.compose import (
    Site,
    _html,
    _text,
    here,
    mail_names,
    player_mail,
    spoken,
    unsubscribe_url,
)
from referee.delivery.play_links import play_url
from referee.delivery.seek_mail import SeekLine, described
from referee.i18n import N_, _
from referee.names import with_bot
from referee.service import game_states
from referee.store import digest_rows, reads
from referee.store.clock import parse_stamp
from referee.store.tables import Outbox, OutboxKind


@dataclass(frozen=True, slots=True)
class Listed:
    """One game of a digest, in the words of the mail."""

    title: str
    game_id: str
    game: str
    seat: int
    version: int
    players: str
    to_act: str
    deadline: str
    summary: str
    link: str
    # The seat's messages it has not seen in this game (`referee.delivery.talk_lines`).
    talk: talk_lines.Unseen | None = None


def _summary(rules: Any, state: Any, version: int, names: list[str]) -> str:
    """One line on the board as every seat may see it: how far along, and the scores."""
    scores = ", ".join(f"{names[s]} {score}" for s, score in enumerate(rules.scores(state)))
    return _("after %(moves)s; %(label)s: %(scores)s") % {
        "moves": wording.moves(version),
        "label": _(rules.score_label).lower(),
        "scores": scores,
    }


def _to_act(seats: list[int], mine: int, names: list[str]) -> str:
    return wording.joined([_("you") if seat == mine else names[seat] for seat in seats])


def _players(others: list[str]) -> str:
    """`you, Ann and Bob`: who plays the game, the reader first."""
    return wording.joined([_("you"), *others])


def _deadline(due: str | None, sent: datetime) -> str:
    if not due:
        return _("no deadline")
    return _("runs out %(moment)s") % {"moment": wording.moment(parse_stamp(due), sent)}


def _listed(
    session: Session, row: Outbox, entry: dict[str, Any], found: digest_rows.Listed, link: str
) -> Listed:
    game, seat, version = found.game, int(entry["seat"]), int(entry["version"])
    typed = mail_names(game, found.names)
    names = [with_bot(name, level) for name, level in zip(typed, found.bots, strict=True)]
    rules = reads.rules_of(game)
    state = game_states.state_at(session, game, version)
    due = entry.get("due_at")
    sent = parse_stamp(row.created_at)
    others = [name for other, name in enumerate(names) if other != seat]
    return Listed(
        title=_(rules.title),
        game_id=game.id,
        game=game.name,
        seat=seat,
        version=version,
        players=_players(others),
        to_act=_to_act(sorted(rules.actors(state)), seat, names),
        deadline=_deadline(due, sent),
        summary=_summary(rules, state, version, names),
        link=link,
        talk=talk_lines.unseen(session, game.id, seat, names, row.created_at),
    )


def build(session: Session, row: Outbox, secret: bytes, site: Site) -> Digest:
    """The digest notice `row`, its games read at once and listed in the notice's order."""
    assert row.id is not None and row.kind == OutboxKind.DIGEST
    entries = row.payload["games"]
    talk = row.payload.get("talk", [])
    found = digest_rows.listed_games(session, [entry["game"] for entry in entries + talk])
    games, talk_games = (
        [
            _listed(
                session,
                row,
                entry,
                found[entry["game"]],
                play_url(site.public_url, secret, entry["game"], int(entry["seat"])),
            )
            for entry in listed
            if entry["game"] in found
        ]
        for listed in (entries, talk)
    )
    told = row.payload.get("seeks", [])
    new = row.payload.get("new_seeks", [])
    lines = described(session, [entry["seek"] for entry in told] + new, site)
    return Digest(
        message_id=f"<referee.digest.{row.id}@{site.domain}>",
        created_at=row.created_at,
        games=games,
        site=site,
        seeks=[
            ToldSeek(_(_TOLD[entry["kind"]]), lines[entry["seek"]])
            for entry in told
            if entry["seek"] in lines
        ],
        new_seeks=[lines[seek_id] for seek_id in new if seek_id in lines],
        talk_games=[game for game in talk_games if game.talk is not None],
        talk_seen=talk_lines.seen_marks(game.talk for game in games + talk_games),
        speech=here(),
    )


# What the digest says happened to an open game of the player's.
_TOLD = {
    OutboxKind.SEEK_INVITED.value: N_("you are invited to this private open game"),
    OutboxKind.SEEK_WITHDRAWN.value: N_("withdrawn by the player who posted it"),
    OutboxKind.SEEK_EXPIRED.value: N_("expired before enough players joined"),
}


@dataclass(frozen=True, slots=True)
class ToldSeek:
    """An open game of the player's that the digest tells of: what happened, and the game."""

    what: str
    seek: SeekLine


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest's content; only the mail channel carries it (never a webhook)."""

    message_id: str
    created_at: str
    games: list[Listed]
    site: Site
    seeks: list[ToldSeek]
    new_seeks: list[SeekLine]
    # The player's other games holding messages it has not seen.
    talk_games: list[Listed] = field(default_factory=list)
    # The messages it shows, seen once it went out.
    talk_seen: tuple[tuple[str, int, int], ...] = ()
    # The language and zone it speaks (`referee.delivery.speech`).
    speech: tuple[str, str] = (i18n.SOURCE_LANGUAGE, i18n.UTC_ZONE)

    def json(self) -> bytes:
        """The digest as data, without its links (which are the player's alone)."""
        listed = [
            {"game_id": g.game_id, "game": g.game, "seat": g.seat, "version": g.version}
            for g in self.games
        ]
        seeks = [told.seek.seek_id for told in self.seeks]
        new = [line.seek_id for line in self.new_seeks]
        body = {
            "id": self.message_id,
            "kind": OutboxKind.DIGEST.value,
            "games": listed,
            "seeks": seeks,
            "new_seeks": new,
        }
        return json.dumps(body, sort_keys=True).encode("utf-8")

    def subject(self) -> str:
        if self.games:
            return _("Your turn in %(games)s") % {"games": wording.games(len(self.games))}
        if self.talk_games:
            return _("Messages from your games")
        return _("News of open games")

    def mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        """The digest as a mail: its own thread (`thread_root` is never a game's), no reply
        address (a move is answered to its game's own mail), one-click unsubscribe."""
        with i18n.speaking(*self.speech):
            return self._mail(address, consent, thread_root)

    def _mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        site = self.site
        context = {
            "games": self.games,
            "seeks": self.seeks,
            "new_seeks": self.new_seeks,
            "talk_games": self.talk_games,
            "lobby": f"{site.public_url}/seeks",
            "subject": self.subject(),
            "settings": f"{site.public_url}/me/settings",
            "unsubscribe": unsubscribe_url(site, consent),
        }
        mail = player_mail(
            site, address, consent, self.subject(), self.message_id, self.created_at, thread_root
        )
        mail["List-Id"] = f"Your turns <digest.{site.domain}>"
        mail["X-Referee-Kind"] = OutboxKind.DIGEST.value
        mail.set_content(_text.get_template("digest.txt.j2").render(context))
        mail.add_alternative(_html.get_template("digest.html.j2").render(context), subtype="html")
        return spoken(mail)
