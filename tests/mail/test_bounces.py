"""Bounces: delivery reports come back to a per-address envelope sender and are read.

Against the real processes (`referee serve`, a worker, `referee mail-in`,
the players' SMTP server): every mail goes out from
`bounce+<token>@<domain>`; reports shaped as Postfix, Gmail and Exchange
send them come to that address from the null sender over SMTP; forged
ones are refused at RCPT; after `REFEREE_MAIL_BOUNCES` (3) hard bounces
the address gets no more mail (`referee addresses --bounced` lists it),
the other player is told and sees the seat as unreachable, the deadline
plays for it, and a reply from it brings it back.
"""

from __future__ import annotations

import smtplib
import subprocess
import time
from datetime import datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

import pytest

from mailin.bounces import read_report, verdict
from tests.mail import reports
from tests.mail.players import answer, listed_moves, text_of, wait_mail
from tests.mail.test_deadlines import log, sweep
from tests.mailboxes import DOMAIN, MailService, Received
from tests.stacks import REFEREE, Client

ANN, BOB = "ann@bounces.test", "bob@bounces.test"


def parsed(raw: bytes) -> EmailMessage:
    found = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(found, EmailMessage)
    return found


def sample(sender: str = f"bounce+abc@{DOMAIN}") -> Received:
    mail = EmailMessage()
    mail["From"] = f"Referee <referee@{DOMAIN}>"
    mail["To"] = BOB
    mail["Subject"] = "Subdivision: Ann and Bob (game 12345678)"
    mail["Message-ID"] = f"<referee.7.abc@{DOMAIN}>"
    mail.set_content("Hello Bob")
    return Received(bytes(mail), mail, [BOB], sender)


@pytest.mark.parametrize("shape", [reports.postfix, reports.gmail, reports.exchange])
def test_each_servers_failure_report_reads_as_a_hard_bounce(shape: Any) -> None:
    hard, status = verdict(parsed(shape(sample(), BOB, "<r@mx.test>")))
    assert hard and status.startswith("5.1.1")


def test_a_delay_and_mail_that_is_no_report_are_not_hard_bounces() -> None:
    assert verdict(parsed(reports.postfix(sample(), BOB, "<d@mx.test>", delayed=True))) == (
        False,
        "delayed 4.4.1",
    )
    assert verdict(sample().mail) == (False, "not a delivery report")


def test_a_report_beyond_mail_ins_bounds_is_not_parsed_and_not_counted() -> None:
    # A player sees their bounce address in Return-Path: its reports are a stranger's bytes.
    report = reports.postfix(sample(), BOB, "<deep@mx.test>")
    deep = b"".join(
        b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (n, n)
        for n in range(2000)
    )
    many = b"".join(b"--x\r\nContent-Type: text/plain\r\n\r\nx\r\n" for _ in range(120_000))
    flat = b'Content-Type: multipart/mixed; boundary="x"\r\n\r\n' + many + b"--x--\r\n"
    for body in (deep, flat):
        assert read_report(b"Message-ID: <bomb@mx.test>\r\n" + body) == (
            None,
            False,
            "unreadable",
        )
    message, hard, _status = read_report(report)
    assert message is not None and hard


@pytest.fixture(scope="module")
def env(mail_service: MailService) -> MailService:
    return mail_service


def report(env: MailService, to: str, raw: bytes) -> None:
    """A report sent as mail servers send them: from the null sender."""
    with smtplib.SMTP("127.0.0.1", env.inbound_port, timeout=30) as client:
        client.sendmail("", [to], raw)


def rcpt(env: MailService, sender: str, to: str) -> tuple[int, bytes]:
    with smtplib.SMTP("127.0.0.1", env.inbound_port, timeout=30) as client:
        client.ehlo()
        client.mail(sender)
        return client.rcpt(to)


def seats(env: MailService, game_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        Client(env.service.url).get(f"/v1/games/{game_id}").json()["seats"]
    )
    return found


def unreachable(env: MailService, game_id: str) -> list[bool]:
    return [seat["unreachable"] for seat in seats(env, game_id)]


def settled(env: MailService, game_id: str, wanted: list[bool]) -> None:
    """Wait until mail-in has counted what it took (it answers before it logs)."""
    deadline = time.monotonic() + 10
    while unreachable(env, game_id) != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    assert unreachable(env, game_id) == wanted


