"""The translation catalogues: what the code asks to translate, kept in `.po` files.

Each catalogue holds the words of one part of the referee, extracted from
its own source files, so that the parts are translated (and reviewed) apart:
`pages` (the web pages and the API's answers), `mail` (mails and answers to
replies), `games` (the games' words: refusals, labels, help). `update`
writes every language's `.po` files anew from the code, keeping what is
translated; `problems` lists what is missing, stale or untranslated (the
suite fails on any).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract
from babel.messages.pofile import read_po, write_po

from referee.i18n import LANGUAGES, LOCALE_DIR, SOURCE_LANGUAGE

ROOT = Path(__file__).resolve().parent.parent

# Each catalogue and the files its words come from (globs from the project's root).
CATALOGUES: dict[str, tuple[str, ...]] = {
    "pages": ("api/**/*.py", "api/templates/**/*.html"),
    "mail": (
        "referee/delivery/**/*.py",
        "referee/delivery/templates/*.j2",
        "referee/reply_text.py",
        "referee/talk_text.py",
        "referee/webhooks.py",
        "referee/service/**/*.py",
    ),
    "games": ("referee/games/**/*.py", "referee/render/**/*.py", "referee/names.py"),
}
_KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}
_JINJA = "jinja2.ext:babel_extract"
_JINJA_OPTIONS = {"trimmed": "true", "newstyle_gettext": "true", "silent": "false"}


def _sources(name: str) -> Iterator[Path]:
    seen: set[Path] = set()
    for pattern in CATALOGUES[name]:
        for path in sorted(ROOT.glob(pattern)):
            if path not in seen and path.is_file():
                seen.add(path)
                yield path


def extracted(name: str) -> Catalog:
    """The catalogue `name` as its source files ask for it today (no translations)."""
    catalog = Catalog(project="referee", fuzzy=False)
    for path in _sources(name):
        method = "python" if path.suffix == ".py" else _JINJA
        options = {} if method == "python" else _JINJA_OPTIONS
        where = str(path.relative_to(ROOT))
        with path.open("rb") as source:
            for line, message, comments, context in extract(
                method, source, keywords=_KEYWORDS, options=options, strip_comment_tags=True
            ):
                catalog.add(message, None, [(where, line)], auto_comments=comments, context=context)
    return catalog


def po_path(language: str, name: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{name}.po"


def _read(language: str, name: str) -> Catalog | None:
    path = po_path(language, name)
    if not path.exists():
        return None
    with path.open("rb") as po:
        return read_po(po, locale=language)


# gettext's usual plural rule where it differs from CLDR's (French has no third form
# for millions in the tools translators use).
_PLURAL_FORMS = {"fr": "nplurals=2; plural=(n > 1);"}


def _new(language: str) -> Catalog:
    catalog = Catalog(locale=language, project="referee", fuzzy=False)
    if language in _PLURAL_FORMS:
        catalog.mime_headers = [("Plural-Forms", _PLURAL_FORMS[language])]
    return catalog


def update() -> list[Path]:
    """Write every catalogue of every language from the code: new words added (to be
    translated), words the code no longer asks for dropped, translations kept."""
    written = []
    for language in LANGUAGES:
        if language == SOURCE_LANGUAGE:
            continue
        for name in CATALOGUES:
            kept = _read(language, name)
            catalog = kept or _new(language)
            # The header's date stays, so that a catalogue changes only where its words do.
            created = catalog.creation_date
            catalog.update(extracted(name), no_fuzzy_matching=True)
            catalog.obsolete.clear()
            catalog.creation_date = created
            path = po_path(language, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as po:
                write_po(po, catalog, width=100, sort_output=False, include_lineno=False)
            written.append(path)
    return written


@dataclass(frozen=True)
class Problem:
    language: str
    catalogue: str
    message: str
    what: str

    def __str__(self) -> str:
        return f"{self.language}/{self.catalogue}.po: {self.what}: {self.message!r}"


def problems() -> list[Problem]:
    """What is wrong with the catalogues: a word the code asks for and none holds
    (`missing`), one held that the code no longer asks for (`stale`), one with no
    translation or only a guess (`untranslated`), and a translation whose
    placeholders or plural forms do not fit (`bad`)."""
    found: list[Problem] = []
    for language in LANGUAGES:
        if language == SOURCE_LANGUAGE:
            continue
        for name in CATALOGUES:
            found.extend(_problems_of(language, name))
    return found


def _key(entry: Message) -> str:
    """An entry's message (a plural entry's singular)."""
    return entry.id if isinstance(entry.id, str) else entry.id[0]


def _problems_of(language: str, name: str) -> Iterator[Problem]:
    held = _read(language, name)
    if held is None:
        yield Problem(language, name, str(po_path(language, name)), "no catalogue")
        return
    wanted_ids = {_key(m) for m in extracted(name) if m.id}
    held_ids = {_key(m) for m in held if m.id}
    for message in sorted(wanted_ids - held_ids):
        yield Problem(language, name, message, "missing")
    for message in sorted(held_ids - wanted_ids):
        yield Problem(language, name, message, "stale")
    for entry in held:
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if entry.id and (entry.fuzzy or not all(strings)):
            yield Problem(language, name, _key(entry), "untranslated")
    for entry, errors in held.check():
        for error in errors:
            yield Problem(language, name, _key(entry), f"bad ({error})")
