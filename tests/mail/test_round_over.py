"""The round-over mail: a MaNiKi card decided by REST moves reaches every seat with an
address once, with that seat's view of the result, and nothing sealed before it."""

from __future__ import annotations

from typing import Any

from referee.record import loads
from referee.replay import replay
from tests.live.test_games_http import solve
from tests.mail.players import html_of, state_of, text_of, version, wait_mail
from tests.mail.players import kinds as told_in
from tests.mail.test_games_by_mail import SEAT_PART, _check_one
from tests.mailboxes import MailService, Received
from tests.stacks import Client

# Seat 2 plays by REST only: it has no address.
EMAILS = ["round-p0@players.test", "round-p1@players.test", None]


def kinds(env: MailService, to: str, wanted: str) -> list[Received]:
    """The mails to `to` telling a notice of kind `wanted`."""
    return [mail for mail in env.mailbox.to(to) if wanted in told_in(mail)]


def accepted(client: Client, game_id: str, token: str, notation: str) -> None:
    answer = client.move(game_id, token, {"notation": notation})
    assert answer.status_code == 201, answer.text
    decided = client.wait_decided(answer.json()["submission"]["id"], token)
    assert decided["status"] == "accepted", decided


def test_a_won_sealed_card_mails_each_seat_one_round_over_with_the_winner(
    mail_service: MailService,
) -> None:
    env = mail_service
    client = Client(env.service.url)
    body = {
        "game": "maniki",
        "players": [
            {"name": f"P{i}", **({"email": email} if email else {})}
            for i, email in enumerate(EMAILS)
        ],
        "options": {"mode": "sealed"},
    }
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    addresses = [email for email in EMAILS if email]
    for to in addresses:
        wait_mail(env, to, "your_turn", 0)

    view = client.get(f"/v1/games/{game_id}/state").json()["state"]
    sequence = " ".join(solve(view["position"], view["target"]))
    accepted(client, game_id, tokens[0], sequence)
    accepted(client, game_id, tokens[1], "pass")
    # Undecided: nobody hears of a round yet.
    assert all(not kinds(env, to, "round_over") for to in addresses)
    accepted(client, game_id, tokens[2], "pass")
    for to in addresses:
        wait_mail(env, to, "your_turn", 3)

    for seat, to in enumerate(addresses):
        overs = kinds(env, to, "round_over")
        assert len(overs) == 1, [told_in(m) for m in env.mailbox.to(to)]
        # The round's end and the next card are one mail.
        assert told_in(overs[0]) == ["round_over", "your_turn"]
        mail = overs[0]
        assert version(mail) == 3
        assert "A round of MaNiKi" in text_of(mail.mail)
        text, html = text_of(mail.mail), html_of(mail.mail)
        assert text.startswith(f"Hello P{seat},")
        assert "winner: P0" in text and "winner: P0" in html
        assert f"sequence: {sequence}" in text
        last = state_of(mail.mail)["state"]["last_round"]
        assert last["winner"] == 0 and last["sequence"] == sequence
        assert f"shortest: {last['shortest']}" in text
        assert "score of P0: 1" in text
        # The round is decided, so its moves are shown, not sealed.
        assert f"1. P0: {sequence}" in text

    # A later move that ends no round and the game's end (resigns) bring no more.
    accepted(client, game_id, tokens[0], "pass")
    accepted(client, game_id, tokens[1], "resign")
    accepted(client, game_id, tokens[2], "resign")
    overs = [wait_mail(env, to, "game_over") for to in addresses]
    for to in addresses:
        assert len(kinds(env, to, "round_over")) == 1
        assert len(kinds(env, to, "game_over")) == 1

    # Every mail of the game holds its seat's view only (the secrets check).
    record = loads(client.get(f"/v1/games/{game_id}/log.jsonl").text)
    seed = record.header.seed
    assert seed is not None and all(seed in text_of(m.mail) for m in overs)
    replayed = replay(record)
    reply_tokens = {
        seat: str(env.mailbox.to(to)[0].mail["Reply-To"]).split("+")[1][:SEAT_PART]
        for seat, to in enumerate(addresses)
    }
    for seat, to in enumerate(addresses):
        for mail in env.mailbox.to(to):
            _check_one(mail, replayed.game, replayed.states, seat, 3, seed, tokens, reply_tokens)
