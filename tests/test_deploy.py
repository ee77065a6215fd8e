"""deploy/ stays deployable: the compose file validates and the systemd units are complete.

`docker compose config` only parses (no engine needed); .ci/run installs
the compose plugin when it is missing, and without it this test fails.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def compose_config(*args: str, secret: bool = True) -> subprocess.CompletedProcess[str]:
    """`docker compose config ARGS` on deploy/compose.yaml, with or without REFEREE_SECRET."""
    docker = shutil.which("docker")
    assert docker is not None, "the docker client is needed (see .ci/run)"
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_SECRET"}
    if secret:
        env["REFEREE_SECRET"] = "a-secret-for-the-check"
    return subprocess.run(
        [docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "config", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_compose_file_validates() -> None:
    done = compose_config("--services")
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert services == {"db", "redis", "migrate", "web", "proxy", "worker", "beat", "mail-in"}


def test_compose_workers_leave_the_sweeps_to_beat() -> None:
    done = compose_config("--format", "json")
    assert done.returncode == 0, done.stderr
    services = json.loads(done.stdout)["services"]
    for name in ("worker", "beat", "web"):
        assert services[name]["environment"]["REFEREE_SWEEPS"] == "beat", name
    assert services["beat"]["command"][:2] == ["referee", "beat"]


def test_compose_puts_a_buffering_proxy_in_front_of_gunicorn() -> None:
    done = compose_config("--format", "json")
    assert done.returncode == 0, done.stderr
    services = json.loads(done.stdout)["services"]
    # Only the proxy (and mail-in) publish ports; gunicorn is reached through the proxy.
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy", "mail-in"}
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert [p["target"] for p in proxy["ports"]] == [8080]
    (mount,) = proxy["volumes"]
    assert Path(mount["source"]) == DEPLOY / "nginx.conf" and mount["read_only"]
    conf = (DEPLOY / "nginx.conf").read_text()
    for line in (
        "proxy_pass http://referee;",
        "server web:8000;",
        "proxy_request_buffering on;",
        "proxy_buffering on;",
        "client_max_body_size 64k;",
        "listen 8080;",
    ):
        assert line in conf, line
    assert services["web"]["environment"]["REFEREE_BIND"] == "0.0.0.0:8000"


def test_compose_refuses_to_run_without_a_secret() -> None:
    done = compose_config("--quiet", secret=False)
    assert done.returncode != 0 and "REFEREE_SECRET" in done.stderr


@pytest.mark.parametrize("unit", sorted(p.name for p in (DEPLOY / "systemd").glob("*.service")))
def test_systemd_unit(unit: str) -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(DEPLOY / "systemd" / unit)
    assert {"Unit", "Service", "Install"} <= set(parser.sections())
    service = parser["Service"]
    assert service["EnvironmentFile"] == "/etc/referee/env"
    assert service["Restart"] == "always"
    program = service["ExecStart"].split()[0]
    assert program.startswith("/opt/referee/.venv/bin/")
    assert Path(program).name in {"referee", "gunicorn"}
