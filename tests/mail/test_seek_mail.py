"""What open games tell their players by mail, over real SMTP, PostgreSQL and a worker.

Four players, known from games a trusted client made, signed in, named: Bob
takes a mail per turn and news of new Mandala seeks, Cy a digest, Dee no
mail. Ann's private seek invites all three: Bob is mailed at once, Cy's
digest lists it, Dee hears nothing. Ann's public Mandala seek reaches Bob
in the day's news mail; when Ann withdraws it, Bob (seated) is mailed, Cy
(seated) finds it in her digest. An expired seek mails its seated players.
Every mail names players by their public names and shows no address.
"""

from __future__ import annotations

import time
from datetime import UTC, timedelta
from typing import Any

import requests
from celery import Celery

from referee.service import Referee
from referee.service.digests import hour_of
from referee.service.players import open_session
from referee.service.seeks import expire_seeks
from referee.settings import Settings
from tests.clock import on_server_clock, real_now
from tests.mail.players import html_of, kind, text_of, wait_mail
from tests.mailboxes import MailService, Received
from tests.servers import redis_url
from tests.stacks import Client

ANN, BOB, CY, DEE = (f"seek-{name}@players.test" for name in ("ann", "bob", "cy", "dee"))
NAMES = {ANN: "Ann", BOB: "Bob", CY: "Cy Lee", DEE: "Dee"}


def _signed_in(env: MailService, address: str, settings: dict[str, Any]) -> requests.Session:
    """A browser signed in as `address`, named, with these settings."""
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        with on_server_clock():
            cookie = open_session(referee, address)
    finally:
        referee.close()
    browser = requests.Session()
    browser.cookies.set("player", cookie)
    url = env.service.url
    named = browser.put(f"{url}/v1/me/profile", json={"name": NAMES[address]}, timeout=30)
    assert named.status_code == 200, named.text
    answer = browser.put(f"{url}/v1/me/settings", json=settings, timeout=30)
    assert answer.status_code == 200, answer.text
    return browser


def _words(mail: Received) -> str:
    return "\n".join([str(mail.mail["Subject"]), text_of(mail.mail), html_of(mail.mail)])


def _no_address_in(mail: Received) -> None:
    words = _words(mail)
    assert "@players.test" not in words and "seek-" not in words


def _kinds(env: MailService, address: str) -> list[str]:
    return [kind(mail) for mail in env.mailbox.to(address)]


def test_open_games_tell_their_players_by_their_settings(mail_service: MailService) -> None:
    env = mail_service
    url = env.service.url
    seated = [{"name": n, "email": a} for a, n in NAMES.items()]
    # Dee acts first in her game with Cy: Cy's digest has open games' news alone.
    for pair in (seated[:2], [seated[3], seated[2]]):
        body = {"game": "subdivision", "players": pair}
        assert Client(url).post("/v1/games", body).status_code == 201
    for address in NAMES:
        env.mailbox.wait_for(address, 1, seconds=180)
    # Cy's digest at the coming hour, which the test's own task writes (or, should the
    # hour come meanwhile, the worker's sweep: once either way).
    digest_at = hour_of(real_now()) + timedelta(hours=1, minutes=5)
    ann = _signed_in(env, ANN, {})
    bob = _signed_in(env, BOB, {"seek_news": ["mandala"]})
    cy = _signed_in(env, CY, {"turn_mail": "digest", "digest_hours": [digest_at.hour]})
    _signed_in(env, DEE, {"turn_mail": "off", "seek_news": ["mandala"]})

    invite = {
        "game": "mandala",
        "players": {"min": 2, "max": 5},
        "invite": ["Bob", "Cy Lee", "Dee"],
    }
    private = ann.post(f"{url}/v1/seeks", json=invite, timeout=30)
    assert private.status_code == 201, private.text
    invited = wait_mail(env, BOB, "seek_invited")
    assert str(invited.mail["Subject"]) == "Ann invites you to an open game (Mandala)"
    assert f"/seeks/{private.json()['id']}" in text_of(invited.mail)
    assert "Mandala, 2 to 5 players, 1 seated, posted by Ann" in _words(invited)
    assert invited.mail["Reply-To"] is None and invited.mail["In-Reply-To"] is None
    assert str(invited.mail["Auto-Submitted"]) == "auto-generated"
    _no_address_in(invited)

    public = ann.post(
        f"{url}/v1/seeks", json={"game": "mandala", "players": {"min": 2, "max": 5}}, timeout=30
    )
    assert public.status_code == 201, public.text
    seek_id = public.json()["id"]
    # The worker's sweep (every second) writes Bob's news of the day.
    news = wait_mail(env, BOB, "seek_news")
    assert str(news.mail["Subject"]) == "New open games of Mandala"
    assert f"/seeks/{seek_id}" in text_of(news.mail)
    assert "posted by Ann" in _words(news)
    _no_address_in(news)

    for browser in (bob, cy):
        joined = browser.post(f"{url}/v1/seeks/{seek_id}/join", timeout=30)
        assert joined.status_code == 200, joined.text
    assert ann.delete(f"{url}/v1/seeks/{seek_id}", timeout=30).status_code == 200
    withdrawn = wait_mail(env, BOB, "seek_withdrawn")
    assert str(withdrawn.mail["Subject"]) == "Ann withdrew an open game you had joined (Mandala)"
    assert "3 seated, posted by Ann (no longer open)" in _words(withdrawn)
    _no_address_in(withdrawn)

    app = Celery(broker=redis_url())
    app.send_task(
        "referee.digests", args=[digest_at.isoformat()], queue=env.service.env["REFEREE_QUEUE"]
    )
    digest = wait_mail(env, CY, "digest")
    assert str(digest.mail["Subject"]) == "News of open games"
    text = text_of(digest.mail)
    assert "posted by Ann: you are invited to this private open game." in text
    assert "(no longer open): withdrawn by the player who posted it." in text
    _no_address_in(digest)

    # An expiry, as the periodic sweep finds it: those seated are mailed.
    lonely = bob.post(f"{url}/v1/seeks", json={"game": "mandala"}, timeout=30)
    assert lonely.status_code == 201, lonely.text
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        with on_server_clock():
            later = real_now() + timedelta(days=referee.settings.seek_days, minutes=1)
            assert lonely.json()["id"] in expire_seeks(referee, later.astimezone(UTC))
    finally:
        referee.close()
    expired = wait_mail(env, BOB, "seek_expired")
    assert "An open game you had joined expired" in str(expired.mail["Subject"])
    _no_address_in(expired)

    # Dee, who takes no mail, was told nothing of any of it; Cy nothing but her digest.
    time.sleep(1)
    assert not [k for k in _kinds(env, DEE) if k.startswith("seek_")]
    assert not [k for k in _kinds(env, CY) if k.startswith("seek_")]
    assert _kinds(env, BOB).count("seek_news") == 1
