"""Mail speaks its reader's language and zone: a seat's language fixed at its first mail
(the player's choice, else the game's, else English), times in the player's zone."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from bench.mail_counts import kinds_of, mails_by_seat
from referee import i18n
from referee.service import Referee, turn_clock
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.store import addresses, player_rows, reads
from referee.store.tables import Game

ANNE, BOB, CARL = "anne@players.test", "bob@players.test", "carl@players.test"


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def chose(referee: Referee, address: str, language: str | None, zone: str | None) -> None:
    """The player at `address` chose a language and a zone (as PUT /v1/me/profile does)."""
    with referee.db.transaction() as session:
        addresses.ensure(session, referee.secret(), address)
        player_rows.set_speech(session, address, language, zone)


def text(mail: EmailMessage) -> str:
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())


def html(mail: EmailMessage) -> str:
    body = mail.get_body(preferencelist=("html",))
    assert body is not None
    return str(body.get_content())


def first_mails(referee: Referee) -> dict[int, EmailMessage]:
    deliver_due(referee, "mail")
    return {
        seat: mails[0] for seat, mails in mails_by_seat(Path(referee.settings.mail_dir)).items()
    }


def seat_languages(referee: Referee, game_id: str) -> list[str | None]:
    with referee.db.reading() as session:
        return [seat.language for seat in reads.seats(session, game_id)]


def test_a_french_players_mail_is_french_in_its_zone_and_the_seat_keeps_french(
    referee: Referee,
) -> None:
    chose(referee, ANNE, "fr", "Europe/Paris")
    players = [Player("Anne", ANNE), Player("Bob", BOB)]
    created = create_game(
        referee, NewGame("subdivision", players, {}, deadline="30h", trusted=True)
    )
    game_id = created.game.id
    mails = first_mails(referee)
    anne, bob = mails[0], mails[1]
    assert kinds_of(anne) == ["invitation", "your_turn"]
    assert anne["Content-Language"] == "fr" and bob["Content-Language"] == "en"
    assert str(anne["Subject"]) == f"Subdivision : Anne et Bob (partie {game_id[:8]})"
    assert str(bob["Subject"]) == f"Subdivision: Anne and Bob (game {game_id[:8]})"
    said = text(anne)
    assert said.startswith("Bonjour Anne,") and "À vous de jouer dans Subdivision" in said
    assert "Comment écrire un coup" in said and "Your move" not in said
    assert '<html lang="fr">' in html(anne) and "Vos coups possibles" in html(anne)
    # The turn's end, in Anne's zone and words, as her clock reads it.
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        due = turn_clock.due_at(game)
    assert due is not None
    local = due.astimezone(i18n.known_zone("Europe/Paris"))
    assert local.tzname() in ("CET", "CEST")
    with i18n.speaking("fr", "Europe/Paris"):
        paris = " ".join(i18n.clock(due).split())
    assert paris == f"{local:%H:%M} {local.tzname()}"
    assert "Le temps imparti expire dans 1 jour et 6 heures" in said and paris in said
    assert "UTC" not in said
    # The seat's language is fixed: choosing English later leaves this game's thread French.
    assert seat_languages(referee, game_id) == ["fr", "en"]
    chose(referee, ANNE, "en", None)
    assert seat_languages(referee, game_id) == ["fr", "en"]


def test_a_french_game_mails_a_new_address_in_french_and_a_players_choice_wins(
    referee: Referee,
) -> None:
    chose(referee, BOB, "en", None)
    players = [Player("Carl", CARL), Player("Bob", BOB)]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=True, language="fr"))
    mails = first_mails(referee)
    assert mails[0]["Content-Language"] == "fr" and mails[1]["Content-Language"] == "en"
    assert text(mails[0]).startswith("Bonjour Carl,")
    assert text(mails[1]).startswith("Hello Bob,")
    assert seat_languages(referee, created.game.id) == ["fr", "en"]
