"""What every answer of the app carries, whichever blueprint (or none) made it.

`nosniff` on every answer: a browser must read JSON, problem+json, the
event stream and the board picture as the type they are served as, never
guess HTML or script from a body that holds what a stranger typed.

Redirects point at this site by a path only. Werkzeug answers some requests
with a redirect of its own (`/g//x` to `/g/x`, merging slashes; a missing
trailing slash), built from the request's Host header, which the sender
chooses: `Host: evil.example` would send a browser to evil.example. Such a
redirect is answered here instead, with the path alone, which keeps the
browser on the site it asked. The app's own redirects are paths already
(`url_for`).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from flask import Response, redirect, request
from werkzeug.routing import RequestRedirect
from werkzeug.wrappers import Response as AnyResponse


def nosniff(response: Response) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def path_of(url: str) -> str:
    """`url` without its scheme and host: a path, query and fragment on this site."""
    parts = urlsplit(url)
    # One leading slash only: "//host/..." (or "/\host") is another site to a browser.
    path = "/" + parts.path.lstrip("/\\")
    return urlunsplit(("", "", path, parts.query, parts.fragment))


def routing_redirect() -> AnyResponse | None:
    """Before any handler: Werkzeug's redirect of this request, if any, as a path."""
    found = request.routing_exception
    if isinstance(found, RequestRedirect):
        return redirect(path_of(found.new_url), found.code)
    return None
