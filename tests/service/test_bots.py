"""Bots' seats in the service, in this process on SQLite: a game with bots ends with their
moves logged (source `bot`), each the move `referee.bots.decide` gives again from stored
data; a duplicate bot task plays once; a bot's seat is never mailed nor timed out; and
`on_timeout: bot` plays the greedy bot's move, handing a seat to it after three in a row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlmodel import col, select

from referee import automatic, bots, games
from referee.bots.levels import StrongBot
from referee.cli import main
from referee.delivery.channel import Consent
from referee.delivery.compose import Site, build
from referee.engine import IllegalMove
from referee.games.mandala import Take
from referee.playout import bot_rng, timeout_rng
from referee.queue import BOT as referee_bot
from referee.record import loads
from referee.service import Referee, game_states, refusals
from referee.service.bot_pace import measured_pace
from referee.service.bots import play_bots, sweep_bots
from referee.service.creating import NewGame, Player, create_game
from referee.service.deadlines import sweep_deadlines
from referee.service.my_games import my_games
from referee.service.players import Player as PlayerOf
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.settings import Settings
from referee.store.records import public_record
from referee.store.tables import Game, Move, Outbox, OutboxKind, Seat, Source, Submission

WITH_BOTS = [game.name for game in games.all_games() if bots.levels(game.name)]
# The slow checks play Mandala: two seats and short games.
GAME = "mandala"


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """The service on a SQLite file of the test's own; its bots think 0.05 s."""
    return fresh_referee


