"""Table talk by mail, over real SMTP, PostgreSQL and a Celery worker.

Every reply of the corpus (tests/mail/talk_corpus: Gmail, Outlook, Apple
Mail, Thunderbird, phones, in English, French, German and Japanese) goes
through a real SMTP client into `referee mail-in`, each answering its own
game's first turn mail: the move it holds is played, its words reach the
other seat exactly, a move that cannot be read is refused and passes nothing
on. Machine mail never becomes a message. Turn mails show the messages a seat
has not seen and mark them seen; a seat told of each turn that has not seen a
message for an hour gets one short mail of them, at most one in 6 hours.
"""

from __future__ import annotations

import smtplib
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from celery import Celery
from playwright.sync_api import Browser, ViewportSize

from referee import games
from referee.reply_text import line_read
from tests.clock import real_now
from tests.mail.players import html_of, kind, kinds, text_of, wait_mail
from tests.mail.talk_corpus import Case, cases
from tests.mail.test_phone import ARTIFACTS, DESKTOP, PHONE, as_shown, browser
from tests.mailboxes import MailService, Received
from tests.servers import redis_url
from tests.stacks import Client

pytestmark = pytest.mark.long
__all__ = ["browser"]

Found = TypeVar("Found")
RULES = games.get("subdivision")
OPTIONS = RULES.load_options({}, 2)


def eventually(probe: Callable[[], Found | None], seconds: float = 120) -> Found:
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("waited in vain")
        time.sleep(0.1)


def create(env: MailService, tag: str) -> dict[str, Any]:
    body = {
        "game": "subdivision",
        "players": [
            {"name": "Ann", "email": f"{tag}-ann@players.test"},
            {"name": "Bob", "email": f"{tag}-bob@players.test"},
        ],
    }
    made = Client(env.service.url).post("/v1/games", body)
    assert made.status_code == 201, made.text
    created: dict[str, Any] = made.json()
    return created


def token(game: dict[str, Any], seat: int) -> str:
    return str(game["seats"][seat]["token"])


def moves(env: MailService, game: dict[str, Any]) -> list[str]:
    found = Client(env.service.url).get(f"/v1/games/{game['id']}/moves").json()["moves"]
    return [str(move["notation"]) for move in found]


def said(env: MailService, game: dict[str, Any], seat: int) -> list[str]:
    """The texts of the game's messages, as `seat` reads them (which marks them seen)."""
    found = Client(env.service.url).get(f"/v1/games/{game['id']}/messages", token(game, seat))
    assert found.status_code == 200, found.text
    return [str(message["text"]) for message in found.json()["messages"]]


def smtp(env: MailService, sender: str, to: str, raw: bytes) -> None:
    with smtplib.SMTP("127.0.0.1", env.inbound_port, timeout=30) as client:
        client.sendmail(sender, [to], raw)


def mails(env: MailService, to: str, wanted: str) -> list[Received]:
    return [mail for mail in env.mailbox.to(to) if kind(mail) == wanted]


