"""A stranger's mail cannot stall `referee mail-in`: reading is linear and bounded.

Real processes: the mail stack of tests/mailboxes.py, and a second `referee
mail-in` on its database with room for big messages (12 MB) and a log of its
own. Each message is sent with smtplib, as a mail server would.
"""

from __future__ import annotations

import smtplib
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailin.bounds import MAX_PARTS
from tests.mail.players import listed_moves, text_of, wait_mail
from tests.mail.test_reading import wrap
from tests.mail.test_reply_styles import create, log, raw_reply
from tests.mailboxes import MailService, Received, wait_port
from tests.servers import free_port
from tests.stacks import REFEREE, Process

LARGE = 12_000_000


@pytest.fixture(scope="module")
def roomy(mail_service: MailService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of a `mail-in` that takes messages up to 12 MB, logging to `roomy.log`."""
    port = free_port()
    env = {**mail_service.service.env, "REFEREE_MAIL_MAX_BYTES": str(LARGE)}
    folder = tmp_path_factory.mktemp("roomy")
    listener = Process([REFEREE, "mail-in", "--port", str(port)], env, folder / "roomy.log")
    listener.start()
    wait_port(port, listener)
    LOGS[:] = [folder / "roomy.log"]
    yield port
    listener.stop()


LOGS: list[Path] = []


def send(port: int, turn: Received, sender: str, raw: bytes) -> tuple[int, bytes]:
    """The SMTP answer to the message at the end of DATA."""
    with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo()
        client.mail(sender)
        client.rcpt(str(turn.mail["Reply-To"]))
        try:
            return client.data(raw)
        except smtplib.SMTPDataError as refused:
            return refused.smtp_code, refused.smtp_error


def with_body(head: bytes, body: bytes, **changed: bytes) -> bytes:
    """A reply's header fields with `changed` ones (From, Message-ID) and a MIME `body`.

    `body` begins with its Content-Type's value.
    """
    fields = [line for line in head.split(b"\r\n") if line and not line.startswith(b"Content-")]
    for name, value in changed.items():
        fields = [
            name.replace("_", "-").encode() + b": " + value
            if line.lower().startswith(name.replace("_", "-").lower().encode() + b":")
            else line
            for line in fields
        ]
    return b"\r\n".join(fields) + b"\r\nContent-Type: " + body


def flat(count: int) -> bytes:
    part = b"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n"
    return b'multipart/mixed; boundary="b"\r\n\r\n' + part * count + b"--b--\r\n"


def nested(depth: int) -> bytes:
    opening = b"".join(
        b'--b%d\r\nContent-Type: multipart/mixed; boundary="b%d"\r\n\r\n' % (n, n + 1)
        for n in range(depth)
    )
    return b'multipart/mixed; boundary="b0"\r\n\r\n' + opening + b"x\r\n"


def test_huge_and_complex_mail_is_answered_properly(mail_service: MailService, roomy: int) -> None:
    env = mail_service
    created = create(env, "subdivision", "bounds-")
    ann = "bounds-0@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    move = listed_moves(text_of(turn.mail))[0]

    # 4 MB of flowed prose below the move: read whole, in time, and the move is played.
    prose = wrap("and so on " * 400_000, 72, soft=True)
    raw, _ = raw_reply(
        turn, ann, f"{move}\n\n{prose}\n", "text/plain; charset=utf-8; format=flowed"
    )
    assert len(raw) > 4_000_000
    assert send(roomy, turn, ann, raw) == (250, b"2.0.0 taken")
    wait_mail(env, ann, "answer")
    assert log(env, created["id"]) == [move]

    head = raw.split(b"\r\n\r\n", 1)[0]
    answers = {
        "parts": send(roomy, turn, ann, with_body(head, flat(120_000), Message_ID=b"<p@x>")),
        "deep": send(roomy, turn, ann, with_body(head, nested(2000), Message_ID=b"<d@x>")),
        "wide": send(roomy, turn, ann, with_body(head, flat(MAX_PARTS + 50), Message_ID=b"<w@x>")),
    }
    for name, (code, text) in answers.items():
        assert code == 554 and text.startswith(b"5.6.0 this message cannot be read: "), name
        assert b"Error" not in text and b"(" not in text, name
    assert b"lines" in answers["parts"][1]
    assert b"nested more than" in answers["deep"][1]
    assert f"more than {MAX_PARTS} MIME parts".encode() in answers["wide"][1]

    # The cheap checks come first: a stranger's or a second copy's body is never read.
    stranger = with_body(head, nested(2000), From=b"mallory@evil.test")
    code, text = send(roomy, turn, ann, stranger)
    assert code == 550 and b"own mail address" in text
    copy = with_body(head, nested(2000))
    assert send(roomy, turn, ann, copy) == (250, b"2.0.0 this message was taken already")
    assert log(env, created["id"]) == [move]

    # One log line per message, and no reply token in the log.
    lines = [line for line in LOGS[0].read_text().splitlines() if " mail in: " in line]
    assert len(lines) == 6, lines
    assert "play+" not in LOGS[0].read_text() and "Traceback" not in LOGS[0].read_text()
    answers_logged = [line.rsplit("answer=", 1)[1] for line in lines]
    assert answers_logged == ["250", "554", "554", "554", "550", "250"]
