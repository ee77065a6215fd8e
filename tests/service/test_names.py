"""Players' names (referee/names.py): which a new game takes, and how any name is shown."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis.strategies import from_regex

from api.schemas.games import PlayerIn
from referee.delivery.compose import mail_names
from referee.i18n import speaking
from referee.names import NAME_FORM, PLAIN_LENGTH, plain, public_refusal, refusal, shown
from referee.store.tables import Game

# Hosseinzadeh in Persian: the non-joiner belongs inside the name.
PERSIAN = "\u062d\u0633\u06cc\u0646\u200c\u0632\u0627\u062f\u0647"
BIDI_CONTROLS = [
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
]
INVISIBLE = ["\u200b", "\ufeff", "\u2060", "\u00ad", "\u180e", "\U000e0041", "\U000e0001"]
BLANK = [" ", "\u3000", "\u00a0", "\u00a0 \u3000\t", "\u3164", "\u2800", "\u0301"]
TAKEN = [
    "Ann",
    "Jean-Luc O'Neil",
    "王小明",
    PERSIAN,
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # one emoji, joined
    "\u2764\ufe0f\u200d\U0001f525",  # a variation selector before the joiner
    "e\u0301tienne",
    "Ann 🦊",
]


@pytest.mark.parametrize("control", BIDI_CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_direction_changing_characters_are_refused_anywhere_in_a_name(control: str) -> None:
    for name in (control + "Ann", "An" + control + "n", "Ann" + control):
        why = refusal(name)
        assert why is not None and f"U+{ord(control):04X}" in why and "direction" in why
        assert control not in shown(name) and shown(name) == "Ann"


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_invisible_characters_are_refused_and_never_shown(char: str) -> None:
    why = refusal("An" + char + "n")
    assert why is not None and f"U+{ord(char):04X}" in why and "invisible" in why
    assert shown("An" + char + "n") == "Ann"


@pytest.mark.parametrize("name", BLANK, ids=repr)
def test_a_name_that_shows_nothing_is_refused(name: str) -> None:
    assert refusal(name) == (
        "a name must show something: it holds only spaces or invisible characters"
    )
    assert shown(name) == ""


def test_joiners_are_taken_between_visible_characters_only() -> None:
    for joiner in ("\u200c", "\u200d"):
        assert refusal("Ann" + joiner) is not None
        assert refusal(joiner + "Ann") is not None
        assert refusal("An" + joiner + joiner + "n") is not None
        assert refusal("Ann " + joiner + "Bob") is not None


@pytest.mark.parametrize("name", TAKEN, ids=repr)
def test_names_in_any_script_are_taken_and_shown_as_typed(name: str) -> None:
    assert refusal(name) is None
    assert shown(name) == name
    assert PlayerIn().validate({"name": name}) == {}


def test_shown_makes_one_line_of_an_old_name() -> None:
    assert shown("Ann\nBob\u2028 Cy\x00") == "Ann Bob Cy"
    assert shown("\u202eAnn\u200b \u3000 Bob") == "Ann Bob"


def test_plain_leaves_no_link_no_domain_no_address_and_is_short() -> None:
    typed = "Support: your seat expires, re-login at https://evil.example/x and Bob"
    quoted = plain(typed)
    assert quoted == "Support your seat expires re-log"
    for hostile in (typed, "bob@evil.example", "www.evil.example", "evil.example/login"):
        found = plain(hostile)
        assert not any(mark in found for mark in ".:/@") and len(found) <= PLAIN_LENGTH
    assert plain("José Ñúñez-O'Brien") == "José Ñúñez-O'Brien"
    assert plain("王小明") == "王小明"
    assert plain("🦊") == "" and plain("\u202e\u200b") == ""


@settings(max_examples=300, deadline=None)
@given(name=from_regex(NAME_FORM, fullmatch=True).filter(lambda n: len(n) <= 100))
def test_what_the_document_shows_of_names_is_taken(name: str) -> None:
    # The document shows a part of what is taken: all of that part must be.
    assert PlayerIn().validate({"name": name}) == {}


def test_mail_quotes_an_untrusted_games_names_plainly_and_a_trusted_ones_as_typed() -> None:
    typed = ["Dr. Ann <ann@example.org>", "\u202eBob", "\u200b"]
    assert mail_names(Game(trusted=True), typed) == ["Dr. Ann <ann@example.org>", "Bob", "Player 3"]
    assert mail_names(Game(trusted=False), typed) == ["Dr Ann ann example org", "Bob", "Player 3"]


def test_a_refused_name_is_told_in_the_language_spoken_and_in_english_otherwise() -> None:
    with speaking("fr"):
        assert public_refusal("Zo") == "un nom public compte de 3 à 24 caractères"
        assert refusal("Ann\u202e") == (
            "un nom ne peut pas contenir U+202E (RIGHT-TO-LEFT OVERRIDE) : "
            "ce caractère change le sens du texte"
        )
    assert public_refusal("Zo") == "a public name has 3 to 24 characters"
