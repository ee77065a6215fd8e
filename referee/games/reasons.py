"""Why a move is refused, in English for the record and in the reader's language.

A rule refuses with `IllegalMove(code, reason)`; the `reason` is English,
and it is what is stored, logged and answered (a move's `reason` field)
whatever the player's language, so that records replay and verify the same
everywhere. The rules build it from a `Reason`, a template registered here
(and marked for the `games` catalogue): `PARK = reason(N_("{cell} is a park"))`,
then `PARK(cell="c3")`. The service registers the refusals its worker records
the same way (`referee.service.refusals`, the `mail` catalogue).

`reason_words(text)` says a stored English reason in the language spoken
here: it finds the template the text was built from, reads the values of
its fields back out of it, and fills the translated template with them.
A field's value is translated too when it is itself a registered word (a
colour, a size) or a registered reason (a reason quoting another). Text no
template made comes back as it is.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

from referee.i18n import N_, _

# Reasons are one line of a few hundred characters; a longer text is left as
# it is, which keeps the matching cheap whatever the text.
_LONGEST = 1000
# Fields with these names hold integers: matched as digits, they cannot
# stretch, so a template's other fields are the only ones that search.
_NUMBERS = frozenset(
    {
        "artist",
        "circle",
        "count",
        "digits",
        "high",
        "holder",
        "index",
        "left",
        "low",
        "most",
        "number",
        "pawn",
        "seat",
        "space",
        "x",
        "y",
    }
)
# How deep a reason may quote reasons (a plan's step quoting a placement
# quoting why): deeper quoting is left in English.
_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Reason:
    """One refusal's English template; calling it with the fields gives the reason."""

    template: str
    pattern: re.Pattern[str] = field(repr=False, compare=False)
    literal: int = field(repr=False, compare=False)

    def __call__(self, **fields: object) -> str:
        return self.template.format(**fields)


_EXACT: dict[str, Reason] = {}
_PATTERNS: list[Reason] = []
_WORDS: set[str] = set()


def _compiled(template: str) -> tuple[re.Pattern[str], int]:
    """The regex that reads `template`'s fields back out of a reason, and how many
    literal characters it holds (the more, the more specific the template)."""
    parts: list[str] = []
    seen: set[str] = set()
    literal = 0
    for text, name, spec, conversion in string.Formatter().parse(template):
        parts.append(re.escape(text))
        literal += len(text)
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"a reason's field is a bare name: {template!r}")
        # Lazy and within one line, the literal text after a field deciding
        # where it ends; integers as digits. With at most two fields of text
        # a template, a match costs at most quadratic time in `_LONGEST`.
        value = r"-?\d+" if name in _NUMBERS else r"[^\n]+?"
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>{value})")
        seen.add(name)
    if len(seen - _NUMBERS) > 2:
        raise ValueError(f"a reason holds at most two fields of text: {template!r}")
    return re.compile("".join(parts)), literal


def reason(template: str) -> Reason:
    """Registers `template` (marked with `N_`) as a refusal and gives it back to call."""
    pattern, literal = _compiled(template)
    made = Reason(template, pattern, literal)
    if made.pattern.groupindex:
        _PATTERNS.append(made)
        _PATTERNS.sort(key=lambda each: -each.literal)
    else:
        _EXACT[made()] = made
    return made


def words(*names: str) -> tuple[str, ...]:
    """Registers words (marked with `N_`) a reason may hold in a field, said in the
    reader's language with the rest of it (colours, sizes)."""
    _WORDS.update(names)
    return names


def templates() -> list[Reason]:
    """Every registered reason."""
    return [*_EXACT.values(), *_PATTERNS]


def reason_words(text: str) -> str:
    """The stored English reason `text` in the language spoken here; the text as it is
    when no registered template made it. Never raises."""
    try:
        return _said(text, _DEPTH)
    # A translation with a broken field: the English says it still.
    except (ValueError, KeyError, IndexError, AttributeError, TypeError):
        return text


def _said(text: str, depth: int) -> str:
    if depth <= 0 or len(text) > _LONGEST:
        return text
    exact = _EXACT.get(text)
    if exact is not None:
        return _(exact.template).format()
    for each in _PATTERNS:
        found = each.pattern.fullmatch(text)
        if found is not None:
            fields = {name: _field(value, depth) for name, value in found.groupdict().items()}
            return _(each.template).format(**fields)
    return text


def _field(value: str, depth: int) -> str:
    if value in _WORDS:
        return _(value)
    return _said(value, depth - 1)


# The engine's own refusals (referee/engine.py writes them; it cannot import
# this package, which imports it).
NOT_YOUR_TURN = reason(N_("it is not your turn"))
GAME_OVER = reason(N_("the game is over"))
BAD_STEP = reason(N_("{step} cannot be chosen here"))
PLAYED_BY = reason(N_("{title} is played by {allowed} players"))
# And the registry's (`referee.games.get`).
UNKNOWN_GAME = reason(N_("unknown game {name}; known games: {known}"))

# Refusals more than one game makes.
ALREADY_RESIGNED = reason(N_("you have already resigned"))
ALREADY_LEFT = reason(N_("you have already left this game"))
NO_SEAT = reason(N_("there is no seat {seat} in this game"))
