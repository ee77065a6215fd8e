"""Mail loops: a robot that answers every mail gets a few answers, then silence.

An autoresponder that ignores RFC 3834 (no `Auto-Submitted`, no
`Precedence`, a subject the reader does not know) sends the referee the
same words, over and over. Against the real processes (`referee serve`,
a worker, `referee mail-in`, the players' SMTP server), its words reach the
other seats once (as a person's would: nothing tells them apart yet), never
again; only `REFEREE_MAIL_ANSWERS` answers go out, the last one saying so;
the seat's moves are still played, and another seat's answers are its own.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.mail.players import answer, kind, listed_moves, text_of, wait_mail
from tests.mailboxes import MailService, Received
from tests.shared_stacks import SharedStacks
from tests.stacks import Client
from tests.tiers import starts_servers

ANN, BOB = "ann@robots.test", "bob@robots.test"
CAP = 4
STOPS = "I will not answer further mail about this game from this address until"


@pytest.fixture(scope="module")
@starts_servers
def capped(shared_stacks: SharedStacks) -> MailService:
    return shared_stacks.mail_service(REFEREE_MAIL_ANSWERS=str(CAP))


def robot_reply(env: MailService, turn: Received, number: int) -> None:
    """What an out-of-office program that ignores RFC 3834 sends, once per mail it gets."""
    mail = answer(
        turn,
        "Thank you for your message. I read my mail on Mondays only.",
        ANN,
        message_id=f"<robot-{number}@robots.test>",
    )
    env.reply(str(turn.mail["Reply-To"]), mail, ANN)


def refusals_to(env: MailService, address: str, after: int) -> list[Received]:
    """The answers to replies that played nothing: refused, or of words passed on or not."""
    return [m for m in env.mailbox.to(address)[after:] if kind(m) in ("refused", "passed_on")]


def messages(env: MailService, game: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The game's messages as a seat reads them."""
    token = str(game["seats"][seat]["token"])
    found = Client(env.service.url).get(f"/v1/games/{game['id']}/messages", token)
    assert found.status_code == 200, found.text
    listed: list[dict[str, Any]] = found.json()["messages"]
    return listed


def version(env: MailService, game_id: str) -> int:
    found: int = Client(env.service.url).get(f"/v1/games/{game_id}").json()["version"]
    return found


def test_twenty_robot_replies_get_the_cap_of_answers_and_moves_still_play(
    capped: MailService,
) -> None:
    env = capped
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}],
    }
    game: dict[str, Any] = Client(env.service.url).post("/v1/games", body).json()
    turn = wait_mail(env, ANN, "your_turn", 0)
    before = len(env.mailbox.to(ANN))

    for number in range(20):
        robot_reply(env, turn, number)
    wait_mail(env, ANN, "passed_on", after=before)
    deadline = time.monotonic() + 30
    while len(refusals_to(env, ANN, before)) < CAP and time.monotonic() < deadline:
        time.sleep(0.05)
    # Time for any answer past the cap to be wrongly written and sent.
    time.sleep(3)
    answers = refusals_to(env, ANN, before)
    assert len(answers) == CAP
    texts = [text_of(found.mail) for found in answers]
    assert all(STOPS not in text for text in texts[:-1])
    last = " ".join(texts[-1].split())
    assert STOPS in last and "still read and played" in last
    # When answers resume, in the reader's zone (UTC: Ann chose none) and how far off.
    assert re.search(r"until \w{3}, \w{3} \d+, \d+:\d\d [AP]M UTC \(in 1 day\)", last), last
    # Every reply was taken and logged, none lost: the ones past the cap say so.
    lines = [line for line in env.inbound.output().splitlines() if "from=" + ANN in line]
    assert len(lines) == 20
    assert sum("past the answer cap" in line for line in lines) == 20 - CAP
    # Its words reached Bob once: the first reply's, as a person's would have.
    said = [found["text"] for found in messages(env, game, 1)]
    assert said == ["Thank you for your message. I read my mail on Mondays only."]
    assert "passed on to the other players" in texts[0]
    assert all("not passed on" in text for text in texts[1:])

    # The cap is on answers, not on moves: Ann's move is played, and answered.
    move = listed_moves(text_of(turn.mail))[0]
    before = len(env.mailbox.to(ANN))
    env.reply(str(turn.mail["Reply-To"]), answer(turn, move, ANN, "<ann-move@robots.test>"), ANN)
    played = wait_mail(env, ANN, "answer", after=before)
    assert f'Your move "{move}" was' in text_of(played.mail)
    assert version(env, game["id"]) == 1

    # Another seat's answers are its own.
    bob_turn = wait_mail(env, BOB, "your_turn", 1)
    before = len(env.mailbox.to(BOB))
    words = answer(bob_turn, "what a game", BOB, "<bob-1@robots.test>")
    env.reply(str(bob_turn.mail["Reply-To"]), words, BOB)
    bobs = wait_mail(env, BOB, "passed_on", after=before)
    assert STOPS not in text_of(bobs.mail)
