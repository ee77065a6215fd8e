"""The referee's settings: read from the environment once, then handed around as one object.

Every process (the web app, a worker, beat, mail-in, `referee serve`) builds
`Settings.from_environ()` at its entry point and installs it with
`use()`; the store, the queue and delivery read `active()`. Nothing else in
the project reads `os.environ`, so a setting has one name, one default and
one place where a bad value is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

DEFAULT_DATABASE_URL = "sqlite:///referee.sqlite3"


class BadSetting(ValueError):
    """An environment variable whose value cannot be used; the message names it."""


@dataclass(frozen=True, slots=True)
class Settings:
    """One value per environment variable (README, "Environment"), defaults filled in."""

    database_url: str = DEFAULT_DATABASE_URL
    # Unset: no broker, tasks run in the process that enqueues them.
    redis_url: str | None = None
    # Unset: anyone may create games.
    api_key: str | None = None
    queue: str = "referee"
    sweep_every: float = 10.0
    # "worker": each worker sends the sweeps itself; "beat": `referee beat` does.
    sweeps: str = "worker"
    sweep_after: float = 30.0
    bench_floor: bool = False
    # Unset: mail is written as .eml files into `mail_dir`.
    smtp_url: str | None = None
    mail_dir: str = "mail-out"
    mail_domain: str = "referee.localhost"
    # Unset: referee@<mail_domain>.
    mail_from: str | None = None
    public_url: str = "http://127.0.0.1:8000"
    # Unset: a random secret the database keeps.
    secret: str | None = None
    mail_backoff: float = 30.0
    mail_backoff_max: float = 3600.0
    mail_attempts: int = 25
    mail_lease: float = 120.0
    mail_max_bytes: int = 10 * 1024 * 1024
    mail_check_sender: bool = True
    # Both set: `referee mail-in` offers STARTTLS with this certificate chain and key (PEM).
    mail_tls_cert: str | None = None
    mail_tls_key: str | None = None

    def __post_init__(self) -> None:
        if self.sweeps not in ("worker", "beat"):
            raise BadSetting(f"REFEREE_SWEEPS must be 'worker' or 'beat', not {self.sweeps!r}")
        if (self.mail_tls_cert is None) != (self.mail_tls_key is None):
            raise BadSetting("REFEREE_MAIL_TLS_CERT and REFEREE_MAIL_TLS_KEY go together")

    @property
    def sender(self) -> str:
        return self.mail_from or f"referee@{self.mail_domain}"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment gives; an empty variable counts as unset."""
        environ = os.environ if environ is None else environ
        given: dict[str, Any] = {}
        for field in fields(cls):
            text = environ.get(ENVIRONMENT[field.name], "")
            if text == "":
                continue
            given[field.name] = _convert(
                ENVIRONMENT[field.name], text, cls.__dataclass_fields__[field.name].type
            )
        return cls(**given)


# The environment variable of each setting.
ENVIRONMENT = {
    "database_url": "DATABASE_URL",
    "redis_url": "REDIS_URL",
    "api_key": "REFEREE_API_KEY",
    "queue": "REFEREE_QUEUE",
    "sweep_every": "REFEREE_SWEEP_EVERY",
    "sweeps": "REFEREE_SWEEPS",
    "sweep_after": "REFEREE_SWEEP_AFTER",
    "bench_floor": "REFEREE_BENCH_FLOOR",
    "smtp_url": "SMTP_URL",
    "mail_dir": "REFEREE_MAIL_DIR",
    "mail_domain": "REFEREE_MAIL_DOMAIN",
    "mail_from": "REFEREE_MAIL_FROM",
    "public_url": "REFEREE_PUBLIC_URL",
    "secret": "REFEREE_SECRET",
    "mail_backoff": "REFEREE_MAIL_BACKOFF",
    "mail_backoff_max": "REFEREE_MAIL_BACKOFF_MAX",
    "mail_attempts": "REFEREE_MAIL_ATTEMPTS",
    "mail_lease": "REFEREE_MAIL_LEASE",
    "mail_max_bytes": "REFEREE_MAIL_MAX_BYTES",
    "mail_check_sender": "REFEREE_MAIL_CHECK_SENDER",
    "mail_tls_cert": "REFEREE_MAIL_TLS_CERT",
    "mail_tls_key": "REFEREE_MAIL_TLS_KEY",
}


def _convert(name: str, text: str, kind: Any) -> Any:
    # Annotations are strings here (`from __future__ import annotations`).
    kind = str(kind)
    try:
        if kind == "bool":
            if text not in ("0", "1"):
                raise ValueError(text)
            return text == "1"
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
    except ValueError:
        raise BadSetting(f"{name}={text!r} is not a valid {kind}") from None
    return text.rstrip("/") if name == "REFEREE_PUBLIC_URL" else text


_active: list[Settings] = []


def use(settings: Settings) -> Settings:
    """Make `settings` this process's (entry points call it once; tests may call it again)."""
    _active[:] = [settings]
    return settings


def active() -> Settings:
    """This process's settings: those `use` installed, else the environment's, read once."""
    if not _active:
        _active.append(Settings.from_environ())
    return _active[0]
