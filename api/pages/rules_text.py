"""A game's rules page (`docs/rules/<game>.md`, in French `docs/rules/fr/<game>.md`)
as HTML, for `/rules/<game>`.

The rules pages are written in the small part of Markdown they use:
headings, paragraphs, lists (numbered or not, nested by indentation),
tables, and inline code, bold, italics and links. Everything is escaped
first, so the text can hold no markup of its own; a link to another game's
rules page leads to its page here, one inside the page to its heading, and
any other link is shown as its text.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

RULES = Path(__file__).resolve().parents[2] / "docs" / "rules"
# The languages the rules pages are written in, English first: it is the original,
# and the one shown when the reader asks for none of them.
LANGUAGES = ("en", "fr")

_HEADING = re.compile(r"(#{1,4}) (.+)")
_ITEM = re.compile(r"( *)([-*]|[0-9]+\.) (.*)")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_RULES_LINK = re.compile(r"(?:rules/)?([a-z_]+)\.md(#[a-z0-9-]+)?")


def slug(heading: str) -> str:
    """A heading's anchor, as the rules pages link to it (`#builders-maximum`)."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def _link(text: str, target: str) -> str:
    if target.startswith("#"):
        return f'<a href="{target}">{text}</a>'
    other = _RULES_LINK.fullmatch(target)
    if other is not None and (RULES / f"{other[1]}.md").is_file():
        return f'<a href="/rules/{other[1]}{other[2] or ""}">{text}</a>'
    return text


def inline(text: str) -> str:
    """One line's escaped text with its code, bold, italics and links."""
    codes: list[str] = []

    def keep(found: re.Match[str]) -> str:
        codes.append(f"<code>{found[1]}</code>")
        return f"\x00{len(codes) - 1}\x00"

    html = _CODE.sub(keep, escape(text, quote=False))
    html = _LINK.sub(lambda found: _link(found[1], found[2]), html)
    html = _BOLD.sub(r"<strong>\1</strong>", html)
    html = _ITALIC.sub(r"<em>\1</em>", html)
    return re.sub("\x00([0-9]+)\x00", lambda found: codes[int(found[1])], html)


def _table(rows: list[str]) -> str:
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    head, body = cells[0], cells[2:]
    out = ['<div class="table-wrap"><table><thead><tr>']
    out += [f'<th scope="col">{inline(cell)}</th>' for cell in head]
    out.append("</tr></thead><tbody>")
    for row in body:
        out.append("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _lists(items: list[tuple[int, str, str]]) -> str:
    """Items (indent, marker, text) as nested lists: deeper indents open a list inside."""
    out: list[str] = []
    open_lists: list[tuple[int, str]] = []
    for indent, marker, text in items:
        tag = "ol" if marker[0].isdigit() else "ul"
        while open_lists and indent < open_lists[-1][0]:
            out.append(f"</li></{open_lists.pop()[1]}>")
        if open_lists and indent == open_lists[-1][0]:
            out.append("</li>")
        else:
            out.append(f"<{tag}>")
            open_lists.append((indent, tag))
        out.append(f"<li>{inline(text)}")
    while open_lists:
        out.append(f"</li></{open_lists.pop()[1]}>")
    return "".join(out)


def _table_block(lines: list[str], at: int) -> tuple[str, int]:
    end = at
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return _table(lines[at:end]), end


def _list_block(lines: list[str], at: int) -> tuple[str, int]:
    items: list[tuple[int, str, str]] = []
    while at < len(lines) and lines[at].strip():
        item = _ITEM.fullmatch(lines[at])
        if item is not None:
            items.append((len(item[1]), item[2], item[3]))
        elif items:  # a continuation line of the item before
            indent, marker, text = items[-1]
            items[-1] = (indent, marker, f"{text} {lines[at].strip()}")
        at += 1
    return _lists(items), at


def _starts_block(line: str) -> bool:
    return not line.strip() or bool(
        _HEADING.fullmatch(line) or line.startswith("|") or _ITEM.fullmatch(line)
    )


def _paragraph_block(lines: list[str], at: int) -> tuple[str, int]:
    paragraph = [lines[at].strip()]
    at += 1
    while at < len(lines) and not _starts_block(lines[at]):
        paragraph.append(lines[at].strip())
        at += 1
    return f"<p>{inline(' '.join(paragraph))}</p>", at


def to_html(markdown: str) -> str:
    """The rules page as HTML; its title (`# ...`) left out for the page's own."""
    blocks: list[str] = []
    lines = markdown.splitlines()
    at = 0
    while at < len(lines):
        line = lines[at]
        heading = _HEADING.fullmatch(line)
        if not line.strip():
            at += 1
            continue
        if heading is not None:
            level = len(heading[1])
            if level > 1:  # the page has its own title
                blocks.append(f'<h{level} id="{slug(heading[2])}">{inline(heading[2])}</h{level}>')
            at += 1
            continue
        read = _table_block if line.startswith("|") else _paragraph_block
        if _ITEM.fullmatch(line):
            read = _list_block
        block, at = read(lines, at)
        blocks.append(block)
    return "\n".join(blocks) + "\n"


def source(game_name: str, language: str = "en") -> Path:
    """Where the game's rules page in `language` is (English at the top, others in a folder)."""
    folder = RULES if language == "en" else RULES / language
    return folder / f"{game_name}.md"


def languages(game_name: str) -> tuple[str, ...]:
    """The languages the game's rules page is installed in."""
    return tuple(language for language in LANGUAGES if source(game_name, language).is_file())


def rules_html(game_name: str, language: str = "en") -> str | None:
    """The game's rules page in `language` as HTML, None where that page is not installed."""
    try:
        return to_html(source(game_name, language).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
