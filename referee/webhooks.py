"""Where a webhook may point, and posting to one within a total deadline.

A webhook URL is a stranger's input that makes the referee open
connections, so it is checked twice: when a seat sets it (the API refuses
it with a clear code) and again at every send, since a name may resolve
differently later. Only `http` and `https`, no credentials, and every
address the host resolves to must be on the public internet: loopback,
private, link-local, multicast, unspecified and reserved addresses are
refused, including IPv4 hidden in IPv6 (`::ffff:127.0.0.1`, NAT64, 6to4)
and the numeric spellings the resolver accepts (`0x7f000001`,
`2130706433`, `127.1`), because the check looks at what the resolver
gives, not at the text. `REFEREE_WEBHOOK_ALLOW_PRIVATE=1` lifts the
address check for tests and closed networks.

The connection goes to the very address that was checked (no second
lookup a rebinding DNS server could answer differently), with the name as
the `Host` header and the TLS server name. Redirects are never followed.
The whole exchange, lookup included, has one deadline: a watchdog shuts the
socket down when it passes, so a server trickling a byte every few seconds
cannot hold a delivery past it.

The client is the standard library's `http.client` on a socket opened
here: it lets the socket be pinned to the checked address and cut by the
watchdog, and it never follows redirects by itself.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from referee.i18n import N_, _

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.IPv6Network("::/96")


class Refused(ValueError):
    """A webhook URL the referee will not post to; `code` is the API's problem code."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: where to connect (`addresses`) and what to ask for."""

    tls: bool
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64, compatible)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _NAT64) or (
        address in _COMPATIBLE and int(address) > 1
    ):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: Address) -> str | None:
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified:
        return "unspecified"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_private or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local):
        return "private"
    if address.is_reserved or not address.is_global:
        # Shared (carrier NAT), documentation and benchmarking ranges, ...
        return "reserved"
    return None


