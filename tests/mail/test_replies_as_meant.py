"""Replies are read as meant (issue 21, points 11 to 14): real `referee mail-in`, real
worker, each reply's bytes as the named mail program sends them.

A move written plainly but with what people and programs put around it is
played; two different moves in one reply are never played, nor joined into
one; a refusal quotes the player's text once, as written; an autoresponder's
mail in any language gets no answer.
"""

from __future__ import annotations

import base64
import quopri
import time
from collections.abc import Callable
from email.utils import make_msgid
from typing import Any

import pytest

from tests.live.test_games_http import solve
from tests.mail.players import listed_moves, state_of, text_of, version, wait_mail
from tests.mail.test_reading import VACATION_SUBJECTS
from tests.mail.test_reply_styles import create, log, send
from tests.mailboxes import MailService, Received

pytestmark = pytest.mark.long

REFEREE_FROM = "Referee <referee@referee.test>"


def head(turn: Received, sender: str, *fields: str, subject: str | None = None) -> str:
    """The header fields every reply has, then the program's own."""
    return "".join(
        f"{field}\r\n"
        for field in (
            f"From: {sender}",
            f"To: {turn.mail['Reply-To']}",
            f"Subject: {subject if subject is not None else 'Re: ' + str(turn.mail['Subject'])}",
            "Date: Mon, 02 Mar 2026 10:05:00 +0000",
            f"Message-ID: {make_msgid(domain='players.test')}",
            f"In-Reply-To: {turn.mail['Message-ID']}",
            f"References: {turn.mail['Message-ID']}",
            "MIME-Version: 1.0",
            *fields,
        )
    )


def qp(text: str) -> str:
    return quopri.encodestring(text.replace("\n", "\r\n").encode()).decode()


def quote(turn: Received) -> str:
    return "\r\n".join("> " + line for line in text_of(turn.mail).splitlines()[:6])


def outlook(turn: Received, sender: str, text: str) -> bytes:
    """Outlook for Windows: plain and HTML, quoted-printable, its header block below."""
    plain = (
        f"{text}\n\n________________________________\nFrom: {REFEREE_FROM}\n"
        f"Sent: Monday, March 2, 2026 10:00 AM\nTo: {sender}\nSubject: {turn.mail['Subject']}\n\n"
        + text_of(turn.mail)[:300]
    )
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
        '<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} '
        '</style></head><body dir="ltr"><div class="elementToProof" style="font-family: '
        f'Aptos, sans-serif; font-size: 12pt;">{text}</div><div id="appendonsend"></div>'
        '<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" '
        f'dir="ltr"><b>From:</b> Referee<br><b>Sent:</b> Monday<br></div></body></html>'
    )
    return (
        head(
            turn,
            sender,
            "Thread-Topic: Mandala",
            "Thread-Index: AQHajZ2n3Rk0c8b9aUqAtm1xG2p1RQ==",
            "Accept-Language: en-GB, en-US",
            "Content-Language: en-GB",
            "X-MS-Has-Attach:",
            "X-MS-TNEF-Correlator:",
            'Content-Type: multipart/alternative; boundary="_000_DB9PR07MB7771A_"',
        )
        + '\r\n--_000_DB9PR07MB7771A_\r\nContent-Type: text/plain; charset="utf-8"\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        + qp(plain)
        + '\r\n\r\n--_000_DB9PR07MB7771A_\r\nContent-Type: text/html; charset="utf-8"\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        + qp(html)
        + "\r\n\r\n--_000_DB9PR07MB7771A_--\r\n"
    ).encode()


def gmail(turn: Received, sender: str, text: str) -> bytes:
    """Gmail on the web: plain and HTML, its attribution above a quote."""
    lines = text.split("\n")
    attribution = f"On Mon, 2 Mar 2026 at 10:00, {REFEREE_FROM} wrote:"
    plain = "\r\n".join(lines) + f"\r\n\r\n{attribution}\r\n\r\n"
    html = "".join(f"<div>{line}</div>" for line in lines)
    return (
        head(turn, sender, 'Content-Type: multipart/alternative; boundary="000000000000f1e2d3"')
        + '\r\n--000000000000f1e2d3\r\nContent-Type: text/plain; charset="UTF-8"\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        + qp(plain + quote(turn))
        + '\r\n\r\n--000000000000f1e2d3\r\nContent-Type: text/html; charset="UTF-8"\r\n'
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        + qp(
            f'<div dir="ltr">{html}</div><br><div class="gmail_quote"><div dir="ltr" '
            'class="gmail_attr">On Mon, 2 Mar 2026 at 10:00, Referee wrote:<br></div>'
            '<blockquote class="gmail_quote">It is your move</blockquote></div>'
        )
        + "\r\n\r\n--000000000000f1e2d3--\r\n"
    ).encode()


