"""Refusal reasons: stored in English, said in the reader's language (referee/games/reasons.py)."""

from __future__ import annotations

import string
from typing import Any

import pytest

from referee import games
from referee.engine import BadOptions, IllegalMove, bad_step, game_over, not_your_turn
from referee.games import reasons
from referee.games.reasons import reason_words, templates
from referee.i18n import speaking, translations
from referee.rng import Rng


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _sample(template: str) -> dict[str, Any]:
    # Integers where the field holds one, else a word no catalogue holds.
    return {name: 7 if name in reasons._NUMBERS else f"w{name}" for name in _fields(template)}


@pytest.mark.parametrize("made", templates(), ids=lambda made: made.template[:40])
def test_every_template_round_trips(made: reasons.Reason) -> None:
    params = _sample(made.template)
    english = made(**params)
    french_template = translations("fr").gettext(made.template)
    assert french_template != made.template, "no French for this reason"
    assert _fields(french_template) == _fields(made.template)
    assert reason_words(english) == english
    with speaking("fr"):
        assert reason_words(english) == french_template.format(**params)


def test_a_field_that_is_a_word_or_a_reason_is_translated_too() -> None:
    from referee.games import ice_palace, mandala_stones, subdivision

    with speaking("fr"):
        assert reason_words(subdivision.NONE_LEFT(size="large")).endswith("plus de grande pyramide")
        shows = mandala_stones.NOTHING_TO_COLLECT(artist=2, circle=5, shows="star")
        assert "au motif étoile" in reason_words(shows)
        inner = ice_palace.REFUSED_AT(pyramid="Lr", x=0, y=1, why=ice_palace.YARD_ALONE())
        said = reason_words(ice_palace.STEP(number=2, refusal=inner))
        assert said == (
            "étape 2, Lr@0,1 : un nouvel empilement doit toucher un empilement du chantier"
        )


def test_the_engine_refusals_are_registered() -> None:
    # referee/engine.py writes them itself (it cannot import this package).
    assert not_your_turn().reason == reasons.NOT_YOUR_TURN()
    assert game_over().reason == reasons.GAME_OVER()
    assert bad_step("x9").reason == reasons.BAD_STEP(step=repr("x9"))
    mandala = games.get("mandala")
    with pytest.raises(BadOptions) as refused:
        mandala.load_options({}, 9)
    (said,) = refused.value.errors["_players"]
    assert said == reasons.PLAYED_BY(title="Mandala", allowed="2, 3, 4, 5")
    with pytest.raises(KeyError) as unknown:
        games.get("chess")
    known = ", ".join(sorted(game.name for game in games.all_games()))
    assert unknown.value.args[0] == reasons.UNKNOWN_GAME(name="'chess'", known=known)
    with speaking("fr"):
        assert reason_words(said) == "Mandala se joue à 2, 3, 4, 5 joueurs"


def _refusals(game_name: str, texts: list[str]) -> list[IllegalMove]:
    """What `game_name` refuses: each text as the seat to move's move, the first
    legal move by a seat not to move (where one waits), and JSON that is no move."""
    game = games.get(game_name)
    players = game.players[0]
    state = game.start(players, game.load_options({}, players), Rng("reasons"))
    seat = min(game.actors(state))
    found: list[IllegalMove] = []
    for text in texts:
        with pytest.raises(IllegalMove) as caught:
            game.play(state, seat, game.parse(text))
        found.append(caught.value)
    waiting = [s for s in range(players) if s not in game.actors(state)]
    for other in waiting[:1]:  # MaNiKi's seats all answer at once
        with pytest.raises(IllegalMove) as caught:
            game.play(state, other, game.legal_moves(state, seat)[0])
        found.append(caught.value)
    for data in (42, {"type": "nonsense"}):
        with pytest.raises(IllegalMove) as caught:
            game.move_from_json(data)
        found.append(caught.value)
    return found


ILLEGAL = {
    "subdivision": ["pass", "3z9", "1a1", "1a1 2b2"],
    "mandala": ["take 99", "fly", "take 75"],
    "ice_palace": ["Mw@1,1", "My@1,1", "build auto", "build Lr@0,1 ???"],
    "maniki": ["", "MA XX", "KI " * 40],
    "mandala_stones": ["pick A9", "score y", "score tops 1", "pick A1 to 5 first N on 1", "dance"],
}


@pytest.mark.parametrize("game_name", sorted(ILLEGAL))
def test_each_games_refusals_are_said_in_french(game_name: str) -> None:
    for refusal in _refusals(game_name, ILLEGAL[game_name]):
        english = refusal.reason
        assert reason_words(english) == english
        with speaking("fr"):
            french = reason_words(english)
        assert french != english, english
        assert "{" not in french.replace("{{", "") or "{" in english


def test_a_text_no_template_made_comes_back_unchanged() -> None:
    with speaking("fr"):
        assert reason_words("the moon is made of cheese") == "the moon is made of cheese"
        assert reason_words("") == ""
        assert reason_words("c3 is a park, and more") == "c3 is a park, and more"


def test_a_long_hostile_text_returns() -> None:
    hostile = ("step 1, " + "Lr@0,1: " * 12_000 + "{}{{" * 100)[:100_000]
    with speaking("fr"):
        assert reason_words(hostile) == hostile
        opening = "A1 would collect no stone on circle 5: it takes only tops showing the "
        near_limit = (opening * 14)[:999]
        assert reason_words(near_limit) == near_limit
