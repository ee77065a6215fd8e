"""A whole game of every registered game, played only by mail replies.

PostgreSQL, Redis, `referee serve`, a worker sending over SMTP and the
`referee mail-in` listener are real processes; the players read their turn
mails from a real SMTP server and answer by SMTP. The API is only read (to
know when the game is over). After the game every mail each seat received
is checked against the replayed record: it holds exactly that seat's view,
no other seat's board lines, no undecided sealed move, no token and no
seed before the end.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee import games
from referee.record import loads
from referee.render import render_text
from referee.replay import envelope, replay
from referee.rng import commitment
from tests.mail.players import (
    address,
    choose,
    html_of,
    kind,
    kinds,
    reply_to,
    state_of,
    text_of,
    told,
    turn_mail,
    version,
    wait_mail,
)
from tests.mailboxes import MailService, Received
from tests.stacks import Client

pytestmark = pytest.mark.long

# The letters of a reply token that name the game and the seat; the rest
# (the version the mail shows, and the MAC) changes from mail to mail.
SEAT_PART = 28

# Each game: players, options, and how many moves are made by mail before
# the seats to act resign one by one (a whole game where it is short).
GAMES: list[tuple[str, int, dict[str, Any], int]] = [
    ("subdivision", 2, {}, 14),
    ("mandala", 2, {}, 14),
    ("mandala_stones", 2, {}, 10),
    ("maniki", 2, {"mode": "sealed"}, 12),
    ("ice_palace", 3, {}, 12),
]


def test_every_registered_game_is_covered() -> None:
    assert sorted(name for name, *_ in GAMES) == games.names()


def play_by_mail(
    env: MailService, game: str, players: int, options: dict[str, Any], moves: int
) -> tuple[str, dict[str, Any]]:
    client = Client(env.service.url)
    body = {
        "game": game,
        "players": [{"name": f"P{i}", "email": address(game, i)} for i in range(players)],
        "options": options,
    }
    answer = client.post("/v1/games", body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    game_id = created["id"]
    for seat in range(players):
        wait_mail(env, address(game, seat), "invitation")
    for turn in range(400):
        summary = client.get(f"/v1/games/{game_id}").json()
        if summary["status"] == "over":
            return game_id, created
        at, to_act = summary["version"], summary["to_act"]
        seat = to_act[turn % len(to_act)]
        to = address(game, seat)
        card = None
        if game == "maniki":
            card = client.get(f"/v1/games/{game_id}/state").json()["state"]["deck_left"]
        mail = turn_mail(env, to, at, card)
        assert text_of(mail.mail).startswith(f"Hello P{seat},")
        move = "resign" if turn >= moves else choose(game, mail.mail, turn)
        before = len(env.mailbox.to(to))
        reply_to(env, mail, move, to)
        answered = text_of(wait_mail(env, to, "answer", after=before).mail)
        assert f'Your move "{move}" was accepted' in answered or move != "resign", answered
        # Accepted; a move with more to say (a sealed MaNiKi answer) "was played".
        assert "was accepted" in answered or "was played" in answered, answered
    raise AssertionError("the game did not end")


def check_secrets(
    env: MailService, game: str, players: int, game_id: str, created: dict[str, Any]
) -> int:
    """Every mail of the game shows its seat's view and nothing else; returns how many."""
    client = Client(env.service.url)
    record = loads(client.get(f"/v1/games/{game_id}/log.jsonl").text)
    seed = record.header.seed
    assert seed is not None and commitment(seed) == created["seed_commitment"]
    replayed = replay(record)
    rules = replayed.game
    tokens = [seat["token"] for seat in created["seats"]]
    overs = [wait_mail(env, address(game, seat), "game_over") for seat in range(players)]
    mails = {seat: env.mailbox.to(address(game, seat)) for seat in range(players)}
    reply_tokens = {
        seat: str(found[0].mail["Reply-To"]).split("+")[1][:SEAT_PART]
        for seat, found in mails.items()
    }
    checked = 0
    for seat, found in mails.items():
        assert told(found).count("game_over") == 1
        assert seed in text_of(overs[seat].mail)
        for mail in found:
            checked += 1
            _check_one(mail, rules, replayed.states, seat, players, seed, tokens, reply_tokens)
    return checked


def _check_one(
    mail: Received,
    rules: Any,
    states: tuple[Any, ...],
    seat: int,
    players: int,
    seed: str,
    tokens: list[str],
    reply_tokens: dict[int, str],
) -> None:
    text, html = text_of(mail.mail), html_of(mail.mail)
    everything = text + html + str(state_of(mail.mail))
    assert str(mail.mail["Reply-To"]).split("+")[1].startswith(reply_tokens[seat])
    # A seat's own token reaches it once, in its personal link; no other seat's ever.
    for other, token in enumerate(tokens):
        if other != seat or "invitation" not in kinds(mail):
            assert token not in everything
    assert "/unsubscribe/" in str(mail.mail["List-Unsubscribe"])
    for other, token in reply_tokens.items():
        if other != seat:
            assert token not in everything
    at = version(mail)
    if kind(mail) == "game_over":
        return
    assert seed not in everything and seed not in mail.raw.decode("latin-1")
    state = states[at]
    # The state the mail carries is exactly this seat's view of the state then.
    assert state_of(mail.mail) == envelope(rules, state, at, seat)
    names = [f"P{i}" for i in range(players)]
    own = set(render_text(rules.name, rules.view(state, seat), names).splitlines())
    lines = set(text.splitlines())
    for other in range(players):
        if other == seat:
            continue
        theirs = render_text(rules.name, rules.view(state, other), names).splitlines()
        for line in theirs:
            if line not in own and len(line.strip()) > 4:
                assert line not in lines, (line, text)
    first_sealed = at - rules.hidden_tail(state) + 1
    for line in text.splitlines():
        parts = line.strip().split(". seat ", 1)
        if len(parts) == 2 and parts[0].isdigit() and int(parts[0]) >= first_sealed:
            assert parts[1].split(": ", 1)[1].startswith("sealed"), line


@pytest.mark.parametrize(("game", "players", "options", "moves"), GAMES, ids=[g[0] for g in GAMES])
def test_a_whole_game_by_mail(
    mail_service: MailService, game: str, players: int, options: dict[str, Any], moves: int
) -> None:
    game_id, created = play_by_mail(mail_service, game, players, options, moves)
    client = Client(mail_service.service.url)
    summary = client.get(f"/v1/games/{game_id}").json()
    assert summary["status"] == "over" and summary["version"] >= min(moves, 10)
    verified = client.get(f"/v1/games/{game_id}/verify").json()
    assert verified["chain_valid"] and verified["replay_matches"]
    assert check_secrets(mail_service, game, players, game_id, created) > players * 4
    if game == "maniki":
        # Its rounds were decided by mail: their round-over mails were checked too.
        for seat in range(players):
            found = mail_service.mailbox.to(address(game, seat))
            assert told(found).count("round_over") >= 1
