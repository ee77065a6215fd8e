"""Delivery status notifications (RFC 3464) shaped as real mail servers send them.

Each is built from the referee's mail that bounced (its headers are quoted
back, as the servers do) and sent from the null sender to that mail's
envelope sender. The shapes follow what Postfix, Gmail's mailer-daemon and
Exchange Online put on the wire: their headers, their MIME layout (Gmail
and Exchange wrap the human text in multipart/related and
multipart/alternative), and their per-recipient fields.
"""

# The reports' lines are as long as the servers write them.
# ruff: noqa: E501

from __future__ import annotations

from tests.mailboxes import Received

WHEN = "Thu,  1 Jan 2026 09:00:00 +0000 (UTC)"


def _headers(original: Received) -> str:
    """The bounced mail's header block, as a report quotes it back."""
    raw = original.raw.replace(b"\r\n", b"\n").decode("utf-8", "replace")
    return raw.split("\n\n", 1)[0]


def _wire(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


def postfix(original: Received, recipient: str, message_id: str, *, delayed: bool = False) -> bytes:
    """Postfix's bounce (`Undelivered Mail Returned to Sender`) or delay notice."""
    if delayed:
        subject, action, status = "Delayed Mail (still being retried)", "delayed", "4.4.1"
        said = "connect to mx.players.test[192.0.2.25]:25: Connection timed out"
        extra = "Will-Retry-Until: Thu,  6 Jan 2026 09:00:00 +0000 (UTC)\n"
    else:
        subject, action, status = "Undelivered Mail Returned to Sender", "failed", "5.1.1"
        said = (
            f"550 5.1.1 <{recipient}>: Recipient address\n    rejected: User unknown in "
            "virtual mailbox table"
        )
        extra = ""
    boundary = "8B2C3A0F5E.1767258000/mail.example.org"
    return _wire(f"""Date: {WHEN}
From: MAILER-DAEMON@mail.example.org (Mail Delivery System)
Subject: {subject}
To: {original.sender}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
\tboundary="{boundary}"
Content-Transfer-Encoding: 8bit
Message-Id: {message_id}

This is a MIME-encapsulated message.

--{boundary}
Content-Description: Notification
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

This is the mail system at host mail.example.org.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients. It's attached below.

For further assistance, please send mail to postmaster.

                   The mail system

<{recipient}>: host mx.players.test[192.0.2.25] said: {said}
    (in reply to RCPT TO command)

--{boundary}
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mail.example.org
X-Postfix-Queue-ID: 8B2C3A0F5E
X-Postfix-Sender: rfc822; {original.sender}
Arrival-Date: {WHEN}

Final-Recipient: rfc822; {recipient}
Original-Recipient: rfc822;{recipient}
Action: {action}
Status: {status}
Remote-MTA: dns; mx.players.test
Diagnostic-Code: smtp; {said}
{extra}
--{boundary}
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers
Content-Transfer-Encoding: 8bit

{_headers(original)}

--{boundary}--
""")


def gmail(original: Received, recipient: str, message_id: str) -> bytes:
    """Gmail's `Delivery Status Notification (Failure)` from mailer-daemon@googlemail.com."""
    outer, related, alternative = ("000000000000a1b2c3", "000000000000d4e5f6", "000000000000d4e5f7")
    bounced = str(original.mail["Message-ID"])
    return _wire(f"""MIME-Version: 1.0
From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: {original.sender}
Auto-Submitted: auto-replied
Subject: Delivery Status Notification (Failure)
References: {bounced}
In-Reply-To: {bounced}
X-Failed-Recipients: {recipient}
Message-ID: {message_id}
Date: Thu, 01 Jan 2026 01:00:01 -0800 (PST)
Content-Type: multipart/report; boundary="{outer}"; report-type=delivery-status

--{outer}
Content-Type: multipart/related; boundary="{related}"

--{related}
Content-Type: multipart/alternative; boundary="{alternative}"

--{alternative}
Content-Type: text/plain; charset="UTF-8"


** Address not found **

Your message wasn't delivered to {recipient} because the address couldn't be found, or is unable to receive mail.

Learn more here: https://support.google.com/mail/?p=NoSuchUser

The response was:

550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces.

--{alternative}
Content-Type: text/html; charset="UTF-8"


<html>
<head><style>* {{ font-family:Roboto, "Helvetica Neue", Helvetica, Arial, sans-serif; }}</style></head>
<body><table cellpadding="0" cellspacing="0"><tr><td><h2>Address not found</h2>
<p>Your message wasn't delivered to <a style='color:#212121;text-decoration:none'><b>{recipient}</b></a> because the address couldn't be found, or is unable to receive mail.</p>
</td></tr></table></body></html>

--{alternative}--
--{related}
Content-Type: image/png; name="icon.png"
Content-Disposition: attachment; filename="icon.png"
Content-Transfer-Encoding: base64
Content-ID: <icon.png>

iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==
--{related}--
--{outer}
Content-Type: message/delivery-status

Reporting-MTA: dns; googlemail.com
Received-From-MTA: dns; referee.test
Arrival-Date: Thu, 01 Jan 2026 01:00:00 -0800 (PST)
X-Original-Message-ID: {bounced}

Final-Recipient: rfc822; {recipient}
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx.players.test. (192.0.2.25, the server for the domain players.test.)
Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.
Last-Attempt-Date: Thu, 01 Jan 2026 01:00:01 -0800 (PST)

--{outer}
Content-Type: message/rfc822

{_headers(original)}

(the message body)
--{outer}--
""")


def exchange(original: Received, recipient: str, message_id: str) -> bytes:
    """Exchange Online's non-delivery report (`Undeliverable: ...`)."""
    outer, alternative = (
        "e2b3f1a0-9c4d-4e5f-8a6b-7c8d9e0f1a2b",
        "ac1d2e3f-4a5b-4c6d-8e7f-8a9b0c1d2e3f",
    )
    bounced = str(original.mail["Message-ID"])
    subject = str(original.mail["Subject"])
    local, domain = recipient.split("@")
    return _wire(f"""From: Microsoft Outlook
\t<MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@contoso.onmicrosoft.com>
To: <{original.sender}>
Date: Thu, 1 Jan 2026 09:00:02 +0000
Content-Type: multipart/report; report-type=delivery-status;
\tboundary="{outer}"
X-MS-Exchange-Message-Is-Ndr:
Content-Language: en-US
Message-ID: {message_id}
In-Reply-To: {bounced}
References: {bounced}
Thread-Topic: {subject}
Subject: Undeliverable: {subject}
Auto-Submitted: auto-replied
X-MS-PublicTrafficType: Email
MIME-Version: 1.0

--{outer}
Content-Type: multipart/alternative; differences=Content-Type;
\tboundary="{alternative}"

--{alternative}
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

Your message to {recipient} couldn't be delivered.
{local} wasn't found at {domain}.

Action Required
Unknown To address

How to Fix It
The address may be misspelled or may not exist.

--{alternative}
Content-Type: text/html; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

<html><body><div style=3D"font-family:'Segoe UI'">Your message to {recipient} =
couldn't be delivered.</div></body></html>

--{alternative}--

--{outer}
Content-Type: message/delivery-status

Reporting-MTA: dns;PH0PR12MB1234.namprd12.prod.outlook.com
Received-From-MTA: dns;referee.test
Arrival-Date: Thu, 1 Jan 2026 09:00:00 +0000

Original-Recipient: rfc822;{recipient}
Final-Recipient: rfc822;{recipient}
Action: failed
Status: 5.1.10
Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient {recipient} not found by SMTP address lookup
X-Display-Name: {local}

--{outer}
Content-Type: message/rfc822

{_headers(original)}

(the message body)
--{outer}--
""")