def test_forty_replies_by_every_mail_program_in_four_languages(
    mail_service: MailService,
) -> None:
    env = mail_service
    corpus = cases()
    made = [create(env, f"talk{number}") for number in range(len(corpus))]
    turns = [
        wait_mail(env, f"talk{number}-ann@players.test", "your_turn", 0)
        for number in range(len(corpus))
    ]
    for number, (case, turn) in enumerate(zip(corpus, turns, strict=True)):
        ann, reply_to = f"talk{number}-ann@players.test", str(turn.mail["Reply-To"])
        smtp(env, ann, reply_to, case.addressed(ann, reply_to))

    def settled(number: int, case: Case) -> bool:
        ann = f"talk{number}-ann@players.test"
        if case.refused:
            return bool(mails(env, ann, "refused"))
        if case.move is not None:
            return bool(mails(env, ann, "answer"))
        return bool(mails(env, ann, "passed_on"))

    eventually(lambda: all(settled(n, c) for n, c in enumerate(corpus)) or None, 300)
    time.sleep(2)
    misplayed, moves_as_words, lost, wrong = [], [], [], []
    for case, game in zip(corpus, made, strict=True):
        played, passed = moves(env, game), said(env, game, 1)
        if played != ([case.move] if case.move else []):
            misplayed.append((case.name, played))
        if any(line_read(RULES, OPTIONS, line) for text in passed for line in text.split("\n")):
            moves_as_words.append((case.name, passed))
        if case.words and passed != [case.words]:
            lost.append((case.name, passed))
        if not case.words and passed:
            wrong.append((case.name, passed))
    assert (misplayed, moves_as_words, lost, wrong) == ([], [], [], [])
    for number, case in enumerate(corpus):
        ann = f"talk{number}-ann@players.test"
        if case.refused:
            assert "could not be read as a move" in text_of(mails(env, ann, "refused")[0].mail)
            assert not mails(env, ann, "passed_on")
        elif case.move is None:
            told = " ".join(text_of(mails(env, ann, "passed_on")[0].mail).split())
            assert "Your words were passed on to the other players" in told
            assert "It is still your turn" in told
    # Every reply was taken once, and said what became of it.
    outcomes = [line for line in env.inbound.output().splitlines() if "-ann@players.test" in line]
    assert len(outcomes) == len(corpus)


def test_machine_mail_never_becomes_a_message(mail_service: MailService) -> None:
    env = mail_service
    game = create(env, "robots")
    ann = "robots-ann@players.test"
    turn = wait_mail(env, ann, "your_turn", 0)
    reply_to = str(turn.mail["Reply-To"])
    words = "I am out of the office until Monday and will answer then."
    base = (
        f"From: {ann}\r\nTo: {reply_to}\r\nSubject: Re: {turn.mail['Subject']}\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
    )
    robots = [
        ("Auto-Submitted: auto-replied\r\n", ann),
        ("Precedence: bulk\r\n", ann),
        ("X-Autoreply: yes\r\n", ann),
        ("", ""),
    ]
    for number, (header, envelope) in enumerate(robots):
        raw = f"{base}Message-ID: <robot-{number}@players.test>\r\n{header}\r\n{words}\r\n"
        smtp(env, envelope, reply_to, raw.encode())
    vacation = base.replace("Subject: Re: ", "Subject: Out of Office: ")
    smtp(
        env,
        ann,
        reply_to,
        f"{vacation}Message-ID: <robot-v@players.test>\r\n\r\n{words}\r\n".encode(),
    )
    # The referee's own turn mail sent back to it, as a looping forwarder would.
    smtp(env, ann, reply_to, turn.raw)
    eventually(lambda: env.inbound.output().count("outcome=dropped") >= 6 or None, 30)
    time.sleep(2)
    assert said(env, game, 1) == []
    # Its welcome and first turn, in one mail, and nothing since.
    assert [kinds(mail) for mail in env.mailbox.to(ann)] == [["invitation", "your_turn"]]
    assert moves(env, game) == []


def sweep(env: MailService, after: timedelta) -> None:
    """The digests' sweep, which mails the messages not seen for an hour, at a later time."""
    at = (real_now() + after).isoformat()
    Celery(broker=redis_url()).send_task(
        "referee.digests", args=[at], queue=env.service.env["REFEREE_QUEUE"]
    )


def shown_fits(browser: Browser, mail: Received, name: str) -> None:
    """The mail's HTML as a mail program shows it, at 1280 and 390 px: nothing overflows
    the phone; screenshots under var/artifacts/mail/talk/."""
    folder = ARTIFACTS / "talk"
    folder.mkdir(parents=True, exist_ok=True)
    for label, size in (("1280", DESKTOP), ("390", PHONE)):
        context = browser.new_context(
            viewport=ViewportSize(width=size["width"], height=size["height"])
        )
        page = context.new_page()
        page.set_content(as_shown(mail), wait_until="load")
        page.screenshot(path=folder / f"{name}-{label}.png", full_page=True)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        context.close()
        assert width <= size["width"], (name, label, width)