@pytest.fixture
def held(referee: Referee, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The bots' tasks enqueued, kept instead of run: the test runs them."""
    kept: list[tuple[Any, ...]] = []
    monkeypatch.setattr(referee.queue, "enqueue_apart", lambda *args, **_lane: kept.append(args))
    return kept


def _game(referee: Referee, game_id: str) -> Game:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        session.expunge(game)
        return game


def _settle(referee: Referee, game_id: str, seconds: float = 240) -> Game:
    """The game once its bots are done (over, or waiting for a person)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if referee.queue.idle("bots"):
            return _game(referee, game_id)
        time.sleep(0.05)
    raise AssertionError("the bots did not finish")


def _logged(referee: Referee, game_id: str) -> list[tuple[Move, Submission | None]]:
    with referee.db.reading() as session:
        moves = session.exec(
            select(Move).where(Move.game_id == game_id).order_by(col(Move.seq))
        ).all()
        found = []
        for move in moves:
            submission = session.exec(
                select(Submission).where(Submission.game_id == game_id, Submission.seq == move.seq)
            ).first()
            found.append((move, submission))
        for row in session.exec(select(Move)).all():
            session.expunge(row)
        return found


def _bots_alone(referee: Referee, *levels: str) -> str:
    players = [Player(f"Bot {n}", bot=level) for n, level in enumerate(levels)]
    return create_game(referee, NewGame(GAME, players, {}, trusted=True)).game.id


@pytest.mark.parametrize("name", WITH_BOTS)
def test_rules_offer_each_games_levels_weakest_first(name: str) -> None:
    assert bots.levels(name)[:1] == ("random",)
    assert {"random", "greedy", "strong"} <= set(bots.levels(name))


def test_a_game_of_bots_ends_with_their_moves_logged_as_the_bots_decide_them(
    referee: Referee,
) -> None:
    rules = games.get(GAME)
    game_id = _bots_alone(referee, "strong", "greedy")
    game = _settle(referee, game_id)
    # Measured by this process, as the service measures it.
    assert game.status == "over" and game.bot_seconds == 0.05 and game.bot_pace == measured_pace()
    logged = _logged(referee, game_id)
    played = [(move, submission) for move, submission in logged if submission is not None]
    assert played and all(submission.source == Source.BOT for _, submission in played)
    assert all(s.idempotency_key == f"bot:{m.seq - 1}:{m.seat}" for m, s in played)
    levels = {0: "strong", 1: "greedy"}
    with referee.db.reading() as session:
        for move, _submission in played:
            version = move.seq - 1
            state = game_states.state_at(session, game, version)
            again = bots.decide(
                rules,
                levels[move.seat],
                state,
                move.seat,
                players=2,
                options=game.options,
                rng=bot_rng(game.seed, version, move.seat),
                seconds=0.05 * game.bot_pace,
            )
            assert rules.notate(again) == move.notation, move.seq
    # No seat of bots is told anything.
    with referee.db.reading() as session:
        assert session.exec(select(Outbox).where(Outbox.game_id == game_id)).all() == []


def test_a_bot_task_run_twice_plays_once_and_a_stale_one_nothing(
    referee: Referee, held: list[tuple[Any, ...]]
) -> None:
    game_id = _bot_first(referee, [Player("Ann"), Player("Bot", bot="random")])
    version = _game(referee, game_id).version
    assert held[-1][1:] == (game_id, version)
    # The same turn published twice (two decisions, a sweep, a redelivered task).
    assert play_bots(referee, game_id, version) == 1
    assert play_bots(referee, game_id, version) == 0  # the game moved on: dropped
    with referee.db.reading() as session:
        submitted = session.exec(select(Submission).where(Submission.game_id == game_id)).all()
    assert [(s.source, s.seat, s.status) for s in submitted] == [(Source.BOT, 1, "accepted")]
    # Recorded twice before it was decided (two tasks at once): one submission.
    game_id = _bot_first(referee, [Player("Ann"), Player("Bot", bot="random")])
    version = _game(referee, game_id).version
    with monkeypatched_decide(referee):
        play_bots(referee, game_id, version)
        play_bots(referee, game_id, version)
    with referee.db.reading() as session:
        submitted = session.exec(select(Submission).where(Submission.game_id == game_id)).all()
    assert len(submitted) == 1 and submitted[0].status == "pending"
    # The sweep finds the bot's turn left waiting, and enqueues it again.
    assert sweep_bots(referee, datetime.now(UTC) + timedelta(hours=1)) == 1


def test_a_move_the_rules_refuse_is_replaced_by_the_random_levels_and_the_game_goes_on(
    referee: Referee,
    held: list[tuple[Any, ...]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rules = games.get(GAME)
    game_id = _bot_first(referee, [Player("Ann"), Player("Bot", bot="strong")])
    game = _game(referee, game_id)
    with referee.db.reading() as session:
        state = game_states.state_at(session, game, game.version)
    # A step off the path's end: what only a bot's bug would choose.
    wrong = Take(999)
    with pytest.raises(IllegalMove):
        rules.play(state, 1, wrong)
    monkeypatch.setattr(StrongBot, "choose", lambda *_args: wrong)
    assert play_bots(referee, game_id, game.version) == 1
    game = _game(referee, game_id)
    logged = _logged(referee, game_id)
    assert game.version == len(logged) and logged[-1][1] is not None
    stand_in = automatic.fallback_move(
        rules, state, 1, game.seed, game.version - 1, players=2, options=game.options
    )
    assert logged[-1][0].seat == 1 and logged[-1][0].notation == rules.notate(stand_in)
    said = [r.getMessage() for r in caplog.records if "was refused" in r.getMessage()]
    assert len(said) == 1 and "the rules refuse its move (illegal_move)" in said[0]
    assert "position: " in said[0] and game.seed not in said[0]


@contextmanager
def monkeypatched_decide(referee: Referee) -> Iterator[None]:
    """Submissions are recorded but left pending (a broker that holds them)."""
    enqueue = referee.queue.enqueue_decisions
    referee.queue.enqueue_decisions = lambda *_args: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        referee.queue.enqueue_decisions = enqueue  # type: ignore[method-assign]


def _bot_first(referee: Referee, players: list[Player], **more: Any) -> str:
    """A new game whose first turn is its bot's (seat 1): the first player is drawn."""
    for _ in range(30):
        created = create_game(referee, NewGame(GAME, players, {}, **more))
        if _game(referee, created.game.id).to_act == [1]:
            return created.game.id
    raise AssertionError("the bot never drew the first turn")


def test_a_bots_seat_is_never_mailed_nor_timed_out(
    referee: Referee, held: list[tuple[Any, ...]]
) -> None:
    players = [Player("Ann", "ann@example.com"), Player("Bot", bot="greedy")]
    game_id = _bot_first(referee, players, deadline="1h", trusted=True)
    with referee.db.reading() as session:
        told = session.exec(select(Outbox).where(Outbox.game_id == game_id)).all()
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 1)).one()
    assert [(row.seat, row.kind) for row in told] == [(0, OutboxKind.INVITATION)]
    assert (seat.bot, seat.email) == ("greedy", None)
    # The bot's turn has no deadline: the sweep neither reminds nor plays for it.
    game = _game(referee, game_id)
    swept = sweep_deadlines(referee, datetime.now(UTC) + timedelta(hours=3))
    # (Other games made to draw this deal are timed out: not this one.)
    assert game_id not in swept.timed_out and game_id not in swept.reminded
    assert _game(referee, game_id).version == game.version
    assert (referee_bot, game_id, game.version) in held
    play_bots(referee, game_id, game.version)
    game = _game(referee, game_id)
    assert game.to_act == [0]
    with referee.db.reading() as session:
        told = session.exec(select(Outbox).where(Outbox.game_id == game_id)).all()
    assert {row.seat for row in told} == {0}
    assert [row.kind for row in told] == [OutboxKind.INVITATION, OutboxKind.YOUR_TURN]
    # The person's turn has its deadline again: reminded at 80%, timed out after.
    moment = datetime.now(UTC) + timedelta(minutes=50)
    assert game_id in sweep_deadlines(referee, moment).reminded


