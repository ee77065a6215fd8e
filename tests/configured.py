"""Running code of the referee in the test's own process against a database of the test's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from referee import settings


@contextmanager
def settings_with(**changes: Any) -> Iterator[settings.Settings]:
    """This process's settings with `changes` (e.g. `database_url=`) while the block runs."""
    before = settings.active()
    try:
        yield settings.use(replace(before, **changes))
    finally:
        settings.use(before)
