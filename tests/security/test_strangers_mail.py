"""No stranger can make the referee mail an address that never asked.

Real processes: PostgreSQL, Redis, `referee serve`, a worker, `referee
mail-in` and the players' aiosmtpd mailbox (tests/mailboxes.py). The
server has an API key; a "stranger" is a client that does not send it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
import requests

from referee import games
from referee.delivery.compose import PICTURE_ZOOM
from referee.record import loads
from referee.render import render_png
from referee.replay import replay
from tests.live.test_games_http import solve
from tests.mail import players
from tests.mail.players import answer, html_of, kind, reply_to, text_of, wait_mail
from tests.mail.test_deadlines import sweep
from tests.mailboxes import DOMAIN, Mailbox, MailService, Received, mail_env, start_mail_in
from tests.servers import free_port
from tests.stacks import ALL_ROLES, Client, Service, start_server
from tests.tiers import starts_servers

pytestmark = pytest.mark.long

LINK = re.compile(r"https?://[^\s\"<>]+/g/([0-9a-f]{32})/seat/([A-Za-z0-9_-]+)")
ACCEPT = re.compile(r"https?://[^\s\"<>]+/accept/[a-z0-9]+")


@pytest.fixture(scope="module")
@starts_servers
def mail_service(
    pg_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MailService]:
    """tests/mail's stack (API, worker, `referee mail-in`, mailbox), without an API key."""
    tmp = tmp_path_factory.mktemp("strangers")
    mailbox = Mailbox(free_port())
    mailbox.start()
    env = mail_env(pg_database, mailbox.port)
    del env["REFEREE_API_KEY"]
    url, server = start_server(env, tmp)
    service = Service(url, pg_database, env, tmp, server)
    worker = service.start_worker(wait=False)
    port, inbound = start_mail_in(env, tmp / "mail-in.log")
    worker.wait_ready(workers=ALL_ROLES)
    SERVER[:] = [url]
    yield MailService(service, mailbox, port, inbound)
    service.stop(inbound)
    mailbox.stop()


def stranger_creates(env: MailService, players: list[dict[str, str]]) -> dict[str, Any]:
    """A game made without the API key, as anyone on the internet may."""
    body = {"game": "subdivision", "players": players}
    made = requests.post(env.service.url + "/v1/games", json=body, timeout=30)
    assert made.status_code == 201, made.text
    created: dict[str, Any] = made.json()
    return created


def settled(env: MailService, game_id: str, seconds: float = 30) -> None:
    """Wait until every delivery of the game is done (sent, or skipped: nowhere to go)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with psycopg.connect(env.service.database_url) as conn:
            left = conn.execute(
                "SELECT count(*) FROM delivery d JOIN outbox o ON o.id = d.notice_id"
                " WHERE o.game_id = %s AND d.status IN ('pending', 'sending')",
                (game_id,),
            ).fetchone()
        if left is not None and left[0] == 0:
            time.sleep(0.5)  # a mail sent at the last moment arrives now
            return
        time.sleep(0.1)
    raise AssertionError(f"the outbox of {game_id} was not settled")


def state_of(env: MailService, address: str) -> str | None:
    with psycopg.connect(env.service.database_url) as conn:
        found = conn.execute("SELECT state FROM address WHERE address = %s", (address,)).fetchone()
    return None if found is None else str(found[0])


def kinds(mails: list[Received]) -> list[str]:
    """The kinds of every notice the mails tell (one mail may tell several), in order."""
    return players.told(mails)


# REFEREE_PUBLIC_URL is left at its default, which the links in mails start with.
PUBLIC = "http://127.0.0.1:8000"
SERVER: list[str] = []


def here(link: str) -> str:
    """A link of a mail, pointed at this test's server."""
    assert link.startswith(PUBLIC + "/"), link
    return SERVER[0] + link.removeprefix(PUBLIC)