def iphone(turn: Received, sender: str, text: str) -> bytes:
    """Apple Mail on an iPhone: plain, quoted-printable, its signature line above the quote."""
    body = (
        f"{text}\n\nSent from my iPhone\n\n> On 2 Mar 2026, at 10:00, {REFEREE_FROM} wrote:\n> \n"
    )
    return (
        head(
            turn,
            sender,
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "X-Mailer: iPhone Mail (21D61)",
        )
        + "\r\n"
        + qp(body)
        + qp(quote(turn))
    ).encode()


def thunderbird(turn: Received, sender: str, text: str) -> bytes:
    """Thunderbird: format=flowed, 8 bit, the attribution above the quote."""
    body = text.replace("\n", "\r\n") + "\r\n\r\nOn 02.03.26 10:00, Referee wrote:\r\n"
    return (
        head(
            turn,
            sender,
            "User-Agent: Mozilla Thunderbird",
            "Content-Language: en-US",
            "Content-Type: text/plain; charset=UTF-8; format=flowed",
            "Content-Transfer-Encoding: 8bit",
        )
        + "\r\n"
        + body
        + quote(turn)
        + "\r\n"
    ).encode()


def yandex(turn: Received, sender: str, text: str) -> bytes:
    """A Russian webmail: plain, base64, a greeting paragraph first."""
    body = f"Здравствуйте, Referee.\r\n\r\n{text}\r\n\r\n-- \r\nП. Смирнов\r\n"
    encoded = base64.encodebytes(body.encode()).decode().replace("\n", "\r\n")
    return (
        head(
            turn,
            sender,
            "X-Mailer: Yamail [ http://yandex.ru ] 5.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
        )
        + "\r\n"
        + encoded
    ).encode()


def japanese(turn: Received, sender: str, text: str) -> bytes:
    """A Japanese phone's mail: ISO-2022-JP, the addressee's name with 様 on the first line."""
    body = f"Referee様\r\n{text}\r\nよろしくお願いします。\r\n"
    return (
        head(
            turn,
            sender,
            "Content-Type: text/plain; charset=ISO-2022-JP",
            "Content-Transfer-Encoding: 7bit",
        ).encode()
        + b"\r\n"
        + body.encode("iso-2022-jp")
    )


def empty_plain(turn: Received, sender: str, text: str) -> bytes:
    """A webmail that sends an empty plain part beside the HTML that holds the words."""
    return (
        head(turn, sender, 'Content-Type: multipart/alternative; boundary="alt-7f3a"')
        + "\r\n--alt-7f3a\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\r\n"
        + "--alt-7f3a\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        + f"<html><body><div>{text}</div><blockquote>It is your move</blockquote></body></html>"
        + "\r\n--alt-7f3a--\r\n"
    ).encode()


def subject_only(turn: Received, sender: str, text: str) -> bytes:
    """A phone's new mail to the reply address: the move in the subject, nothing below."""
    return (
        head(
            turn,
            sender,
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 7bit",
            subject=text,
        )
        + "\r\n\r\n"
    ).encode()


def outlooks(move: str) -> str:
    """`Take 13.` with a no-break space, as Outlook's editor often writes it."""
    return move.capitalize().replace(" ", "\xa0") + "."


STYLES: list[tuple[str, Callable[[Received, str, str], bytes], Callable[[str], str]]] = [
    ("outlook trailing stop and nbsp", outlook, outlooks),
    ("gmail smart quotes", gmail, lambda move: f"\u201c{move}\u201d"),
    ("iphone emoji", iphone, lambda move: f"{move} \U0001f44d"),
    ("thunderbird ok", thunderbird, lambda move: f"ok {move}"),
    ("russian greeting", yandex, lambda move: move.capitalize() + "."),
    ("japanese greeting", japanese, lambda move: move),
    ("empty plain beside html", empty_plain, lambda move: move),
    ("subject only", subject_only, lambda move: move),
]


