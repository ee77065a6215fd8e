"""The play-now link over real SMTP, and in Chromium.

tests/mail's stack (PostgreSQL, Redis, `referee serve`, a worker, `referee
mail-in`, the players' aiosmtpd mailbox): a game is played by mail replies
until every seat has had mails of many kinds, and each mail's play-now link
is followed as a fresh browser would. A stranger's invitation, sent by the
service in-process over SMTP to a mailbox of its own, has none. Then
Chromium (Playwright, tests/servers.py) opens an Ice Palace turn mail's link
as a click in a mail reader: the seat's own page, with its hand, no token
in the page or its URL, and a move played on it. Every kind, the refusals and the links' end:
tests/http/test_play_now.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, sync_playwright

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver
from referee.settings import Settings
from referee.store import keys
from tests.live.test_web_browser import FLAGS, GAME_URL
from tests.mail.players import html_of, kind, kinds, reply_to, state_of, text_of, wait_mail
from tests.mailboxes import Mailbox, MailService, Received
from tests.servers import chromium, free_port
from tests.stacks import Client
from tests.tiers import starts_servers

# REFEREE_PUBLIC_URL is left at its default, which the links in mails start with.
PUBLIC = "http://127.0.0.1:8000"
PLAY = re.compile(r"http://127\.0\.0\.1:8000/g/([0-9a-f]{32})/play/([A-Za-z0-9_-]+)")


def create(env: MailService, game: str, tag: str, players: int = 2) -> dict[str, Any]:
    """A trusted game of `players` seats with addresses, once its first mail is out."""
    body = {
        "game": game,
        "players": [{"name": f"P{i}", "email": f"{tag}{i}@players.test"} for i in range(players)],
    }
    answer = Client(env.service.url).post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    # The module's first mail waits for its worker to start, which is slow on a busy machine.
    env.mailbox.wait_for(f"{tag}0@players.test", 1, seconds=180)
    return created


def play_link(mail: Received) -> str:
    """The mail's one play-now link, the same in its text and HTML."""
    in_text = {m.group(0) for m in PLAY.finditer(text_of(mail.mail))}
    in_html = {m.group(0) for m in PLAY.finditer(html_of(mail.mail))}
    assert len(in_text) == 1 and in_text == in_html, (kind(mail), in_text, in_html)
    return in_text.pop()


def here(env: MailService, link: str) -> str:
    """A link of a mail, pointed at this test's server."""
    return env.service.url + link.removeprefix(PUBLIC)


def opened_as(env: MailService, link: str, game_id: str) -> str:
    """Who a fresh browser is on the game page after following `link`."""
    fresh = requests.Session()
    hop = fresh.get(here(env, link), timeout=30)
    assert hop.status_code == 200, hop.text
    assert link.rsplit("/", 1)[1] not in hop.text
    assert hop.headers["Referrer-Policy"] == "no-referrer"
    page = fresh.get(f"{env.service.url}/g/{game_id}", timeout=30).text
    found = re.search(r"You are <strong><bdi>([^<]+)</bdi></strong>", page)
    assert found is not None, page[:2000]
    return found.group(1)


def test_every_mail_of_a_game_by_mail_opens_its_own_seat(mail_service: MailService) -> None:
    env = mail_service
    created = create(env, "subdivision", "playnow-")
    game_id = str(created["id"])
    ann, bob = "playnow-0@players.test", "playnow-1@players.test"
    turn = wait_mail(env, ann, "invitation")
    for body, answered in (("help", "help"), ("board", "board"), ("zz9 top", "refused")):
        reply_to(env, turn, body, ann)
        wait_mail(env, ann, answered)
    token = str(created["seats"][0]["token"])
    legal = Client(env.service.url).get(f"/v1/games/{game_id}/legal-moves", token).json()
    reply_to(env, turn, legal["moves"][0]["notation"], ann)
    wait_mail(env, ann, "answer")
    bob_turn = wait_mail(env, bob, "your_turn")
    reply_to(env, bob_turn, "resign", bob)
    for address in (ann, bob):
        wait_mail(env, address, "game_over")
    reply_to(env, wait_mail(env, ann, "game_over"), "rematch", ann)
    wait_mail(env, ann, "rematch")
    seen: set[str] = set()
    for seat, address in enumerate((ann, bob)):
        links = set()
        for mail in env.mailbox.to(address):
            if str(mail.mail["X-Referee-Game"]) != game_id:
                continue
            seen.update(kinds(mail))
            links.add(play_link(mail))
        # One link per seat, in every one of its mails; it opens that seat.
        (link,) = links
        assert link.startswith(f"{PUBLIC}/g/{game_id}/play/")
        assert opened_as(env, link, game_id) == f"P{seat}"
    assert {"invitation", "help", "board", "refused", "answer", "your_turn"} <= seen
    assert {"game_over", "rematch"} <= seen


