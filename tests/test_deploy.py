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


def test_compose_file_validates() -> None:
    docker = shutil.which("docker")
    assert docker is not None, "the docker client is needed (see .ci/run)"
    env = {**os.environ, "REFEREE_SECRET": "a-secret-for-the-check"}
    done = subprocess.run(
        [docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "config", "--services"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert services == {"db", "redis", "migrate", "web", "worker", "beat", "mail-in"}


def test_compose_workers_leave_the_sweeps_to_beat() -> None:
    docker = shutil.which("docker")
    assert docker is not None
    env = {**os.environ, "REFEREE_SECRET": "a-secret-for-the-check"}
    done = subprocess.run(
        [docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "config", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    services = json.loads(done.stdout)["services"]
    for name in ("worker", "beat", "web"):
        assert services[name]["environment"]["REFEREE_SWEEPS"] == "beat", name
    assert services["beat"]["command"][:2] == ["referee", "beat"]


def test_compose_refuses_to_run_without_a_secret() -> None:
    docker = shutil.which("docker")
    assert docker is not None
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_SECRET"}
    done = subprocess.run(
        [docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
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
