"""Ratings as use cases: a rated open game's end moves its players' ratings on the
worker, never in the request; the games that do not count; resigned seats last; and
`referee ratings rebuild` arriving at exactly the stored figures after 200 random rated
games of every game and player count."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import select

from referee.queue import RATINGS
from referee.ratings import START, Skill, finishing_ranks, updated
from referee.service import Referee
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.deadlines import sweep_deadlines
from referee.service.game_states import state_at
from referee.service.jobs import JOBS
from referee.service.rating import counted, rate_finished
from referee.service.seeks import NewSeek, join_seek, post_seek, start_seek
from referee.store.rated_games import GameFacts, SeatFacts
from referee.store.reads import rules_of
from referee.store.tables import (
    Address,
    Game,
    GameStatus,
    RatedGame,
    Rating,
    RatingChange,
    Seek,
)
from tests.rated_games import (
    ADDRESSES,
    addresses_by_seat,
    game_row,
    name_players,
    play_out,
    player,
    resign,
    rows,
    seat_of,
    seek_game,
)


@pytest.fixture
def known(fresh_referee: Referee) -> Referee:
    """Eight players known to the referee, named."""
    return name_players(fresh_referee)


@pytest.fixture
def referee(known: Referee, monkeypatch: pytest.MonkeyPatch) -> Referee:
    """`known`, its tasks apart (the ratings', the bots') kept, not run: the test runs them."""
    kept: list[tuple[Any, ...]] = []
    monkeypatch.setattr(known.queue, "enqueue_apart", lambda *args, **_lane: kept.append(args))
    known.kept = kept  # type: ignore[attr-defined]
    return known


def kept(referee: Referee) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = referee.kept  # type: ignore[attr-defined]
    return found


def run_kept(referee: Referee) -> None:
    """Run the tasks kept apart (bots' turns, the ratings), and those they enqueue."""
    while kept(referee):
        name, *args = kept(referee).pop(0)
        referee.run_job(name, tuple(args))


def rated_game(referee: Referee, game_id: str) -> RatedGame:
    (found,) = [row for row in rows(referee, RatedGame) if row.game_id == game_id]
    return found


def expected_ranks(referee: Referee, game: Game) -> list[int]:
    assert game.result is not None
    with referee.db.reading() as session:
        resigned = rules_of(game).resigned(state_at(session, game, game.version))
    return finishing_ranks(game.result["scores"], game.result["winners"], resigned)


def test_a_rated_open_games_end_moves_its_players_ratings_one_game_after_another(
    referee: Referee,
) -> None:
    rng = random.Random(1)
    skills: dict[str, Skill] = {}
    for number in range(2):
        game_id = seek_game(referee, "subdivision", ADDRESSES[:3])
        before = len(kept(referee))
        game = play_out(referee, game_id, rng)
        # The game's end enqueued the ratings' task apart (kept here, not run).
        assert kept(referee)[before:] == [(RATINGS,)]
        assert game_id not in {row.game_id for row in rows(referee, RatedGame)}
        run_kept(referee)
        rated = rated_game(referee, game_id)
        assert rated.counted and rated.game == "subdivision" and rated.seq == number + 1
        assert rated.finished_at == game.updated_at
        players = addresses_by_seat(referee, game_id)
        ranks = expected_ranks(referee, game)
        began = [skills.get(address, START) for address in players]
        after = updated(began, ranks)
        changes = {row.address: row for row in rows(referee, RatingChange) if row.seq == rated.seq}
        ratings = {row.address: row for row in rows(referee, Rating)}
        for seat, address in enumerate(players):
            change, rating = changes[address], ratings[address]
            # Bit for bit what the model gives, from the skill the game before left.
            assert (change.mu_before, change.sigma_before) == (began[seat].mu, began[seat].sigma)
            assert (change.mu_after, change.sigma_after) == (after[seat].mu, after[seat].sigma)
            assert (change.seat, change.rank, change.at) == (seat, ranks[seat], game.updated_at)
            assert (rating.mu, rating.sigma, rating.last_seq) == (
                after[seat].mu,
                after[seat].sigma,
                rated.seq,
            )
            assert rating.games == number + 1 and rating.game == "subdivision"
            skills[address] = after[seat]
    wins = {row.address: row.wins for row in rows(referee, Rating)}
    firsts = {a: 0 for a in ADDRESSES[:3]}
    for change in rows(referee, RatingChange):
        firsts[change.address] += change.rank == 1
    assert wins == firsts
    # Taken in once: running again takes nothing more.
    assert rate_finished(referee) == 0
    assert len(rows(referee, RatingChange)) == 6


def test_a_resigned_seat_finishes_last_whatever_its_score(referee: Referee) -> None:
    game_id = seek_game(referee, "subdivision", ADDRESSES[:3])
    rng = random.Random(2)
    play_out(referee, game_id, rng, moves=6)
    resign(referee, game_id, ADDRESSES[0])
    game = play_out(referee, game_id, rng)
    run_kept(referee)
    changes = {row.address: row for row in rows(referee, RatingChange)}
    assert changes[ADDRESSES[0]].rank == 3
    assert {changes[address].rank for address in ADDRESSES[1:3]} <= {1, 2}
    assert min(changes.values(), key=lambda row: row.mu_after).address == ADDRESSES[0]
    assert game.result is not None and rated_game(referee, game_id).counted


def test_games_that_do_not_count_are_taken_in_and_move_nothing(referee: Referee) -> None:
    ann, bob, cyd, dee = ADDRESSES[:4]
    # An unrated open game.
    unrated = seek_game(referee, "mandala", [ann, bob], rated=False)
    resign(referee, unrated, ann)
    # A game made by a trusted client, not from an open game, between named players.
    seated = [Seated("Ann", email=ann), Seated("Bob", email=bob)]
    made = create_game(referee, NewGame("mandala", seated, {}, trusted=True)).game.id
    resign(referee, made, bob)
    # A rated open game one of whose players has no public name (any more).
    nameless = seek_game(referee, "mandala", [cyd, dee])
    with referee.db.transaction() as session:
        address = session.get(Address, dee)
        assert address is not None
        address.public_name = address.name_key = None
        session.add(address)
    resign(referee, nameless, cyd)
    run_kept(referee)
    taken = {row.game_id: row.counted for row in rows(referee, RatedGame)}
    assert taken == {unrated: False, made: False, nameless: False}
    assert rows(referee, Rating) == [] and rows(referee, RatingChange) == []
    # Each is marked taken in, which keeps it off the index the job looks at next.
    assert {game.id for game in rows(referee, Game) if game.taken_in} == set(taken)


def mark_rated(referee: Referee, game_id: str) -> None:
    """Mark the game's open game rated, as if starting it with bots had not turned it off:
    the bots' own rules must keep the game out all the same."""
    with referee.db.transaction() as session:
        seek = session.exec(select(Seek).where(Seek.game_id == game_id)).one()
        assert not seek.rated
        seek.rated = True
        session.add(seek)


def test_a_game_a_bot_played_in_does_not_count(referee: Referee) -> None:
    ann, bob, cyd = ADDRESSES[:3]
    # A bot holds a seat to the end.
    seek = post_seek(referee, player(ann), NewSeek("subdivision", 2, 2, bots="random"))
    with_bot = start_seek(referee, player(ann), seek.id).game_id
    assert with_bot is not None
    run_kept(referee)
    resign(referee, with_bot, ann)
    # A player takes a bot's seat over.
    seek = post_seek(referee, player(bob), NewSeek("subdivision", 2, 2, bots="random"))
    taken_over = start_seek(referee, player(bob), seek.id).game_id
    assert taken_over is not None
    join_seek(referee, player(cyd), seek.id)
    run_kept(referee)
    assert seat_of(referee, taken_over, cyd) in (0, 1)
    resign(referee, taken_over, bob)
    for game_id in (with_bot, taken_over):
        mark_rated(referee, game_id)
    run_kept(referee)
    taken = {row.game_id: row.counted for row in rows(referee, RatedGame)}
    assert taken == {with_bot: False, taken_over: False}
    assert rows(referee, Rating) == []


@pytest.mark.parametrize(("policy", "counts"), [("bot", False), ("random", True)])
def test_a_timeout_the_bot_played_does_not_count_one_played_at_random_does(
    referee: Referee, policy: str, counts: bool
) -> None:
    ann, bob = ADDRESSES[:2]
    game_id = seek_game(referee, "mandala", [ann, bob], deadline="1d", on_timeout=policy)
    swept = sweep_deadlines(referee, datetime.now(UTC) + timedelta(days=2))
    assert swept.timed_out == [game_id]
    play_out(referee, game_id, random.Random(3))
    run_kept(referee)
    assert rated_game(referee, game_id).counted is counts
    assert len(rows(referee, Rating)) == (2 if counts else 0)


ANN_SEAT = SeatFacts(0, "ann@x.test", "Ann", None, None)
BOB_SEAT = SeatFacts(1, "bob@x.test", "Bob", None, None)


def facts(**changed: Any) -> GameFacts:
    """A rated open game's facts between two named players, as `counted` reads them."""
    return replace(GameFacts("g", None, seek_rated=True, seats=[ANN_SEAT, BOB_SEAT]), **changed)


def bob(**changed: Any) -> list[SeatFacts]:
    """The seats, Bob's changed."""
    return [ANN_SEAT, replace(BOB_SEAT, **changed)]


@pytest.mark.parametrize(
    ("what", "changed"),
    [
        ("no open game", {"seek_rated": None}),
        ("an unrated open game", {"seek_rated": False}),
        ("a seat with no public name", {"seats": bob(public_name=None)}),
        ("a seat with no address", {"seats": bob(address=None)}),
        ("a bot's seat", {"seats": bob(bot="greedy")}),
        ("a seat handed to a bot", {"seats": bob(bot_since=7)}),
        ("one player in two seats", {"seats": bob(address="ann@x.test")}),
        ("a bot's seat taken over", {"handed_over": True}),
        ("a bot's move", {"sources": {"bot"}}),
        ("a timeout the bot played", {"on_timeout": "bot", "sources": {"timeout"}}),
    ],
)
def test_what_keeps_a_game_from_counting(what: str, changed: dict[str, Any]) -> None:
    assert counted(facts())
    assert not counted(facts(**changed)), what


def test_timeouts_played_otherwise_count() -> None:
    for policy in ("random", "pass", "forfeit"):
        assert counted(facts(on_timeout=policy, sources={"timeout"}))


def test_the_ratings_run_apart_from_the_request_that_ends_a_game(
    known: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded default: the move that ends the game is answered before its
    ratings are worked out, on the queue's ratings thread."""
    referee = known
    gate, ran_on = threading.Event(), []

    def gated(referee: Referee) -> int:
        ran_on.append(threading.current_thread().name)
        gate.wait(30)
        return rate_finished(referee)

    monkeypatch.setitem(JOBS, RATINGS, gated)
    game_id = seek_game(referee, "mandala", ADDRESSES[:2])
    resign(referee, game_id, ADDRESSES[0])
    # The request is answered, the game over, and the ratings' task waits.
    assert game_row(referee, game_id).status == GameStatus.OVER
    assert rows(referee, RatedGame) == []
    assert not referee.queue.idle("ratings")
    gate.set()
    deadline = time.monotonic() + 30
    while not referee.queue.idle("ratings") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ran_on == ["referee-ratings"]
    assert rated_game(referee, game_id).counted
    assert {row.address for row in rows(referee, Rating)} == set(ADDRESSES[:2])


def test_the_sweep_takes_in_a_game_whose_task_was_lost(referee: Referee) -> None:
    game_id = seek_game(referee, "mandala", ADDRESSES[:2])
    resign(referee, game_id, ADDRESSES[1])
    kept(referee).clear()  # the task is lost
    assert rows(referee, RatedGame) == []
    referee.run_job(RATINGS, ())
    assert rated_game(referee, game_id).counted
