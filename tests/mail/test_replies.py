"""Hostile and awkward replies: none makes a wrong move, each gets a clear answer.

Refusals of mail that cannot be from the seat happen in the SMTP
conversation (the sender's own server bounces them): forged tokens at
RCPT, other senders at DATA, oversized messages by size. The seat's own
unusable replies are answered by mail; a second copy of a message is
taken and does nothing.
"""

from __future__ import annotations

import os
import smtplib
import time
from email.message import EmailMessage
from typing import Any

import pytest

from tests.mail.players import answer, kind, listed_moves, text_of, wait_mail
from tests.mailboxes import MailService, Received
from tests.stacks import Client

ANN, BOB = "ann@players.test", "bob@players.test"


@pytest.fixture
def game(mail_service: MailService) -> dict[str, Any]:
    client = Client(mail_service.service.url)
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}],
    }
    created: dict[str, Any] = client.post("/v1/games", body).json()
    created["turn"] = wait_mail(mail_service, ANN, "your_turn", 0, after=count(mail_service, ANN))
    return created


def count(env: MailService, to: str) -> int:
    return len(env.mailbox.to(to))


def version(env: MailService, game_id: str) -> int:
    found: int = Client(env.service.url).get(f"/v1/games/{game_id}").json()["version"]
    return found


def reply(env: MailService, turn: Received, body: str, sender: str = ANN, **headers: str) -> None:
    mail = answer(turn, body, sender)
    for name, value in headers.items():
        mail[name.replace("_", "-")] = value
    env.reply(str(turn.mail["Reply-To"]), mail, sender)


def settle(env: MailService) -> None:
    """Give the worker time to do anything it would wrongly do."""
    time.sleep(1.5)


def test_a_forged_token_is_refused_at_rcpt(mail_service: MailService, game: dict[str, Any]) -> None:
    real = str(game["turn"].mail["Reply-To"])
    local, domain = real.split("@")
    flipped = local[:-1] + ("a" if local[-1] != "a" else "b")
    for address in (f"{flipped}@{domain}", f"play+nonsense@{domain}", f"someone@{domain}"):
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            mail_service.reply(address, answer(game["turn"], "3c4", ANN), ANN)
        code, text = refused.value.recipients[address]
        assert (code == 550 and b"not valid" in text) or b"play+" in text
    settle(mail_service)
    assert version(mail_service, game["id"]) == 0


def test_another_sender_is_refused(mail_service: MailService, game: dict[str, Any]) -> None:
    move = listed_moves(text_of(game["turn"].mail))[0]
    for sender in (BOB, "mallory@evil.test"):
        with pytest.raises(smtplib.SMTPDataError) as refused:
            reply(mail_service, game["turn"], move, sender=sender)
        assert refused.value.smtp_code == 550 and b"own mail address" in refused.value.smtp_error
    settle(mail_service)
    assert version(mail_service, game["id"]) == 0


def test_garbage_gets_an_answer_and_no_move(
    mail_service: MailService, game: dict[str, Any]
) -> None:
    before = count(mail_service, ANN)
    # Words to people are passed on (tests/mail/test_talk_by_mail.py); a move that
    # cannot be read is refused.
    reply(mail_service, game["turn"], "c3c3c")
    refused = wait_mail(mail_service, ANN, "refused", after=before)
    assert "could not be read as a move" in text_of(refused.mail)
    assert "expected" in text_of(refused.mail) or "not" in text_of(refused.mail)
    # It says how to write a move and which moves there are.
    assert "How to write a move" in text_of(refused.mail)
    assert listed_moves(text_of(refused.mail)) == listed_moves(text_of(game["turn"].mail))
    before = count(mail_service, ANN)
    reply(mail_service, game["turn"], "")
    refused = wait_mail(mail_service, ANN, "refused", after=before)
    assert "no move was found" in text_of(refused.mail)
    assert version(mail_service, game["id"]) == 0


def test_help_board_and_a_move_out_of_turn(mail_service: MailService, game: dict[str, Any]) -> None:
    before = count(mail_service, ANN)
    reply(mail_service, game["turn"], "HELP")
    assert "How to write a move" in text_of(wait_mail(mail_service, ANN, "help", after=before).mail)
    reply(mail_service, game["turn"], "board")
    board = wait_mail(mail_service, ANN, "board", after=before)
    assert listed_moves(text_of(board.mail))
    bob_turn = wait_mail(mail_service, BOB, "invitation")
    before_bob = count(mail_service, BOB)
    move = listed_moves(text_of(game["turn"].mail))[0]
    reply(mail_service, bob_turn, move, sender=BOB)
    refused = wait_mail(mail_service, BOB, "answer", after=before_bob)
    assert "was refused: it is not your turn" in text_of(refused.mail)
    assert version(mail_service, game["id"]) == 0


