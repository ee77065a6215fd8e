"""A seat's webhook in a game: its notifications POSTed to a URL as signed JSON.

Served under the games' blueprint (`api/rest/games.py`), as part of a game:
`/v1/games/{game_id}/webhook`.
"""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http import seat_auth
from api.http.context import find, referee, session
from api.http.errors import BAD_QUERY, NO_GAME, NO_SEAT, NOT_JSON, SCOPE, declared
from api.schemas.webhooks import WebhookIn, WebhookOut, WebhookSecretOut, WebhookStatusOut
from referee.service import webhooks as hooks
from referee.service.players import PLAY, READ

blp = Blueprint("webhooks", __name__, url_prefix="/<game_id>/webhook")


@blp.route("", methods=["PUT"])
@blp.arguments(WebhookIn())
@blp.response(200, WebhookOut)
@blp.doc(
    operationId="setWebhook",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            400: "bad_json: the body is not JSON",
            401: NO_SEAT,
            403: SCOPE,
            404: NO_GAME,
            415: NOT_JSON,
            422: "bad_request: an unknown field (`errors`); or a URL the referee will not "
            "post to: webhook_bad_url, webhook_credentials, webhook_unresolvable, "
            "webhook_forbidden_address",
        }
    ),
)
def set_webhook(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Have the caller's notifications POSTed to `url` as signed JSON, besides any mail.

    Setting it again switches a webhook back on after failures switched it off.
    """
    done = hooks.set_webhook(referee(), game_id, seat_auth.caller(), body["url"])
    return {**_health(done.health), **_secret(done.secret)}


@blp.route("", methods=["GET"])
@blp.response(200, WebhookStatusOut)
@blp.doc(
    operationId="getWebhook",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared({401: NO_SEAT, 403: SCOPE, 404: NO_GAME, 422: BAD_QUERY}),
)
def get_webhook(game_id: str) -> dict[str, Any]:
    """The caller's webhook and its health: failures, the last error, backoff, switched off."""
    return _health(hooks.webhook_health(referee(), *_caller_seat(game_id, READ)))


@blp.route("", methods=["DELETE"])
@blp.response(200, WebhookStatusOut)
@blp.doc(
    operationId="deleteWebhook",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared({401: NO_SEAT, 403: SCOPE, 404: NO_GAME, 422: BAD_QUERY}),
)
def drop_webhook(game_id: str) -> dict[str, Any]:
    """Stop POSTing the caller's notifications (the answer holds no secret)."""
    return _health(hooks.drop_webhook(referee(), *_caller_seat(game_id, PLAY)))


@blp.route("/secret", methods=["POST"])
@blp.response(200, WebhookSecretOut)
@blp.doc(
    operationId="rotateWebhookSecret",
    security=seat_auth.AS_SEAT,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared({401: NO_SEAT, 403: SCOPE, 404: NO_GAME, 422: BAD_QUERY}),
)
def rotate_webhook_secret(game_id: str) -> dict[str, Any]:
    """A new signing secret for the caller's webhook; the old one signs nothing more."""
    return _secret(hooks.rotate_secret(referee(), *_caller_seat(game_id, PLAY)))


def _caller_seat(game_id: str, scope: str) -> tuple[str, int]:
    """The game and the seat of the bearer token, which this request needs, for `scope`."""
    with session() as db:
        game = find(db, game_id)
        return game.id, seat_auth.seat(db, game.id, scope)


def _health(health: hooks.Health) -> dict[str, Any]:
    return {
        "url": health.url,
        "active": health.active,
        "failures": health.failures,
        "last_error": health.last_error,
        "retry_at": health.retry_at,
        "switched_off_at": health.switched_off_at,
        "max_failures": referee().settings.webhook_max_failures,
    }


def _secret(secret: str) -> dict[str, Any]:
    return {
        "secret": secret,
        "signature": "X-Referee-Signature: sha256=<hex HMAC-SHA256(secret, "
        "X-Referee-Timestamp + '.' + body)>",
    }