@pytest.fixture
@starts_servers
def mailbox() -> Iterator[Mailbox]:
    found = Mailbox(free_port())
    found.start()
    yield found
    found.stop()


def test_a_strangers_invitation_carries_no_play_link(tmp_path: Path, mailbox: Mailbox) -> None:
    """A game made without the API key asks the address to accept, and shows it nothing more."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'referee.sqlite3'}",
        smtp_url=f"smtp://127.0.0.1:{mailbox.port}",
        secret="a test secret",
    )
    referee = Referee(settings)
    referee.db.upgrade()
    try:
        players = [Player("Ann"), Player("Bob", "playnow-stranger@players.test")]
        game_id = create_game(referee, NewGame("subdivision", players, {})).game.id
        deliver(referee, "mail")
        (asking,) = mailbox.wait_for("playnow-stranger@players.test", 1)
    finally:
        referee.close()
    assert kind(asking) == "invitation"
    everything = text_of(asking.mail) + html_of(asking.mail)
    assert "/accept/" in everything
    assert "/play/" not in everything and f"/g/{game_id}" not in everything
    assert keys.play_token(b"a test secret", game_id, 1) not in asking.raw.decode("latin-1")


@pytest.fixture(scope="module")
@starts_servers
def browser() -> Iterator[Browser]:
    with sync_playwright() as driver:
        executable = chromium(driver.chromium.executable_path)
        launched = driver.chromium.launch(executable_path=executable, args=FLAGS, timeout=60_000)
        yield launched
        launched.close()


def test_a_turn_mails_link_opens_the_seat_in_a_fresh_browser(
    mail_service: MailService, browser: Browser
) -> None:
    env = mail_service
    created = create(env, "ice_palace", "palace-", players=3)
    game_id = str(created["id"])
    tokens = [str(seat["token"]) for seat in created["seats"]]
    client = Client(env.service.url)
    # One move by the API, so that the next seat gets a turn mail.
    (first,) = client.get(f"/v1/games/{game_id}").json()["to_act"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", tokens[first]).json()["moves"]
    assert client.move(game_id, tokens[first], {"move": legal[0]["move"]}).status_code == 201
    (seat,) = client.get(f"/v1/games/{game_id}").json()["to_act"]
    turn = wait_mail(env, f"palace-{seat}@players.test", "your_turn")
    link = here(env, play_link(turn))
    hand = state_of(turn.mail)["state"]["hands"][seat]
    assert isinstance(hand, list) and hand

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    # A click in a mail reader: the link comes from another site.
    page.set_content(f'<a id="go" href="{link}">Play now</a>')
    page.click("#go")
    page.wait_for_url(GAME_URL)
    assert page.url == f"{env.service.url}/g/{game_id}"
    assert f"You are P{seat}." in " ".join(page.inner_text("#status").split())
    board = page.text_content("pre.text-board") or ""
    assert "hand: " + " ".join(hand) in board
    assert 'data-place="hand"' in page.content()
    source = page.content()
    for secret in (link.rsplit("/", 1)[1], tokens[seat]):
        assert secret not in source and secret not in page.url
    (cookie,) = [c for c in context.cookies() if c["name"] == "seat"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    # The seat moves from the page it was handed.
    mine = client.get(f"/v1/games/{game_id}/legal-moves", tokens[seat]).json()["moves"]
    page.click("details.as-text summary")  # the board's builder shows it closed
    page.fill("#notation", mine[0]["notation"])
    page.click("form.typed button[type=submit]")
    page.wait_for_url(re.compile(r".*\?sub=.+"))
    assert "was accepted as move 2" in page.inner_text("#answer")
    context.close()
