"""Reading replies as mail programs shape them: `mailin.reading` on real message bytes."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from mailin.bounds import MAX_DEPTH, MAX_LINES, MAX_PARTS, beyond_bounds, head_of
from mailin.reading import (
    MAX_MOVE,
    MAX_READ_LINES,
    automatic,
    body_text,
    html_text,
    own_paragraphs,
    subject_words,
    unflow,
)
from referee import games
from referee.reply_text import Move, Unread, read_reply, same_address

ICE_PLAN = (
    "build Sg@0,0 Sg@0,1 Mg@-1,1 Mg@-2,1 Lg@-3,1 Lg@-4,1 Mr@-4,1 Sr@-4,2 Mr@-5,2 "
    "Lr@-6,2 My@-6,2 Sy@-6,3 Ly@-7,3 Ly@-8,3 Ly@-9,3"
)
QUOTE = "> It is your move in Ice Palace.\n> \n> Your legal moves:\n>   build auto\n"


def message(
    body: str, content_type: str = "text/plain; charset=utf-8", **headers: str
) -> EmailMessage:
    head = "".join(f"{name.replace('_', '-')}: {value}\n" for name, value in headers.items())
    raw = (
        "From: Ann <ann@players.test>\nTo: play+x@referee.test\nSubject: Re: Ice Palace\n"
        f"MIME-Version: 1.0\nContent-Type: {content_type}\nContent-Transfer-Encoding: 8bit\n"
        f"{head}\n{body}"
    ).encode()
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(parsed, EmailMessage)
    return parsed


def wrap(text: str, width: int, soft: bool) -> str:
    """Lines of at most `width` columns broken at spaces; `soft` keeps the space (flowed)."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line + (" " if soft else ""))
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def move_of(mail: EmailMessage) -> str:
    """The first line of the player's own text, as the reader hands it on."""
    found = own_paragraphs(*body_text(mail))
    assert found, body_text(mail)
    return found[0][0]


def test_a_long_ice_palace_plan_survives_format_flowed() -> None:
    rules = games.get("ice_palace")
    assert len(ICE_PLAN) > 78 and rules.notate(rules.parse(ICE_PLAN)) == ICE_PLAN
    flowed = message(
        wrap(ICE_PLAN, 72, soft=True) + "\n\nOn Mon, 2 Mar 2026, Referee wrote:\n" + QUOTE,
        "text/plain; charset=utf-8; format=flowed; delsp=no",
    )
    assert move_of(flowed) == ICE_PLAN
    # delsp=yes: the space before each soft break belongs to the break, not the text.
    text = wrap(ICE_PLAN, 60, soft=True).replace(" \n", "  \n")
    assert move_of(message(text, "text/plain; format=flowed; delsp=yes")) == ICE_PLAN


def test_a_long_ice_palace_plan_survives_hard_wrapping() -> None:
    hard = message(wrap(ICE_PLAN, 72, soft=False) + "\n\n-- \nAnn\n")
    assert move_of(hard) == ICE_PLAN
    assert "\n" in wrap(ICE_PLAN, 72, soft=False)


def test_a_move_followed_by_a_greeting_on_the_next_line_is_read_alone() -> None:
    found = own_paragraphs("3c4\nThanks, Ann\n\n> quoted", hard_wrapped=True)
    assert found == [["3c4", "Thanks, Ann"]]
    assert read_reply(games.get("subdivision"), {}, found) == Move(
        {"type": "place", "size": 3, "cell": "c4"}
    )


@pytest.mark.parametrize(
    "attribution",
    [
        "Am Mo., 2. März 2026 um 10:00 Uhr schrieb Referee <referee@referee.test>:",
        "Op ma 2 mrt 2026 om 10:00 schreef Referee <referee@referee.test>:",
        "On Mon, 2 Mar 2026 at 10:00, Referee <\nreferee@referee.test> wrote:",
        "Le lun. 2 mars 2026 à 10:00, Referee <referee@referee.test> a écrit :",
        "El lun, 2 mar 2026 a las 10:00, Referee (<referee@referee.test>)\nescribió:",
    ],
)
def test_bottom_posted_replies_in_any_language(attribution: str) -> None:
    mail = message(f"{attribution}\n{QUOTE}\nbuild auto\n\n-- \nAnn\n")
    assert move_of(mail) == "build auto"


