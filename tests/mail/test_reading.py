"""Reading replies as mail programs shape them: `mailin.reading` on real message bytes."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from mailin.reading import automatic, body_text, candidates
from referee import games
from referee.store.addresses import same_address

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
    found = candidates(body_text(mail))
    assert found, body_text(mail)
    return found[0]


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


def test_a_move_followed_by_a_greeting_on_the_next_line_offers_the_line_too() -> None:
    assert candidates("3c4\nThanks, Ann\n\n> quoted") == ["3c4 Thanks, Ann", "3c4"]


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
    assert candidates(body_text(mail)) == ["build auto"]


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
