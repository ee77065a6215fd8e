"""An Icehouse pyramid named by its size and colour, as the building labels say it.

English says "small red" and puts "pyramid" in the sentence around it;
French names the pyramid with it ("petite pyramide rouge", "pyramide
moyenne verte"): the size goes before or after the noun and the colour
agrees with it, so each size and colour is a sentence of its own.
"""

from __future__ import annotations

from referee.i18n import N_, _

_WORDS = {
    "Sr": N_("small red"),
    "Sy": N_("small yellow"),
    "Sg": N_("small green"),
    "Sb": N_("small blue"),
    "Sp": N_("small purple"),
    "So": N_("small orange"),
    "Sk": N_("small black"),
    "Sw": N_("small white"),
    "Mr": N_("medium red"),
    "My": N_("medium yellow"),
    "Mg": N_("medium green"),
    "Mb": N_("medium blue"),
    "Mp": N_("medium purple"),
    "Mo": N_("medium orange"),
    "Mk": N_("medium black"),
    "Mw": N_("medium white"),
    "Lr": N_("large red"),
    "Ly": N_("large yellow"),
    "Lg": N_("large green"),
    "Lb": N_("large blue"),
    "Lp": N_("large purple"),
    "Lo": N_("large orange"),
    "Lk": N_("large black"),
    "Lw": N_("large white"),
}


def pyramid_words(pyramid: str) -> str:
    """The pyramid `pyramid` (size S/M/L then colour: `Mw`) in the language spoken here:
    "medium white" in English, which the sentence around it calls a pyramid."""
    return _(_WORDS[pyramid])
