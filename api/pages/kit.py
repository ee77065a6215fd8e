"""What every page shares: headers (CSP, referrer policy, no-store), cookies, CSRF checks,
error pages, and access logs with the secrets of links cut out.

Forms are protected against cross-site requests three times: cookies are
SameSite=Strict, a browser's `Origin` must be that of REFEREE_PUBLIC_URL,
and each form carries a per-browser token that must equal the `csrf`
cookie (a double-submit token, which needs no server secret and so works
across gunicorn processes). Cookies are `Secure` when the public URL is
https, also behind a proxy that ends TLS and speaks plain HTTP to us.

The pages whose URL holds a secret (a seat's personal link, a mail's
play-now link, a sign-in link) are sent with `Referrer-Policy: no-referrer`
(other pages with `same-origin`, so nothing leaves the site), and the
access logs of the development server and gunicorn show those links with
their token cut out (`redact`).

Every page's blueprint is served under one blueprint, `pages` (`pages`
builds it for each app): its headers, error pages, templates and static
files are theirs.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from flask import Blueprint, Response, g, render_template, request
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from api.http.context import referee
from api.http.errors import Problem, status_of
from referee.games.reasons import reason_words
from referee.i18n import N_, _
from referee.service import refusals

JSONish = dict[str, Any]

CSRF_COOKIE = "csrf"

CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def bdi(name: str) -> Markup:
    """A player's name isolated from the text around it (`<bdi>`): a right-to-left
    name cannot reorder the words and numbers beside it."""
    return Markup("<bdi>{}</bdi>").format(name)


# Where a player's profile is (`api/pages/players.py`): a path built by hand, as lists
# of hundreds of names link it and `url_for` costs more than the rest of a row.
PROFILE_PATH = "/p/"


def player(name: str, shown: str | None = None) -> Markup:
    """A player's public name linking its profile, isolated as `bdi` isolates it; `shown`:
    the words to show instead (a seat's name in a game). The one way pages link a player:
    give it public names only, never an address."""
    href = PROFILE_PATH + quote(name, safe="")
    return Markup('<a class="player" href="{}"><bdi>{}</bdi></a>').format(
        href, name if shown is None else shown
    )


_WHOLE = re.compile(r"[0-9]{1,9}")
# Personal links, and the accept, unsubscribe, sign-in and play-now links of mails, hold secrets.
_SEAT_PATH = re.compile(r"(/seat/|/accept/|/unsubscribe/|/me/sign-in/|/play/)[^/\s?\"']+")


def redact(text: str) -> str:
    """`text` with the token of any personal link cut out."""
    return _SEAT_PATH.sub(r"\1<token>", text)


class RedactSeatLinks(logging.Filter):
    """Cuts seat tokens out of access log lines (werkzeug's and gunicorn's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {
                k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()
            }
        return True


def install_log_redaction() -> None:
    for name in ("werkzeug", "gunicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSeatLinks) for f in logger.filters):
            logger.addFilter(RedactSeatLinks())


# -- cookies and CSRF --------------------------------------------------------


def csrf_token() -> str:
    """This browser's form token (made on first use, set as a cookie after the request)."""
    token = getattr(g, "csrf", None)
    if token is None:
        given = request.cookies.get(CSRF_COOKIE, "")
        token = given if 20 <= len(given) <= 100 else secrets.token_urlsafe(24)
        g.csrf = token
    return str(token)


def public_origin() -> str:
    """The origin (scheme, host, port) of REFEREE_PUBLIC_URL: where forms are served from."""
    parts = urlsplit(referee().settings.public_url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def secure_cookies() -> bool:
    """Cookies go over HTTPS only when the public URL is https (a proxy may end TLS before us)."""
    return request.is_secure or referee().settings.public_url.lower().startswith("https://")


def forget_cookie(response: Response, name: str, path: str) -> Response:
    """`response`, making the browser forget the strict, script-proof cookie `name` of `path`."""
    response.delete_cookie(
        name, path=path, secure=secure_cookies(), httponly=True, samesite="Strict"
    )
    return response


def check_csrf(referrerless: bool = False) -> None:
    """Refuse a form not sent from this site. `referrerless`: the form's page is sent
    with `Referrer-Policy: no-referrer`, so a browser sends its Origin as "null"; the
    form token, a SameSite=Strict cookie, still proves the form is this site's."""
    # The Origin a browser sends is compared with the configured public URL, not
    # with the Host header, which the sender controls. A request without one
    # (an old browser, a script) still needs the form token below.
    origin = request.headers.get("Origin")
    if referrerless and origin == "null":
        origin = None
    if origin is not None and origin.rstrip("/").lower() != public_origin():
        raise Problem(403, "forbidden", _("This form was sent from another site."))
    cookie = request.cookies.get(CSRF_COOKIE, "")
    given = request.form.get("csrf", "")
    if not cookie or not hmac.compare_digest(cookie.encode(), given.encode()):
        raise Problem(
            403,
            "forbidden",
            _(
                "This form has expired or was not sent from this site: "
                "reload the page and try again."
            ),
        )


def keep_csrf_cookie(response: Response) -> None:
    """Set the form token this request made (`csrf_token`) as the browser's cookie."""
    token = getattr(g, "csrf", None)
    if token is not None and request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(
            CSRF_COOKIE, token, httponly=True, samesite="Strict", secure=secure_cookies()
        )


def whole_number(text: str) -> bool:
    """ASCII digits, few enough for `int` (str.isdigit also takes '²' and other scripts' digits)."""
    return _WHOLE.fullmatch(text) is not None


_SECRET_PAGES = ("pages.seat_links.seat", "pages.seat_links.play", "pages.sign_in.link")
# What is the same for every browser and every day, which a cache may keep: the assets,
# and the lobby's pictures of each game.
_SAME_FOR_ALL = ("pages.static", "pages.lobby.picture")


def _headers(response: Response) -> Response:
    keep_csrf_cookie(response)
    response.headers.setdefault("Content-Security-Policy", CSP)
    # The pages whose URL holds a secret (the personal, play-now and sign-in links) send
    # no referrer at all; other pages send it only to this site (no-referrer everywhere
    # would make forms' Origin "null").
    policy = "no-referrer" if request.endpoint in _SECRET_PAGES else "same-origin"
    response.headers["Referrer-Policy"] = policy
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    if request.endpoint not in _SAME_FOR_ALL:
        response.headers["Cache-Control"] = "no-store"
    return response


def here() -> str | None:
    """This page's path and query: where the language switch brings the reader back. None
    on a page whose address holds a secret: it shows no switch, which would copy the
    secret into its form and set a form token on a page that must set nothing."""
    if request.endpoint in _SECRET_PAGES or _SEAT_PATH.search(request.path):
        return None
    query = request.query_string.decode("latin-1")
    return request.path + (f"?{query}" if query else "")


def _template_globals() -> dict[str, Any]:
    return {"csrf_token": csrf_token, "here": here}


def _problem_page(error: Problem) -> tuple[str, int, dict[str, str]]:
    page = render_template("web/error.html", status=error.status, detail=error.detail)
    return page, error.status, error.headers


def _refusal_page(refused: refusals.Refusal) -> tuple[str, int]:
    status = status_of(refused)
    page = render_template("web/error.html", status=status, detail=reason_words(refused.reason))
    return page, status


# What the error page says of Werkzeug's errors, in the reader's language (its own
# descriptions are English).
_HTTP_DETAILS = {
    400: N_("The request was not understood."),
    404: N_("There is nothing at this address."),
    405: N_("This address does not take that kind of request."),
    413: N_("What was sent is too large."),
    500: N_("Something went wrong on the referee's side: try again soon."),
}


def _http_page(error: HTTPException) -> tuple[str, int]:
    status = error.code or 500
    detail = _(_HTTP_DETAILS[status]) if status in _HTTP_DETAILS else error.description
    return render_template("web/error.html", status=status, detail=detail), status


def pages(*children: Blueprint) -> Blueprint:
    """The blueprint of the pages, made for one app: the `children` pages' blueprints under
    it, with the pages' headers (CSP, cookies, no-store) and error pages, the templates, and
    the static files at /assets."""
    parent = Blueprint(
        "pages",
        __name__,
        template_folder="../templates",
        static_folder="../static",
        static_url_path="/assets",
    )
    parent.add_app_template_filter(bdi, "bdi")
    parent.add_app_template_filter(player, "player")
    parent.app_context_processor(_template_globals)
    parent.after_request(_headers)
    parent.register_error_handler(Problem, _problem_page)
    parent.register_error_handler(refusals.Refusal, _refusal_page)
    parent.register_error_handler(HTTPException, _http_page)
    for child in children:
        parent.register_blueprint(child)
    return parent
