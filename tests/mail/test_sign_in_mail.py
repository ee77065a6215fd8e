"""Sign-in links over the real stack: `referee serve`, a worker on PostgreSQL and Redis,
the players' SMTP server and `referee mail-in`.

A player asks over REST and gets exactly one mail whose link signs a
browser in; addresses that are no players' get nothing, nor does a second
request within 5 minutes; a reply to the mail reaches no game.
"""

from __future__ import annotations

import re
import smtplib
import time
from email.message import EmailMessage

import psycopg
import pytest
import requests

from tests.mail.players import text_of
from tests.mailboxes import MailService, Received
from tests.stacks import Client

ANN, BOB = "ann@signin.test", "bob@signin.test"
STOPPED = "cy@signin.test"
LINK = re.compile(r"(https?://[^\s\"<>]+)(/me/sign-in/[A-Za-z0-9_-]+)")


def _sign_in_mails(env: MailService, address: str) -> list[Received]:
    return [m for m in env.mailbox.to(address) if m.mail["X-Referee-Kind"] == "sign_in"]


def _wait_sign_in(env: MailService, address: str) -> Received:
    """The first sign-in mail to `address`, once it came."""
    deadline = time.monotonic() + 30
    while not _sign_in_mails(env, address) and time.monotonic() < deadline:
        time.sleep(0.05)
    found = _sign_in_mails(env, address)
    assert found, f"no sign-in mail to {address}"
    return found[0]


def _sign_in_notices(env: MailService) -> dict[str, list[str]]:
    """Each sign-in notice's address (the seat's) and its mail deliveries' statuses."""
    with psycopg.connect(env.service.database_url) as conn:
        rows = conn.execute(
            "SELECT lower(s.email), d.status FROM outbox o"
            " JOIN seat s ON s.game_id = o.game_id AND s.seat = o.seat"
            " JOIN delivery d ON d.notice_id = o.id AND d.channel = 'mail'"
            " WHERE o.kind = 'sign_in' ORDER BY o.id"
        ).fetchall()
    found: dict[str, list[str]] = {}
    for address, status in rows:
        found.setdefault(str(address), []).append(str(status))
    return found


@pytest.fixture(scope="module")
def players(mail_service: MailService) -> MailService:
    """Ann, Bob and Cy seated by a trusted client; Cy then stops the referee's mail."""
    client = Client(mail_service.service.url)
    seated = [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}]
    body = {"game": "subdivision", "players": [*seated, {"name": "Cy", "email": STOPPED}]}
    assert client.post("/v1/games", body).status_code == 201
    first = mail_service.mailbox.wait_for(STOPPED, 1)[0].mail
    stop = re.search(r"<https?://[^/>]+(/unsubscribe/[^>]+)>", str(first["List-Unsubscribe"]))
    assert stop is not None
    # RFC 8058's one-click POST, as a mail program sends it (to this stack's server).
    url = mail_service.service.url + stop.group(1)
    answer = requests.post(url, data={"List-Unsubscribe": "One-Click"}, timeout=60)
    assert answer.status_code == 200
    return mail_service


def test_a_player_gets_one_mail_whose_link_signs_a_browser_in(players: MailService) -> None:
    url = players.service.url
    asked = requests.post(url + "/v1/players/sign-in", json={"email": ANN}, timeout=60)
    assert asked.status_code == 202
    mail = _wait_sign_in(players, ANN)
    found = LINK.search(text_of(mail.mail))
    assert found is not None
    path = found.group(2)

    # The same answer for a second request, a stopped address, an unknown one ...
    for email in (ANN, STOPPED, "nobody@signin.test"):
        again = requests.post(url + "/v1/players/sign-in", json={"email": email}, timeout=60)
        assert (again.status_code, again.content) == (202, asked.content)
    # ... and Bob's request after them: the worker takes jobs in order, so once his mail
    # is written theirs were looked at, and wrote nothing.
    requests.post(url + "/v1/players/sign-in", json={"email": BOB}, timeout=60)
    _wait_sign_in(players, BOB)
    notices = _sign_in_notices(players)
    assert sorted(notices) == [ANN, BOB]
    assert notices[ANN] == ["sent"]
    assert len(_sign_in_mails(players, ANN)) == 1
    assert _sign_in_mails(players, STOPPED) == []

    browser = requests.Session()
    page = browser.get(url + path, timeout=60)
    assert page.status_code == 200 and page.headers["Referrer-Policy"] == "no-referrer"
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    spent = browser.post(
        url + path, data={"csrf": csrf.group(1)}, allow_redirects=False, timeout=60
    )
    assert spent.status_code == 303 and spent.headers["Location"] == "/me"
    assert "signed in as" in browser.get(url + "/me/sign-in", timeout=60).text
    assert ANN in browser.get(url + "/me/sign-in", timeout=60).text
    again = browser.post(url + path, data={"csrf": csrf.group(1)}, timeout=60)
    assert again.status_code == 404 and "not valid (or no longer)" in again.text
    # The access log shows the link with its token cut out.
    token = path.rsplit("/", 1)[1]
    assert token not in players.service.server.output()


def test_a_reply_to_the_sign_in_mail_reaches_no_game(players: MailService) -> None:
    requests.post(players.service.url + "/v1/players/sign-in", json={"email": BOB}, timeout=60)
    mail = _wait_sign_in(players, BOB).mail
    assert mail["Reply-To"] is None
    reply = EmailMessage()
    reply["From"] = BOB
    reply["To"] = str(mail["From"])
    reply["Subject"] = "Re: " + str(mail["Subject"])
    reply["In-Reply-To"] = str(mail["Message-ID"])
    reply.set_content("resign")
    to = mail["From"].addresses[0].addr_spec
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        players.reply(to, reply, BOB)
