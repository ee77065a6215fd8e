"""deploy/ stays deployable: the compose file is well-formed and the systemd units complete.

The compose file is read as `docker compose config` reads it — YAML with
its anchors and merge keys, `${VAR}`, `${VAR:-default}` and
`${VAR:?error}` interpolated from the environment — and then checked for
what compose would refuse: unknown keys, a service with neither image nor
build, `depends_on` naming no service or waiting for the health of one
without a healthcheck, undeclared named volumes, bad ports or restart
policies, a replica count that is not a number. No Docker is needed.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
COMPOSE = DEPLOY / "compose.yaml"

TOP_KEYS = {"version", "name", "services", "networks", "volumes", "secrets", "configs", "include"}
SERVICE_KEYS = {
    *("build", "image", "restart", "environment", "env_file", "depends_on", "command"),
    *("entrypoint", "healthcheck", "volumes", "ports", "expose", "deploy", "networks"),
    *("labels", "user", "working_dir", "container_name", "profiles", "stop_grace_period"),
    *("stop_signal", "init", "logging", "secrets", "configs", "extra_hosts", "tmpfs"),
    *("ulimits", "cap_add", "cap_drop", "read_only", "shm_size", "hostname"),
}
RESTART = re.compile(r"^(no|always|unless-stopped|on-failure(:\d+)?)$")
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
PORT = re.compile(r"^(\d{1,5}(-\d{1,5})?:)?\d{1,5}(-\d{1,5})?(/(tcp|udp))?$")
VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\})"
)


class ComposeError(Exception):
    pass


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Compose's variable substitution in one string."""

    def one(found: re.Match[str]) -> str:
        if found["escaped"]:
            return "$"
        name = found["bare"] or found["name"]
        value, op, arg = env.get(name), found["op"], found["arg"] or ""
        empty = value is None or (op is not None and op.startswith(":") and value == "")
        if op in ("-", ":-"):
            return arg if empty else str(value)
        if op in ("?", ":?"):
            if empty:
                raise ComposeError(f"required variable {name} is missing a value: {arg}")
            return str(value)
        if op in ("+", ":+"):
            return "" if empty else arg
        return value or ""

    return VARIABLE.sub(one, text)


def interpolated(node: Any, env: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, env)
    if isinstance(node, list):
        return [interpolated(item, env) for item in node]
    if isinstance(node, dict):
        return {key: interpolated(value, env) for key, value in node.items()}
    return node


def compose_config(env: Mapping[str, str]) -> dict[str, Any]:
    """The compose file as `docker compose config` would see it, or ComposeError."""
    loaded = yaml.safe_load(COMPOSE.read_text())
    config: dict[str, Any] = interpolated(loaded, env)
    problems = [f"top-level key {k}" for k in config if k not in TOP_KEYS and k[:2] != "x-"]
    services: dict[str, Any] = config.get("services") or {}
    volumes = set(config.get("volumes") or {})
    for name, service in services.items():
        problems += [f"{name}: key {k}" for k in service if k not in SERVICE_KEYS and k[:2] != "x-"]
        if "image" not in service and "build" not in service:
            problems.append(f"{name}: neither image nor build")
        build = service.get("build")
        if isinstance(build, dict):
            context = (COMPOSE.parent / build.get("context", ".")).resolve()
            if not (context / build.get("dockerfile", "Dockerfile")).is_file():
                problems.append(f"{name}: no Dockerfile in {context}")
        if not RESTART.match(str(service.get("restart", "no"))):
            problems.append(f"{name}: restart {service['restart']}")
        depends = service.get("depends_on") or {}
        for other, how in depends.items() if isinstance(depends, dict) else []:
            if other not in services:
                problems.append(f"{name}: depends on unknown service {other}")
            elif how.get("condition") not in CONDITIONS:
                problems.append(f"{name}: condition {how.get('condition')}")
            elif how["condition"] == "service_healthy" and "healthcheck" not in services[other]:
                problems.append(f"{name}: waits for the health of {other}, which has no check")
        for mount in service.get("volumes") or []:
            source = str(mount).split(":", 1)[0]
            named = ":" in str(mount) and not source.startswith((".", "/", "~"))
            if named and source not in volumes:
                problems.append(f"{name}: undeclared volume {source}")
        problems += [f"{name}: port {p}" for p in service.get("ports") or [] if not PORT.match(p)]
        for key in ("environment", "command", "healthcheck"):
            value = service.get(key)
            if key == "environment" and not isinstance(value, dict | None):
                problems.append(f"{name}: environment is not a mapping")
            if key == "command" and not isinstance(value, list | str | None):
                problems.append(f"{name}: command is neither a list nor a string")
            if key == "healthcheck" and value and value["test"][0] not in ("CMD", "CMD-SHELL"):
                problems.append(f"{name}: healthcheck test {value['test']}")
        replicas = (service.get("deploy") or {}).get("replicas")
        if replicas is not None and not str(replicas).isdigit():
            problems.append(f"{name}: replicas {replicas!r}")
    if problems:
        raise ComposeError("; ".join(problems))
    return config


