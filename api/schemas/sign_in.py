"""Asking for a sign-in link: a mail address, and the answer that is the same for every one."""

from __future__ import annotations

from marshmallow import fields, validate

from api.schemas.shared import PRINTABLE, Strict

# The longest address RFC 3696 allows (its errata: 254 in practice); longer is no address.
MAX_EMAIL = 320


class SignInIn(Strict):
    email = fields.String(
        required=True,
        validate=[validate.Length(min=1, max=MAX_EMAIL), PRINTABLE],
        metadata={"description": "the player's mail address"},
    )


class SignInAskedOut(Strict):
    detail = fields.String(
        required=True, metadata={"description": "the same words whatever the address"}
    )
