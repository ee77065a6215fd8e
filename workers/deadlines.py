"""The deadline sweep as a Celery task: reminders and timeouts, then delivery of what they wrote."""

from __future__ import annotations

from datetime import UTC, datetime

from referee.queue import DEADLINES, announce_changed, app, deliver_soon
from referee.store import deadlines


@app.task(name=DEADLINES)
def sweep_deadlines(at: str | None = None) -> dict[str, list[str]]:
    """Reminders and timeouts due at `at` (ISO 8601; default: now), then send what they wrote."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    swept = deadlines.sweep_deadlines(moment)
    for game_id in swept.timed_out:
        announce_changed(game_id)
    if swept.reminded or swept.timed_out:
        deliver_soon()
    return {"reminded": swept.reminded, "timed_out": swept.timed_out}