def bounced_out(env: MailService) -> list[str]:
    """The addresses `referee addresses --bounced` lists, as an operator runs it."""
    listed = subprocess.run(
        [REFEREE, "addresses", "--bounced"],
        env=env.service.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    return [line.split("\t")[0] for line in listed.stdout.splitlines()]


def test_three_hard_bounces_stop_the_mail_and_the_deadline_plays_on(env: MailService) -> None:
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}],
        "deadline": "72h",
        "on_timeout": "random",
    }
    game: dict[str, Any] = Client(env.service.url).post("/v1/games", body).json()
    game_id = game["id"]
    turn = wait_mail(env, ANN, "your_turn", 0)
    invitation = wait_mail(env, BOB, "invitation", 0)

    # Each address has an envelope sender of its own, the same on each of its mails.
    bounce_to = invitation.sender
    assert bounce_to.startswith("bounce+") and bounce_to.endswith("@" + DOMAIN)
    assert {m.sender for m in env.mailbox.to(BOB)} == {bounce_to}
    assert turn.sender.startswith("bounce+") and turn.sender != bounce_to

    # Forged: a token that is not the referee's, or a report from a real sender.
    local, domain = bounce_to.split("@")
    forged = f"{local[:-1]}{'a' if local[-1] != 'a' else 'b'}@{domain}"
    code, text = rcpt(env, "", forged)
    assert code == 550 and b"not valid" in text
    code, text = rcpt(env, "mallory@evil.test", bounce_to)
    assert code == 550 and b"null sender" in text
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        report(env, forged, reports.exchange(invitation, BOB, "<forged@evil.test>"))

    # A delay is no bounce; nor is a second copy of one report.
    report(env, bounce_to, reports.postfix(invitation, BOB, "<d1@mail.example.org>", delayed=True))
    report(env, bounce_to, reports.postfix(invitation, BOB, "<b1@mail.example.org>"))
    report(env, bounce_to, reports.gmail(invitation, BOB, "<b2@mx.google.com>"))
    report(env, bounce_to, reports.gmail(invitation, BOB, "<b2@mx.google.com>"))
    time.sleep(1)
    assert unreachable(env, game_id) == [False, False]
    report(env, bounce_to, reports.exchange(invitation, BOB, "<b3@outlook.com>"))
    settled(env, game_id, [False, True])
    # Ann is told at once, whoever is to act; the operators can list the address.
    told = " ".join(text_of(wait_mail(env, ANN, "unreached").mail).split())
    assert "mail to Bob bounces: the referee no longer mails that player" in told
    assert "Their turns run out after" in told and '"random"' in told
    assert wait_mail(env, ANN, "unreached").mail["Subject"] == turn.mail["Subject"]
    assert bounced_out(env) == [BOB]

    # Ann moves: Bob is to act, but is no longer mailed; Ann is told he is unreachable.
    bob_mails = len(env.mailbox.to(BOB))
    before = len(env.mailbox.to(ANN))
    move = listed_moves(text_of(turn.mail))[0]
    env.reply(str(turn.mail["Reply-To"]), answer(turn, move, ANN, "<ann-1@bounces.test>"), ANN)
    told = " ".join(text_of(wait_mail(env, ANN, "answer", after=before).mail).split())
    assert "Bob (unreachable: mail to this player bounces)" in told
    page = Client(env.service.url).get(f"/g/{game_id}").text
    assert "unreachable by mail" in page

    # His time runs out: the referee plays for him, and Ann is told it is her turn.
    due = datetime.fromisoformat(
        Client(env.service.url).get(f"/v1/games/{game_id}").json()["deadlines"]["due_at"]
    )
    sweep(env, due + timedelta(minutes=1))
    wait_mail(env, ANN, "your_turn", 2)
    assert [(seat, source) for seat, _, source in log(env, game_id)] == [
        (0, "mail"),
        (1, "timeout"),
    ]
    time.sleep(1.5)
    assert len(env.mailbox.to(BOB)) == bob_mails

    # A reply from Bob's own address is a sign of life: he is mailed again.
    board = answer(invitation, "board", BOB, "<bob-1@bounces.test>")
    env.reply(str(invitation.mail["Reply-To"]), board, BOB)
    wait_mail(env, BOB, "board", after=bob_mails)
    assert unreachable(env, game_id) == [False, False]
    assert bounced_out(env) == []
    assert env.inbound.output().count("outcome=hard bounce") == 2
    assert "outcome=bounced out (5.1.10)" in env.inbound.output()
