"""The languages the referee speaks and the time zone it says times in.

Every sentence a person reads is looked up in a gettext catalogue,
`referee/locale/<language>/LC_MESSAGES/<catalogue>.po` (`referee.catalogues`
extracts and checks them). English is the source language: it has no
catalogue. Which language and zone apply is held in context variables set
once at each boundary (a page request, a mail being written, with
`speaking`), so the code below it just calls `_()` and `when()`.

Adding a language: its code in `LANGUAGES` and `referee catalogues update`,
then translate the new `.po` files (docs/translating.md).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
from babel.dates import format_skeleton, format_time, format_timedelta
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations

LANGUAGES: tuple[str, ...] = ("en", "fr")
SOURCE_LANGUAGE = "en"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
UTC_ZONE = "UTC"

_language: ContextVar[str] = ContextVar("language", default=SOURCE_LANGUAGE)
_zone: ContextVar[str] = ContextVar("zone", default=UTC_ZONE)


def known_language(code: str | None) -> str | None:
    """`code` if the referee speaks it (`fr`, `fr-CA` → `fr`), else None."""
    if not code:
        return None
    base = code.strip().lower().replace("_", "-").split("-")[0]
    return base if base in LANGUAGES else None


def known_zone(name: str | None) -> ZoneInfo | None:
    """The IANA zone `name` names, or None for no name or one that is not a zone."""
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


@cache
def translations(language: str) -> NullTranslations:
    """Every catalogue of `language` as one; the source language's is empty."""
    folder = LOCALE_DIR / language / "LC_MESSAGES"
    found: NullTranslations = NullTranslations()
    if language == SOURCE_LANGUAGE or not folder.is_dir():
        return found
    merged: Translations | None = None
    for path in sorted(folder.glob("*.po")):
        with path.open("rb") as po:
            catalog = read_po(po, locale=language)
        compiled = io.BytesIO()
        # Fuzzy entries are left out: a guess is not shown to a player.
        write_mo(compiled, catalog, use_fuzzy=False)
        compiled.seek(0)
        each = Translations(fp=compiled, domain=path.stem)
        if merged is None:
            merged = each
        else:
            merged.merge(each)
    return merged or found


def language() -> str:
    """The language being spoken here."""
    return _language.get()


def zone() -> ZoneInfo:
    """The time zone times are said in here."""
    return ZoneInfo(_zone.get())


@contextmanager
def speaking(code: str | None, zone_name: str | None = None) -> Iterator[None]:
    """Within the block, words are in `code` (English when it is not spoken here) and
    times in `zone_name` (UTC when it names no zone)."""
    told = _language.set(known_language(code) or SOURCE_LANGUAGE)
    zoned = _zone.set(UTC_ZONE if known_zone(zone_name) is None else str(zone_name))
    try:
        yield
    finally:
        _language.reset(told)
        _zone.reset(zoned)


def speak(code: str | None, zone_name: str | None = None) -> None:
    """From here on in this context, `code` and `zone_name` (a request's start sets them)."""
    _language.set(known_language(code) or SOURCE_LANGUAGE)
    _zone.set(UTC_ZONE if known_zone(zone_name) is None else str(zone_name))


def _(message: str) -> str:
    """`message` in the language spoken here."""
    return translations(_language.get()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of `singular`/`plural` that `count` takes in the language spoken here."""
    return translations(_language.get()).ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Marks `message` for the catalogue where it cannot be translated yet (a constant
    read later through `_`)."""
    return message


def when(at: datetime, now: datetime | None = None) -> str:
    """A moment as a person reads it, in the zone and language here, the zone named:
    "Tue, December 8, 3:00 PM CET", "mar. 8 décembre, 15:00 CET". The year is said
    when it is not `now`'s."""
    local = at.astimezone(zone())
    same_year = now is None or now.astimezone(zone()).year == local.year
    skeleton = "MMMEd" if same_year else "yMMMEd"
    code = _language.get()
    day = format_skeleton(skeleton, local, locale=code)
    return f"{day}, {format_time(local, 'short', locale=code)} {local.tzname()}"


def day_of(at: datetime) -> str:
    """The date of a moment in the zone and language here: "Dec 8, 2026", "8 déc. 2026"."""
    return format_skeleton("yMMMd", at.astimezone(zone()), locale=_language.get())


def clock(at: datetime) -> str:
    """The time of day of a moment in the zone here, the zone named: "3:00 PM CET"."""
    local = at.astimezone(zone())
    return f"{format_time(local, 'short', locale=_language.get())} {local.tzname()}"


def span(delta: timedelta, direction: bool = False) -> str:
    """A length of time in words: "3 hours", "3 heures"; with `direction`, "in 3 hours"
    or "3 hours ago"."""
    return format_timedelta(
        delta,
        threshold=1.0,
        add_direction=direction,
        locale=_language.get(),
    )


def number(value: float) -> str:
    """A number as the language writes it: "1,234.5", "1 234,5"."""
    return format_decimal(value, locale=_language.get())


def install(env: jinja2.Environment) -> None:
    """Templates of `env` speak through the catalogues: `{% trans %}` blocks and `_()`,
    with `when`, `day_of` and `clock` for times."""
    env.add_extension("jinja2.ext.i18n")
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=_, ngettext=ngettext, newstyle=True
    )
    filters: dict[str, Any] = {"when": when, "day_of": day_of, "clock": clock}
    env.filters.update(filters)
    env.globals.update({"language": language})
