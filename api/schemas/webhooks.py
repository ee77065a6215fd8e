"""A game's webhook: its URL, its health, and the secret deliveries are signed with."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.shared import Strict


class WebhookIn(Strict):
    # Checked by referee.webhooks (scheme, credentials, where the host resolves),
    # which answers with its own problem codes.
    url = fields.String(
        required=True,
        validate=validate.Length(min=1, max=2000),
        metadata={
            "format": "uri",
            "pattern": "^[hH][tT][tT][pP][sS]?://[^\\s/?#]+[^\\s]*$",
            "description": "an absolute http or https URL",
        },
    )


class WebhookStatusOut(Schema):
    url = fields.String(allow_none=True, required=True)
    active = fields.Boolean(
        required=True, metadata={"description": "set, and not switched off after failures"}
    )
    failures = fields.Integer(required=True, metadata={"description": "failed deliveries in a row"})
    last_error = fields.String(
        allow_none=True, required=True, metadata={"description": "why the last delivery failed"}
    )
    retry_at = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "no delivery before this time (backoff after a failure)"},
    )
    switched_off_at = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "when too many failures switched it off; PUT switches it on"},
    )
    max_failures = fields.Integer(
        required=True, metadata={"description": "failures in a row that switch it off"}
    )


_SIGNATURE_HELP = "how to check a delivery's signature"


class WebhookSecretOut(Schema):
    secret = fields.String(
        required=True,
        metadata={"description": "the HMAC-SHA256 key deliveries are signed with"},
    )
    signature = fields.String(required=True, metadata={"description": _SIGNATURE_HELP})


class WebhookOut(WebhookStatusOut, WebhookSecretOut):
    pass
