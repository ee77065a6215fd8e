"""`referee serve`'s HTTP server: waitress, with each client's share of its connections bounded.

waitress holds every open connection in one loop and, at its connection
limit, stops accepting anyone's: left alone, one client's idle or
half-sent connections would lock every other client out. So each peer
client may hold `REFEREE_CLIENT_CONNECTIONS` at once; the limit,
`REFEREE_CONNECTIONS` + `REFEREE_EVENTS_MAX`, then takes many clients to
reach. A connection accepted beyond that share is answered `429` with
`Retry-After` whatever it asks, never handed to the app, and closed
without a reset: its request is read, the answer sent, the server's half
shut, and what the client still sends drained (at most
`_OVER_SHARE_SECONDS`). A client is the socket's peer address (an IPv6
/64 counts as one, `throttle.counted_as`), never a header: a proxy named
in `REFEREE_TRUSTED_PROXY` speaks for many clients and holds no share
(those behind it are its own to bound). waitress's own answers (a
request it cannot parse, one too large) carry `nosniff` as the app's do.
A connection with no
request under way (idle between requests, or a request half sent) is
closed after `REFEREE_IDLE_TIMEOUT` silent seconds; one whose answer is
still being written, an event stream, is not.
"""

from __future__ import annotations

import json
import logging
import resource
import socket
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast
from wsgiref.types import WSGIApplication

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, MultiSocketServer, TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from api.http import throttle
from referee.settings import Settings

if TYPE_CHECKING:
    from waitress.wasyncore import _SocketMap

_log = logging.getLogger("waitress")

# Descriptors the process needs besides its connections: the database, logs, pipes.
_SPARE_FILES = 64
# How long a connection past its client's share may stay open: time to send its
# request and read the answer, not to hold a place.
_OVER_SHARE_SECONDS = 2.0
# When a client past its share may try again: a connection of its own closes soon.
_RETRY_AFTER = 1


class StreamEnds(logging.Filter):
    """Drops waitress's "Client disconnected while serving ..." for an event stream:
    a stream ends when its reader leaves (a page closed or navigated away, a client
    gone), which is how every stream ends, not an error. A request cut short
    elsewhere is still told."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith(_DISCONNECTED) and message.endswith(_STREAM_PATH))


_DISCONNECTED = "Client disconnected while serving "
_STREAM_PATH = "/events"


def _over_share_answer() -> bytes:
    body = json.dumps(
        {
            "type": "about:blank",
            "title": "Too Many Requests",
            "status": 429,
            "code": "too_many_requests",
            "detail": "this client holds as many connections as it may "
            f"(REFEREE_CLIENT_CONNECTIONS); try again in {_RETRY_AFTER} s",
        }
    ).encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\n"
        f"Retry-After: {_RETRY_AFTER}\r\n"
        "Content-Type: application/problem+json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


_OVER_SHARE = _over_share_answer()


class Shares:
    """Connections open per client address, and the most one client may hold."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.open: Counter[str] = Counter()
        self.refusing: set[str] = set()
        self.lock = threading.Lock()

    def full(self, client: str) -> bool:
        """Whether `client` (a key of `_client`) holds its whole share; said once in the
        log each time it fills."""
        with self.lock:
            if self.open[client] < self.most:
                return False
            if client not in self.refusing:
                self.refusing.add(client)
                _log.warning(
                    "%s holds %d connections, its share: closing its new ones", client, self.most
                )
            return True

    def take(self, client: str) -> None:
        with self.lock:
            self.open[client] += 1

    def give_back(self, client: str) -> None:
        with self.lock:
            left = self.open.pop(client) - 1
            if left > 0:
                self.open[client] = left
            if left < self.most:
                self.refusing.discard(client)


def _client(addr: Any) -> str:
    # (host, port) for IPv4, (host, port, flow, scope) for IPv6.
    return throttle.counted_as(str(addr[0]))


class NoSniffErrorTask(ErrorTask):
    """waitress's own error answer (a request it cannot read, one too large, a crash),
    marked not to be sniffed as every answer of the app is."""

    def execute(self) -> None:
        # A list at run time (the stub types it a Sequence).
        cast(list[tuple[str, str]], self.response_headers).append(
            ("X-Content-Type-Options", "nosniff")
        )
        super().execute()


