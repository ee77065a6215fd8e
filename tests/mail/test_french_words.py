"""Replies in French: the command and move words a reply may hold are read in English and
in French in every game, and a French reply is judged exactly as the English one."""

from __future__ import annotations

import pytest

from referee import games
from referee.i18n import speaking
from referee.reply_text import Command, Move, Unread
from referee.reply_words import split_reply

ALL_GAMES = ["subdivision", "maniki", "ice_palace", "mandala"]
PASSING = ["maniki", "ice_palace"]


def read(game: str, *lines: str) -> object:
    return split_reply(games.get(game), {}, [list(lines)]).read


@pytest.mark.parametrize("game", PASSING)
@pytest.mark.parametrize("written", ["passe", "Passe.", "je passe", "« passe »"])
def test_passe_is_the_pass_move(game: str, written: str) -> None:
    assert read(game, written) == read(game, "pass") == Move({"type": "pass"})


@pytest.mark.parametrize("game", ALL_GAMES)
@pytest.mark.parametrize(
    "written", ["abandon", "Abandon !", "j'abandonne", "J\u2019abandonne.", "abandonne"]
)
def test_abandon_is_resigning_in_every_game(game: str, written: str) -> None:
    assert read(game, written) == read(game, "resign") == Move({"type": "resign"})


@pytest.mark.parametrize("game", ALL_GAMES)
@pytest.mark.parametrize(
    ("written", "word"),
    [
        ("aide", "help"),
        ("Plateau", "board"),
        ("revanche", "rematch"),
        ("accepte", "accept"),
        ("j'accepte", "accept"),
    ],
)
def test_french_commands_are_the_english_ones(game: str, written: str, word: str) -> None:
    assert read(game, written) == read(game, word) == Command(word)


def test_a_french_reply_plays_the_same_move_and_passes_on_the_same_words() -> None:
    english = split_reply(games.get("maniki"), {}, [["pass"], ["Good game everyone"]])
    french = split_reply(games.get("maniki"), {}, [["passe"], ["Good game everyone"]])
    assert french == english
    leading = split_reply(games.get("subdivision"), {}, [["Mon coup : 3c4"]])
    assert leading.read == read("subdivision", "3c4")


def test_a_french_sentence_is_words_to_pass_on_not_a_move() -> None:
    found = split_reply(games.get("maniki"), {}, [["Je passe une bonne soirée, merci à tous"]])
    assert found.read is None and found.words.startswith("Je passe")


def test_a_misspelt_french_word_is_refused_as_an_attempt() -> None:
    assert isinstance(read("maniki", "abandn"), Unread)


def test_why_a_reply_holds_no_move_is_said_in_the_seats_language() -> None:
    english = read("mandala", "prends 5")
    with speaking("fr"):
        french = read("mandala", "prends 5")
        two = read("mandala", "take 5", "take 6")
    assert isinstance(english, Unread) and english.problem.startswith('"prends 5" is not a move')
    assert isinstance(french, Unread) and french.problem.startswith(
        "« prends 5 » n\u2019est pas un coup"
    )
    assert (
        isinstance(two, Unread) and "deux coups différents, « take 5 » et « take 6 »" in two.problem
    )
