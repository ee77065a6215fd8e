"""What anyone reads of players, as use cases without HTTP: a profile (ratings with their
history, stats, the median response time, recent games), a game's players by rating
(order, shared places, pages), and ratings on open games with the range joining respects.

Ratings and games are rows written straight into the store (`tests/rating_rows.py`):
what is tested is what is read of them, not how the rating job writes them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from referee.ratings import START, Skill, shown
from referee.service import Referee, profiles, refusals
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.leaderboards import leaderboard
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.profile_view import PlayerProfile, player_profile
from referee.service.rating import rate_finished
from referee.service.seeks import NewSeek, get_seek, join_seek, post_seek
from referee.store import player_totals
from referee.store.tables import Address, PlayerTotals, RatedGame, Seat, Seek, SeekPlayer
from tests import rating_rows

NAMES = {"ann@x.test": "Ann", "bob@x.test": "Bob", "cy@x.test": "Cyd", "dee@x.test": "Dée"}
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


ANN, BOB, CY, DEE = (player(address) for address in NAMES)


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Players known to the referee (seated once by a trusted client), named but for
    `nameless@x.test`."""
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    create_game(fresh_referee, NewGame("subdivision", seated[:2], {}, trusted=True))
    create_game(fresh_referee, NewGame("subdivision", seated[2:], {}, trusted=True))
    nameless = [Seated("x", email="nameless@x.test"), Seated("y")]
    create_game(fresh_referee, NewGame("subdivision", nameless, {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(fresh_referee, player(address), name)
    return fresh_referee


def test_a_profile_is_found_by_name_in_any_case_and_says_no_address(referee: Referee) -> None:
    with referee.db.transaction() as session:
        skills = [(25 + n, 8.0 - n * 0.3) for n in range(20)]
        rating_rows.rated(session, "ann@x.test", "subdivision", skills, T0, wins=12)
        rating_rows.rated(session, "ann@x.test", "mandala", [(27.0, 7.0)], T0)
        since = session.get(Address, "ann@x.test")
    assert since is not None
    found = player_profile(referee, "ANN", history=True)
    assert found.name == "Ann" and found.since == since.created_at
    assert [r.game for r in found.ratings] == ["mandala", "subdivision"]
    sub = found.ratings[1]
    last = shown(Skill(*skills[-1]))
    assert (sub.rating, sub.deviation, sub.games, sub.wins) == (last.rating, last.deviation, 20, 12)
    assert sub.provisional is last.provisional is False
    assert found.ratings[0].provisional  # a deviation of 294 is not settled
    # The history, oldest first, one point per counted game, as the shown scale reads it.
    assert [p.rating for p in sub.history] == [shown(Skill(*s)).rating for s in skills]
    assert sub.history[0].at < sub.history[-1].at
    # Without history asked, none is read.
    assert player_profile(referee, "ann").ratings[1].history == ()
    assert "@" not in repr(found)


@pytest.mark.parametrize("name", ["Nobody", "nameless@x.test", "x" * 200, "", "Ann\x00"])
def test_an_unknown_name_or_a_player_without_one_has_no_profile(
    referee: Referee, name: str
) -> None:
    with pytest.raises(refusals.NotFound):
        player_profile(referee, name)


def profile_of(referee: Referee, name: str, tallied: bool) -> PlayerProfile:
    """A profile read from the games alone, or, `tallied`, once the ratings' job has
    added the finished games to their players' totals: the same either way."""
    if tallied:
        rate_finished(referee)
        with referee.db.reading() as session:
            assert not player_totals.untallied(session, 1)
    return player_profile(referee, name)


TALLIED = pytest.mark.parametrize("tallied", [False, True], ids=["untallied", "tallied"])


@TALLIED
def test_stats_count_games_timeouts_resignations_and_the_median_answer(
    referee: Referee, tallied: bool
) -> None:
    with referee.db.transaction() as session:
        # Finished: Bob seated twice in one (counted once), and a game he resigned.
        twice = rating_rows.game(session, ["bob@x.test", "BOB@x.test"], T0)
        resigned = rating_rows.game(session, ["bob@x.test", "cy@x.test"], T0)
        rating_rows.move(session, resigned, 1, 0, T0 + timedelta(hours=2), notation="resign")
        # A forfeit on timeout: a timeout, not a resignation of his own.
        forfeit = rating_rows.game(session, ["cy@x.test", "bob@x.test"], T0)
        rating_rows.move(session, forfeit, 1, 0, T0 + timedelta(hours=1))
        rating_rows.move(
            session, forfeit, 2, 1, T0 + timedelta(hours=49), source="timeout", notation="resign"
        )
        # In play: answers of 1, 3 and 5 hours, a timeout, and a bot's move (not his).
        active = rating_rows.game(session, ["bob@x.test", "cy@x.test"], T0, status="active")
        rating_rows.move(session, active, 1, 0, T0 + timedelta(hours=3))
        rating_rows.move(session, active, 2, 1, T0 + timedelta(hours=4))
        rating_rows.move(session, active, 3, 0, T0 + timedelta(hours=5))
        rating_rows.move(session, active, 4, 1, T0 + timedelta(hours=6))
        rating_rows.move(session, active, 5, 0, T0 + timedelta(hours=11))
        rating_rows.move(session, active, 6, 1, T0 + timedelta(hours=12))
        rating_rows.move(session, active, 7, 0, T0 + timedelta(hours=60), source="timeout")
        rating_rows.move(session, active, 8, 1, T0 + timedelta(hours=61))
        rating_rows.move(session, active, 9, 0, T0 + timedelta(hours=62), source="bot")
    stats = profile_of(referee, "Bob", tallied).stats
    # His seats of the trusted game the fixture made are in play too.
    assert (stats.games_finished, stats.games_active) == (3, 2)
    assert (stats.timeouts, stats.resigned) == (2, 1)
    # Answers: 2 (resign), 48 (forfeit), 3 (first move: from the game's making), 1, 5,
    # 48 (timeout): the median of 1, 2, 3, 5, 48, 48 is 4 hours.
    assert stats.median_response_hours == 4.0
    assert twice  # made to be counted once
    # A player who never moved has no median.
    assert player_profile(referee, "Dée").stats.median_response_hours is None


@TALLIED
def test_the_median_is_over_the_last_hundred_moves(referee: Referee, tallied: bool) -> None:
    with referee.db.transaction() as session:
        # Finished, so that its moves are in Dée's totals once tallied.
        status, ended = ("over", T0 + timedelta(days=60)) if tallied else ("active", None)
        played = rating_rows.game(
            session, ["dee@x.test", "cy@x.test"], T0, status=status, finished=ended
        )
        at = T0
        for seq in range(1, 301, 2):
            # 50 slow answers (10 hours) first, then 100 quick ones (1 hour).
            wait = timedelta(hours=10 if seq < 100 else 1)
            rating_rows.move(session, played, seq, 1, at + timedelta(minutes=1))
            at += timedelta(minutes=1) + wait
            rating_rows.move(session, played, seq + 1, 0, at)
    assert profile_of(referee, "Dée", tallied).stats.median_response_hours == 1.0


@TALLIED
def test_recent_games_are_the_last_finished_with_how_each_went(
    referee: Referee, tallied: bool
) -> None:
    with referee.db.transaction() as session:
        games = []
        for n, (scores, winners) in enumerate(
            [([5, 3], [0]), ([3, 5, 4], [1]), ([4, 4], [0, 1]), ([2, 2, 9], [2])]
        ):
            seats = ["cy@x.test" if s == 0 else None for s in range(len(scores))]
            games.append(
                rating_rows.game(
                    session,
                    seats,
                    T0,
                    result={"scores": scores, "winners": winners},
                    finished=T0 + timedelta(days=n),
                )
            )
        rating_rows.game(session, ["cy@x.test", None], T0, status="active")
    recent = profile_of(referee, "Cyd", tallied).recent
    assert [g.id for g in recent] == games[::-1]
    assert [(g.result, g.place, g.players) for g in recent] == [
        ("lost", 2, 3),
        ("draw", 1, 2),
        ("lost", 3, 3),
        ("won", 1, 2),
    ]


def test_games_taken_in_before_the_totals_existed_are_tallied_later_to_the_same(
    referee: Referee,
) -> None:
    with referee.db.transaction() as session:
        for n in range(14):
            seats = ["ann@x.test", "bob@x.test"] if n % 2 else ["bob@x.test", "ann@x.test"]
            played = rating_rows.game(
                session,
                seats,
                T0,
                result={"scores": [n, 3], "winners": [0]},
                finished=T0 + timedelta(days=n, hours=2),
            )
            rating_rows.move(session, played, 1, 0, T0 + timedelta(days=n, hours=n % 5))
            source = "timeout" if n % 4 == 0 else "rest"
            rating_rows.move(session, played, 2, 1, T0 + timedelta(days=n, hours=2), source=source)
    read_live = player_profile(referee, "Ann")
    rate_finished(referee)
    tallied = player_profile(referee, "Ann")
    assert tallied == read_live
    # Ann holds seat 1 in the even games, timed out in games 0, 4, 8 and 12.
    assert (tallied.stats.games_finished, tallied.stats.timeouts) == (14, 4)
    # As a database upgraded to keep totals holds them: games taken in, none tallied.
    with referee.db.transaction() as session:
        for row in session.exec(select(PlayerTotals)):
            session.delete(row)
        for row in [*session.exec(select(RatedGame)), *session.exec(select(Seat))]:
            row.tallied = False
            session.add(row)
    assert player_profile(referee, "Ann") == read_live
    assert rate_finished(referee) == 0  # nothing new taken in; the old ones tallied
    with referee.db.reading() as session:
        assert not player_totals.untallied(session, 1)
        assert session.get(PlayerTotals, "ann@x.test") is not None
    assert player_profile(referee, "Ann") == read_live


def _board(referee: Referee, skills: dict[str, tuple[float, float]]) -> None:
    with referee.db.transaction() as session:
        for address, skill in skills.items():
            rating_rows.rated(session, address, "mandala", [skill], T0)


def test_a_leaderboard_lists_by_rating_with_shared_places_and_pages(referee: Referee) -> None:
    _board(
        referee,
        {
            "ann@x.test": (30.0, 2.0),
            "bob@x.test": (28.0, 2.5),
            "cy@x.test": (28.0, 7.0),
            "dee@x.test": (20.0, 2.0),
        },
    )
    whole = leaderboard(referee, "mandala")
    assert [(p.place, p.name) for p in whole.players] == [
        (1, "Ann"),
        (2, "Bob"),
        (2, "Cyd"),
        (4, "Dée"),
    ]
    assert [p.provisional for p in whole.players] == [False, False, True, False]
    assert whole.players[0].rating == shown(Skill(30.0, 2.0)).rating
    assert whole.next_cursor is None
    # Two by two: the cursor passes ties without losing or repeating anyone.
    first = leaderboard(referee, "mandala", limit=2)
    second = leaderboard(referee, "mandala", first.next_cursor, limit=2)
    assert [p.name for p in first.players] == ["Ann", "Bob"]
    assert [(p.place, p.name) for p in second.players] == [(2, "Cyd"), (4, "Dée")]
    assert first.next_cursor is not None and "@" not in first.next_cursor
    assert "x.test" not in repr(whole) + repr(first) + repr(second)
    # The cursor of a full last page leads to an empty one.
    third = leaderboard(referee, "mandala", second.next_cursor, limit=2)
    assert third.players == () and third.next_cursor is None
    assert leaderboard(referee, "subdivision").players == ()


# Not base64; `[]`; `[1, 2]`; `{"a": 1}`; not text; `[1, "\u0000"]`.
@pytest.mark.parametrize(
    "cursor", ["nonsense", "W10", "WzEsIDJd", "eyJhIjogMX0", "!!", "WzEsICJcdTAwMDAiXQ"]
)
def test_a_cursor_no_page_gave_is_refused(referee: Referee, cursor: str) -> None:
    with pytest.raises(refusals.BadRequest):
        leaderboard(referee, "mandala", cursor)


def test_a_leaderboard_of_an_unknown_game_is_refused(referee: Referee) -> None:
    with pytest.raises(refusals.UnknownGame):
        leaderboard(referee, "chess")


def test_seeks_show_each_players_rating_at_their_game(referee: Referee) -> None:
    _board(referee, {"ann@x.test": (30.0, 2.0), "bob@x.test": (27.0, 8.0)})
    seek = post_seek(referee, ANN, NewSeek("mandala", 2, 4))
    seek = join_seek(referee, BOB, seek.id)
    seek = join_seek(referee, CY, seek.id)
    assert seek.by_rating == shown(Skill(30.0, 2.0))
    assert seek.seated_ratings == (shown(Skill(30.0, 2.0)), shown(Skill(27.0, 8.0)), None)
    # At another game they are not rated.
    other = post_seek(referee, BOB, NewSeek("subdivision"))
    assert other.by_rating is None


def _seats(referee: Referee) -> list[tuple[str, str]]:
    with referee.db.reading() as session:
        rows = session.exec(select(SeekPlayer.seek_id, SeekPlayer.address)).all()
        return sorted((seek, address) for seek, address in rows)


def test_joining_respects_the_rating_range_and_a_refusal_changes_nothing(
    referee: Referee,
) -> None:
    # Ann, who posts, is far above her own range: the creator is not checked.
    _board(referee, {"ann@x.test": (40.0, 2.0), "bob@x.test": (35.0, 2.0)})
    seek = post_seek(referee, ANN, NewSeek("mandala", 2, 4, rating_min=1400, rating_max=1700))
    assert (seek.rating_min, seek.rating_max) == (1400, 1700)
    before = _seats(referee)
    with pytest.raises(refusals.RatingOutOfRange) as refused:
        join_seek(referee, BOB, seek.id)
    assert "from 1400 to 1700" in refused.value.reason
    assert str(shown(Skill(35.0, 2.0)).rating) in refused.value.reason
    assert _seats(referee) == before
    # Cyd is not rated at Mandala: a newcomer's 1500 lies within.
    assert shown(START).rating == 1500
    assert join_seek(referee, CY, seek.id).seated == ("Ann", "Cyd")
    # One bound alone: a newcomer is below 1600.
    high = post_seek(referee, ANN, NewSeek("mandala", 2, 2, rating_min=1600))
    with pytest.raises(refusals.RatingOutOfRange):
        join_seek(referee, DEE, high.id)
    assert join_seek(referee, BOB, high.id).status == "started"
    assert get_seek(referee, seek.id, None).rating_min == 1400


@pytest.mark.parametrize(("low", "high"), [(1700, 1400), (-1, None), (None, 4001)])
def test_a_range_that_holds_no_rating_is_refused(
    referee: Referee, low: int | None, high: int | None
) -> None:
    with pytest.raises(refusals.BadRequest):
        post_seek(referee, ANN, NewSeek("mandala", rating_min=low, rating_max=high))
    with referee.db.reading() as session:
        assert session.exec(select(Seek)).all() == []