class SharedChannel(HTTPChannel):
    """A connection that holds one of its client's share until it is closed."""

    server: SharedServer
    error_task_class = NoSniffErrorTask
    # Until the share is taken (a channel can close while it is being made).
    holds_share = False
    client = ""
    # Past its client's share: answered 429, then shut once the answer is sent.
    over_share = False
    answered = False
    shut = False

    def __init__(
        self,
        server: SharedServer,
        sock: socket.socket,
        addr: Any,
        adj: Adjustments,
        map: _SocketMap | None = None,
    ) -> None:
        super().__init__(server, sock, addr, adj, map)
        self.client = _client(addr)
        if not server.exempt(str(addr[0])) and server.shares.full(self.client):
            self.over_share = True
            return
        self.holds_share = True
        server.shares.take(self.client)

    def received(self, data: bytes) -> bool:
        if not self.over_share:
            return bool(super().received(data))
        # Whatever it asks, the answer is the same: sent once, the rest read and dropped.
        if data and not self.answered:
            self.answered = True
            self.write_soon(_OVER_SHARE)
        return True

    def readable(self) -> bool:
        if self.over_share:
            # Drained to its end, so that closing sends no reset over the answer.
            return bool(self.connected)
        return bool(super().readable())

    def handle_write(self) -> None:
        super().handle_write()
        if self.over_share and self.answered and not self.total_outbufs_len and not self.shut:
            self.shut = True
            try:
                if self.socket is not None:
                    self.socket.shutdown(socket.SHUT_WR)
            except OSError:
                self.will_close = True

    def del_channel(self, map: _SocketMap | None = None) -> None:
        # Called on each close, which may come more than once.
        super().del_channel(map)
        if self.holds_share:
            self.holds_share = False
            self.server.shares.give_back(self.client)


class SharedServer(TcpWSGIServer):
    """waitress's TCP server, closing a connection at once when its client's share is full."""

    channel_class = SharedChannel

    def __init__(
        self, shares: Shares, exempt: Callable[[str], bool], *args: Any, **kwargs: Any
    ) -> None:
        self.shares = shares
        self.exempt = exempt
        super().__init__(*args, **kwargs)

    def maintenance(self, now: int) -> None:
        super().maintenance(now)
        cutoff = now - min(_OVER_SHARE_SECONDS, self.adj.channel_timeout)
        # A dict of channels at run time (the stub types it one channel).
        channels = cast(dict[int, SharedChannel], self.active_channels)
        for channel in list(channels.values()):
            if channel.over_share and channel.creation_time < cutoff:
                channel.will_close = True


def create(
    app: WSGIApplication, settings: Settings, host: str, port: int, threads: int
) -> BaseWSGIServer | MultiSocketServer:
    """The server of `app` on `host`:`port`, as waitress's `create_server` builds it for TCP."""
    connection_limit = settings.connections + settings.events_max
    _allow_open_files(connection_limit + _SPARE_FILES)
    adj = Adjustments(
        host=host,
        port=port,
        threads=threads,
        ident="referee",
        connection_limit=connection_limit,
        channel_timeout=settings.idle_timeout,
        # How often idle connections are looked for: each second, so that one is
        # closed within a second of its timeout (a pass over a thousand is cheap).
        cleanup_interval=1,
        # select() cannot watch descriptors numbered past 1023; poll() can.
        asyncore_use_poll=True,
        # X-Forwarded-For reaches the app, which believes it only from
        # REFEREE_TRUSTED_PROXY (api/http/throttle.py); waitress would otherwise drop it.
        clear_untrusted_proxy_headers=False,
    )
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    shares = Shares(settings.client_connections)

    def exempt(peer: str) -> bool:
        return throttle.is_trusted_proxy(peer, settings)

    sockets: _SocketMap = {}
    # Each address the host resolves to, as waitress listens on them (the stub types them wrong).
    servers = [
        SharedServer(
            shares, exempt, app, sockets, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo
        )
        for sockinfo in cast(list[Any], adj.listen)
    ]
    if len(servers) == 1:
        return servers[0]
    listening = [(host, int(port)) for host, port in (each.getsockname() for each in servers)]
    return MultiSocketServer(sockets, adj, listening, dispatcher, servers[0].log_info)


def _allow_open_files(wanted: int) -> None:
    """Raise the process's limit on open files towards `wanted`, as far as the system lets it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    except (ValueError, OSError):
        raised = soft
    if raised < wanted:
        _log.warning(
            "at most %d open files: fewer connections than REFEREE_CONNECTIONS + "
            "REFEREE_EVENTS_MAX will be accepted (raise `ulimit -n` or lower them)",
            raised,
        )
