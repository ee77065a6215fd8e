"""Rematch by mail, against the real stack (API, worker, `referee mail-in`, SMTP).

A `rematch` reply to a game in play is refused; the game-over mail says how
to play again; the first seat's `rematch` is answered with whom it waits
for; the last seat's starts the new game, whose invitation reaches both.
"""

from __future__ import annotations

import re

from tests.mail.players import reply_to, text_of, told, wait_mail
from tests.mailboxes import MailService
from tests.stacks import Client

ANN, BOB = "ann@players.test", "bob@players.test"


def _count(env: MailService, to: str) -> int:
    return len(env.mailbox.to(to))


def test_a_rematch_by_mail_starts_when_both_reply(mail_service: MailService) -> None:
    client = Client(mail_service.service.url)
    body = {
        "game": "subdivision",
        "players": [{"name": "Ann", "email": ANN}, {"name": "Bob", "email": BOB}],
    }
    game_id = client.post("/v1/games", body).json()["id"]
    turn = wait_mail(mail_service, ANN, "your_turn", 0)
    bob_invited = wait_mail(mail_service, BOB, "invitation")

    before = _count(mail_service, ANN)
    reply_to(mail_service, turn, "rematch", ANN)
    refused = wait_mail(mail_service, ANN, "refused", after=before)
    assert "a rematch is offered once the game is over" in " ".join(text_of(refused.mail).split())

    reply_to(mail_service, bob_invited, "resign", BOB)
    over = wait_mail(mail_service, ANN, "game_over")
    assert re.search(r'To play again .* reply\s+"rematch"', text_of(over.mail), re.S)
    bob_over = wait_mail(mail_service, BOB, "game_over")

    before = _count(mail_service, ANN)
    reply_to(mail_service, over, "Rematch!", ANN)
    waiting = wait_mail(mail_service, ANN, "rematch", after=before)
    assert "waiting for Bob" in text_of(waiting.mail)
    assert client.get(f"/v1/games/{game_id}/rematch").json()["accepted"] == [0]

    before_ann, before_bob = _count(mail_service, ANN), _count(mail_service, BOB)
    reply_to(mail_service, bob_over, "rematch", BOB)
    invited = [
        wait_mail(mail_service, ANN, "invitation", after=before_ann),
        wait_mail(mail_service, BOB, "invitation", after=before_bob),
    ]
    new_id = client.get(f"/v1/games/{game_id}/rematch").json()["game_id"]
    assert new_id and new_id != game_id
    assert [str(mail.mail["X-Referee-Game"]) for mail in invited] == [new_id, new_id]
    # Bob's reply started the game: no "rematch" answer for it, only the invitation.
    assert "rematch" not in told(mail_service.mailbox.to(BOB)[before_bob:])
    new = client.get(f"/v1/games/{new_id}").json()
    assert (new["game"], [s["name"] for s in new["seats"]]) == ("subdivision", ["Ann", "Bob"])
