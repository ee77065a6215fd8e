"""Players who know only their mail: they read turn mails and answer them by mail."""

from __future__ import annotations

import json
import re
import time
from email.message import EmailMessage
from typing import Any

from tests.live.test_games_http import solve
from tests.mailboxes import MailService, Received


def address(game: str, seat: int) -> str:
    return f"{game}-p{seat}@players.test"


def body_of(mail: EmailMessage, subtype: str) -> str:
    """The mail's text/`subtype` part, decoded."""
    part = mail.get_body(preferencelist=(subtype,))
    assert part is not None
    content = part.get_content()
    assert isinstance(content, str)
    return content


def text_of(mail: EmailMessage) -> str:
    return body_of(mail, "plain")


def html_of(mail: EmailMessage) -> str:
    return body_of(mail, "html")


def state_of(mail: EmailMessage) -> dict[str, Any]:
    for part in mail.iter_attachments():
        if part.get_filename() == "state.json":
            found: dict[str, Any] = json.loads(part.get_content())
            return found
    raise AssertionError("no state.json in the mail")


def listed_moves(text: str) -> list[str]:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if re.match(
            r"^(Your legal moves|Moves to start from|Vos coups possibles|Coups pour)", line
        ):
            moves = []
            for move in lines[number + 1 :]:
                if not move.startswith("  "):
                    break
                moves.append(move.strip())
            return moves
    return []


def answer(
    original: Received, body: str, sender: str, message_id: str | None = None
) -> EmailMessage:
    """A reply as a mail program writes it: the answer on top, the original quoted below."""
    reply = EmailMessage()
    reply["From"] = sender
    reply["To"] = str(original.mail["Reply-To"])
    reply["Subject"] = "Re: " + str(original.mail["Subject"])
    reply["In-Reply-To"] = str(original.mail["Message-ID"])
    if message_id is not None:
        reply["Message-ID"] = message_id
    quoted = "\n".join("> " + line for line in text_of(original.mail).splitlines())
    reply.set_content(f"{body}\n\nOn Monday, Referee wrote:\n{quoted}\n\n-- \nsent by a test\n")
    return reply


def choose(game: str, mail: EmailMessage, turn: int) -> str:
    """A move from what the mail shows: a listed move, or the solved MaNiKi card."""
    if game == "maniki":
        view = state_of(mail)["state"]
        return " ".join(solve(view["position"], view["target"]))
    moves = listed_moves(text_of(mail))
    assert moves, text_of(mail)
    return moves[turn * 7 % len(moves)]


def reply_to(env: MailService, mail: Received, body: str, sender: str) -> None:
    env.reply(str(mail.mail["Reply-To"]), answer(mail, body, sender), sender)


def kind(mail: Received) -> str:
    """The kind of the last notice a mail tells (whose position it carries)."""
    return str(mail.mail["X-Referee-Kind"])


def kinds(mail: Received) -> list[str]:
    """The kinds of every notice a mail tells, in order (one mail may tell several)."""
    return str(mail.mail["X-Referee-Kinds"] or mail.mail["X-Referee-Kind"]).split()


def told(mails: list[Received]) -> list[str]:
    """The kinds of every notice the mails tell, in order."""
    return [each for mail in mails for each in kinds(mail)]


def version(mail: Received) -> int:
    return int(str(mail.mail["X-Referee-Version"]))


def wait_mail(
    env: MailService, to: str, wanted: str, at: int | None = None, after: int = 0
) -> Received:
    """The first mail telling a notice of kind `wanted` (the mail at version `at`) to `to`,
    beyond the first `after`."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for mail in env.mailbox.to(to)[after:]:
            if wanted in kinds(mail) and (at is None or version(mail) == at):
                return mail
        time.sleep(0.02)
    got = [(kinds(m), version(m)) for m in env.mailbox.to(to)]
    raise AssertionError(f"no {wanted} mail at {at} for {to}; got {got}")


def turn_mail(env: MailService, to: str, at: int, card: int | None = None) -> Received:
    """The turn mail a seat answers at version `at`: the one at `at`; in MaNiKi, the
    latest of the current card (`card`: its `deck_left`), which another seat's wrong
    answer or pass leaves standing without a new mail."""
    if card is None:
        return wait_mail(env, to, "your_turn", at)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for mail in reversed(env.mailbox.to(to)):
            if "your_turn" not in kinds(mail) or version(mail) > at:
                continue
            if state_of(mail.mail)["state"]["deck_left"] == card:
                return mail
        time.sleep(0.02)
    got = [(kinds(m), version(m)) for m in env.mailbox.to(to)]
    raise AssertionError(f"no turn mail of card {card} up to {at} for {to}; got {got}")
