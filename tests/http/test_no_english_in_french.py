"""A French reader reads no English: every page and mail a French player gets, read as
words (tests/english_words.py), holds none of the common English words.

The template check (tests/test_catalogues.py) cannot see a word made in Python and
handed to a template; this reads what the reader gets. The world is small and real, in
process on SQLite: Anne (French, in Paris) plays a game of each of the five games a few
moves in, one game she has won, an open game of hers, a vacation planned, table talk;
her mail is what those games left in the outbox, with a refused reply, a digest and a
sign-in link. A failure names the page or mail and the words around each English one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.http.player_auth import PLAYER_COOKIE
from referee import games
from referee.i18n import known_zone
from referee.rng import Rng
from referee.service import Referee, game_states, profiles, table_talk
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.delivering import deliver_due
from referee.service.digests import sweep_digests
from referee.service.players import MANAGE, PLAY, READ, Player, open_session
from referee.service.replies import Reply, take_reply
from referee.service.seeks import NewSeek, post_seek
from referee.service.signing_in import request_sign_in
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.service.turn_mail import change_settings
from referee.service.vacations import set_vacation
from referee.settings import Settings
from referee.store import keys
from referee.store.tables import Game, GameStatus
from tests.english_words import code_of, english_in, findings, html_text, mail_text

HOST = "http://localhost"
ANNE = "anne@paris.test"
SIGNED_IN = Player(ANNE, frozenset({READ, PLAY, MANAGE}))
OTHERS = [("Bruno", "bruno@lyon.test"), ("Chloé", "chloe@lille.test")]
# Seats per game: the fewest each is played by.
SEATS = {"ice_palace": 3, "mandala": 2, "mandala_stones": 2, "maniki": 3, "subdivision": 2}
# Moves played before the game is left, at Anne's turn (at most `MOST` in all).
MOVES, MOST = 4, 40


@dataclass(frozen=True, slots=True)
class World:
    # Each game's id and Anne's seat token (seat 0), by the game's name.
    running: dict[str, tuple[str, str]]
    finished: tuple[str, str]
    seek_id: str


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, public_url=HOST)


def acting(referee: Referee, game_id: str) -> tuple[Game, list[int]]:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game, sorted(game.to_act or [])


def new_game(referee: Referee, name: str) -> tuple[str, tuple[str, ...]]:
    players = [Seated("Anne", ANNE)] + [
        Seated(other, address) for other, address in OTHERS[: SEATS[name] - 1]
    ]
    # A fixed seed: the same deal, so the same words, on every run.
    command = NewGame(name, players, {}, deadline="72h", trusted=True, seed=f"sans anglais {name}")
    created = create_game(referee, command)
    return created.game.id, created.tokens


def play_a_few(referee: Referee, name: str) -> tuple[str, str]:
    """A game of `name` a few random moves in, left at Anne's turn where it comes."""
    rules = games.get(name)
    game_id, tokens = new_game(referee, name)
    chooser = Rng(f"no english {name}")
    for played in range(MOST):
        game, to_act = acting(referee, game_id)
        if game.status != GameStatus.ACTIVE or (played >= MOVES and 0 in to_act):
            break
        with referee.db.reading() as session:
            state = game_states.state_at(session, game, game.version)
        seat = chooser.choice(to_act)
        move = rules.move_to_json(rules.random_move(state, seat, chooser))
        done = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move), wait=5)
        assert done.status == "accepted", done
    return game_id, tokens[0]


def refused_reply(referee: Referee, game_id: str) -> None:
    """Anne answers a turn mail with words that are no move."""
    game, to_act = acting(referee, game_id)
    assert 0 in to_act
    reply = Reply(
        token=keys.reply_token(referee.secret(), game_id, 0, game.version),
        message_key="no-english-refused",
        message_id="<no-english-refused@paris.test>",
        sender=ANNE,
        paragraphs=[["2z9"]],
    )
    assert take_reply(referee, reply).outcome == "refused"


def digest(referee: Referee) -> None:
    """Anne takes her turns in one mail a day; tomorrow's comes."""
    moment = (datetime.now(UTC) + timedelta(days=1)).replace(minute=5)
    hour = moment.astimezone(known_zone("Europe/Paris")).hour
    change_settings(referee, SIGNED_IN, {"turn_mail": "digest", "digest_hours": [hour]})
    assert sweep_digests(referee, moment) == 1
    deliver_due(referee, "mail", moment + timedelta(minutes=1))