@pytest.mark.parametrize(
    ("players", "trusted", "words"),
    [
        ([Player("A", bot="genius"), Player("B")], False, "levels: random, greedy, strong"),
        ([Player("A", "a@example.com", bot="random"), Player("B")], False, "no mail address"),
        ([Player("A", bot="random"), Player("B", bot="strong")], False, "API key"),
    ],
)
def test_creating_refuses_a_bot_it_cannot_seat(
    referee: Referee, players: list[Player], trusted: bool, words: str
) -> None:
    # Bots alone without the key: who asks, not what is asked (401, as for the key).
    refusal = refusals.Unauthorized if words == "API key" else refusals.BadPlayers
    with pytest.raises(refusal) as refused:
        create_game(referee, NewGame(GAME, players, {}, trusted=trusted))
    assert words in refused.value.reason


def _timed_out_thrice(referee: Referee, players: list[Player] | None = None, **more: Any) -> str:
    """A game of two people out of time six turns running (a new one when a deal ends
    sooner: a greedy Mandala seat may jump to the end of the path)."""
    players = players or [Player("Ann"), Player("Bob")]
    for _ in range(10):
        created = create_game(
            referee, NewGame(GAME, players, {}, deadline="1h", on_timeout="bot", **more)
        )
        game_id = created.game.id
        moment = datetime.now(UTC)
        for _turn in range(6):
            moment += timedelta(hours=2)
            if _game(referee, game_id).status != "active":
                break
            assert sweep_deadlines(referee, moment).timed_out in ([game_id], [])
        with referee.db.reading() as session:
            seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
        if any(seat.bot for seat in seats):
            return game_id
    raise AssertionError("no seat was handed over")


