"""Asking for a sign-in link over REST: the same answer whatever the address.

The answer is 202 with one body and one set of headers for every address
(a player's, an unknown one, a stopped one, one that got a link a minute
ago), and the request does the same work for each: it hands the address
to the queue (`signing_in.ask_sign_in`) and reads nothing, so neither the
answer nor its time tells whether the address is a player's.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http.context import referee
from api.http.errors import NOT_JSON, declared
from api.schemas.sign_in import SignInAskedOut, SignInIn
from referee.service import signing_in

blp = Blueprint(
    "signing_in", __name__, url_prefix="/v1/players/sign-in", description="Signing in by mail"
)

ASKED = (
    f"If this address is a player's, a sign-in link valid {signing_in.LINK_MINUTES} minutes "
    f"is on its way to it (at most one every {signing_in.EVERY_MINUTES} minutes)."
)


@blp.route("", methods=["POST"])
@blp.arguments(SignInIn())
@blp.response(202, SignInAskedOut)
@blp.doc(
    operationId="askSignIn",
    **declared(
        {
            400: "bad_json: the body is not JSON",
            415: NOT_JSON,
            422: "bad_request: a body that is not `{email: string}` (`errors`)",
        }
    ),
)
def ask_sign_in(body: dict[str, Any]) -> tuple[dict[str, str], int]:
    """Ask for a one-time sign-in link by mail; the answer is the same for every address.

    A player's address gets one mail with a link to `/me/sign-in/<token>`,
    valid 30 minutes and good for one sign-in, at most one such mail every
    5 minutes; any other address gets nothing.
    """
    signing_in.ask_sign_in(referee(), body["email"])
    return {"detail": ASKED}, 202