def test_top_posted_above_an_outlook_header_block() -> None:
    mail = message(
        "build auto\n\nFrom: Referee <referee@referee.test>\nSent: Monday, 2 March 2026\n"
        "To: Ann\nSubject: Ice Palace\n\nIt is your move in Ice Palace.\nbuild auto\n"
    )
    assert own_paragraphs(*body_text(mail)) == [["build auto"]]


@pytest.mark.parametrize(
    ("headers", "envelope"),
    [
        ({"Auto_Submitted": "auto-replied"}, "ann@players.test"),
        ({"Precedence": "bulk"}, "ann@players.test"),
        ({"Precedence": "junk"}, "ann@players.test"),
        ({}, ""),
        ({"X_Autoreply": "yes"}, "ann@players.test"),
    ],
)
def test_machine_mail_is_recognised(headers: dict[str, str], envelope: str) -> None:
    assert automatic(message("I am away until Monday.", **headers), envelope) is not None


def test_a_vacation_notice_is_machine_mail() -> None:
    mail = message("I am away until Monday.")
    mail.replace_header("Subject", "Out of Office: Ice Palace")
    assert automatic(mail, "ann@players.test") is not None


def test_a_persons_reply_is_not_machine_mail() -> None:
    assert automatic(message("build auto", Auto_Submitted="no"), "ann@players.test") is None


def test_addresses_match_ignoring_domain_case_and_tags() -> None:
    assert same_address("Ann@Players.TEST", "ann@players.test")
    assert same_address("ann+games@players.test", "ann@players.test")
    assert not same_address("ann+games@players.test", "ann+other@players.test")
    assert same_address("ann+other@players.test", "ann+other@players.test")
    assert not same_address("anna@players.test", "ann@players.test")
    assert not same_address("", "ann@players.test")


# -- reading stays linear, and refuses what is beyond its bounds (issue 21, point 4) --


