"""The translation catalogues hold every word the code asks for, translated, and no
template says a word outside them.

The second check reads each template's own text (what lies between its tags and
expressions, and the attributes a person reads: title, alt, aria-label,
placeholder) and fails where a letter is left there rather than in a `{% trans %}`
block or a `_()` call.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from referee import catalogues
from referee.i18n import install

ROOT = catalogues.ROOT
TEMPLATES = sorted(
    [*ROOT.glob("api/templates/**/*.html"), *ROOT.glob("referee/delivery/templates/*.j2")]
)
_READ_ATTRIBUTES = re.compile(
    r"""\b(?:title|alt|aria-label|placeholder)\s*=\s*"([^"]*)\"""", re.IGNORECASE
)
_HIDDEN = re.compile(r"<(script|style)\b.*?</\1>|<!--.*?-->", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")
_ENTITY = re.compile(r"&#?\w+;")
_LETTER = re.compile(r"[^\W\d_]")
_MARK = "\x00"


def test_the_catalogues_hold_every_word_the_code_asks_for_translated() -> None:
    found = catalogues.problems()
    assert not found, "\n".join(str(p) for p in found[:40])


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(autoescape=True)
    install(env)
    return env


def words_outside_the_catalogues(source: str, html: bool) -> list[str]:
    """The pieces of a template's own text that hold a letter a person would read."""
    tree = _environment().parse(source)
    pieces = [data.data for data in tree.find_all(nodes.TemplateData)]
    if not html:
        return [text.strip() for text in pieces if _LETTER.search(text)]
    # The pieces joined in the source's order, an expression or tag between two of them
    # standing as one mark: a piece that begins or ends inside an HTML tag (`" class="x">`)
    # is read as the markup it is, not as words.
    text = _HIDDEN.sub(" ", _MARK.join(pieces))
    found = [v for v in _READ_ATTRIBUTES.findall(text) if _LETTER.search(v)]
    for piece in _TAG.split(text):
        piece = _ENTITY.sub(" ", piece.replace(_MARK, " "))
        if _LETTER.search(piece):
            found.append(" ".join(piece.split()))
    return found


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_template_says_every_word_through_the_catalogues(path: Path) -> None:
    html = path.suffix == ".html" or path.name.endswith(".html.j2")
    found = words_outside_the_catalogues(path.read_text(encoding="utf-8"), html)
    assert not found, found


def test_the_template_check_finds_a_bare_word_and_passes_a_translated_one() -> None:
    bare = '<p class="x">Your move</p><a title="Undo it" href="{{ u }}">{{ _("Undo") }}</a>'
    assert sorted(words_outside_the_catalogues(bare, html=True)) == ["Undo it", "Your move"]
    said = '<p class="x">{% trans %}Your move{% endtrans %}</p><script>let a = "b";</script>'
    assert words_outside_the_catalogues(said, html=True) == []
    assert words_outside_the_catalogues("Hello {{ name }},\n", html=False) == ["Hello"]