def turn_of(env: MailService, players: list[str], at: int) -> tuple[str, Received]:
    """Whose turn mail shows version `at`, and that mail."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for player in players:
            for mail in env.mailbox.to(player):
                if str(mail.mail["X-Referee-Kind"]) == "your_turn" and version(mail) == at:
                    return player, mail
        time.sleep(0.05)
    raise AssertionError(f"no turn mail at version {at}")


def test_plain_moves_with_what_surrounds_them_are_played(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "mandala", "plain-")
    players = ["plain-0@players.test", "plain-1@players.test"]
    played: list[str] = []
    for at, (name, style, dressed) in enumerate(STYLES):
        player, turn = turn_of(env, players, at)
        move = listed_moves(text_of(turn.mail))[at % 3]
        before = len(env.mailbox.to(player))
        send(env, turn, style(turn, player, dressed(move)), player)
        answer = text_of(wait_mail(env, player, "answer", after=before).mail)
        assert f'Your move "{move}" was accepted' in answer, (name, answer)
        played.append(move)
        assert log(env, created["id"]) == played, name


def test_an_inline_text_attachment_is_not_the_move(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "mandala", "inline-")
    players = ["inline-0@players.test", "inline-1@players.test"]
    player, turn = turn_of(env, players, 0)
    move, other = listed_moves(text_of(turn.mail))[:2]
    raw = (
        head(turn, player, 'Content-Type: multipart/mixed; boundary="Apple-Mail=_5E2A"')
        + "\r\n--Apple-Mail=_5E2A\r\nContent-Type: text/html; charset=us-ascii\r\n\r\n"
        + f"<html><body><div>{move}</div></body></html>\r\n"
        + "--Apple-Mail=_5E2A\r\nContent-Disposition: inline; filename=notes.txt\r\n"
        + 'Content-Type: text/plain; x-unix-mode=0644; name="notes.txt"\r\n\r\n'
        + f"{other}\r\n--Apple-Mail=_5E2A--\r\n"
    ).encode()
    send(env, turn, raw, player)
    assert f'Your move "{move}" was accepted' in text_of(wait_mail(env, player, "answer").mail)
    assert log(env, created["id"]) == [move]


def refused(env: MailService, player: str, before: int) -> str:
    """The text after "could not be read as a move:" in the refusal the player got."""
    text = text_of(wait_mail(env, player, "refused", after=before).mail)
    line = text.split("Your reply could not be read as a move: ", 1)[1]
    return " ".join(line.split("\n\n", 1)[0].split())


def test_two_moves_in_one_reply_are_refused_naming_both(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "mandala", "two-")
    players = ["two-0@players.test", "two-1@players.test"]
    player, turn = turn_of(env, players, 0)
    first, second = listed_moves(text_of(turn.mail))[:2]
    before = len(env.mailbox.to(player))
    send(env, turn, gmail(turn, player, f"{first}\nsorry, I meant {second}"), player)
    assert refused(env, player, before).startswith(
        f'it holds two different moves, "{first}" and "{second}"'
    )
    assert log(env, created["id"]) == []


def maniki_turn(env: MailService, tag: str) -> tuple[dict[str, Any], str, Received, str]:
    created = create(env, "maniki", tag)
    player = f"{tag}0@players.test"
    turn = wait_mail(env, player, "your_turn", 0)
    view = state_of(turn.mail)["state"]
    return created, player, turn, " ".join(solve(view["position"], view["target"]))


def test_two_hard_lines_of_a_flowed_reply_are_not_one_sequence(mail_service: MailService) -> None:
    env = mail_service
    created, player, turn, _answer = maniki_turn(env, "flowed-")
    before = len(env.mailbox.to(player))
    send(env, turn, thunderbird(turn, player, "KI MA\nMA LO"), player)
    assert refused(env, player, before).startswith(
        'it holds two different moves, "KI MA" and "MA LO"'
    )
    assert log(env, created["id"]) == []


def test_a_signature_is_never_joined_into_the_move(mail_service: MailService) -> None:
    env = mail_service
    created, player, turn, answer = maniki_turn(env, "niki-")
    before = len(env.mailbox.to(player))
    send(env, turn, iphone(turn, player, f"{answer}\nNiki"), player)
    assert refused(env, player, before).startswith(
        f'it holds two different moves, "{answer}" and "Niki"'
    )
    assert log(env, created["id"]) == []


def test_a_refusal_quotes_the_text_once_as_written(mail_service: MailService) -> None:
    env = mail_service
    create(env, "mandala", "words-")
    players = ["words-0@players.test", "words-1@players.test"]
    player, turn = turn_of(env, players, 0)
    before = len(env.mailbox.to(player))
    send(env, turn, outlook(turn, player, "Take\xa0thirteen."), player)
    problem = refused(env, player, before)
    assert problem.startswith('"Take thirteen." is not a move: expected `take N`'), problem
    assert problem.count("thirteen") == 1
    assert "\\x" not in problem and "cannot read" not in problem and "'" not in problem


# The languages the issue named, in the words their mail programs use.
@pytest.mark.parametrize("number", range(1, 10))
def test_out_of_office_in_any_language_gets_no_answer(
    mail_service: MailService, number: int
) -> None:
    env = mail_service
    subject = VACATION_SUBJECTS[number]
    tag = f"away{number}-"
    created = create(env, "mandala", tag)
    players = [f"{tag}0@players.test", f"{tag}1@players.test"]
    player, turn = turn_of(env, players, 0)
    before = len(env.mailbox.to(player))
    move = listed_moves(text_of(turn.mail))[0]
    body = "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n"
    raw = head(turn, player, subject=subject) + body + f"\r\n{move}\r\nI am away.\r\n"
    send(env, turn, raw.encode(), player)
    generated = b"X-MS-Exchange-Generated-Message-Source: Mailbox Rules Agent\r\n"
    exchange = outlook(turn, player, move).replace(b"Thread-Topic:", generated + b"Thread-Topic:")
    send(env, turn, exchange, player)
    time.sleep(2)
    assert len(env.mailbox.to(player)) == before
    assert log(env, created["id"]) == []
