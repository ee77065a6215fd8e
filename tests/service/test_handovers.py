"""Bots keep seats warm: a player who joins an open game started with bots takes a bot's
seat over, at once when the bot is not to act, else once the bot has played the turn
under way; the record keeps which moves were the bot's, the game stays unrated, the seek
is listed until the last bot's seat is taken, and the newcomer and the others are told.
"""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlmodel import col, select

from api import create_app
from referee import games
from referee.automatic import FORCED
from referee.record import loads
from referee.service import Referee, game_states, handovers, profiles, refusals
from referee.service.bots import play_bots
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.delivering import deliver
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.seeks import NewSeek, join_seek, list_seeks, post_seek, start_seek
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.service.verification import verify_game
from referee.store import keys
from referee.store.records import full_record, public_record
from referee.store.tables import Game, Move, Seat, SeatHandover, Seek, Source, Submission

NAMES = {"ann@x.test": "Ann", "bob@x.test": "Bob", "cy@x.test": "Cyd", "dee@x.test": "Dée"}


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


ANN, BOB, CY, DEE = (player(address) for address in NAMES)


@pytest.fixture
def referee(fresh_referee: Referee, monkeypatch: pytest.MonkeyPatch) -> Referee:
    """Players known and named; the bots' tasks kept, not run: the test plays them."""
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    create_game(fresh_referee, NewGame("subdivision", seated[:2], {}, trusted=True))
    create_game(fresh_referee, NewGame("subdivision", seated[2:], {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(fresh_referee, player(address), name)
    monkeypatch.setattr(fresh_referee.queue, "enqueue_apart", lambda *_args, **_lane: None)
    return fresh_referee


def _seek_of(referee: Referee, game_id: str) -> Seek:
    with referee.db.reading() as session:
        found = session.exec(select(Seek).where(Seek.game_id == game_id)).one()
    return found


def _game(referee: Referee, game_id: str) -> Game:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        session.expunge(game)
        return game


def _seats(referee: Referee, game_id: str) -> list[Seat]:
    with referee.db.reading() as session:
        query = select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))
        return list(session.exec(query))


def _step(referee: Referee, game_id: str) -> None:
    """One move by whoever is to act: its bot, or the person (its first legal move)."""
    game = _game(referee, game_id)
    (seat,) = game.to_act
    if _seats(referee, game_id)[seat].bot:
        assert play_bots(referee, game_id, game.version) == 1
        return
    rules = games.get(game.name)
    with referee.db.reading() as session:
        state = game_states.state_at(session, game, game.version)
    move = rules.legal_moves(state, seat)[0]
    submit_move(
        referee,
        SubmitMove(game_id, KnownSeat(seat), rules.move_to_json(move), seen_version=game.version),
    )
    assert _game(referee, game_id).version > game.version


def _moved(referee: Referee, game_id: str, seat: int) -> bool:
    """Whether the seat played a move of its own (not one the referee recorded)."""
    with referee.db.reading() as session:
        query = select(Move).where(
            Move.game_id == game_id, Move.seat == seat, Move.source != FORCED
        )
        return session.exec(query).first() is not None


def _started(referee: Referee) -> tuple[str, str]:
    """An Ice Palace seek of three that Ann started at once with two random bots."""
    seek = post_seek(referee, ANN, NewSeek("ice_palace", 3, 3, bots="random"))
    started = start_seek(referee, ANN, seek.id)
    assert started.game_id is not None and started.bot_seats_open == 2
    return seek.id, started.game_id


def _bot_seats(referee: Referee, game_id: str) -> list[int]:
    return [seat.seat for seat in _seats(referee, game_id) if seat.bot]


def _mail(referee: Referee, kind: str) -> list[EmailMessage]:
    """The mails telling a notice of `kind` the referee sent (into its mail folder)."""
    deliver(referee, "mail")
    found = []
    for path in sorted(Path(referee.settings.mail_dir).glob("*.eml")):
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        if kind in str(message["X-Referee-Kinds"] or message["X-Referee-Kind"]).split():
            found.append(message)
    return found


def _text(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return " ".join(body.get_content().split())


def test_a_seat_whose_bot_is_not_to_act_is_the_players_at_once(referee: Referee) -> None:
    seek_id, game_id = _started(referee)
    first_free = min(_bot_seats(referee, game_id))
    # Play until the first bot's seat has moved and the person (Ann) is to act: no
    # bot's seat is then.
    while not _moved(referee, game_id, first_free) or not set(
        _game(referee, game_id).to_act
    ).isdisjoint(_bot_seats(referee, game_id)):
        _step(referee, game_id)
    game = _game(referee, game_id)
    shown = join_seek(referee, BOB, seek_id)
    assert (shown.bot_seats_open, shown.open_seats, shown.seated) == (1, 1, ("Ann", "Bob"))
    taken = _seats(referee, game_id)[first_free]
    token = keys.seat_link_token(referee.secret(), game_id, first_free)
    assert (taken.bot, taken.name, taken.email) == (None, "Bob", "bob@x.test")
    assert taken.token_hash == keys.hash_token(token) and taken.linked_at is None
    with referee.db.reading() as session:
        handover = session.get(SeatHandover, (game_id, first_free))
    assert handover is not None and handover.bot == "random"
    assert (handover.joined_version, handover.from_seq) == (game.version, game.version + 1)
    # Still listed (one bot's seat left), and not rated.
    assert [s.id for s in list_seeks(referee, None).seeks] == [seek_id]
    assert not _seek_of(referee, game_id).rated
    # Bob is told which seat, with the moves so far, the board and his links.
    (told,) = _mail(referee, "seat_taken")
    text = _text(told)
    assert told["To"].addresses[0].addr_spec == "bob@x.test"
    assert f"You took over Player {first_free + 1}'s seat" in text and "random bot" in text
    assert f"from move {game.version + 1} on, the seat is yours" in text
    assert "Moves so far:" in text and "(played by the bot)" in text
    assert f"/g/{game_id}/seat/{token}" in text and f"/g/{game_id}/play/" in text
    # Ann is told who arrived; the bot's seat nothing.
    (arrived,) = _mail(referee, "arrived")
    assert arrived["To"].addresses[0].addr_spec == "ann@x.test"
    assert f"Bob took over Player {first_free + 1}'s seat from the random bot" in _text(arrived)
    assert "bob@x.test" not in arrived.as_string()
    # One subject for the game's thread, as when it began.
    assert told["Subject"] == arrived["Subject"] and "Open seat" in told["Subject"]


def test_a_seat_whose_bot_is_to_act_is_handed_over_after_the_bots_move(
    referee: Referee,
) -> None:
    seek_id, game_id = _started(referee)
    # Play until the first bot's seat is the one to act.
    first_free = min(_bot_seats(referee, game_id))
    while _game(referee, game_id).to_act != [first_free]:
        _step(referee, game_id)
    joined = _game(referee, game_id)
    join_seek(referee, BOB, seek_id)
    # The bot plays the turn under way: the seat is still its.
    seat = _seats(referee, game_id)[first_free]
    assert (seat.bot, seat.email) == ("random", None)
    with referee.db.reading() as session:
        handover = session.get(SeatHandover, (game_id, first_free))
    assert handover is not None and handover.from_seq is None
    assert _mail(referee, "seat_taken") == []
    _step(referee, game_id)
    after = _game(referee, game_id)
    seat = _seats(referee, game_id)[first_free]
    assert (seat.bot, seat.name, seat.email) == (None, "Bob", "bob@x.test")
    with referee.db.reading() as session:
        handover = session.get(SeatHandover, (game_id, first_free))
        moves = session.exec(select(Move).where(Move.game_id == game_id)).all()
    assert handover is not None and handover.from_seq == after.version + 1
    assert after.version > joined.version
    # The bot's move of that turn is the bot's in the log and in the record.
    bots_moves = [m for m in moves if m.seat == first_free and m.source != FORCED]
    assert bots_moves and all(m.source == Source.BOT for m in bots_moves)
    with referee.db.reading() as session:
        record = public_record(session, after, game_states.state_at(session, after, after.version))
    again = loads(record.dumps())
    (said,) = again.header.handovers or ()
    assert (said.seat, said.from_seq, said.bot) == (first_free, after.version + 1, "random")
    assert again.header.players[first_free] == "Bob"
    assert all(again.header.bot_at(first_free, m.seq) == "random" for m in bots_moves)
    assert again.header.bot_at(first_free, after.version + 1) is None
    (told,) = _mail(referee, "seat_taken")
    assert f"You took over Player {first_free + 1}'s seat" in _text(told)
    # Bob plays his seat's next turn himself: his move is his, the bot plays no more there.
    while first_free not in _game(referee, game_id).to_act:
        _step(referee, game_id)
    game = _game(referee, game_id)
    assert play_bots(referee, game_id, game.version) == 0
    _step(referee, game_id)
    with referee.db.reading() as session:
        last = session.exec(
            select(Move).where(Move.game_id == game_id, Move.seq == game.version + 1)
        ).one()
        submission = session.exec(
            select(Submission).where(Submission.game_id == game_id, Submission.seq == last.seq)
        ).one()
    assert last.seat == first_free and last.source == submission.source == Source.REST
    assert not _seek_of(referee, game_id).rated


def test_the_last_bots_seat_goes_to_one_player_and_the_seek_is_then_not_listed(
    referee: Referee,
) -> None:
    seek_id, game_id = _started(referee)
    join_seek(referee, BOB, seek_id)
    with pytest.raises(refusals.AlreadyJoined):
        join_seek(referee, BOB, seek_id)
    shown = join_seek(referee, CY, seek_id)
    assert (shown.bot_seats_open, shown.seated) == (0, ("Ann", "Bob", "Cyd"))
    assert list_seeks(referee, None).seeks == ()
    with pytest.raises(refusals.SeekStarted, match="no seat a bot holds"):
        join_seek(referee, DEE, seek_id)
    with referee.db.reading() as session:
        rows = session.exec(select(SeatHandover).where(SeatHandover.game_id == game_id)).all()
    assert sorted(row.address for row in rows) == ["bob@x.test", "cy@x.test"]
    assert len({row.seat for row in rows}) == 2


def test_a_taken_seat_plays_through_its_token_and_its_page_shows_it(
    referee: Referee,
) -> None:
    seek_id, game_id = _started(referee)
    first_free = min(_bot_seats(referee, game_id))
    bot_name = _seats(referee, game_id)[first_free].name
    while not _moved(referee, game_id, first_free) or not set(
        _game(referee, game_id).to_act
    ).isdisjoint(_bot_seats(referee, game_id)):
        _step(referee, game_id)
    join_seek(referee, BOB, seek_id)
    token = keys.seat_link_token(referee.secret(), game_id, first_free)
    client = create_app(referee.settings, referee).test_client()
    opened = client.get(f"/g/{game_id}/seat/{token}", follow_redirects=True)
    assert opened.status_code == 200 and "Bob" in opened.get_data(as_text=True)
    # The browser holds Bob's seat now: the game's page shows it as his.
    page = client.get(f"/g/{game_id}")
    html = " ".join(page.get_data(as_text=True).split())
    assert page.status_code == 200
    assert "You are <strong><bdi>Bob</bdi></strong>" in html
    # Bob has a public name: his seat links his profile.
    assert (
        '<a class="player" href="/p/Bob"><bdi>Bob</bdi></a> <span class="muted">(you)</span>'
        in html
    )
    # The seat's moves before the handover are listed as its bot's.
    assert f"{bot_name} (bot, random)" in html
    state = client.get(
        f"/v1/games/{game_id}/legal-moves", headers={"Authorization": f"Bearer {token}"}
    )
    assert state.status_code == 200
    summary = client.get(f"/v1/games/{game_id}").get_json()
    assert summary["seats"][first_free]["name"] == "Bob"
    assert summary["seats"][first_free]["bot"] is None
    checked = client.get(f"/v1/games/{game_id}/verify").get_json()
    game = _game(referee, game_id)
    assert checked["handovers"] == [
        {"seat": first_free, "bot": "random", "from_seq": game.version + 1, "name": "Bob"}
    ]
    assert verify_game(referee, game).chain_valid
    assert handovers.handovers(referee, game_id)[0].name == "Bob"


def test_full_record_of_a_game_without_handovers_has_none(referee: Referee) -> None:
    _seek_id, game_id = _started(referee)
    game = _game(referee, game_id)
    with referee.db.reading() as session:
        record = full_record(session, game)
    assert record.header.handovers is None and "handovers" not in record.dumps()
