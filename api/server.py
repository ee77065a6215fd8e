"""`referee serve`'s HTTP server: waitress, with each client's share of its connections bounded.

waitress holds every open connection in one loop and, at its connection
limit, stops accepting anyone's: left alone, one client's idle or
half-sent connections would lock every other client out. So each peer
address may hold `REFEREE_CLIENT_CONNECTIONS` at once, and a connection
accepted beyond that share is closed before a byte of it is read; the
limit, `REFEREE_CONNECTIONS` + `REFEREE_EVENTS_MAX`, then takes many
clients to reach. The address is the socket's peer, never a header: a
proxy named in `REFEREE_TRUSTED_PROXY` speaks for many clients and holds
no share (those behind it are its own to bound). A connection with no
request under way (idle between requests, or a request half sent) is
closed after `REFEREE_IDLE_TIMEOUT` silent seconds; one whose answer is
still being written, an event stream, is not.
"""

from __future__ import annotations

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
from waitress.task import ThreadedTaskDispatcher

from api.http import throttle
from referee.settings import Settings

if TYPE_CHECKING:
    from waitress.wasyncore import _SocketMap

_log = logging.getLogger("waitress")

# Descriptors the process needs besides its connections: the database, logs, pipes.
_SPARE_FILES = 64


class Shares:
    """Connections open per client address, and the most one client may hold."""

    def __init__(self, most: int, exempt: Callable[[str], bool]) -> None:
        self.most = most
        self.exempt = exempt
        self.open: Counter[str] = Counter()
        self.refusing: set[str] = set()
        self.lock = threading.Lock()

    def full(self, client: str) -> bool:
        """Whether `client` holds its whole share; said once in the log each time it fills."""
        if self.exempt(client):
            return False
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
    return str(addr[0])


class SharedChannel(HTTPChannel):
    """A connection that holds one of its client's share until it is closed."""

    server: SharedServer
    # Until the share is taken (a channel can close while it is being made).
    holds_share = False
    client = ""

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
        self.holds_share = True
        server.shares.take(self.client)

    def del_channel(self, map: _SocketMap | None = None) -> None:
        # Called on each close, which may come more than once.
        super().del_channel(map)
        if self.holds_share:
            self.holds_share = False
            self.server.shares.give_back(self.client)


class SharedServer(TcpWSGIServer):
    """waitress's TCP server, closing a connection at once when its client's share is full."""

    channel_class = SharedChannel

    def __init__(self, shares: Shares, *args: Any, **kwargs: Any) -> None:
        self.shares = shares
        super().__init__(*args, **kwargs)

    def accept(self) -> tuple[socket.socket, Any] | None:
        accepted = super().accept()
        if accepted is None:
            return None
        conn, addr = accepted
        if self.shares.full(_client(addr)):
            conn.close()
            return None
        return conn, addr


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
    shares = Shares(
        settings.client_connections, lambda client: throttle.is_trusted_proxy(client, settings)
    )
    sockets: _SocketMap = {}
    # Each address the host resolves to, as waitress listens on them (the stub types them wrong).
    servers = [
        SharedServer(shares, app, sockets, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo)
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