def test_on_timeout_bot_plays_the_greedy_move_and_hands_the_seat_over_after_three(
    referee: Referee, held: list[tuple[Any, ...]]
) -> None:
    rules = games.get(GAME)
    game_id = _timed_out_thrice(referee)
    logged = [(m, s) for m, s in _logged(referee, game_id) if s is not None]
    assert all(s.source == Source.TIMEOUT for _, s in logged[:6])
    game = _game(referee, game_id)
    with referee.db.reading() as session:
        first_state = game_states.state_at(session, game, 0)
        seats = session.exec(
            select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))
        ).all()
        told = session.exec(
            select(Outbox).where(Outbox.game_id == game_id, Outbox.kind == OutboxKind.BOT_SEAT)
        ).all()
    first, _submission = logged[0]
    again = bots.decide(
        rules,
        "greedy",
        first_state,
        first.seat,
        players=2,
        options=game.options,
        rng=timeout_rng(game.seed, 0, first.seat),
        seconds=0.05,
    )
    assert rules.notate(again) == first.notation
    handed = [seat for seat in seats if seat.bot]
    assert handed and all(seat.bot == "greedy" and seat.bot_since for seat in handed)
    # Every seat is told of each seat handed over (seats without a channel: kept, not sent).
    assert len(told) == 2 * len(handed)
    with referee.db.reading() as session:
        for row in told:
            composed = build(session, row, referee.secret(), Site.of(referee.settings))
            said = " ".join(json.loads(composed.json())["text"].split())
            # The subject stays the game's thread's: no "(bot, ...)" from midway on.
            subject = composed.mail("p@players.test", Consent(False, "a", "s"), None)["Subject"]
            assert "(bot" not in subject and "(bot, greedy)" in said
            assert "(bot, greedy)," not in said  # not in the greeting
            assert "ran out of time 3 turns in a row" in said and "greedy bot" in said
            assert ("you ran" in said) == (row.seat == row.payload["seat"])
    # Once a bot's, a seat's turn is the bot's to play: a task was enqueued for it.
    if any(seat.seat in game.to_act for seat in handed):
        assert held[-1][1:] == (game_id, game.version)


def test_suggest_prints_each_move_the_bots_played_from_the_finished_games_record(
    referee: Referee, tmp_path: Path
) -> None:
    game_id = _bots_alone(referee, "strong", "random")
    game = _settle(referee, game_id)
    with referee.db.reading() as session:
        record = public_record(session, game, game_states.state_at(session, game, game.version))
    assert record.header.bots == ("strong", "random") and record.header.bot_seconds == 0.05
    assert record.header.bot_pace == game.bot_pace
    assert loads(record.dumps()) == record
    path = tmp_path / "game.jsonl"
    path.write_text(record.dumps(), encoding="utf-8")
    runner = CliRunner()
    played = [(m, s) for m, s in _logged(referee, game_id) if s is not None]
    # Every move of the first seat's (strong) and a few of the other's.
    checked = [m for m, _s in played if m.seat == 0] + [m for m, _s in played if m.seat == 1][:3]
    for move in checked:
        args = ["suggest", str(path), "--seat", str(move.seat), "--at", str(move.seq - 1)]
        answer = runner.invoke(main, args)
        assert answer.exit_code == 0, answer.output
        assert answer.stdout.strip() == move.notation, move.seq
    # Another level, asked by name; a level the game does not offer is refused.
    last = checked[0]
    args = ["suggest", str(path), "--seat", str(last.seat), "--at", str(last.seq - 1)]
    assert runner.invoke(main, [*args, "--bot", "greedy"]).exit_code == 0
    refused = runner.invoke(main, [*args, "--bot", "genius"])
    assert refused.exit_code == 1 and "levels: random, greedy, strong" in refused.output


def test_suggest_says_a_running_games_record_cannot_be_asked(
    referee: Referee, tmp_path: Path, held: list[tuple[Any, ...]]
) -> None:
    game_id = _bot_first(referee, [Player("Ann"), Player("Bot", bot="greedy")])
    game = _game(referee, game_id)
    with referee.db.reading() as session:
        record = public_record(session, game, game_states.state_at(session, game, game.version))
    assert record.header.seed is None and record.header.bots == (None, "greedy")
    path = tmp_path / "running.jsonl"
    path.write_text(record.dumps(), encoding="utf-8")
    answer = CliRunner().invoke(main, ["suggest", str(path), "--seat", "1"])
    assert answer.exit_code == 1 and "no seed" in answer.output


