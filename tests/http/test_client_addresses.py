"""What counts as one client for the per-client limits: an IPv4 address, an IPv6 /64."""

from __future__ import annotations

import pytest

from api.http.throttle import counted_as
from api.server import Shares, _client


@pytest.mark.parametrize(
    ("address", "client"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("unix-socket", "unix-socket"),
    ],
)
def test_an_ipv6_host_counts_as_its_64(address: str, client: str) -> None:
    assert counted_as(address) == client


def test_the_connections_of_one_64_share_one_share() -> None:
    shares = Shares(2)
    for port, address in enumerate(("2001:db8::1", "2001:db8::2:1")):
        shares.take(_client((address, port, 0, 0)))
    assert shares.full(_client(("2001:db8::ffff", 9, 0, 0)))
    assert not shares.full(_client(("2001:db8:0:1::1", 9, 0, 0)))
    shares.give_back(_client(("2001:db8::1", 0, 0, 0)))
    assert not shares.full(_client(("2001:db8::ffff", 9, 0, 0)))
