"""The turn mail on a phone: a real MaNiKi turn mail, rendered in headless Chromium.

The mail comes from the real stack (`referee serve`, a worker, SMTP to the
players' mailbox). Its HTML part is shown as a mail program shows it: the
picture its `cid:` names is put in place, at 390 px (a phone) and at
1280 px. Nothing may overflow the phone's width and the whole picture
(MaNiKi's target card is at its right) must be in view. Screenshots go to
a folder of the run's own under `var/artifacts/mail/` (not committed).
"""

from __future__ import annotations

import base64
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from tests.mail.players import html_of, text_of, wait_mail
from tests.mailboxes import MailService, Received
from tests.servers import chromium
from tests.stacks import Client
from tests.tiers import starts_servers

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "mail"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
@starts_servers
def browser() -> Iterator[Browser]:
    driver: Playwright
    with sync_playwright() as driver:
        executable = chromium(driver.chromium.executable_path)
        launched = driver.chromium.launch(executable_path=executable, args=FLAGS, timeout=60_000)
        yield launched
        launched.close()


def turn_mail(env: MailService) -> Received:
    players = [{"name": "Ann", "email": "phone-0@players.test"}, {"name": "Bob"}]
    made = Client(env.service.url).post("/v1/games", {"game": "maniki", "players": players})
    assert made.status_code == 201, made.text
    return wait_mail(env, "phone-0@players.test", "your_turn", 0)


def parts(mail: Received) -> list[tuple[str, str | None, Any]]:
    """Each leaf part: its type, its Content-Disposition, and the part."""
    return [
        (part.get_content_type(), part.get_content_disposition(), part)
        for part in mail.mail.walk()
        if not part.is_multipart()
    ]


def as_shown(mail: Received) -> str:
    """The HTML part with its `cid:` picture in place, as a mail program shows it."""
    html = html_of(mail.mail)
    for kind, _, part in parts(mail):
        if kind == "image/png":
            cid = str(part["Content-ID"]).strip("<>")
            data = base64.b64encode(part.get_content()).decode()
            html = html.replace(f"cid:{cid}", f"data:image/png;base64,{data}")
    return html


def test_the_picture_is_inline_only_and_the_html_says_how_to_answer(
    mail_service: MailService,
) -> None:
    mail = turn_mail(mail_service)
    found = parts(mail)
    pictures = [(disposition, part) for kind, disposition, part in found if kind == "image/png"]
    assert len(pictures) == 1
    disposition, picture = pictures[0]
    assert disposition == "inline"
    html = html_of(mail.mail)
    assert f'src="cid:{str(picture["Content-ID"]).strip("<>")}"' in html
    # The one attachment is the seat's state as JSON.
    attached = [part.get_filename() for _, how, part in found if how == "attachment"]
    assert attached == ["state.json"]
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    assert "To play, reply to this mail with your move at the top of your answer" in said


def test_the_turn_mail_fits_a_phone_with_the_whole_picture_in_view(
    mail_service: MailService, browser: Browser
) -> None:
    shown = as_shown(turn_mail(mail_service))
    folder = ARTIFACTS / time.strftime(f"%Y%m%d-%H%M%S-{os.getpid()}")
    folder.mkdir(parents=True, exist_ok=True)
    for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=size, java_script_enabled=True)
        page = context.new_page()
        page.set_content(shown, wait_until="load")
        page.screenshot(path=folder / f"turn-mail-{name}.png", full_page=True)
        measured = page.evaluate(
            """() => {
                const img = document.querySelector("img");
                const box = img.getBoundingClientRect();
                return {
                    page: document.documentElement.scrollWidth,
                    loaded: img.complete && img.naturalWidth > 0,
                    natural: [img.naturalWidth, img.naturalHeight],
                    box: [box.left, box.right, box.width, box.height],
                };
            }"""
        )
        context.close()
        left, right, width, height = measured["box"]
        natural_width, natural_height = measured["natural"]
        assert measured["loaded"]
        assert measured["page"] <= size["width"], measured
        # All of the picture is in view, scaled as a whole (not cropped, not squashed).
        assert left >= 0 and right <= size["width"], measured
        assert abs(height - width * natural_height / natural_width) < 2, measured
        if size is DESKTOP:
            assert width == natural_width  # shown at its own size where it fits
        else:
            assert width >= size["width"] - 40  # as wide as the phone allows


SHOTS = Path("/work/shots/harden")
# What a phone's mail program shows in a line at 390 px, in a monospace font.
PHONE_COLUMNS = 40


@pytest.mark.parametrize("game", ["mandala", "ice_palace", "subdivision"])
def test_no_line_of_the_turn_mails_html_is_wider_than_a_phone(
    mail_service: MailService, browser: Browser, game: str
) -> None:
    # The HTML part draws the board as a picture scaled to the screen; the text board,
    # a grid up to 72 columns wide, is the plain-text part's alone.
    count = 3 if game == "ice_palace" else 2
    addresses = [f"narrow-{game}-{n}@players.test" for n in range(count)]
    names = ("Ann", "Bob", "Cy")[:count]
    players = [{"name": name, "email": a} for name, a in zip(names, addresses, strict=True)]
    made = Client(mail_service.service.url).post("/v1/games", {"game": game, "players": players})
    assert made.status_code == 201, made.text
    game_id = made.json()["id"]
    to_act = Client(mail_service.service.url).get(f"/v1/games/{game_id}").json()["to_act"]
    mail = wait_mail(mail_service, addresses[to_act[0]], "your_turn", 0)
    html = html_of(mail.mail)
    assert "<pre" not in html
    assert 'src="cid:' in html
    assert max(len(line) for line in text_of(mail.mail).splitlines()) > PHONE_COLUMNS
    shown = as_shown(mail)
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=PHONE, java_script_enabled=True)
    page = context.new_page()
    page.set_content(shown, wait_until="load")
    page.screenshot(path=SHOTS / f"turn-mail-{game}-390.png", full_page=True)
    measured = page.evaluate(
        """() => ({
            page: document.documentElement.scrollWidth,
            scrolled: [...document.querySelectorAll("body *")]
                .filter((e) => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
                .map((e) => e.tagName),
            preformatted: [...document.querySelectorAll("pre")]
                .flatMap((e) => e.textContent.split("\\n"))
                .filter((line) => line.length > 40),
        })"""
    )
    context.close()
    assert measured["page"] <= PHONE["width"], measured
    assert measured["scrolled"] == [] and measured["preformatted"] == [], measured