def test_quoted_text_above_and_below_and_html_only(
    mail_service: MailService, game: dict[str, Any]
) -> None:
    env = mail_service
    moves = listed_moves(text_of(game["turn"].mail))
    # Bottom-posted: the quote and its attribution come first.
    mail = EmailMessage()
    mail["From"] = ANN
    mail["Subject"] = "Re: your move"
    mail.set_content(
        f"On Monday, Referee <referee@x> wrote:\n> {moves[1]}\n> {moves[2]}\n\n"
        f"  {moves[0]}  \n\n> more quoted text\n> {moves[3]}\n-- \n{moves[4]}\n"
    )
    before = count(env, ANN)
    env.reply(str(game["turn"].mail["Reply-To"]), mail, ANN)
    accepted = wait_mail(env, ANN, "answer", after=before)
    assert f'Your move "{moves[0]}" was accepted' in text_of(accepted.mail)
    log = Client(env.service.url).get(f"/v1/games/{game['id']}/moves").json()["moves"]
    assert [m["notation"] for m in log] == [moves[0]]

    bob_turn = wait_mail(env, BOB, "your_turn", 1)
    bob_move = listed_moves(text_of(bob_turn.mail))[-1]
    html = EmailMessage()
    html["From"] = BOB
    html["Subject"] = "Re: your move"
    html.set_content(
        f"<html><head><style>p {{ color: red }}</style></head><body>"
        f"<div dir='ltr'>{bob_move}</div><div class='gmail_quote'>"
        f"<div>On Mon, Referee wrote:</div><blockquote><p>{moves[5]}</p></blockquote>"
        f"</div></body></html>",
        subtype="html",
    )
    before = count(env, BOB)
    env.reply(str(bob_turn.mail["Reply-To"]), html, BOB)
    accepted = wait_mail(env, BOB, "answer", after=before)
    assert f'Your move "{bob_move}" was accepted' in text_of(accepted.mail)


def test_a_duplicated_reply_makes_one_move_and_one_answer(
    mail_service: MailService, game: dict[str, Any]
) -> None:
    env = mail_service
    move = listed_moves(text_of(game["turn"].mail))[0]
    mail = answer(game["turn"], move, ANN, message_id="<dup-1@players.test>")
    before = count(env, ANN)
    for _ in range(3):
        env.reply(str(game["turn"].mail["Reply-To"]), mail, ANN)
    wait_mail(env, ANN, "answer", after=before)
    settle(env)
    answers = [m for m in env.mailbox.to(ANN)[before:] if kind(m) == "answer"]
    assert len(answers) == 1
    assert version(env, game["id"]) == 1


def test_attachments_huge_or_binary(mail_service: MailService, game: dict[str, Any]) -> None:
    env = mail_service
    limit = int(env.service.env["REFEREE_MAIL_MAX_BYTES"])
    move = listed_moves(text_of(game["turn"].mail))[0]
    huge = answer(game["turn"], move, ANN)
    huge.add_attachment(os.urandom(limit + 1000), "application", "octet-stream", filename="x.bin")
    with pytest.raises((smtplib.SMTPDataError, smtplib.SMTPSenderRefused)) as refused:
        env.reply(str(game["turn"].mail["Reply-To"]), huge, ANN)
    assert refused.value.smtp_code == 552
    assert version(env, game["id"]) == 0

    only_binary = EmailMessage()
    only_binary["From"] = ANN
    only_binary.set_content(os.urandom(50_000), "application", "octet-stream", filename="y.bin")
    before = count(env, ANN)
    env.reply(str(game["turn"].mail["Reply-To"]), only_binary, ANN)
    assert "no move" in text_of(wait_mail(env, ANN, "refused", after=before).mail)

    big = answer(game["turn"], move, ANN)
    big.add_attachment(os.urandom(limit // 2), "image", "png", filename="photo.png")
    before = count(env, ANN)
    env.reply(str(game["turn"].mail["Reply-To"]), big, ANN)
    accepted = wait_mail(env, ANN, "answer", after=before)
    assert f'Your move "{move}" was accepted' in text_of(accepted.mail)
    assert version(env, game["id"]) == 1