def test_turn_mail_shows_unseen_messages_once_and_a_short_mail_tells_the_rest(
    mail_service: MailService, browser: Browser
) -> None:
    env = mail_service
    game = create(env, "shown")
    ann, bob = "shown-ann@players.test", "shown-bob@players.test"
    client = Client(env.service.url)
    for text in (
        "Hi Bob <b>&</b> good luck!",
        "I played the corner last time and regretted it for the whole game, so this time "
        "I am trying the middle first.\nWe will see!",
        "よろしくお願いします。https://example.test/a-very-long-link-that-should-wrap-nicely",
    ):
        posted = client.post(f"/v1/games/{game['id']}/messages", {"text": text}, token(game, 0))
        assert posted.status_code == 201, posted.text
    turn = wait_mail(env, ann, "your_turn", 0)
    legal = client.get(f"/v1/games/{game['id']}/legal-moves", token(game, 0)).json()["moves"]
    played = client.move(game["id"], token(game, 0), {"move": legal[0]["move"]})
    assert played.status_code == 201, played.text
    bobs_turn = wait_mail(env, bob, "your_turn", 1)
    text, html = text_of(bobs_turn.mail), html_of(bobs_turn.mail)
    assert "Messages you have not seen" in text and "Hi Bob <b>&</b> good luck!" in text
    assert "Hi Bob &lt;b&gt;&amp;&lt;/b&gt; good luck!" in html and "<b>&</b>" not in html
    assert "Messages you have not seen" not in text_of(turn.mail)
    shown_fits(browser, bobs_turn, "turn-mail")
    # Seen by that mail: the hour's sweep mails Bob nothing of it.
    sweep(env, timedelta(minutes=70))
    time.sleep(3)
    assert not mails(env, bob, "messages")

    # Ann writes again and Bob gets no mail of the game within the hour: one short mail.
    again = client.post(
        f"/v1/games/{game['id']}/messages", {"text": "Still there?"}, token(game, 0)
    )
    assert again.status_code == 201, again.text
    sweep(env, timedelta(minutes=30))
    time.sleep(3)
    assert not mails(env, bob, "messages")
    sweep(env, timedelta(minutes=70))
    short = eventually(lambda: mails(env, bob, "messages") or None, 60)[0]
    told = text_of(short.mail)
    assert "Still there?" in told and "Hi Bob" not in told
    assert "Your legal moves" not in told and "Still there?" in html_of(short.mail)
    shown_fits(browser, short, "messages-mail")
    # Not again within 6 hours, even with more unseen; after them, again.
    third = client.post(f"/v1/games/{game['id']}/messages", {"text": "Hello?"}, token(game, 0))
    assert third.status_code == 201, third.text
    sweep(env, timedelta(hours=3))
    time.sleep(3)
    assert len(mails(env, bob, "messages")) == 1
    sweep(env, timedelta(hours=7, minutes=15))
    latest = eventually(lambda: mails(env, bob, "messages")[1:] or None, 60)[0]
    assert "Hello?" in text_of(latest.mail) and "Still there?" not in text_of(latest.mail)

    # Bob answers the short mail with words alone: they reach Ann; he is told it is his turn.
    answer = (
        f"From: {bob}\r\nTo: {latest.mail['Reply-To']}\r\nSubject: Re: {latest.mail['Subject']}\r\n"
        "Message-ID: <bob-words@players.test>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\nYes, thinking!\r\n\r\n> Hello?\r\n"
    )
    smtp(env, bob, str(latest.mail["Reply-To"]), answer.encode())
    passed = wait_mail(env, bob, "passed_on")
    told = " ".join(text_of(passed.mail).split())
    assert "passed on to the other players" in told and "It is still your turn" in told
    shown_fits(browser, passed, "passed-on-mail")
    assert said(env, game, 0)[-1] == "Yes, thinking!"
