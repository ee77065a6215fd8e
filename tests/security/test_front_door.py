"""The front door: forms only from the public URL's origin, Secure cookies over https, and
`?wait=` announcements on a channel of the deployment's own.

In-process on SQLite through Flask's test client (its requests come with
`Host: localhost`, which a sender chooses freely).
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api import create_app
from referee.queue import Queue
from referee.service import Referee
from referee.settings import Settings

PUBLIC = "https://play.example.org"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, public_url=PUBLIC)


def form_token(client: FlaskClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/new/maniki").get_data(True))
    assert found is not None
    return found.group(1)


FIELDS = {"name-0": "Ann", "name-1": "Bob"}


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost",  # what the Host header says: the sender's choice
        "http://play.example.org",  # the right host, not over https
        "https://play.example.org.evil.example",
        "https://play.example.org:8443",
        "null",
    ],
)
def test_a_form_from_another_origin_than_the_public_url_is_refused(app: Flask, origin: str) -> None:
    client = app.test_client()
    answer = client.post(
        "/new/maniki", data={**FIELDS, "csrf": form_token(client)}, headers={"Origin": origin}
    )
    assert answer.status_code == 403, origin


@pytest.mark.parametrize("origin", [PUBLIC, PUBLIC + "/", "HTTPS://Play.Example.org", None])
def test_a_form_from_the_public_urls_origin_is_taken(app: Flask, origin: str | None) -> None:
    client = app.test_client()
    headers = {} if origin is None else {"Origin": origin}
    answer = client.post(
        "/new/maniki", data={**FIELDS, "csrf": form_token(client)}, headers=headers
    )
    assert answer.status_code == 201


def test_cookies_are_secure_when_the_public_url_is_https(
    app: Flask, app_settings: Settings
) -> None:
    client = app.test_client()
    created = client.post("/new/maniki", data={**FIELDS, "csrf": form_token(client)})
    # The link is under the public URL, whatever host the request named.
    public = re.escape(app_settings.public_url)
    link = re.findall(rf'value="{public}(/g/[0-9a-f]{{32}}/seat/[^"]+)"', created.get_data(True))
    opened = client.get(link[0])
    cookies = opened.headers.getlist("Set-Cookie")
    assert cookies and all("Secure" in cookie for cookie in cookies)
    plain_settings = replace(app_settings, public_url="http://127.0.0.1:8000")
    fresh = create_app(plain_settings, Referee(plain_settings)).test_client()
    fresh.get("/new/maniki")
    plain = fresh.get(link[0]).headers.getlist("Set-Cookie")
    assert plain and not any("Secure" in cookie for cookie in plain)


def test_decisions_are_announced_per_deployment() -> None:
    channels = []
    for redis_url, name in [
        ("redis://127.0.0.1:6379/0", "referee"),
        ("redis://127.0.0.1:6379/1", "referee"),  # publish/subscribe ignores the number
        ("redis://127.0.0.1:6379/0", "staging"),
    ]:
        # Named from the settings alone: nothing is sent to that Redis.
        deployment = Queue(Settings(redis_url=redis_url, queue=name), lambda *_: None)
        channels.append(deployment.decided_channel())
    assert len(set(channels)) == 3
    assert channels[0] == "referee:decided:0:referee"
