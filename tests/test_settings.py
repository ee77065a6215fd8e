"""Settings are read from the environment once, in one place, with clear errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from api.http.throttle import is_trusted_proxy
from referee.settings import ENVIRONMENT, BadSetting, Settings

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_when_nothing_is_set() -> None:
    settings = Settings.from_environ({})
    assert settings == Settings()
    assert settings.redis_url is None and settings.api_key is None
    assert settings.sender == "referee@referee.localhost"


def test_every_variable_is_read_and_converted() -> None:
    environ = {
        "DATABASE_URL": "postgresql://db/referee",
        "REDIS_URL": "redis://cache:6379/1",
        "REFEREE_SWEEP_EVERY": "2.5",
        "REFEREE_SWEEPS": "beat",
        "REFEREE_MAIL_ATTEMPTS": "3",
        "REFEREE_MAIL_CHECK_SENDER": "0",
        "REFEREE_BENCH_FLOOR": "1",
        "REFEREE_PUBLIC_URL": "https://play.example.org/",
        "REFEREE_MAIL_DOMAIN": "play.example.org",
    }
    settings = Settings.from_environ(environ)
    assert settings.database_url == "postgresql://db/referee"
    assert settings.redis_url == "redis://cache:6379/1"
    assert settings.sweep_every == 2.5 and settings.sweeps == "beat"
    assert settings.mail_attempts == 3
    assert settings.mail_check_sender is False and settings.bench_floor is True
    assert settings.public_url == "https://play.example.org"
    assert settings.sender == "referee@play.example.org"


def test_an_empty_variable_counts_as_unset() -> None:
    assert Settings.from_environ({"REDIS_URL": "", "REFEREE_API_KEY": ""}) == Settings()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REFEREE_SWEEP_EVERY", "often"),
        ("REFEREE_MAIL_ATTEMPTS", "2.5"),
        ("REFEREE_MAIL_CHECK_SENDER", "yes"),
        ("REFEREE_SWEEPS", "cron"),
        ("REFEREE_WEBHOOK_DEADLINE", "0"),
        ("REFEREE_WEBHOOK_DEADLINE", "600"),
        ("REFEREE_WEBHOOK_MAX_FAILURES", "0"),
        ("REFEREE_MAIL_ANSWERS", "0"),
        ("REFEREE_MAIL_ANSWERS_WINDOW", "0"),
        ("REFEREE_MAIL_BOUNCES", "0"),
        ("REFEREE_WEBHOOK_ALLOW_PRIVATE", "yes"),
        ("REFEREE_DB_POOL", "many"),
        ("REFEREE_DB_POOL", "0"),
    ],
)
def test_a_bad_value_is_refused_naming_its_variable(name: str, value: str) -> None:
    with pytest.raises(BadSetting, match=name):
        Settings.from_environ({name: value})


@pytest.mark.parametrize("cores", [1, 2, 4, 8, 16])
def test_the_default_pools_of_a_host_fit_in_postgresqls_100_connections(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    pool = Settings().pool_size
    # 2 x cores gunicorn processes, two workers of 1 + cores processes, mail-in.
    processes = 2 * cores + 2 * (1 + cores) + 1
    assert pool >= 2
    assert pool * processes <= 90 or pool == 2
    assert Settings.from_environ({"REFEREE_DB_POOL": "7"}).pool_size == 7


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"REFEREE_IDLE_TIMEOUT": "0"}, "REFEREE_IDLE_TIMEOUT"),
        ({"REFEREE_EVENTS_PER_CLIENT": "0"}, "REFEREE_EVENTS_PER_CLIENT"),
        # A client at its share of streams would have no connection left to move with.
        ({"REFEREE_CLIENT_CONNECTIONS": "10"}, "REFEREE_CLIENT_CONNECTIONS"),
        ({"REFEREE_CONNECTIONS": "0"}, "REFEREE_CONNECTIONS"),
        ({"REFEREE_TRUSTED_PROXY": "10.0.0.1,proxy"}, "REFEREE_TRUSTED_PROXY"),
    ],
)
def test_connection_limits_that_do_not_fit_together_are_refused(
    environ: dict[str, str], named: str
) -> None:
    with pytest.raises(BadSetting, match=named):
        Settings.from_environ(environ)


def test_trusted_proxies_are_addresses_or_networks() -> None:
    chosen = Settings.from_environ({"REFEREE_TRUSTED_PROXY": "192.0.2.7, 10.0.0.0/8,fd00::/8"})
    trusted = ["192.0.2.7", "10.1.2.3", "fd00::1"]
    strangers = ["192.0.2.8", "11.0.0.1", "fe80::1", "unknown"]
    assert [is_trusted_proxy(peer, chosen) for peer in trusted] == [True] * 3
    assert [is_trusted_proxy(peer, chosen) for peer in strangers] == [False] * 4
    assert not is_trusted_proxy("127.0.0.1", Settings())


def test_every_setting_has_one_variable() -> None:
    assert set(ENVIRONMENT) == set(Settings.__dataclass_fields__)
    assert len(set(ENVIRONMENT.values())) == len(ENVIRONMENT)


def test_only_the_settings_module_reads_the_environment() -> None:
    readers = []
    for folder in ("referee", "api", "workers"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "settings.py" and path.parent.name == "referee":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                    readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert readers == []
