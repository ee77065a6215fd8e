"""The service's refusals in the reader's language (referee/service/refusals.py).

A refusal answered at once is worded in the language spoken where it is raised;
one the worker records with a move is kept in English and said in the reader's
language when shown (`reason_words`), on a page, in a problem's detail, in mail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.mail_counts import mails_by_seat
from referee.games.reasons import reason_words
from referee.i18n import speaking
from referee.service import Referee, profiles, refusals, turn_clock, turn_mail
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.players import Player as SignedIn
from referee.service.replies import Reply, take_reply
from referee.store import keys
from referee.store.mail_settings import DEFAULTS
from tests.service.test_mail_speech import chose, text

ANNE, BOB = "anne@players.test", "bob@players.test"


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


@pytest.mark.parametrize(
    ("english", "french"),
    [
        (
            refusals.StaleVersion.expected(4, 2).reason,
            "la partie en est à la version 4, pas 2 : regardez à nouveau et renvoyez votre coup",
        ),
        (
            refusals.StaleVersion.moved_on(9, 7).reason,
            "la partie a avancé depuis la version 7, à laquelle votre coup répondait "
            "(elle en est maintenant à la version 9) : regardez à nouveau et renvoyez votre coup",
        ),
        (refusals.of_code("illegal_move", None).reason, "le coup a été refusé"),
        (refusals.NotYourTurn().reason, "ce n\u2019est pas votre tour"),
        (refusals.GameOver().reason, "la partie est finie"),
    ],
)
def test_a_recorded_refusal_stays_english_and_is_said_in_french(english: str, french: str) -> None:
    assert english.isascii()
    assert reason_words(english) == english
    with speaking("fr"):
        assert reason_words(english) == french
        # Recorded in English whatever the language spoken where it is raised.
        assert refusals.StaleVersion.expected(4, 2).reason.startswith("the game is at")


def test_the_english_records_are_what_they_were() -> None:
    assert refusals.StaleVersion.expected(4, 2).reason == (
        "the game is at version 4, not 2: look again and resubmit"
    )
    assert refusals.StaleVersion.moved_on(9, 7).reason == (
        "the game moved on since version 7, which your move answered "
        "(it is at version 9 now): look again and resubmit"
    )


def test_a_refusal_answered_at_once_speaks_the_language_spoken() -> None:
    for language, expected in (
        ("en", "digest_hours lists an hour twice"),
        ("fr", "digest_hours cite une heure deux fois"),
    ):
        with speaking(language), pytest.raises(refusals.BadRequest) as caught:
            turn_mail.checked(DEFAULTS, {"digest_hours": [7, 7]})
        assert caught.value.reason == expected
    with speaking("fr"), pytest.raises(ValueError) as bad:
        turn_clock.parse_deadline("soon")
    assert str(bad.value) == "'soon' n\u2019est pas une durée comme 72h, 90m ou 2d"
    with speaking("fr"):
        assert refusals.NotFound.game().reason == "aucune partie n\u2019a cet identifiant"


def test_a_profile_refusal_is_french_and_its_error_key_unchanged(referee: Referee) -> None:
    create_game(referee, NewGame("subdivision", [Player("Anne", ANNE), Player("Bob", BOB)], {}))
    anne = SignedIn(ANNE, frozenset({"read", "play", "manage"}))
    with speaking("fr"), pytest.raises(refusals.BadRequest) as caught:
        profiles.set_profile(referee, anne, time_zone="Mars/Olympus")
    assert caught.value.reason == (
        "'Mars/Olympus' n\u2019est pas un fuseau horaire IANA (comme Europe/Paris)"
    )
    assert caught.value.extra["errors"] == {"time_zone": ["unknown"]}


def test_a_move_replied_out_of_turn_is_refused_in_french_by_mail(referee: Referee) -> None:
    chose(referee, BOB, "fr", None)
    players = [Player("Anne", ANNE), Player("Bob", BOB)]
    game = create_game(referee, NewGame("subdivision", players, {}, trusted=True)).game
    deliver_due(referee, "mail")
    reply = Reply(
        token=keys.reply_token(referee.secret(), game.id, 1, game.version),
        message_key="early",
        message_id="<early@players.test>",
        sender=BOB,
        paragraphs=[["2c2"]],
    )
    take_reply(referee, reply)
    deliver_due(referee, "mail")
    mails = mails_by_seat(Path(referee.settings.mail_dir))[1]
    said = text(mails[-1])
    assert mails[-1]["Content-Language"] == "fr"
    assert "ce n\u2019est pas votre tour" in said and "not your turn" not in said
