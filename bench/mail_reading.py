"""CPU to read one reply in `referee mail-in` as the message grows: double, never quadruple.

    uv run python bench/mail_reading.py

Each figure is what `mailin.server.take` spends on a message apart from the
database: its header fields, the bounds (`mailin/bounds.py`), the parse and
the reading of the player's text (`mailin/reading.py`,
`referee/reply_text.py`). Best of three runs, in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from mailin import bounds, reading
from referee import games
from referee.reply_text import read_reply

HEAD = (
    b"From: ann@players.test\r\nTo: play+x@referee.test\r\nSubject: Re: x\r\nMIME-Version: 1.0\r\n"
)
MANDALA = games.get("mandala")


def read(raw: bytes) -> None:
    bounds.head_of(raw)
    if bounds.beyond_bounds(raw) is not None:
        return
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    text, hard_wrapped = reading.body_text(message)
    read_reply(MANDALA, {}, reading.own_paragraphs(text, hard_wrapped))


def flowed(megabytes: int) -> bytes:
    line = b"and so on " * 7 + b"\r\n"
    body = b"take 13\r\n\r\n" + line * (megabytes * 1_000_000 // len(line))
    return HEAD + b"Content-Type: text/plain; format=flowed\r\n\r\n" + body


def html(megabytes: int) -> bytes:
    return HEAD + b"Content-Type: text/html\r\n\r\n" + b"<b>x</b>" * (megabytes * 125_000)


def parts(count: int) -> bytes:
    part = b"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n"
    return HEAD + b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n' + part * count


def best(make: Callable[[int], bytes], size: int) -> float:
    raw = make(size)
    times = []
    for _ in range(3):
        start = time.process_time()
        read(raw)
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    rows = [
        ("flowed text, MB", flowed, (1, 2, 4, 8)),
        ("one HTML line, MB", html, (1, 2, 4, 8)),
        ("MIME parts", parts, (25, 50, 100, 120_000)),
    ]
    for label, make, sizes in rows:
        figures = "  ".join(f"{size:>7}: {best(make, size):6.3f}s" for size in sizes)
        print(f"{label:<18} {figures}")


if __name__ == "__main__":
    main()