def test_the_api_seats_bots_lists_them_and_refuses_what_it_cannot_seat(
    tmp_path: Path,
) -> None:
    from api import create_app

    chosen = Settings(
        database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
        mail_dir=str(tmp_path / "mail-out"),
        secret="a test secret",
        api_key="the key",
        bot_seconds=0.05,
    )
    made = Referee(chosen)
    made.db.upgrade()
    try:
        client = create_app(chosen, made).test_client()
        listed = {rule["name"]: rule["bots"] for rule in client.get("/v1/rules").json["games"]}
        assert listed == {game.name: list(bots.levels(game.name)) for game in games.all_games()}
        key = {"X-API-Key": "the key"}
        players = [{"name": "Ann"}, {"name": "Robo", "bot": "greedy"}]
        answer = client.post("/v1/games", json={"game": GAME, "players": players}, headers=key)
        assert answer.status_code == 201, answer.json
        seats = answer.json["seats"]
        assert [(s["bot"], s["token"] is None) for s in seats] == [(None, False), ("greedy", True)]
        summary = client.get(f"/v1/games/{answer.json['id']}").json
        assert [(s["bot"], s["bot_after_timeouts"]) for s in summary["seats"]] == [
            (None, False),
            ("greedy", False),
        ]
        page = client.get(f"/g/{answer.json['id']}").text
        assert "Robo (bot, greedy)" in page
        refused = client.post(
            "/v1/games",
            json={"game": GAME, "players": [{"name": "A", "bot": "genius"}, {"name": "B"}]},
            headers=key,
        )
        assert refused.status_code == 422 and refused.json["code"] == "bad_players"
        assert "random, greedy, strong" in refused.json["detail"]
        # Bots alone: the API key is given (without it, see test_creating_refuses_...).
        alone = [{"name": "A", "bot": "random"}, {"name": "B", "bot": "random"}]
        keyed = client.post("/v1/games", json={"game": GAME, "players": alone}, headers=key)
        assert keyed.status_code == 201
        assert _settle(made, keyed.json["id"]).status == "over"
    finally:
        made.close()


def test_a_maniki_bot_answers_a_card_only_after_the_person_in_its_round(
    referee: Referee, held: list[tuple[Any, ...]]
) -> None:
    players = [Player("Ann", "ann@example.com"), Player("Bot", bot="expert")]
    game_id = create_game(referee, NewGame("maniki", players, {}, trusted=True)).game.id
    game = _game(referee, game_id)
    assert sorted(game.to_act) == [0, 1]
    # Both may answer; the bot holds its answer while Ann has yet to give hers.
    assert (referee_bot, game_id, game.version) in held
    assert play_bots(referee, game_id, game.version) == 0
    assert _game(referee, game_id).version == game.version
    submit_move(referee, SubmitMove(game_id, KnownSeat(0), "pass", seen_version=game.version))
    game = _game(referee, game_id)
    assert game.to_act == [1]
    # The decision of Ann's pass enqueued the bot's turn again.
    assert (referee_bot, game_id, game.version) in held
    # Ann passed: now the bot answers the card, with its shortest sequence.
    assert play_bots(referee, game_id, game.version) == 1
    logged = _logged(referee, game_id)
    (seat, notation, source) = [(m.seat, m.notation, s.source) for m, s in logged if s][-1]
    assert (seat, source) == (1, Source.BOT) and notation != "pass"


def test_a_seat_handed_to_a_bot_leaves_its_persons_games(
    referee: Referee, held: list[tuple[Any, ...]]
) -> None:
    people = [Player("Ann", "ann@example.com"), Player("Bob", "bob@example.com")]
    game_id = _timed_out_thrice(referee, people, trusted=True)
    with referee.db.reading() as session:
        seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
    for seat in seats:
        listed = my_games(referee, PlayerOf(seat.email or "", frozenset({"read"})))
        assert (game_id in {game.id for game in listed.games}) == (seat.bot is None), seat.seat
