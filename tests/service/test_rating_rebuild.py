"""`referee ratings rebuild`: after 200 random rated games of every game and player count,
replaying them arrives at exactly the stored figures (floats compared with `==`), and
`--check` says so; a figure off by one unit in the last place is found, `--check` exits
1 without writing, and `rebuild` puts it right."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from click.testing import CliRunner

from referee import games
from referee.cli import main
from referee.service import Referee
from referee.service.rating import rate_finished, rebuild
from referee.store.tables import PlayerTotals, RatedGame, Rating, RatingChange
from tests.rated_games import ADDRESSES, name_players, play_out, resign, rows, seek_game

pytestmark = pytest.mark.long

GAMES = 200
# Every game at every player count, three times over; then, to keep the test within a
# minute, the games of a few dozen moves (Ice Palace and MaNiKi take a hundred and more).
KINDS = [(game.name, count) for game in games.all_games() for count in game.players]
SHORT = [(game, count) for game, count in KINDS if game not in ("ice_palace", "maniki")]


def figures(referee: Referee) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]], set[str]]:
    """Every stored rating, change and player's totals, each figure as stored."""
    ratings = {tuple(sorted(row.model_dump().items())) for row in rows(referee, Rating)}
    changes = {tuple(sorted(row.model_dump().items())) for row in rows(referee, RatingChange)}
    totals = {repr(sorted(row.model_dump().items())) for row in rows(referee, PlayerTotals)}
    return ratings, changes, totals


def ratings_cli(referee: Referee, *args: str) -> tuple[int, str]:
    environment = {"DATABASE_URL": referee.settings.database_url, "REDIS_URL": None}
    done = CliRunner().invoke(main, ["ratings", "rebuild", *args], env=environment)
    return done.exit_code, done.output


def test_rebuild_after_200_random_rated_games_gets_exactly_the_stored_figures(
    fresh_referee: Referee, monkeypatch: pytest.MonkeyPatch
) -> None:
    referee = name_players(fresh_referee)
    # The ratings' tasks are not run: the test takes the games in, some at a time.
    monkeypatch.setattr(referee.queue, "enqueue_apart", lambda *_args, **_lane: None)
    rng = random.Random(35)
    kinds = KINDS * 3 + [rng.choice(SHORT) for _ in range(GAMES - 3 * len(KINDS))]
    for number, (game, count) in enumerate(kinds):
        players = rng.sample(ADDRESSES, count)
        game_id = seek_game(referee, game, players)
        # Now and then a player resigns along the way: last, whatever its score.
        moves = rng.randrange(12) if rng.random() < 0.2 else None
        if moves is not None and play_out(referee, game_id, rng, moves).status == "active":
            resign(referee, game_id, rng.choice(players))
        play_out(referee, game_id, rng)
        if number % 17 == 16:
            rate_finished(referee)
    rate_finished(referee)
    taken = rows(referee, RatedGame)
    assert len(taken) == GAMES and all(row.counted for row in taken)
    assert {row.game for row in taken} == {game for game, _ in KINDS}
    stored = figures(referee)
    assert len(stored[1]) == sum(count for _, count in kinds)

    rebuilt = rebuild(referee, write=False)
    assert rebuilt.differences == []
    assert (rebuilt.games, rebuilt.players, rebuilt.ratings) == (GAMES, 8, len(stored[0]))
    code, output = ratings_cli(referee, "--check")
    assert code == 0, output
    assert f"{GAMES} games replayed; 8 players rated ({len(stored[0])} ratings)" in output
    assert "the stored figures are the replay's" in output
    assert figures(referee) == stored

    # One rating off by the least a float can be, one change gone.
    last = taken[-1].seq
    assert last is not None
    with referee.db.transaction() as session:
        rating = session.get(Rating, (ADDRESSES[0], "maniki"))
        assert rating is not None
        rating.mu = math.nextafter(rating.mu, math.inf)
        session.add(rating)
        change = session.get(RatingChange, (last, _seated(referee, last)))
        session.delete(change)
        # And a player's totals (its profile's counts) one game short.
        totals = session.get(PlayerTotals, ADDRESSES[1])
        assert totals is not None
        totals.games_finished -= 1
        session.add(totals)
    code, output = ratings_cli(referee, "--check")
    assert code == 1, output
    assert f"rating {ADDRESSES[0]} maniki: stored mu=" in output
    assert f"change {last} " in output and "missing" in output
    assert f"totals {ADDRESSES[1]}: stored games_finished=" in output
    assert "3 figures differed" in output
    assert figures(referee) != stored
    code, output = ratings_cli(referee)
    assert code == 0, output
    assert "3 figures differed and were rewritten" in output
    assert figures(referee) == stored
    assert ratings_cli(referee, "--check")[0] == 0


def _seated(referee: Referee, seq: int) -> str:
    return next(row.address for row in rows(referee, RatingChange) if row.seq == seq)
