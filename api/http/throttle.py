"""Per-client rate limits on creating games and submitting moves (the `limits` package).

A client is the address the request came from; `X-Forwarded-For` is
believed only when that address is a configured trusted proxy
(`REFEREE_TRUSTED_PROXY`: addresses, or networks such as `10.0.0.0/8`),
and then its last entry, the one the proxy wrote, names the client. An
IPv6 client is its /64: one host is commonly given a whole /64, and would
otherwise be as many clients as it has addresses to send from.
Counts are kept in Redis when there is one, so that every gunicorn
process and host shares them, and in the process otherwise. A limiter
that cannot reach Redis lets the request through: limits protect the
service, they must not take it down with the broker.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import threading
import time

from flask import request
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage, RedisStorage, Storage
from limits.strategies import MovingWindowRateLimiter

from api.http.context import settings
from api.http.errors import Problem
from referee.settings import Settings, proxy_networks

_log = logging.getLogger(__name__)

_lock = threading.Lock()
# The limiter of the settings in use (tests switch settings within one process).
_current: list[tuple[Settings, MovingWindowRateLimiter]] = []


def _limiter(chosen: Settings) -> MovingWindowRateLimiter:
    with _lock:
        if not _current or _current[0][0] is not chosen:
            storage: Storage
            if chosen.redis_url:
                # Named by the queue, so deployments sharing one Redis count apart.
                prefix = f"referee-limits-{chosen.queue}"
                storage = RedisStorage(chosen.redis_url, key_prefix=prefix, wrap_exceptions=True)
            else:
                storage = MemoryStorage()
            _current[:] = [(chosen, MovingWindowRateLimiter(storage))]
        return _current[0][1]


def is_trusted_proxy(peer: str, chosen: Settings) -> bool:
    """Whether `peer` is in `REFEREE_TRUSTED_PROXY`: a proxy that speaks for many clients."""
    networks = _networks(chosen.trusted_proxies)
    if not networks:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in networks)


@functools.lru_cache(maxsize=8)
def _networks(given: str | None) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return proxy_networks(given)


def counted_as(address: str) -> str:
    """The client an address counts as: an IPv4 address itself (an IPv4-mapped IPv6
    one too), an IPv6 address its /64; anything else (a Unix socket) as given."""
    try:
        found = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(found, ipaddress.IPv6Address):
        if found.ipv4_mapped is not None:
            return str(found.ipv4_mapped)
        return str(ipaddress.IPv6Network((found, 64), strict=False))
    return str(found)


def client() -> str:
    """What counts as the client of this request (`counted_as` its address)."""
    peer = request.remote_addr or "unknown"
    forwarded = request.headers.get("X-Forwarded-For", "")
    if forwarded and is_trusted_proxy(peer, settings()):
        last = forwarded.split(",")[-1].strip()
        try:
            return counted_as(str(ipaddress.ip_address(last)))
        except ValueError:
            return counted_as(peer)
    return counted_as(peer)


# Each action's rate setting, and what the refusal calls what was counted.
_ACTIONS = {
    "create": ("rate_create", "games created from this address"),
    "moves": ("rate_moves", "moves submitted from this address"),
    "seeks": ("rate_seeks", "open games posted, joined or left by you"),
}


def check(action: str, player: str | None = None) -> None:
    """Count one `action` for this client, or for `player` (an address) where the
    action is a signed-in player's ("seeks"); 429 when over its limit."""
    chosen = settings()
    setting, what = _ACTIONS[action]
    rate = getattr(chosen, setting)
    item: RateLimitItem = parse(rate)
    limiter = _limiter(chosen)
    who = player or client()
    try:
        if limiter.hit(item, action, who):
            return
        reset, _left = limiter.get_window_stats(item, action, who)
    except Exception as error:
        _log.warning("rate limit not checked (%s): %s", action, error)
        return
    wait = max(1, math.ceil(reset - time.time()))
    raise Problem(
        429,
        "too_many_requests",
        f"too many {what} ({rate}); try again in {wait} s",
        headers={"Retry-After": str(wait)},
    )
