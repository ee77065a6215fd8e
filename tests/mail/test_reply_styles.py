"""Replies shaped as Gmail, Outlook, Apple Mail, Thunderbird and phones shape them,
sent as real messages through the real `referee mail-in`; and the headers of what
the referee sends back (one thread per game and seat, marked as a machine's)."""

from __future__ import annotations

import smtplib
import ssl
import subprocess
import time
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest

from referee.games.maniki import ARRANGEMENTS, _reach
from tests.live.test_games_http import solve
from tests.mail.players import listed_moves, state_of, text_of, version, wait_mail
from tests.mail.test_reading import wrap
from tests.mailboxes import MailService, Received, wait_port
from tests.servers import free_port
from tests.stacks import REFEREE, Client, Process

pytestmark = pytest.mark.long


def create(env: MailService, game: str, tag: str, players: int = 2) -> dict[str, Any]:
    body = {
        "game": game,
        "players": [{"name": f"P{i}", "email": f"{tag}{i}@players.test"} for i in range(players)],
    }
    answer = Client(env.service.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def raw_reply(
    turn: Received,
    sender: str,
    body: str,
    content_type: str = "text/plain; charset=utf-8",
    **headers: str,
) -> tuple[bytes, str]:
    """A reply's bytes as a mail program sends them, and its Message-ID."""
    mid = make_msgid(domain="players.test")
    head = "".join(f"{name.replace('_', '-')}: {value}\r\n" for name, value in headers.items())
    raw = (
        f"From: {sender}\r\nTo: {turn.mail['Reply-To']}\r\nSubject: Re: {turn.mail['Subject']}\r\n"
        f"Message-ID: {mid}\r\nIn-Reply-To: {turn.mail['Message-ID']}\r\n"
        f"References: {turn.mail['Message-ID']}\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: {content_type}\r\nContent-Transfer-Encoding: 8bit\r\n{head}\r\n"
        + body.replace("\n", "\r\n")
    )
    return raw.encode("utf-8"), mid


def send(env: MailService, turn: Received, raw: bytes, envelope: str) -> None:
    with smtplib.SMTP("127.0.0.1", env.inbound_port, timeout=30) as client:
        client.sendmail(envelope, [str(turn.mail["Reply-To"])], raw)


def quoted(turn: Received) -> str:
    return "\n".join("> " + line for line in text_of(turn.mail).splitlines())


def log(env: MailService, game_id: str) -> list[str]:
    moves = Client(env.service.url).get(f"/v1/games/{game_id}/moves").json()["moves"]
    return [str(m["notation"]) for m in moves]


def long_solution(view: dict[str, Any], width: int) -> str:
    """A right MaNiKi answer longer than `width` columns: a shortest one behind back-and-forths."""
    start = ARRANGEMENTS.index(view["position"])
    goal = ARRANGEMENTS.index(view["target"])
    path = solve(view["position"], view["target"])
    for pad in (("KI", "LO"), ("LO", "KI")):
        orders = (*(pad * ((30 - len(path)) // 2)), *path)
        if _reach(start, orders) == goal:
            text = " ".join(orders)
            assert len(text) > width
            return text
    raise AssertionError("no padding comes back")


def test_long_maniki_answers_survive_flowed_and_hard_wrapping(
    mail_service: MailService,
) -> None:
    env = mail_service
    created = create(env, "maniki", "wrap-")
    ann, bob = "wrap-0@players.test", "wrap-1@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    answer = long_solution(state_of(turn.mail)["state"], 72)
    # Thunderbird and Apple Mail: format=flowed, soft breaks after a space.
    raw, _ = raw_reply(
        turn,
        ann,
        wrap(answer, 72, soft=True) + f"\n\nOn Monday, Referee wrote:\n{quoted(turn)}\n",
        "text/plain; charset=utf-8; format=flowed",
    )
    send(env, turn, raw, ann)
    told = text_of(wait_mail(env, ann, "answer").mail)
    assert "Right: you won this card." in told
    assert log(env, created["id"]) == [answer]

    # Outlook in plain-text mode: hard line breaks at 72 columns.
    turn = wait_mail(env, bob, "your_turn", 1)
    answer = long_solution(state_of(turn.mail)["state"], 72)
    raw, _ = raw_reply(turn, bob, wrap(answer, 72, soft=False) + "\n\n-- \nBob\n")
    send(env, turn, raw, bob)
    assert "Right: you won this card." in text_of(wait_mail(env, bob, "answer").mail)
    assert log(env, created["id"])[-1] == answer

    # A wrong answer says so, and that the seat is out of this card.
    turn = wait_mail(env, ann, "your_turn", 2)
    view = state_of(turn.mail)["state"]
    start, goal = ARRANGEMENTS.index(view["position"]), ARRANGEMENTS.index(view["target"])
    wrong = next(
        o for o in (("KI",), ("LO",), ("MA",), ("SO",), ("NI",)) if _reach(start, o) != goal
    )
    before = len(env.mailbox.to(ann))
    raw, _ = raw_reply(turn, ann, " ".join(wrong) + "\n")
    send(env, turn, raw, ann)
    told = text_of(wait_mail(env, ann, "answer", after=before).mail)
    assert "Wrong" in told and "out of this card" in told and "accepted" not in told


def test_a_reply_to_an_old_turn_mail_is_not_played(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "subdivision", "stale-")
    ann, bob = "stale-0@players.test", "stale-1@players.test"
    first = wait_mail(env, ann, "your_turn", 0)
    moves = listed_moves(text_of(first.mail))
    raw, _ = raw_reply(first, ann, moves[0] + "\n")
    send(env, first, raw, ann)
    wait_mail(env, ann, "answer")
    bob_turn = wait_mail(env, bob, "your_turn", 1)
    raw, _ = raw_reply(bob_turn, bob, listed_moves(text_of(bob_turn.mail))[0] + "\n")
    send(env, bob_turn, raw, bob)
    current = wait_mail(env, ann, "your_turn", 2)
    # Ann answers the mail of version 0 again: that position is gone.
    before = len(env.mailbox.to(ann))
    raw, _ = raw_reply(first, ann, moves[1] + "\n")
    send(env, first, raw, ann)
    told = wait_mail(env, ann, "answer", after=before)
    text = text_of(told.mail)
    assert "was not played: the game moved on since the mail" in text
    assert version(told) == 2 and listed_moves(text) == listed_moves(text_of(current.mail))
    assert len(log(env, created["id"])) == 2
    # Answering the mail that shows the position now is played.
    move = listed_moves(text_of(told.mail))[0]
    raw, _ = raw_reply(told, ann, move + "\n")
    send(env, told, raw, ann)
    wait_mail(env, ann, "answer", after=before + 1)
    assert log(env, created["id"])[-1] == move


@pytest.mark.parametrize(
    "attribution",
    [
        "Am Mo., 2. März 2026 um 10:00 Uhr schrieb Referee <referee@referee.test>:",
        "Op ma 2 mrt 2026 om 10:00 schreef Referee <referee@referee.test>:",
        "On Mon, 2 Mar 2026 at 10:00, Referee <\nreferee@referee.test> wrote:",
    ],
    ids=["german", "dutch", "gmail-wrapped"],
)
def test_bottom_posted_attributions(mail_service: MailService, attribution: str) -> None:
    env = mail_service
    tag = f"attr{abs(hash(attribution)) % 10_000}-"
    created = create(env, "subdivision", tag)
    ann = f"{tag}0@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    move = listed_moves(text_of(turn.mail))[2]
    raw, _ = raw_reply(turn, ann, f"{attribution}\n{quoted(turn)}\n\n{move}\n\n-- \nAnn\n")
    send(env, turn, raw, ann)
    assert f'Your move "{move}" was accepted' in text_of(wait_mail(env, ann, "answer").mail)
    assert log(env, created["id"]) == [move]


def test_machine_mail_gets_no_answer_and_makes_no_move(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "subdivision", "robot-")
    ann = "robot-0@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    move = listed_moves(text_of(turn.mail))[0]
    before = len(env.mailbox.to(ann))
    for headers, envelope in (
        ({"Auto_Submitted": "auto-replied"}, ann),
        ({"Precedence": "bulk"}, ann),
        ({"Precedence": "list"}, ann),
        ({}, ""),
    ):
        raw, _ = raw_reply(turn, ann, move + "\n", **headers)
        send(env, turn, raw, envelope)
    vacation, _ = raw_reply(turn, ann, move + "\n")
    vacation = vacation.replace(b"Subject: Re: ", b"Subject: Out of Office: ")
    send(env, turn, vacation, ann)
    time.sleep(2)
    assert len(env.mailbox.to(ann)) == before
    assert log(env, created["id"]) == []
    assert env.inbound.output().count("outcome=dropped") >= 5


def test_one_thread_per_game_and_seat_and_machine_headers(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "subdivision", "thread-")
    ann = "thread-0@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    # A +tag and an upper-case domain are still the seat's own address.
    raw, mid = raw_reply(turn, "Thread-0+games@PLAYERS.test", listed_moves(text_of(turn.mail))[0])
    send(env, turn, raw, "thread-0+games@players.test")
    answer = wait_mail(env, ann, "answer")
    mails = env.mailbox.to(ann)
    root = str(mails[0].mail["Message-ID"])
    assert mails[0].mail["References"] is None
    for mail in mails:
        assert str(mail.mail["Subject"]) == str(mails[0].mail["Subject"])
        assert str(mail.mail["Auto-Submitted"]) == "auto-generated"
        assert str(mail.mail["X-Auto-Response-Suppress"]) == "All"
        assert created["id"] in str(mail.mail["List-Id"])
        assert f"/g/{created['id']}" in text_of(mail.mail)
        assert "/v1/games" not in text_of(mail.mail)
        # The witness lines fit 72 columns (a link, which cannot be wrapped, may not).
        tail = text_of(mail.mail).splitlines()[-3:]
        assert all(len(line) <= 72 for line in tail if "://" not in line)
        if mail is not mails[0]:
            assert str(mail.mail["References"]).split()[0] == root
    assert str(answer.mail["In-Reply-To"]) == mid
    assert str(answer.mail["References"]).split() == [root, mid]
    assert "P0" in str(mails[0].mail["Subject"]) and "P1" in str(mails[0].mail["Subject"])
    bob_turn = wait_mail(env, "thread-1@players.test", "your_turn", 1)
    assert "after 1 move)" in text_of(bob_turn.mail)


def test_mail_in_offers_starttls(mail_service: MailService, tmp_path: Path) -> None:
    env = mail_service
    cert, key = tmp_path / "mx.pem", tmp_path / "mx.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=referee.test", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    tls_env = {
        **env.service.env,
        "REFEREE_MAIL_TLS_CERT": str(cert),
        "REFEREE_MAIL_TLS_KEY": str(key),
    }
    listener = Process(
        [REFEREE, "mail-in", "--port", str(port)], tls_env, tmp_path / "mail-in.log"
    ).start()
    try:
        wait_port(port, listener)
        created = create(env, "subdivision", "tls-")
        ann = "tls-0@players.test"
        turn = wait_mail(env, ann, "your_turn", 0)
        move = listed_moves(text_of(turn.mail))[0]
        raw, _ = raw_reply(turn, ann, move + "\n")
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
            client.ehlo()
            assert client.has_extn("starttls")
            client.starttls(context=ssl._create_unverified_context())
            client.sendmail(ann, [str(turn.mail["Reply-To"])], raw)
        wait_mail(env, ann, "answer")
        assert log(env, created["id"]) == [move]
    finally:
        listener.stop()