def raw_mail(content_type: str, body: bytes) -> bytes:
    return (
        b"From: ann@players.test\r\nTo: play+x@referee.test\r\nSubject: Re: x\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )


def flat_parts(count: int) -> bytes:
    parts = b"".join(b"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n" for _ in range(count))
    return raw_mail('multipart/mixed; boundary="b"', parts + b"--b--\r\n")


def nested_parts(depth: int) -> bytes:
    body = b"".join(
        b'--b%d\r\nContent-Type: multipart/mixed; boundary="b%d"\r\n\r\n' % (n, n + 1)
        for n in range(depth)
    )
    return raw_mail('multipart/mixed; boundary="b0"', body)


def test_parts_depth_and_lines_are_bounded_before_parsing() -> None:
    assert beyond_bounds(flat_parts(MAX_PARTS)) is None
    assert beyond_bounds(flat_parts(MAX_PARTS + 1)) == f"it has more than {MAX_PARTS} MIME parts"
    assert beyond_bounds(nested_parts(MAX_DEPTH - 1)) is None
    assert "nested more than" in str(beyond_bounds(nested_parts(2000)))
    many_lines = raw_mail("text/plain", b"x\r\n" * MAX_LINES)
    assert beyond_bounds(many_lines) == f"it has more than {MAX_LINES} lines"
    # Lines like a delimiter of no multipart open no part ("--" rules, signatures).
    text = raw_mail("text/plain", b"--zz\r\n-- \r\n" * (MAX_PARTS + 5))
    assert beyond_bounds(text) is None


def test_a_real_reply_with_attachments_is_within_bounds() -> None:
    mail = message("take 13")
    for number in range(5):
        mail.add_attachment(b"\x89PNG" * 1000, "image", "png", filename=f"{number}.png")
    assert beyond_bounds(bytes(mail)) is None
    assert head_of(bytes(mail))["From"] == "Ann <ann@players.test>"


def test_one_long_flowed_line_is_joined_whole_and_read_in_bounds() -> None:
    # 4 MB of soft breaks: joined once, then only its first characters are read.
    text = "take 13 \r\n" * 400_000 + "\r\n"
    assert len(unflow(text, delsp=False).split("\n")[0]) == 8 * 400_000
    (paragraph,) = own_paragraphs(unflow(text, delsp=False))
    assert paragraph == [("take 13 " * 50)[:MAX_MOVE].strip()]


def test_a_move_below_a_long_quote_is_found() -> None:
    quote = "> quoted line\n" * (3 * MAX_READ_LINES)
    assert own_paragraphs(f"On Monday, Referee wrote:\n{quote}\ntake 13\n") == [["take 13"]]


@pytest.mark.parametrize("broken", ["<!--<a <", "<a <", "<![", "<?", "<", "&#", "<a b='"])
def test_broken_html_is_read_in_one_pass(broken: str) -> None:
    # Python's html.parser is quadratic on these (and raises on "<![").
    html_text(broken * 100_000)
    assert html_text(f"<p>take 13</p>{broken * 10}").splitlines()[1] == "take 13"


def test_html_text_keeps_blockquotes_quoted_and_skips_styles() -> None:
    html = (
        "<html><head><style>p { color: red }</style></head><body><div>take&nbsp;13</div>"
        "<blockquote><p>take 20</p></blockquote><!-- a comment --></body></html>"
    )
    assert [line for line in html_text(html).splitlines() if line] == ["take 13", "> take 20"]


# -- two moves in one reply are never played as one (point 11) ---------------------

MANDALA, MANIKI = games.get("mandala"), games.get("maniki")


def read(game: str, text: str, content_type: str = "text/plain; charset=utf-8") -> object:
    body, hard_wrapped = body_text(message(text, content_type))
    return read_reply(games.get(game), {}, own_paragraphs(body, hard_wrapped))


def test_a_correction_on_the_next_line_is_refused_naming_both_moves() -> None:
    found = read("mandala", "take 49\nsorry, I meant take 50\n")
    assert isinstance(found, Unread)
    assert found.problem.startswith('it holds two different moves, "take 49" and "take 50"')


def test_two_short_hard_lines_in_a_flowed_reply_are_two_moves() -> None:
    found = read("maniki", "KI MA\r\nMA LO\r\n", "text/plain; charset=utf-8; format=flowed")
    assert isinstance(found, Unread) and '"KI MA" and "MA LO"' in found.problem
    # The same two lines wrapped by the program (soft breaks) are one move.
    found = read("maniki", "KI MA \r\nMA LO\r\n", "text/plain; charset=utf-8; format=flowed")
    assert found == Move({"type": "sequence", "orders": ["KI", "MA", "MA", "LO"]})


def test_a_signature_that_reads_as_orders_is_never_joined_into_the_move() -> None:
    found = read("maniki", "KI MA LO\nNiki\n")
    assert isinstance(found, Unread) and '"KI MA LO" and "Niki"' in found.problem


def test_a_long_move_wrapped_by_the_program_is_joined_but_short_lines_are_not() -> None:
    orders = " ".join(["KI", "LO"] * 15)
    assert len(orders) > 72
    found = read("maniki", wrap(orders, 72, soft=False) + "\n")
    assert found == Move({"type": "sequence", "orders": orders.split()})
    assert own_paragraphs("KI MA\nMA LO", hard_wrapped=True) == [["KI MA", "MA LO"]]


def test_the_same_move_twice_is_that_move() -> None:
    assert read("mandala", "take 13\nTake 13.\n") == Move({"type": "take", "index": 13})


# -- forgiveness where there is no doubt (point 12) -----------------------------------

TAKE_13 = Move({"type": "take", "index": 13})


@pytest.mark.parametrize(
    "text",
    [
        "Take 13.",
        "\u201ctake 13\u201d",
        "\u201eTake 13!\u201c",
        "take 13 \U0001f44d",
        "take 13 \U0001f44d\U0001f3fd",
        "ok take 13",
        "OK, take 13.",
        "Take\xa013.",
        "Здравствуйте, Referee.\n\nTake 13.",
        "Здравствуйте, Referee.\nTake 13.",
        "Referee様\ntake 13",
        "Hi Referee,\n\n\u00abtake 13\u00bb\n\nThanks!",
    ],
)
def test_a_plain_move_with_what_surrounds_it_is_read(text: str) -> None:
    assert read("mandala", text) == TAKE_13


def test_an_empty_plain_part_beside_html_reads_the_html() -> None:
    mail = message("\r\n")
    mail.add_alternative("<div dir='ltr'>take 13</div>", subtype="html")
    assert own_paragraphs(*body_text(mail)) == [["take 13"]]


def test_an_inline_text_attachment_is_not_the_body() -> None:
    mail = EmailMessage()
    mail.set_content("<div>take 13</div>", subtype="html")
    mail.add_attachment("take 20", filename="notes.txt", disposition="inline")
    assert own_paragraphs(*body_text(mail)) == [["take 13"]]
    # A message enclosed inline (a forwarded mail) is someone else's text.
    enclosed, part = message(""), EmailMessage()
    part.set_content(message("take 20"), disposition="inline")
    enclosed.make_mixed()
    enclosed.attach(part)
    assert own_paragraphs(*body_text(enclosed)) == []


def test_a_move_in_the_subject_alone_is_read() -> None:
    mail = message("")
    mail.replace_header("Subject", "Re: take 13")
    assert own_paragraphs(*body_text(mail)) == []
    assert read_reply(MANDALA, {}, [], subject_words(mail)) == TAKE_13
    mail.replace_header("Subject", "Re: Mandala: Ann and Bob")
    found = read_reply(MANDALA, {}, [], subject_words(mail))
    assert found == Unread("no move was found in your reply")


# -- refusals in plain words (point 13) ---------------------------------------------


def test_a_refusal_quotes_the_text_once_as_written() -> None:
    found = read("mandala", "Take\xa0thirteen.")
    assert isinstance(found, Unread)
    assert found.problem.startswith('"Take\xa0thirteen." is not a move: expected `take N`')
    assert found.problem.count("thirteen") == 1 and "\\x" not in found.problem
    found = read("maniki", "KI MA LX SO")
    assert isinstance(found, Unread)
    assert found.problem.startswith("\"KI MA LX SO\" is not a move: 'LX' is not an order: ")


def test_a_move_inside_a_sentence_is_named_but_not_played() -> None:
    found = read("mandala", "I will take 13")
    assert found == Unread(
        '"I will take 13" is not a move: expected `take N` (or `N`, `tN`) with N a path '
        'index from 0 to 74, or `resign`; if you mean "take 13", reply with it alone on the '
        "first line"
    )


# -- out-of-office in every language, and machine mail by its headers (point 14) -------

VACATION_SUBJECTS = [
    "Automatic reply: Mandala",
    "Automatische Antwort: Mandala",
    "Respuesta automática: Mandala",
    "Automatisch antwoord: Mandala",
    "Risposta automatica: Mandala",
    "Automatiskt svar: Mandala",
    "Resposta automática: Mandala",
    "Automatyczna odpowiedź: Mandala",
    "自動応答: Mandala",
    "自動返信\uff1aMandala",
    "Réponse automatique : Mandala",
    "Abwesenheitsnotiz",
    "Automatisk svar: Mandala",
    "Автоматический ответ: Mandala",
    "自动回复: Mandala",
    "Out of Office: Mandala",
]


@pytest.mark.parametrize("subject", VACATION_SUBJECTS)
def test_a_vacation_subject_in_any_language_is_machine_mail(subject: str) -> None:
    mail = message("I am away until Monday.")
    mail.replace_header("Subject", subject)
    assert automatic(mail, "ann@players.test") == "a vacation notice"


@pytest.mark.parametrize(
    "field",
    [
        ("X-Autorespond", "yes"),
        ("X-Autogenerated", "Reply"),
        ("X-MS-Exchange-Generated-Message-Source", "Mailbox Rules Agent"),
        ("X-Precedence", "auto_reply"),
        ("Precedence", "auto_reply"),
    ],
)
def test_machine_mail_is_recognised_by_its_header_fields(field: tuple[str, str]) -> None:
    mail = message("I am away until Monday.")
    mail[field[0]] = field[1]
    assert automatic(mail, "ann@players.test") is not None


@pytest.mark.parametrize(
    "subject", ["Re: Mandala: Ann and Bob", "AW: Automatische Antwort", "Absentee ballot", ""]
)
def test_a_persons_subjects_and_outlooks_suppress_field_are_not_machine_mail(subject: str) -> None:
    mail = message("take 13")
    mail.replace_header("Subject", subject)
    # Outlook sets this on a person's mail too.
    mail["X-Auto-Response-Suppress"] = "All"
    assert automatic(mail, "ann@players.test") is None
