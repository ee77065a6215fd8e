"""The referee's settings: read from the environment once, then handed around as one object.

Every process (the web app, a worker, beat, mail-in, `referee serve`) builds
`Settings.from_environ()` once at its entry point and hands it down, to
`create_app(settings)` or to the service's `Referee(settings)`; nothing
reads it from a process-wide global. Nothing else in the project reads
`os.environ`, so a setting has one name, one default and one place where a
bad value is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any

from limits import parse

from referee import pace

DEFAULT_DATABASE_URL = "sqlite:///referee.sqlite3"
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"


class BadSetting(ValueError):
    """An environment variable whose value cannot be used; the message names it."""


@dataclass(frozen=True, slots=True)
class Settings:
    """One value per environment variable (docs/operations.md, "Settings"), defaults filled in."""

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
    public_url: str = DEFAULT_PUBLIC_URL
    # Unset: a random secret the database keeps.
    secret: str | None = None
    mail_backoff: float = 30.0
    mail_backoff_max: float = 3600.0
    mail_attempts: int = 25
    mail_lease: float = 120.0
    mail_max_bytes: int = 10 * 1024 * 1024
    mail_check_sender: bool = True
    # Answers to one seat's replies (refusals, help, board, moves not played) in any
    # `mail_answers_window` seconds: past them a robot's replies are read, not answered.
    mail_answers: int = 10
    mail_answers_window: float = 86400.0
    # Hard bounces (RFC 3464 reports, `Action: failed`, 5.x.x) after which an address
    # is no longer mailed, until it shows a sign of life.
    mail_bounces: int = 3
    # Seconds a turn mail waits while its seat's game page is open: answered there
    # meanwhile, it is not sent (0: never held).
    mail_page_hold: float = 60.0
    # `referee serve`: requests served at once, and its access log ("-": stdout,
    # a file name, or None: no log, which an empty variable asks for).
    threads: int = 16
    access_log: str | None = "-"
    # `GET .../events`: seconds between keepalive comments, and the most
    # streams one API process holds open (each holds one of its threads).
    events_keepalive: float = 15.0
    events_max: int = 100
    # ... and the most of those streams one client may hold in one process.
    events_per_client: int = 10
    # Connections one API process keeps open besides event streams (`referee
    # serve`'s connection limit, gunicorn's worker_connections); those one client
    # address may hold in `referee serve`; and the seconds a connection with no
    # request under way may stay silent there before it is closed.
    connections: int = 1000
    client_connections: int = 32
    idle_timeout: int = 10
    # Expensive reads (pages, pictures, records, verify) one process computes at
    # once, and the seconds one may wait for its turn before a 503 (api/http/expensive.py).
    expensive_reads: int = 1
    expensive_wait: float = 30.0
    # Seconds one webhook delivery may take in all, lookup to last byte.
    webhook_deadline: float = 10.0
    # Failures in a row after which a seat's webhook is switched off.
    webhook_max_failures: int = 10
    # Tests and closed networks only: let webhooks reach non-public addresses.
    webhook_allow_private: bool = False
    # PostgreSQL connections each process may hold; unset: `pool_size` works it out.
    db_pool: int | None = None
    # How often one client (by address) may create games and submit moves
    # ("N/second|minute|hour|day", as the `limits` package reads them).
    rate_create: str = "30/hour"
    rate_moves: str = "600/minute"
    # Comma-separated addresses (or networks) of proxies whose X-Forwarded-For is believed.
    trusted_proxies: str | None = None
    # Seconds before a game may mail an unaccepted address another invitation.
    invite_every: float = 86400.0
    # Both set: `referee mail-in` offers STARTTLS with this certificate chain and key (PEM).
    mail_tls_cert: str | None = None
    mail_tls_key: str | None = None
    # Days of vacation each player may take in any 365 days in a row (`referee.service.vacations`).
    vacation_days: int = 30
    # Days finished games keep their cached states, and notices their delivery rows
    # (`referee.service.trimming`).
    keep_days: int = 90
    # Days an open game waits for players before it expires, how many open games one
    # player may hold, and how often one player may post, join or leave them.
    seek_days: int = 14
    seeks_per_player: int = 10
    rate_seeks: str = "60/hour"
    # Seconds a bot thinks over each move; kept on each game at its creation.
    bot_seconds: float = 2.0
    # How fast this machine thinks against the one the bots' rates were measured
    # on (`referee.service.bot_pace`); unset: measured once per process.
    bot_pace: float | None = None

    def __post_init__(self) -> None:
        if self.sweeps not in ("worker", "beat"):
            raise BadSetting(f"REFEREE_SWEEPS must be 'worker' or 'beat', not {self.sweeps!r}")
        if not 0 < self.events_keepalive <= 3600:
            raise BadSetting("REFEREE_EVENTS_KEEPALIVE must be above 0 and at most 3600 seconds")
        if self.events_max < 0:
            raise BadSetting("REFEREE_EVENTS_MAX must be 0 or more")
        self._check_connections()
        if not 0 < self.webhook_deadline < self.mail_lease:
            raise BadSetting(
                "REFEREE_WEBHOOK_DEADLINE must be above 0 and below REFEREE_MAIL_LEASE "
                f"({self.mail_lease:g}), not {self.webhook_deadline:g}"
            )
        if self.expensive_reads < 1:
            raise BadSetting("REFEREE_EXPENSIVE_READS must be 1 or more")
        if not 0 <= self.expensive_wait <= 3600:
            raise BadSetting("REFEREE_EXPENSIVE_WAIT must be from 0 to 3600 seconds")
        self._check_mail_limits()
        if self.webhook_max_failures < 1:
            raise BadSetting("REFEREE_WEBHOOK_MAX_FAILURES must be at least 1")
        if self.db_pool is not None and self.db_pool < 1:
            raise BadSetting(f"REFEREE_DB_POOL must be 1 or more, not {self.db_pool}")
        for name in ("rate_create", "rate_moves", "rate_seeks"):
            try:
                parse(getattr(self, name))
            except ValueError:
                raise BadSetting(
                    f"{ENVIRONMENT[name]} must be a rate such as 30/hour, "
                    f"not {getattr(self, name)!r}"
                ) from None
        if (self.mail_tls_cert is None) != (self.mail_tls_key is None):
            raise BadSetting("REFEREE_MAIL_TLS_CERT and REFEREE_MAIL_TLS_KEY go together")
        if not 0 <= self.vacation_days <= 366:
            raise BadSetting("REFEREE_VACATION_DAYS must be from 0 to 366")
        if not 1 <= self.keep_days <= 3650:
            raise BadSetting("REFEREE_KEEP_DAYS must be from 1 to 3650")
        self._check_seeks()

    def _check_seeks(self) -> None:
        if not 1 <= self.seek_days <= 365:
            raise BadSetting("REFEREE_SEEK_DAYS must be from 1 to 365")
        if self.seeks_per_player < 1:
            raise BadSetting("REFEREE_SEEKS_PER_PLAYER must be 1 or more")

    def _check_connections(self) -> None:
        proxy_networks(self.trusted_proxies)
        if not 1 <= self.idle_timeout <= 3600:
            raise BadSetting("REFEREE_IDLE_TIMEOUT must be from 1 to 3600 seconds")
        if self.events_per_client < 1:
            raise BadSetting("REFEREE_EVENTS_PER_CLIENT must be 1 or more")
        # A client following as many games as it may still has a connection to move with.
        if self.client_connections <= self.events_per_client:
            raise BadSetting(
                "REFEREE_CLIENT_CONNECTIONS must be above REFEREE_EVENTS_PER_CLIENT "
                f"({self.events_per_client}), not {self.client_connections}"
            )
        if self.connections < 1:
            raise BadSetting("REFEREE_CONNECTIONS must be 1 or more")

    def _check_mail_limits(self) -> None:
        if not 0 <= self.mail_page_hold <= 3600:
            raise BadSetting("REFEREE_MAIL_PAGE_HOLD must be 0 to 3600 seconds")
        if self.mail_answers < 1 or self.mail_answers_window <= 0:
            raise BadSetting(
                "REFEREE_MAIL_ANSWERS must be at least 1 and REFEREE_MAIL_ANSWERS_WINDOW above 0"
            )
        if self.mail_bounces < 1:
            raise BadSetting("REFEREE_MAIL_BOUNCES must be at least 1")
        if not 0 < self.bot_seconds <= 60:
            raise BadSetting("REFEREE_BOT_SECONDS lies above 0 and at most 60")
        if self.bot_pace is not None and not pace.is_pace(self.bot_pace):
            raise BadSetting(f"REFEREE_BOT_PACE lies {pace.BOUNDS_TEXT}")

    @property
    def delivery_queue(self) -> str:
        """The Celery queue of outbound delivery (mail, webhooks), apart from deciding."""
        return f"{self.queue}.delivery"

    @property
    def bots_queue(self) -> str:
        """The Celery queue of the bots' moves, apart from deciding: a bot thinks for
        seconds, a decision takes milliseconds."""
        return f"{self.queue}.bots"

    @property
    def pool_size(self) -> int:
        """Connections per process: `db_pool`, else a share of PostgreSQL's default 100.

        One host of the default deployment runs 2 x cores gunicorn processes,
        two workers of (cores + 1) processes each (the main one and its pool)
        and mail-in: 4 x cores + 3 processes, each with a pool of its own.
        90 connections shared among them leave 10 for migrations, psql and
        PostgreSQL's reserved slots. Never fewer than 2, so that a session
        opened inside another cannot wait forever for a connection.
        """
        if self.db_pool is not None:
            return self.db_pool
        return max(2, 90 // (4 * (os.cpu_count() or 1) + 3))

    @property
    def sender(self) -> str:
        return self.mail_from or f"referee@{self.mail_domain}"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment gives; an empty variable counts as unset
        (for the access log: as none)."""
        environ = os.environ if environ is None else environ
        given: dict[str, Any] = {}
        for field in fields(cls):
            name = ENVIRONMENT[field.name]
            if name not in environ:
                continue
            text = environ[name]
            if text == "":
                if field.name in _EMPTY_MEANS_NONE:
                    given[field.name] = None
                continue
            given[field.name] = _convert(name, text, str(field.type))
        return cls(**given)