@pytest.fixture(scope="module")
def world(referee: Referee) -> World:
    profiles.set_profile(referee, SIGNED_IN, "Anne", language="fr", time_zone="Europe/Paris")
    running = {name: play_a_few(referee, name) for name in SEATS}
    won, tokens = new_game(referee, "subdivision")
    resigned = submit_move(referee, SubmitMove(won, SeatToken(tokens[1]), {"type": "resign"}), 5)
    assert resigned.status == "accepted", resigned
    talk_in = running["subdivision"][0]
    table_talk.post_message(referee, talk_in, 1, "Bonne chance, Anne !", via="page")
    table_talk.post_message(referee, talk_in, 0, "Merci Bruno !", via="page")
    seek = post_seek(referee, SIGNED_IN, NewSeek("mandala", deadline="72h"))
    now = datetime.now(UTC)
    set_vacation(referee, SIGNED_IN, now + timedelta(days=10), now + timedelta(days=13))
    # Her mail: the games' notices, then a refused reply, a sign-in link and a digest.
    deliver_due(referee, "mail")
    refused_reply(referee, next(g for g, _ in running.values() if 0 in acting(referee, g)[1]))
    assert request_sign_in(referee, ANNE)
    deliver_due(referee, "mail")
    digest(referee)
    return World(running, (won, tokens[0]), seek.id)


def test_the_reader_reads_sentences_and_skips_notation() -> None:
    page = (
        '<title>Partie</title><p title="Your turn">Écrivez <code>pass</code> ou '
        '<button class="move">resign</button><!-- the end --></p><pre>up down</pre>'
        '<script>var the = 1;</script><script type="application/json">{"a": "Wait"}</script>'
        "<p>Le plateau : `board` BE/L, the end</p>"
    )
    assert [word for word, _ in english_in(html_text(page))] == ["Your", "turn", "Wait", "the"]
    text = 'Écrivez "pick A2 to 5" ou « pass », and so\n  resign\nup\n'
    assert english_in(mail_text(text, "up")) == [("and", "Écrivez ou and so")]


def french_browser(app: Flask, referee: Referee | None = None) -> FlaskClient:
    """A browser set to French: Anne's, signed in, when `referee` is given."""
    browser = app.test_client()
    browser.set_cookie("lang", "fr")
    if referee is not None:
        browser.set_cookie(PLAYER_COOKIE, open_session(referee, ANNE))
    return browser


def read(browser: FlaskClient, path: str, status: int = 200) -> str:
    answer = browser.get(path, headers={"Accept-Language": "fr"})
    assert answer.status_code == status, (path, answer.status_code)
    page = answer.get_data(as_text=True)
    assert '<html lang="fr">' in page, path
    return page


def test_no_page_a_french_player_reads_holds_english(
    app: Flask, referee: Referee, world: World
) -> None:
    anne, spectator = french_browser(app, referee), french_browser(app)
    games_ = {**world.running, "finished": world.finished}
    for game_id, token in games_.values():
        assert anne.get(f"/g/{game_id}/seat/{token}").status_code in (200, 302, 303)
    paths = ["/", "/me", "/me/settings", "/seeks", f"/seeks/{world.seek_id}", "/me/vacation"]
    paths += ["/p/Anne", "/ratings", *(f"/new/{name}" for name in SEATS)]
    found: list[str] = []
    for path in paths:
        found += findings(path, html_text(read(anne, path)))
    for name, (game_id, _) in games_.items():
        seated = html_text(read(anne, f"/g/{game_id}"))
        assert "Anne" in seated and "partie" in seated, name
        found += findings(f"{name} as Anne's seat", seated)
        found += findings(f"{name} as a spectator", html_text(read(spectator, f"/g/{game_id}")))
    found += findings("the not-found page", html_text(read(anne, "/g/" + "0" * 32, 404)))
    assert not found, "English on French pages:\n" + "\n".join(found)


def mails_to(folder: Path, address: str) -> list[EmailMessage]:
    found = []
    for path in sorted(folder.glob("*.eml")):
        mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert isinstance(mail, EmailMessage)
        if address in str(mail["To"]):
            found.append(mail)
    return found


def body(mail: EmailMessage, kind: str) -> str:
    part = mail.get_body(preferencelist=(kind,))
    return "" if part is None else str(part.get_content())


def test_no_mail_a_french_player_gets_holds_english(referee: Referee, world: World) -> None:
    mails = mails_to(Path(referee.settings.mail_dir), ANNE)
    kinds = {str(mail["X-Referee-Kinds"] or mail["X-Referee-Kind"] or "sign_in") for mail in mails}
    told = " ".join(kinds)
    for kind in ("invitation", "your_turn", "refused", "digest", "game_over"):
        assert kind in told, kinds
    found: list[str] = []
    for mail in mails:
        assert mail["Content-Language"] == "fr", mail["Subject"]
        where = f"mail «{mail['Subject']}»"
        html = body(mail, "html")
        found += findings(f"{where} subject", str(mail["Subject"]))
        found += findings(f"{where} html", html_text(html))
        found += findings(f"{where} text", mail_text(body(mail, "plain"), code_of(html)))
    assert not found, "English in French mail:\n" + "\n".join(sorted(set(found)))
