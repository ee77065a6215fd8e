"""Where a webhook may point (unit level): every spelling of a non-public address is refused,
the connection goes to the address that was checked, redirects are not followed, and a
trickling server is cut at the deadline. The servers here are real sockets on loopback."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from referee import webhooks
from referee.webhooks import Refused, check, forbidden_kind
from tests.tiers import starts_servers

# Each with the kind of address it hides; the numeric spellings are the resolver's.
FORBIDDEN = [
    ("http://127.0.0.1/", "loopback"),
    ("http://0x7f000001/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://0177.0.0.1/", "loopback"),
    ("http://localhost:8000/hook", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:7f00:1]/", "loopback"),
    ("http://[::127.0.0.1]/", "loopback"),
    ("http://[64:ff9b::7f00:1]/", "loopback"),
    ("http://[2002:7f00:1::]/", "loopback"),
    ("http://0/", "unspecified"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[::ffff:169.254.169.254]/", "link-local"),
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://10.1.2.3/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://[fc00::1]/", "private"),
    ("http://240.0.0.1/", "private"),
    ("http://255.255.255.255/", "private"),
    ("http://100.64.0.1/", "reserved"),
]


@pytest.mark.parametrize(("url", "kind"), FORBIDDEN)
def test_non_public_addresses_are_refused_in_every_spelling(url: str, kind: str) -> None:
    with pytest.raises(Refused) as refused:
        check(url, allow_private=False, seconds=5)
    assert refused.value.code == "webhook_forbidden_address"
    assert f" {kind} address" in refused.value.reason


@pytest.mark.parametrize("url", ["http://93.184.216.34/hook?x=1", "https://[2606:4700::1111]/"])
def test_public_addresses_pass(url: str) -> None:
    target = check(url, allow_private=False, seconds=5)
    assert target.addresses and all(
        forbidden_kind(ipaddress.ip_address(a)) is None for a in target.addresses
    )


def test_allow_private_lifts_only_the_address_check() -> None:
    assert check("http://127.1:9/x", allow_private=True, seconds=5).addresses == ("127.0.0.1",)
    with pytest.raises(Refused) as refused:
        check("http://user:pw@127.0.0.1/", allow_private=True, seconds=5)
    assert refused.value.code == "webhook_credentials"


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://user:pw@example.com/", "webhook_credentials"),
        ("http://user@example.com/", "webhook_credentials"),
        ("http://@example.com/", "webhook_credentials"),
        ("ftp://example.com/", "webhook_bad_url"),
        ("file:///etc/passwd", "webhook_bad_url"),
        ("gopher://example.com/", "webhook_bad_url"),
        ("http://evil.example\\@127.0.0.1/", "webhook_bad_url"),
        ("http://ex ample.com/", "webhook_bad_url"),
        ("http://exämple.com/", "webhook_bad_url"),
        ("http://%31%32%37.0.0.1/", "webhook_bad_url"),
        ("http://[fe80::1%25eth0]/", "webhook_bad_url"),
        ("http://example.com:0/", "webhook_bad_url"),
        ("http://example.com:99999/", "webhook_bad_url"),
        ("http:///path", "webhook_bad_url"),
        ("http://nothing-here.invalid/", "webhook_unresolvable"),
    ],
)
def test_bad_urls_are_refused_with_their_code(url: str, code: str) -> None:
    with pytest.raises(Refused) as refused:
        check(url, allow_private=False, seconds=5)
    assert refused.value.code == code


class Server:
    """A loopback HTTP server answering POSTs with `status` (and a Location for 3xx)."""

    def __init__(self, status: int = 204) -> None:
        self.status = status
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                server.requests.append((self.path, dict(self.headers)))
                self.send_response(server.status)
                if 300 <= server.status < 400:
                    self.send_header("Location", f"http://127.0.0.1:{server.port}/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.http.server_address[1])
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture
@starts_servers
def server() -> Iterator[Server]:
    found = Server()
    yield found
    found.http.shutdown()


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name that would resolve elsewhere on a second lookup (DNS rebinding):
    # the client must look it up once and connect to what it checked.
    answers = iter(["127.0.0.1", "203.0.113.9"])
    lookups: list[str] = []
    real = socket.getaddrinfo

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        address = next(answers)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = f"http://rebind.test:{server.port}/hook?seat=1"
    status = webhooks.post(url, b"{}", {}, allow_private=True, seconds=5)
    assert status == 204 and lookups == ["rebind.test"]
    path, headers = server.requests[0]
    assert path == "/hook?seat=1" and headers["Host"] == f"rebind.test:{server.port}"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_a_failure_and_is_not_followed(server: Server, status: int) -> None:
    server.status = status
    url = f"http://127.0.0.1:{server.port}/hook"
    with pytest.raises(OSError, match="redirects are not followed"):
        webhooks.post(url, b"{}", {}, allow_private=True, seconds=5)
    assert [path for path, _ in server.requests] == ["/hook"]


def test_an_error_status_is_a_failure(server: Server) -> None:
    server.status = 500
    with pytest.raises(OSError, match="500"):
        webhooks.post(f"http://127.0.0.1:{server.port}/", b"{}", {}, allow_private=True, seconds=5)


def test_private_targets_are_refused_at_send_time_without_a_connection(server: Server) -> None:
    for url in (f"http://127.0.0.1:{server.port}/", f"http://0x7f000001:{server.port}/"):
        with pytest.raises(Refused):
            webhooks.post(url, b"{}", {}, allow_private=False, seconds=5)
    assert server.requests == []


# It serves on loopback.
@pytest.mark.service
def test_a_trickling_server_is_cut_at_the_deadline() -> None:
    """One header byte every 0.3 s forever: each read succeeds, the whole does not."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()
    held = threading.Event()

    def trickle() -> None:
        connection, _ = listener.accept()
        held.set()
        with connection:
            connection.recv(65536)
            while not stop.is_set():
                try:
                    connection.sendall(b"X")
                except OSError:
                    return
                stop.wait(0.3)

    threading.Thread(target=trickle, daemon=True).start()
    try:
        with pytest.raises(TimeoutError):
            webhooks.post(f"http://127.0.0.1:{port}/", b"{}", {}, allow_private=True, seconds=1.5)
    finally:
        stop.set()
        listener.close()
    assert held.is_set()