def proxy_networks(given: str | None) -> tuple[IPv4Network | IPv6Network, ...]:
    """The addresses and networks (`10.0.0.0/8`) of REFEREE_TRUSTED_PROXY's comma-separated list."""
    found = []
    for word in (given or "").split(","):
        if word.strip():
            try:
                found.append(ip_network(word.strip(), strict=False))
            except ValueError:
                raise BadSetting(
                    f"REFEREE_TRUSTED_PROXY names addresses or networks, not {word.strip()!r}"
                ) from None
    return tuple(found)


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
    "mail_answers": "REFEREE_MAIL_ANSWERS",
    "mail_answers_window": "REFEREE_MAIL_ANSWERS_WINDOW",
    "mail_bounces": "REFEREE_MAIL_BOUNCES",
    "mail_page_hold": "REFEREE_MAIL_PAGE_HOLD",
    "threads": "REFEREE_THREADS",
    "access_log": "REFEREE_ACCESS_LOG",
    "events_keepalive": "REFEREE_EVENTS_KEEPALIVE",
    "events_max": "REFEREE_EVENTS_MAX",
    "events_per_client": "REFEREE_EVENTS_PER_CLIENT",
    "connections": "REFEREE_CONNECTIONS",
    "client_connections": "REFEREE_CLIENT_CONNECTIONS",
    "idle_timeout": "REFEREE_IDLE_TIMEOUT",
    "expensive_reads": "REFEREE_EXPENSIVE_READS",
    "expensive_wait": "REFEREE_EXPENSIVE_WAIT",
    "webhook_deadline": "REFEREE_WEBHOOK_DEADLINE",
    "webhook_max_failures": "REFEREE_WEBHOOK_MAX_FAILURES",
    "webhook_allow_private": "REFEREE_WEBHOOK_ALLOW_PRIVATE",
    "db_pool": "REFEREE_DB_POOL",
    "rate_create": "REFEREE_RATE_CREATE",
    "rate_seeks": "REFEREE_RATE_SEEKS",
    "seek_days": "REFEREE_SEEK_DAYS",
    "keep_days": "REFEREE_KEEP_DAYS",
    "seeks_per_player": "REFEREE_SEEKS_PER_PLAYER",
    "rate_moves": "REFEREE_RATE_MOVES",
    "trusted_proxies": "REFEREE_TRUSTED_PROXY",
    "invite_every": "REFEREE_INVITE_EVERY",
    "mail_tls_cert": "REFEREE_MAIL_TLS_CERT",
    "mail_tls_key": "REFEREE_MAIL_TLS_KEY",
    "vacation_days": "REFEREE_VACATION_DAYS",
    "bot_seconds": "REFEREE_BOT_SECONDS",
    "bot_pace": "REFEREE_BOT_PACE",
}
# Settings where an empty variable says "none" instead of "the default".
_EMPTY_MEANS_NONE = {"access_log"}


def _convert(name: str, text: str, kind: Any) -> Any:
    # Annotations are strings here (`from __future__ import annotations`).
    kind = str(kind).removesuffix(" | None")
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
