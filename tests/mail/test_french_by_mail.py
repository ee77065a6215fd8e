"""A game by mail in French, end to end (SMTP, Celery, PostgreSQL): a player who chose
French gets her turn mail in French, in her zone; her French reply is judged as an English
one and answered in French; a game made in French mails a new address in French."""

from __future__ import annotations

from typing import Any

import psycopg

from referee.service import Referee
from referee.settings import Settings
from referee.store import addresses, player_rows
from tests.clock import on_server_clock
from tests.mail.players import answer, kinds, listed_moves, text_of, wait_mail
from tests.mailboxes import MailService, Received
from tests.stacks import Client

ANNE, BOB, CARL = "anne-fr@players.test", "bob-en@players.test", "carl-fr@players.test"


def choose(env: MailService, address: str, language: str, zone: str) -> None:
    """The player at `address` chose a language and zone (as its profile page does)."""
    referee = Referee(Settings(database_url=env.service.database_url))
    try:
        with on_server_clock(), referee.db.transaction() as session:
            addresses.ensure(session, referee.secret(), address)
            player_rows.set_speech(session, address, language, zone)
    finally:
        referee.close()


def create(env: MailService, players: list[dict[str, str]], **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = (
        Client(env.service.url)
        .post("/v1/games", {"game": "subdivision", "players": players, **more})
        .json()
    )
    return found


def reply(env: MailService, turn: Received, body: str, sender: str) -> int:
    """Reply `body` to `turn`; returns how many mails the sender had before."""
    before = len(env.mailbox.to(sender))
    env.reply(str(turn.mail["Reply-To"]), answer(turn, body, sender), sender)
    return before


def flat(mail: Received) -> str:
    return " ".join(text_of(mail.mail).split())


def test_a_french_player_plays_by_mail_in_french(mail_service: MailService) -> None:
    env = mail_service
    choose(env, ANNE, "fr", "Europe/Paris")
    created = create(env, [{"name": "Anne", "email": ANNE}, {"name": "Bob", "email": BOB}])
    game_id = created["id"]
    turn = wait_mail(env, ANNE, "your_turn", 0)
    assert turn.mail["Content-Language"] == "fr"
    assert str(turn.mail["Subject"]) == f"Subdivision : Anne et Bob (partie {game_id[:8]})"
    said = flat(turn)
    assert said.startswith("Bonjour Anne,") and "À vous de jouer dans Subdivision" in said
    assert "Vos coups possibles" in said and "Hello" not in said
    # Bob chose nothing: his mail of the same game is English.
    invited = wait_mail(env, BOB, "invitation", 0)
    assert invited.mail["Content-Language"] == "en" and flat(invited).startswith("Hello Bob,")

    # « passe » is read as the English "pass", which Subdivision has not: refused, in French.
    before = reply(env, turn, "passe", ANNE)
    refused = wait_mail(env, ANNE, "refused", after=before)
    assert refused.mail["Content-Language"] == "fr"
    told = flat(refused)
    assert "Votre réponse n\u2019a pas pu être lue comme un coup" in told
    assert "« passe » n\u2019est pas un coup" in told

    # A move in a French reply is played as written, the same move in the log.
    move = listed_moves(text_of(turn.mail))[0]
    before = reply(env, turn, f"Mon coup : {move}\n\nBonne partie à tous !", ANNE)
    moved = wait_mail(env, BOB, "your_turn", 1)
    assert f"Anne: {move}" in text_of(moved.mail)
    log = Client(env.service.url).get(f"/v1/games/{game_id}/moves").json()
    assert [entry["notation"] for entry in log["moves"]] == [move]

    # « aide » is the help command: answered in French, with the French words.
    before = reply(env, turn, "aide", ANNE)
    helped = wait_mail(env, ANNE, "help", after=before)
    assert "aide ce message" in flat(helped) and "abandon quitter la partie" in flat(helped)
    # The seats' mail languages were fixed at their first mails.
    with psycopg.connect(env.service.database_url) as db:
        row = db.execute(
            "SELECT language FROM seat WHERE game_id = %s ORDER BY seat", (game_id,)
        ).fetchall()
    assert [found[0] for found in row] == ["fr", "en"]


def test_a_game_made_in_french_mails_a_new_address_in_french(mail_service: MailService) -> None:
    env = mail_service
    created = create(
        env,
        [{"name": "Carl", "email": CARL}, {"name": "Dora", "email": "dora-fr@players.test"}],
        language="fr",
    )
    mail = wait_mail(env, CARL, "your_turn", 0)
    assert mail.mail["Content-Language"] == "fr" and "invitation" in kinds(mail)
    assert flat(mail).startswith(
        "Bonjour Carl, Vous êtes le joueur 1 d\u2019une partie de Subdivision"
    )
    assert f"(partie {created['id'][:8]})" in str(mail.mail["Subject"])
