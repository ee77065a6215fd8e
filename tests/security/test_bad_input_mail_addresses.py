"""Every mail address the API accepts is one the outbox can mail.

The outbox writes `To: name <address>` with the email package and smtplib
reads the recipients back from that header for `RCPT TO`. So whatever
`PlayerIn` accepts must come back unchanged from the header, be ASCII
(the outbox does not ask for SMTPUTF8), and quote to `<address>`.
"""

from __future__ import annotations

import smtplib
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import getaddresses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError

from api.schemas.games import PlayerIn

NASTY = [
    '"a\x0bb"@example.org',
    '"a b"@example.org',
    '"a"@example.org',
    "a@[127.0.0.1]",
    "ü@example.org",
    "a@example",
    "a@-example.org",
    "a..b@example.org",
    "a@example.org\r\nBcc: x@example.org",
    "a@example.org, b@example.org",
    "<a@example.org>",
    "a@example.org ",
    "Ann <a@example.org>",
    "a@" + "x" * 250 + ".org",
]


def accepted(address: str, name: str = "Ann") -> str | None:
    try:
        loaded = PlayerIn().load({"name": name, "email": address})
    except ValidationError:
        return None
    return str(loaded["email"])


def mailable(address: str, name: str) -> None:
    assert address.isascii()
    mail = EmailMessage(policy=SMTP)
    mail["To"] = Address(display_name=name, addr_spec=address)
    mail["From"] = "referee@referee.localhost"
    parsed = getaddresses(mail.get_all("To", []))
    assert [found for _, found in parsed] == [address]
    assert smtplib.quoteaddr(address) == f"<{address}>"
    mail.as_bytes()  # the whole message serialises


@pytest.mark.parametrize("address", NASTY)
def test_addresses_no_smtp_server_takes_are_refused(address: str) -> None:
    assert accepted(address) is None


def test_an_internationalised_domain_is_kept_in_ascii() -> None:
    assert accepted("Ann@Bücher.example.org") == "Ann@xn--bcher-kva.example.org"


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.emails(), st.text(max_size=60), st.sampled_from(NASTY)),
    st.text(min_size=1, max_size=40),
)
def test_whatever_is_accepted_can_be_mailed(address: str, name: str) -> None:
    # The player's name is the display name: it passes the same schema.
    kept = accepted(address, name)
    if kept is not None:
        mailable(kept, name)
