"""Answers that are not JSON (the game record, the board picture) and their media types.

Each is served as its own type (`application/x-ndjson`, `image/svg+xml`)
and also as `text/plain` to a client that asks for it. The document
declares both: generators that know only JSON and text (such as
openapi-python-client) keep the operation through the `text/plain` entry
instead of dropping it.
"""

from __future__ import annotations

from typing import Any

from flask import request

NDJSON = "application/x-ndjson"
SVG = "image/svg+xml"
TEXT = "text/plain"


def negotiated(own: str) -> str:
    """`own`, unless the request's Accept prefers plain text."""
    return request.accept_mimetypes.best_match([own, TEXT], default=own) or own


def text_response(description: str, own: str) -> dict[str, Any]:
    """The OpenAPI response of a text answer served as `own` or as plain text."""
    text = {"schema": {"type": "string"}}
    return {"description": description, "content": {own: text, TEXT: text}}
