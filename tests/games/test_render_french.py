"""Pictures say their words in the language spoken where they are drawn."""

from __future__ import annotations

from itertools import islice

import pytest

from referee import games
from referee.i18n import speaking
from referee.playout import steps
from referee.render import render_svg, render_text
from referee.render.showcase import picture
from referee.render.svg import fit, text_width
from referee.rng import Rng

# A word each game's picture shows, in English and in French.
WORDS = {
    "subdivision": ("to move", "de jouer"),
    "mandala": ("Eye", "Œil"),
    "ice_palace": ("Yard", "Chantier"),
    "maniki": ("Card to reach", "Carte à atteindre"),
    "mandala_stones": ("heights", "hauteurs"),
}


def _view(game_name: str) -> dict[str, object]:
    game = games.get(game_name)
    players = game.players[0]
    options = game.load_options({}, players)
    *_, last = islice(steps(game, players, options, "fr", Rng("fr:moves")), 4)
    return game.view(last.state, None)


@pytest.mark.parametrize("game_name", sorted(WORDS))
def test_a_picture_and_a_text_board_speak_the_language_here(game_name: str) -> None:
    english, french = WORDS[game_name]
    view = _view(game_name)
    drawn = render_svg(game_name, view, ["Ann", "Bob", "Cy"])
    assert english in drawn and french not in drawn
    with speaking("fr"):
        said = render_svg(game_name, view, ["Ann", "Bob", "Cy"])
        board = render_text(game_name, view, ["Ann", "Bob", "Cy"])
    assert french in said and english not in said
    assert all(len(line) <= 72 for line in board.splitlines())
    # A longer French sentence is broken between words, not cut.
    assert not any(line.endswith("…") for line in board.splitlines()), board
    # The same view in the same language is the same picture.
    with speaking("fr"):
        assert render_svg(game_name, view, ["Ann", "Bob", "Cy"]) == said


def test_the_lobby_picture_is_kept_one_a_language() -> None:
    english = picture("ice_palace")
    with speaking("fr"):
        french = picture("ice_palace")
    assert "Chantier" in french and "Yard" in english
    assert picture("ice_palace") == english


def test_accented_letters_measure_as_their_letter_and_oe_wider() -> None:
    assert text_width("étoilé", 13) == text_width("etoile", 13)
    assert text_width("Œil", 13, True) > text_width("Oil", 13, True)
    label = fit("Bérénice-Éléonore prennent les étoiles", 13, 100)
    assert label.endswith("…") and text_width(label, 13) <= 100
