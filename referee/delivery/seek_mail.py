"""The mails of open games: an invitation, a withdrawal, an expiry, the day's new seeks.

A notice of these kinds (written by `referee.service.seek_telling`) holds
only seek ids; building it reads each seek as it stands: its game, its
player counts, how many sit at it, its creator's public name and the
link to its page (`/seeks/<id>`). A public name was typed by a stranger
to the reader: it is quoted plainly (`referee.names.plain`), and no
address is ever shown. Like the sign-in link and the digest, the mail is
told to the player's address, threaded apart from every game, without a
reply address, with Auto-Submitted and one-click unsubscribe. The digest
lists the same lines (`described`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage

from sqlmodel import Session, col, select

from referee import games, i18n
from referee.delivery import wording
from referee.delivery.channel import Consent
from referee.delivery.compose import Site, _html, _text, here, player_mail, spoken, unsubscribe_url
from referee.i18n import N_, _, ngettext
from referee.names import plain
from referee.store import player_rows, seek_rows
from referee.store.tables import Outbox, OutboxKind, Seek, SeekStatus

# What a seek's creator is called when its name cannot be quoted (or it has none).
NO_NAME = N_("a player")


@dataclass(frozen=True, slots=True)
class SeekLine:
    """One open game, in the words of a mail."""

    seek_id: str
    title: str
    game: str
    by: str
    # `2 players`, `2 to 4 players`.
    players: str
    seated: int
    still_open: bool
    link: str

    @property
    def line(self) -> str:
        """`Subdivision, 2 to 4 players, 1 seated, posted by Ann`."""
        facts = {"title": self.title, "players": self.players, "by": self.by}
        line = ngettext(
            "%(title)s, %(players)s, %(n)d seated, posted by %(by)s",
            "%(title)s, %(players)s, %(n)d seated, posted by %(by)s",
            self.seated,
        ) % {**facts, "n": self.seated}
        return line if self.still_open else line + " " + _("(no longer open)")


def _players(seek: Seek) -> str:
    if seek.min_players == seek.max_players:
        return wording.players(seek.max_players)
    return _("%(least)d to %(most)d players") % {
        "least": seek.min_players,
        "most": seek.max_players,
    }


def described(session: Session, seek_ids: Sequence[str], site: Site) -> dict[str, SeekLine]:
    """The seeks of `seek_ids` that exist, as mails show them: three statements for all."""
    wanted = sorted(set(seek_ids))
    if not wanted:
        return {}
    found = list(session.exec(select(Seek).where(col(Seek.id).in_(wanted))))
    seated = seek_rows.seated_at(session, [seek.id for seek in found])
    names = player_rows.names_of(session, {seek.by_address for seek in found})
    return {
        seek.id: SeekLine(
            seek_id=seek.id,
            title=_(games.get(seek.game).title),
            game=seek.game,
            by=plain(names.get(seek.by_address, "")) or _(NO_NAME),
            players=_players(seek),
            seated=len(seated[seek.id]),
            still_open=seek.status == SeekStatus.OPEN,
            link=f"{site.public_url}/seeks/{seek.id}",
        )
        for seek in found
    }


# What each kind says of its one seek, and its subject (the creator's name quoted).
_SAID = {
    OutboxKind.SEEK_INVITED: N_("%(by)s invites you to an open game"),
    OutboxKind.SEEK_WITHDRAWN: N_("%(by)s withdrew an open game you had joined"),
    OutboxKind.SEEK_EXPIRED: N_("An open game you had joined expired before enough players joined"),
}


@dataclass(frozen=True, slots=True)
class SeekMail:
    """A mail of open games; only the mail channel carries it (never a webhook)."""

    message_id: str
    created_at: str
    kind: str
    seeks: list[SeekLine]
    site: Site
    # It shows no messages.
    talk_seen: tuple[tuple[str, int, int], ...] = ()
    # The language and zone it speaks (`referee.delivery.speech`).
    speech: tuple[str, str] = (i18n.SOURCE_LANGUAGE, i18n.UTC_ZONE)

    def json(self) -> bytes:
        """What a webhook would get, were it sent one (it is not): the seeks' ids alone."""
        listed = [line.seek_id for line in self.seeks]
        return json.dumps({"id": self.message_id, "kind": self.kind, "seeks": listed}).encode()

    def subject(self) -> str:
        if self.kind == OutboxKind.SEEK_NEWS:
            titles = sorted({line.title for line in self.seeks})
            return _("New open games of %(games)s") % {"games": wording.joined(titles)}
        line = self.seeks[0]
        said = _(_SAID[OutboxKind(self.kind)]) % {"by": line.by}
        return f"{said} ({line.title})"

    def mail(self, address: str, consent: Consent, thread_root: str | None) -> EmailMessage:
        """The mail, whatever thread the seat's mail has: it joins none."""
        with i18n.speaking(*self.speech):
            return self._mail(address, consent)

    def _mail(self, address: str, consent: Consent) -> EmailMessage:
        site = self.site
        context = {
            "kind": self.kind,
            "subject": self.subject(),
            "seeks": self.seeks,
            "lobby": f"{site.public_url}/seeks",
            "settings": f"{site.public_url}/me/settings",
            "unsubscribe": unsubscribe_url(site, consent),
        }
        mail = player_mail(site, address, consent, self.subject(), self.message_id, self.created_at)
        mail["List-Id"] = f"Open games <seeks.{site.domain}>"
        mail["X-Referee-Kind"] = self.kind
        mail.set_content(_text.get_template("seek.txt.j2").render(context))
        mail.add_alternative(_html.get_template("seek.html.j2").render(context), subtype="html")
        return spoken(mail)


def build(session: Session, row: Outbox, secret: bytes, site: Site) -> SeekMail:
    """The mail of notice `row`: its seeks as they stand now, in the notice's order."""
    assert row.id is not None
    ids = row.payload["seeks"] if row.kind == OutboxKind.SEEK_NEWS else [row.payload["seek"]]
    found = described(session, ids, site)
    lines = [found[seek_id] for seek_id in ids if seek_id in found]
    if not lines:
        raise LookupError(f"notice {row.id} names no open game that exists")
    return SeekMail(
        message_id=f"<referee.seek.{row.id}@{site.domain}>",
        created_at=row.created_at,
        kind=row.kind,
        seeks=lines,
        site=site,
        speech=here(),
    )