def forbidden_kind(address: Address) -> str | None:
    """Why a webhook may not reach `address` ("loopback", "private", ...), or None."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            found = _kind(inner)
            if found is not None:
                return found
    return _kind(address)


_BAD_PORT = N_("the URL's port is not a number from 1 to 65535")


def _require_plain_text(url: str) -> None:
    if not url.isascii() or any(ch <= " " or ch == "\x7f" or ch == "\\" for ch in url):
        raise Refused(
            "webhook_bad_url",
            _(
                "write the URL in ASCII without spaces or backslashes "
                "(punycode for the host, percent-escapes for the path)"
            ),
        )


def _is_tls(parts: SplitResult) -> bool:
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused("webhook_bad_url", _("only http and https URLs are taken"))
    return scheme == "https"


def _host(parts: SplitResult) -> str:
    if "@" in parts.netloc:
        raise Refused(
            "webhook_credentials", _("a webhook URL may not hold a user name or password")
        )
    host = parts.hostname or ""
    if not host or "%" in host:
        raise Refused("webhook_bad_url", _("the URL has no usable host"))
    return host


def _port(parts: SplitResult, tls: bool) -> int:
    try:
        port = parts.port
    except ValueError:
        raise Refused("webhook_bad_url", _(_BAD_PORT)) from None
    if port == 0:
        raise Refused("webhook_bad_url", _(_BAD_PORT))
    return port or (443 if tls else 80)


def parse(url: str) -> tuple[bool, str, int, str]:
    """(tls, host, port, path with query) of an http(s) URL without credentials."""
    _require_plain_text(url)
    parts = urlsplit(url)
    tls = _is_tls(parts)
    host = _host(parts)
    port = _port(parts, tls)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return tls, host, port, path


def _lookup(host: str, port: int, seconds: float) -> list[str]:
    """The addresses `host` resolves to, or Refused when it does not within `seconds`."""
    found: list[list[str] | BaseException] = []

    def run() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found.append([str(info[4][0]) for info in infos])
        except (OSError, UnicodeError) as error:
            found.append(error)

    # getaddrinfo has no timeout of its own: a lookup left running past the
    # deadline is abandoned to its daemon thread.
    thread = threading.Thread(target=run, name="referee-webhook-lookup", daemon=True)
    thread.start()
    thread.join(max(seconds, 0.0))
    if not found or isinstance(found[0], BaseException) or not found[0]:
        raise Refused(
            "webhook_unresolvable", _("the host {host} does not resolve").format(host=repr(host))
        )
    return list(dict.fromkeys(found[0]))


def check(url: str, *, allow_private: bool, seconds: float) -> Target:
    """Parse and resolve `url`; Refused unless every address it names may be reached."""
    tls, host, port, path = parse(url)
    addresses = _lookup(host, port, seconds)
    if not allow_private:
        for text in addresses:
            kind = forbidden_kind(ipaddress.ip_address(text.split("%", 1)[0]))
            if kind is not None:
                article = "an" if kind[0] in "aeiou" else "a"
                said = _(
                    "the host {host} resolves to {article} {kind} address; "
                    "webhooks reach only the public internet"
                )
                raise Refused(
                    "webhook_forbidden_address",
                    said.format(host=repr(host), article=article, kind=kind),
                )
    return Target(tls, host, port, path, tuple(addresses))


class _Pinned(http.client.HTTPConnection):
    """An HTTP(S) connection to one checked address, `Host` and TLS name set to the host."""

    def __init__(self, target: Target, address: str, seconds: float) -> None:
        super().__init__(target.host, target.port, timeout=seconds)
        self.default_port = 443 if target.tls else 80
        self.target = target
        self.address = address
        self.lock = threading.Lock()
        self.aborted = False
        self.reached = False

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        with self.lock:
            self.sock = raw
            self.reached = True
            if self.aborted:
                raise TimeoutError("the deadline passed while connecting")
        if self.target.tls:
            wrapped = ssl.create_default_context().wrap_socket(raw, server_hostname=self.host)
            with self.lock:
                self.sock = wrapped

    def abort(self) -> None:
        """Cut the exchange from another thread: a blocked read returns at once."""
        with self.lock:
            self.aborted = True
            if self.sock is not None:
                # The plain socket's shutdown, under any TLS layer.
                with suppress(OSError):
                    socket.socket.shutdown(self.sock, socket.SHUT_RDWR)


def post(
    url: str, body: bytes, headers: dict[str, str], *, allow_private: bool, seconds: float
) -> int:
    """POST `body` to `url` within `seconds` in all; returns the status of a 2xx answer.

    Raises Refused for a URL that may not be reached now, TimeoutError when
    the deadline passed, OSError for anything else (a redirect included).
    """
    ends = time.monotonic() + seconds
    target = check(url, allow_private=allow_private, seconds=seconds)
    failure: Exception = OSError("no address to connect to")
    for address in target.addresses:
        left = ends - time.monotonic()
        if left <= 0:
            break
        connection = _Pinned(target, address, left)
        watchdog = threading.Timer(left, connection.abort)
        watchdog.daemon = True
        watchdog.start()
        try:
            connection.request("POST", target.path, body=body, headers=headers)
            status = connection.getresponse().status
        except (OSError, http.client.HTTPException) as error:
            if connection.aborted or isinstance(error, TimeoutError):
                raise TimeoutError(f"no answer within the {seconds:g} s deadline") from None
            if connection.reached:
                # Connected, then failed: another address would not fare better.
                raise OSError(f"the exchange failed: {error}") from None
            failure = error
            continue
        finally:
            watchdog.cancel()
            connection.close()
        if 300 <= status < 400:
            raise OSError(f"the webhook answered {status}; redirects are not followed")
        if not 200 <= status < 300:
            raise OSError(f"the webhook answered {status}")
        return status
    if ends - time.monotonic() <= 0:
        raise TimeoutError(f"no answer within the {seconds:g} s deadline")
    raise OSError(f"could not connect: {failure}")