def unsubscribe_url(mail: Received) -> str:
    header = " ".join(str(mail.mail["List-Unsubscribe"]).split())
    found = re.match(
        r"<(https?://[^>]+/unsubscribe/[a-z0-9]+)>, <mailto:(stop\+[a-z0-9]+@.+)>$", header
    )
    assert found is not None, header
    assert str(mail.mail["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
    return here(found.group(1))


def accept_url(mail: Received) -> str:
    found = ACCEPT.search(text_of(mail.mail))
    assert found is not None, text_of(mail.mail)
    return here(found.group(0))


def personal_link(mail: Received) -> tuple[str, str]:
    found = LINK.search(text_of(mail.mail))
    assert found is not None, text_of(mail.mail)
    return found.group(1), found.group(2)


def play_first_move(env: MailService, game_id: str, token: str) -> None:
    client = Client(env.service.url)
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
    made = client.move(game_id, token, {"move": legal[0]["move"]})
    assert made.status_code == 201, made.text


def test_a_strangers_game_mails_one_invitation_and_nothing_more(mail_service: MailService) -> None:
    env = mail_service
    bob = "bob-quiet@players.test"
    phishing = "Ann. Log in at https://evil.example/login now to claim your prize!"
    created = stranger_creates(env, [{"name": phishing}, {"name": "Bob", "email": bob}])
    game_id = created["id"]
    # The creator gets the token of the seat without mail, not Bob's.
    assert created["seats"][0]["token"]
    assert created["seats"][1]["token"] is None
    # Ann (no mail) plays: Bob is to move, which would mail him a your-turn.
    play_first_move(env, game_id, created["seats"][0]["token"])
    settled(env, game_id)
    mails = env.mailbox.to(bob)
    assert kinds(mails) == ["invitation"]
    invitation = mails[0]
    text, html = text_of(invitation.mail), html_of(invitation.mail)
    assert "accept" in str(invitation.mail["Subject"])
    assert str(invitation.mail["To"]) == bob  # no name typed by the stranger
    # The stranger's words are quoted plainly: no link, no dot, cut short.
    assert "evil.example" not in text and "evil.example" not in html
    assert all("evil" not in href for href in re.findall(r'href="([^"]*)"', html))
    assert '"Ann Log in at https evil example' in text
    assert LINK.search(text) is None  # no personal link before accepting
    assert accept_url(invitation).startswith(env.service.url + "/accept/")
    unsubscribe_url(invitation)
    assert state_of(env, bob) == "invited"


def test_accepting_by_link_needs_a_post_and_brings_the_personal_link(
    mail_service: MailService,
) -> None:
    env = mail_service
    cleo = "Cleo@Players.test"
    created = stranger_creates(env, [{"name": "Ann"}, {"name": "Cleo", "email": cleo}])
    game_id = created["id"]
    invitation = env.mailbox.wait_for(cleo, 1)[0]
    url = accept_url(invitation)
    # A mail scanner following the link accepts nothing.
    shown = requests.get(url, timeout=30)
    assert shown.status_code == 200 and 'method="post"' in shown.text
    assert shown.headers["Referrer-Policy"] == "no-referrer"
    settled(env, game_id)
    assert state_of(env, cleo.lower()) == "invited"
    assert len(env.mailbox.to(cleo)) == 1
    assert requests.post(url, timeout=30).status_code == 200
    assert state_of(env, cleo.lower()) == "accepted"
    full = env.mailbox.wait_for(cleo, 2)[1]
    assert kinds([full]) == ["invitation"]
    linked_game, token = personal_link(full)
    assert linked_game == game_id
    # The link is Cleo's seat, and only Cleo's mail carried it.
    seat = Client(env.service.url).get(f"/v1/games/{game_id}/legal-moves", token).json()
    assert seat["seat"] == 1
    # From now on Cleo's game mails her: Ann moves, Cleo gets her turn.
    play_first_move(env, game_id, created["seats"][0]["token"])
    turn = env.mailbox.wait_for(cleo, 3)[2]
    assert kinds([turn]) == ["your_turn"]
    assert LINK.search(text_of(turn.mail)) is None  # the link went out once
    # A second POST changes nothing and sends nothing more.
    assert requests.post(url, timeout=30).status_code == 200
    settled(env, game_id)
    assert len(env.mailbox.to(cleo)) == 3


def test_accepting_by_reply(mail_service: MailService) -> None:
    env = mail_service
    dan = "dan@players.test"
    created = stranger_creates(env, [{"name": "Ann"}, {"name": "Dan", "email": dan}])
    invitation = env.mailbox.wait_for(dan, 1)[0]
    env.reply(str(invitation.mail["Reply-To"]), answer(invitation, "accept", dan), dan)
    full = env.mailbox.wait_for(dan, 2)[1]
    assert personal_link(full)[0] == created["id"]
    assert state_of(env, dan) == "accepted"


def test_a_second_game_does_not_invite_again_within_the_window(mail_service: MailService) -> None:
    env = mail_service
    eve = "eve@players.test"
    first = stranger_creates(env, [{"name": "Ann"}, {"name": "Eve", "email": eve}])
    second = stranger_creates(env, [{"name": "Mallory"}, {"name": "Eve", "email": eve}])
    settled(env, first["id"])
    settled(env, second["id"])
    assert kinds(env.mailbox.to(eve)) == ["invitation"]
    # Accepting once brings the personal link of each game she is in.
    requests.post(accept_url(env.mailbox.to(eve)[0]), timeout=30)
    mails = env.mailbox.wait_for(eve, 3)
    assert {personal_link(m)[0] for m in mails[1:]} == {first["id"], second["id"]}


def accepted_game(env: MailService, address: str) -> tuple[dict[str, Any], list[Received]]:
    """A stranger's game whose mailed seat (1) accepted: its mails so far."""
    created = stranger_creates(env, [{"name": "Ann"}, {"name": "Fay", "email": address}])
    requests.post(accept_url(env.mailbox.wait_for(address, 1)[0]), timeout=30)
    return created, env.mailbox.wait_for(address, 2)


def test_one_click_unsubscribe_stops_every_later_mail(mail_service: MailService) -> None:
    env = mail_service
    fay = "fay@players.test"
    created, mails = accepted_game(env, fay)
    # Every mail can stop the referee's mail: the invitation asking and the full one.
    assert unsubscribe_url(mails[0]) == unsubscribe_url(mails[1])
    url = unsubscribe_url(mails[1])
    # A GET only asks.
    page = requests.get(url, timeout=30)
    assert page.status_code == 200 and 'method="post"' in page.text
    assert state_of(env, fay) == "accepted"
    # RFC 8058: the mail program POSTs this body; nothing else is asked.
    stopped = requests.post(url, data={"List-Unsubscribe": "One-Click"}, timeout=30)
    assert stopped.status_code == 200
    assert state_of(env, fay) == "stopped"
    play_first_move(env, created["id"], created["seats"][0]["token"])
    again = stranger_creates(env, [{"name": "Ann"}, {"name": "Fay", "email": fay}])
    settled(env, created["id"])
    settled(env, again["id"])
    assert len(env.mailbox.to(fay)) == 2
    # Accepting again (the accept link of any invitation) starts the mail again:
    # the seat of the game made while stopped gets its invitation and link.
    assert requests.post(accept_url(mails[0]), timeout=30).status_code == 200
    assert state_of(env, fay) == "accepted"
    assert personal_link(env.mailbox.wait_for(fay, 3)[2])[0] == again["id"]


def test_the_mailto_unsubscribe_stops_the_address(mail_service: MailService) -> None:
    env = mail_service
    hal = "hal@players.test"
    created, mails = accepted_game(env, hal)
    invitation = mails[1]
    mailto = re.search(r"<mailto:([^>]+)>", str(invitation.mail["List-Unsubscribe"]))
    assert mailto is not None and mailto.group(1).endswith("@" + DOMAIN)
    env.reply(mailto.group(1), b"Subject: unsubscribe\r\n\r\nunsubscribe\r\n", hal)
    assert state_of(env, hal) == "stopped"
    before = len(env.mailbox.to(hal))
    play_first_move(env, created["id"], created["seats"][0]["token"])
    settled(env, created["id"])
    assert len(env.mailbox.to(hal)) == before


def test_unknown_tokens_find_nothing(mail_service: MailService) -> None:
    url = mail_service.service.url
    for path in ("/accept/", "/unsubscribe/"):
        for token in ("a" * 40, "nope", "x" * 300):
            assert requests.get(url + path + token, timeout=30).status_code == 404
            assert requests.post(url + path + token, timeout=30).status_code == 404


def test_the_lobby_shows_no_link_of_a_seat_with_mail(mail_service: MailService) -> None:
    url = mail_service.service.url
    browser = requests.Session()
    form = browser.get(url + "/new/subdivision", timeout=30).text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    fields = {
        "csrf": csrf.group(1),
        "name-0": "Ann",
        "name-1": "Ivy",
        "email-1": "ivy@players.test",
    }
    page = browser.post(url + "/new/subdivision", data=fields, headers={"Origin": url}, timeout=30)
    assert page.status_code == 201, page.text
    assert len(re.findall(r"/seat/", page.text)) == 1
    assert 'data-seat="1"' in page.text and "invited by mail" in page.text.lower()


# A stranger's names, typed to look like the referee's own words.
LURE = "Mandala: Support: your seat expires, re-login at https://evil.example/login and"
VICTIM = "Bob <admin@evil.example> see www.evil.example"
# As every mail of that game quotes them: plain words, cut at 32 characters.
LURE_QUOTED = "Mandala Support your seat expire"
VICTIM_QUOTED = "Bob admin evil example see www e"
MANIKI = games.get("maniki")
EVERY_KIND = {
    "invitation",
    "your_turn",
    "help",
    "board",
    "refused",
    "reminder",
    "answer",
    "round_over",
    "game_over",
}


def picture_of(mail: Received) -> bytes:
    """The board picture the HTML part shows."""
    for part in mail.mail.walk():
        if part.get_content_type() == "image/png":
            found = part.get_content()
            assert isinstance(found, bytes)
            return found
    raise AssertionError("no picture in the mail")


def check_quoted_plainly(mail: Received, game_id: str, states: tuple[Any, ...]) -> None:
    """No word of the stranger's but plain ones, in every part of one mail."""
    subject, text, html = str(mail.mail["Subject"]), text_of(mail.mail), html_of(mail.mail)
    shown = "\n".join((subject, str(mail.mail["To"]), text, html))
    for typed in ("evil.example", "https:", "admin@", "<admin", "www."):
        assert typed not in shown
    assert all(href.startswith(PUBLIC) for href in re.findall(r'href="([^"]*)"', html))
    assert subject == f"MaNiKi: {LURE_QUOTED} and {VICTIM_QUOTED} (game {game_id[:8]})"
    assert text.startswith(f"Hello {VICTIM_QUOTED},") and f"Hello {VICTIM_QUOTED}," in html
    view = players.state_of(mail.mail)["state"]
    # The picture is drawn with the quoted names, not the typed ones (the last move
    # marked against Bob's view a move earlier).
    at = players.version(mail)
    before = None if at == 0 else MANIKI.view(states[at - 1], 1)
    names = [LURE_QUOTED, VICTIM_QUOTED]
    drawn = render_png("maniki", view, names, zoom=PICTURE_ZOOM, before=before)
    assert picture_of(mail) == drawn


def test_a_strangers_later_game_quotes_its_names_plainly_in_every_mail(
    mail_service: MailService,
) -> None:
    env = mail_service
    bob = "bob-plain@players.test"
    # Bob accepted one game: from now on any stranger's game naming him mails him.
    accepted_game(env, bob)
    body = {
        "game": "maniki",
        "players": [{"name": LURE}, {"name": VICTIM, "email": bob}],
        "options": {"mode": "sealed"},
        "deadline": "72h",
        "on_timeout": "pass",
    }
    made = requests.post(env.service.url + "/v1/games", json=body, timeout=30)
    assert made.status_code == 201, made.text
    created = made.json()
    game_id, lure_token = created["id"], created["seats"][0]["token"]
    client = Client(env.service.url)
    seen = len(env.mailbox.to(bob))
    turn = wait_mail(env, bob, "your_turn", 0, after=seen)
    for command in ("help", "board", "take 99"):
        reply_to(env, turn, command, bob)
    for wanted in ("help", "board", "refused"):
        wait_mail(env, bob, wanted, after=seen)
    summary = client.get(f"/v1/games/{game_id}").json()
    due = datetime.fromisoformat(summary["deadlines"]["due_at"])
    sweep(env, due - timedelta(hours=10))
    wait_mail(env, bob, "reminder", after=seen)
    # The stranger solves the card; Bob's time runs out: the referee passes for him.
    view = client.get(f"/v1/games/{game_id}/state").json()["state"]
    solved = client.move(
        game_id, lure_token, {"notation": " ".join(solve(view["position"], view["target"]))}
    )
    assert solved.status_code == 201, solved.text
    sweep(env, due + timedelta(minutes=1))
    round_over = wait_mail(env, bob, "round_over", after=seen)
    # The next card's turn comes after the round's end; Bob answers it by mail.
    next_turn = wait_mail(env, bob, "your_turn", after=env.mailbox.to(bob).index(round_over))
    reply_to(env, next_turn, "pass", bob)
    answered = wait_mail(env, bob, "answer", after=env.mailbox.to(bob).index(next_turn))
    assert '"pass"' in text_of(answered.mail)
    resigned = requests.post(
        f"{env.service.url}/v1/games/{game_id}/resign", headers=Client.auth(lure_token), timeout=30
    )
    assert resigned.ok, resigned.text
    wait_mail(env, bob, "game_over", after=seen)
    settled(env, game_id)

    mails = [m for m in env.mailbox.to(bob)[seen:] if str(m.mail["X-Referee-Game"]) == game_id]
    assert set(kinds(mails)) == EVERY_KIND
    timed_out = [m for m in mails if "Time ran out" in text_of(m.mail)]
    # The answer first: the round's end and the next card come in the same mail.
    assert [kinds([m])[0] for m in timed_out] == ["answer"]
    states = replay(loads(requests.get(f"{env.service.url}/v1/games/{game_id}/log.jsonl").text))
    for mail in mails:
        if kind(mail) == "help":
            # The only mail without a board: the words around it are checked.
            assert "evil." not in text_of(mail.mail) + html_of(mail.mail)
            continue
        check_quoted_plainly(mail, game_id, states.states)
