"""Reading JSON a stranger sent: bounded in depth and in number size, text that can be stored.

Python's `json` parses what no client of the referee needs and what hurts
further on: nesting deep enough to exhaust the recursion limit (a
`RecursionError`), integers of thousands of digits (a `ValueError` from
the interpreter's digit limit, or seconds of arithmetic), `NaN` and
`Infinity`, lone UTF-16 surrogates (`"\\ud800"`), which are valid JSON
escapes but cannot be encoded as UTF-8, so neither SQLite nor PostgreSQL
can store them, and NUL, which PostgreSQL's text refuses. It also takes
an object that names a member twice, keeping the last: a validator in
front of the referee that keeps the first would read another move than
the one played (RFC 7493 §2.3 forbids duplicate names). `loads` refuses
all of them with `BadJSON`, whose message says what was wrong, and every
JSON body passes through it before any handler sees it (`check_request`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from flask import request

from api.http.errors import Problem
from api.schemas.limits import MAX_DEPTH, MAX_DIGITS
from referee.i18n import N_, _

# NUL is no text either: PostgreSQL refuses it in text columns.
_NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")


_TOO_DEEP = N_("the JSON nests deeper than {most} levels")
_NOT_TEXT_SAID = N_("a string holds NUL or a lone UTF-16 surrogate, which are not text")


class BadJSON(ValueError):
    """JSON the referee does not take; the message says why, for the sender."""


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise BadJSON(_("an integer has more than {most} digits").format(most=MAX_DIGITS))
    return int(text)


def _decimal(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise BadJSON(_("a number is too large"))
    return number


def _constant(text: str) -> Any:
    raise BadJSON(_("{text} is not a JSON number").format(text=text))


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise BadJSON(
                _("the name {name} appears twice in one object").format(name=json.dumps(name))
            )
        found[name] = value
    return found


def loads(text: str | bytes) -> Any:
    """The JSON value of `text`, or BadJSON when it is malformed or outside the bounds above."""
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object,
            parse_int=_integer,
            parse_float=_decimal,
            parse_constant=_constant,
        )
    except BadJSON:
        raise
    except RecursionError:
        raise BadJSON(_(_TOO_DEEP).format(most=MAX_DEPTH)) from None
    except UnicodeDecodeError:
        raise BadJSON(_("this is not UTF-8")) from None
    except ValueError as error:  # json.JSONDecodeError is one
        raise BadJSON(_("this is not valid JSON: {why}").format(why=error)) from None
    check(value)
    return value


def check(value: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings that cannot be encoded (BadJSON)."""
    # A walk with a list of its own, so that checking depth cannot itself recurse too deep.
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if _NOT_TEXT.search(item):
                raise BadJSON(_(_NOT_TEXT_SAID))
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise BadJSON(_(_TOO_DEEP).format(most=MAX_DEPTH))
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)


def check_request() -> None:
    """Before any handler: a JSON body must be one `loads` takes (else 400 bad_json)."""
    body = request.get_data(cache=True)
    if not request.is_json or not body:
        return
    try:
        loads(body)
    except BadJSON as error:
        raise Problem(400, "bad_json", str(error), errors={"json": [str(error)]}) from None