SECRET = {"REFEREE_SECRET": "a-secret-for-the-check"}


def test_compose_file_validates() -> None:
    services = compose_config(SECRET)["services"]
    assert set(services) == {
        "db",
        "redis",
        "migrate",
        "web",
        "proxy",
        "worker",
        "delivery",
        "bots",
        "beat",
        "mail-in",
    }
    assert services["web"]["environment"]["REFEREE_SECRET"] == SECRET["REFEREE_SECRET"]
    assert services["worker"]["deploy"]["replicas"] == "2"


def test_compose_workers_leave_the_sweeps_to_beat() -> None:
    services = compose_config(SECRET)["services"]
    for name in ("worker", "delivery", "beat", "web"):
        assert services[name]["environment"]["REFEREE_SWEEPS"] == "beat", name
    assert services["beat"]["command"][:2] == ["referee", "beat"]


def test_compose_delivers_apart_from_deciding() -> None:
    services = compose_config(SECRET)["services"]
    assert services["worker"]["command"][:4] == ["referee", "worker", "--role", "decide"]
    assert services["delivery"]["command"][:4] == ["referee", "worker", "--role", "deliver"]
    assert services["bots"]["command"][:4] == ["referee", "worker", "--role", "bots"]


def test_compose_puts_a_buffering_proxy_in_front_of_gunicorn() -> None:
    services = compose_config(SECRET)["services"]
    # Only the proxy (and mail-in) publish ports; gunicorn is reached through the proxy.
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy", "mail-in"}
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert [str(port).rsplit(":", 1)[-1] for port in proxy["ports"]] == ["8080"]
    (mount,) = proxy["volumes"]
    source, _target, mode = str(mount).split(":")
    assert (DEPLOY / source).resolve() == DEPLOY / "nginx.conf" and mode == "ro"
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
    with pytest.raises(ComposeError, match="REFEREE_SECRET"):
        compose_config({})
    with pytest.raises(ComposeError, match="REFEREE_SECRET"):
        compose_config({"REFEREE_SECRET": ""})


def test_the_checker_sees_what_compose_refuses() -> None:
    env = {"A": "1", "E": ""}
    assert interpolate("$$A ${A} $A ${B:-x} ${E:-y} ${E-z} ${A:+on}", env) == "$A 1 1 x y  on"
    with pytest.raises(ComposeError, match="B"):
        interpolate("${B:?needed}", env)
    assert not PORT.match("80:80:80") and PORT.match("25:2525") and PORT.match("8000")
    assert not RESTART.match("sometimes") and RESTART.match("on-failure:3")


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


def test_the_image_holds_every_package_the_wheel_ships() -> None:
    # A package the wheel ships but the image leaves out fails only when its command runs.
    with (DEPLOY.parent / "pyproject.toml").open("rb") as source:
        packages = tomllib.load(source)["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    copied = re.findall(r"^COPY (\S+) \1$", (DEPLOY / "Dockerfile").read_text(), re.MULTILINE)
    assert packages and set(packages) <= set(copied), sorted(set(packages) - set(copied))
