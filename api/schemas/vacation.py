"""The schemas of a player's vacation (`/v1/me/vacation`), and the answer the API and the
page give of it (`shown`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from marshmallow import Schema, ValidationError, fields

from api.schemas.shared import Strict
from referee.service.vacations import Standing
from referee.store.clock import stamp

_TIME = "an ISO 8601 time with its offset, such as 2026-12-20T08:00:00Z"


class UtcTime(fields.AwareDateTime):
    """An ISO 8601 time with an offset (a time without one is refused), taken in UTC."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        found: datetime = super()._deserialize(value, attr, data, **kwargs)
        try:
            return found.astimezone(UTC)
        except OverflowError:
            raise ValidationError("a time within the years 1 to 9999 in UTC") from None


class VacationIn(Strict):
    starts_at = UtcTime(
        data_key="from",
        load_default=None,
        allow_none=True,
        metadata={"description": f"when it begins ({_TIME}); omitted or null: now"},
    )
    ends_at = UtcTime(
        data_key="until",
        required=True,
        metadata={"description": f"when it ends and the clocks run again ({_TIME})"},
    )


class AwayOut(Schema):
    starts_at = fields.String(data_key="from", required=True)
    ends_at = fields.String(data_key="until", required=True)
    ongoing = fields.Boolean(
        required=True, metadata={"description": "under way (else: planned, seen by no one else)"}
    )
    days = fields.Integer(
        required=True,
        metadata={"description": "the days of the allowance it takes: each day (UTC) it touches"},
    )


class VacationOut(Schema):
    vacation = fields.Nested(
        AwayOut,
        required=True,
        allow_none=True,
        metadata={"description": "the vacation under way or planned; null: none"},
    )
    allowance = fields.Integer(
        required=True,
        metadata={
            "description": "the most vacation days in any 365 days in a row "
            "(REFEREE_VACATION_DAYS): each day (UTC) any part of which is on vacation counts"
        },
    )
    days_left = fields.Integer(
        required=True,
        metadata={
            "description": "the vacation days that fit on any dates from today (UTC) on, "
            "besides those taken and planned: `allowance` less the most days taken or planned "
            "in any 365 days in a row that end today or later (more may fit on some dates)"
        },
    )


def shown(found: Standing) -> dict[str, Any]:
    """A player's vacation and allowance as the API and the page give them."""
    away = found.vacation
    return {
        "vacation": None
        if away is None
        else {
            "starts_at": stamp(away.starts_at),
            "ends_at": stamp(away.ends_at),
            "ongoing": away.ongoing,
            "days": away.days,
        },
        "allowance": found.allowance,
        "days_left": found.days_left,
    }
