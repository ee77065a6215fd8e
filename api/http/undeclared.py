"""Requests the OpenAPI document does not describe are refused, as unknown body fields are.

After the blueprints are registered, the document says for each operation
which query parameters it takes and whether it reads a JSON body. Before a
request reaches its view, this refuses an undeclared query parameter or a
body sent where none is read (422 `bad_request`, with `errors` shaped as
webargs gives them), and a body that is not JSON where JSON is read (415),
instead of reading such a body as no body at all. Routes outside the
document (the game pages, `/openapi.json`) are let be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flask import Flask, request

from api.http.errors import Problem

_PATH_PARAMETER = re.compile(r"<(?:[^<>:]+:)?([^<>]+)>")


@dataclass(frozen=True)
class Declared:
    query: frozenset[str]
    json_body: bool


def _declared(document: dict[str, Any]) -> dict[tuple[str, str], Declared]:
    table: dict[tuple[str, str], Declared] = {}
    for path, item in document["paths"].items():
        shared = item.get("parameters", [])
        for method, operation in item.items():
            if method == "parameters":
                continue
            parameters = [*shared, *operation.get("parameters", [])]
            query = frozenset(p["name"] for p in parameters if p["in"] == "query")
            body = "application/json" in operation.get("requestBody", {}).get("content", {})
            table[(path, method.upper())] = Declared(query, body)
    return table


def _has_body() -> bool:
    return (
        bool(request.content_length)
        or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    )


def install(app: Flask, document: dict[str, Any]) -> None:
    """Check every request to an operation of `document` against what it declares."""
    table = _declared(document)

    @app.before_request
    def refuse_undeclared() -> None:
        rule = request.url_rule
        if rule is None:
            return
        declared = table.get((_PATH_PARAMETER.sub(r"{\1}", rule.rule), request.method))
        if declared is None:
            return
        unknown = sorted(set(request.args) - declared.query)
        if unknown:
            raise Problem(
                422,
                "bad_request",
                f"unknown query parameter: {', '.join(unknown)}",
                errors={"query": {name: ["Unknown field."] for name in unknown}},
            )
        if not _has_body():
            return
        if not declared.json_body:
            raise Problem(
                422,
                "bad_request",
                "this operation takes no body",
                errors={"json": ["this operation takes no body"]},
            )
        if not request.is_json:
            raise Problem(
                415,
                "unsupported_media_type",
                "send the body as JSON, with 'Content-Type: application/json'",
            )
