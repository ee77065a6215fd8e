"""Standing seeks as use cases: the list put and read back, refused whole, and the sweep
that keeps a player in `count` games of a kind, within REFEREE_SEEKS_PER_PLAYER, paused
for a player long unseen; and `seen`, which notes a player at most hourly."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from referee.queue import SEEKS
from referee.service import Referee, profiles, refusals, signing_in
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.seeks import NewSeek, join_seek, post_seek
from referee.service.standing_seeks import (
    MOST_STANDING,
    PAUSED_AFTER,
    Standing,
    set_standing_seeks,
    standing_seeks,
    top_up,
)
from referee.settings import Settings
from referee.store import keys
from referee.store.clock import stamp
from referee.store.tables import (
    Address,
    Game,
    GameStatus,
    Outbox,
    OutboxKind,
    Seek,
    StandingSeek,
)

NAMES = {"ann@x.test": "Ann", "bob@x.test": "Bob", "cy@x.test": "Cyd"}
PER_PLAYER = 4


@pytest.fixture
def referee(tmp_path: Path) -> Any:
    """Named players, seen now, on a referee that lets each hold `PER_PLAYER` open seeks."""
    made = Referee(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'referee.sqlite3'}",
            mail_dir=str(tmp_path / "mail-out"),
            secret="a test secret",
            seeks_per_player=PER_PLAYER,
        )
    )
    made.db.upgrade()
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    create_game(made, NewGame("ice_palace", seated, {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(made, player(address), name)
        profiles.seen(made, address)
    yield made
    made.close()


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


ANN, BOB, CY = (player(address) for address in NAMES)


def seeks(referee: Referee) -> list[Seek]:
    with referee.db.reading() as session:
        return list(session.exec(select(Seek).order_by(Seek.created_at, Seek.id)))


def standing_rows(referee: Referee) -> list[StandingSeek]:
    with referee.db.reading() as session:
        return list(session.exec(select(StandingSeek).order_by(StandingSeek.id)))


def open_of(referee: Referee, address: str) -> list[Seek]:
    return [s for s in seeks(referee) if s.by_address == address and s.status == "open"]


def test_the_list_is_put_whole_and_read_back_in_its_order(referee: Referee) -> None:
    wanted = [
        Standing("mandala", 2, options=None, deadline="2d"),
        Standing("ice_palace", 1, min_players=3, max_players=4),
    ]
    put = set_standing_seeks(referee, ANN, wanted)
    assert put == [
        Standing("mandala", 2, 2, 2, {}, "172800s"),
        Standing("ice_palace", 1, 3, 4, {}, None),
    ]
    assert standing_seeks(referee, ANN) == put
    assert standing_seeks(referee, BOB) == []
    assert set_standing_seeks(referee, ANN, []) == []
    assert standing_rows(referee) == []


@pytest.mark.parametrize(
    ("wanted", "kind", "field"),
    [
        ([Standing("subdivision", 0)], refusals.BadRequest, "0.count"),
        ([Standing("subdivision", 11)], refusals.BadRequest, "0.count"),
        ([Standing("subdivision", 1), Standing("chess", 1)], refusals.UnknownGame, None),
        ([Standing("subdivision", 1, 2, 5)], refusals.BadPlayers, "0.players"),
        ([Standing("subdivision", 1, deadline="soon")], refusals.BadRequest, "0.deadline"),
        ([Standing("subdivision", 1, 2), Standing("subdivision", 3, 2, 2)], None, "1"),
        ([Standing("subdivision", 1, deadline=f"{n + 1}h") for n in range(11)], None, None),
    ],
)
def test_a_refused_list_changes_nothing(
    referee: Referee,
    wanted: list[Standing],
    kind: type[refusals.Refusal] | None,
    field: str | None,
) -> None:
    set_standing_seeks(referee, ANN, [Standing("mandala", 1)])
    before = standing_rows(referee)
    with pytest.raises(kind or refusals.BadRequest) as refused:
        set_standing_seeks(referee, ANN, wanted)
    if field is not None:
        assert field in refused.value.extra["errors"]
    assert standing_rows(referee) == before
    assert len(wanted) <= MOST_STANDING or f"{MOST_STANDING} standing" in refused.value.reason


def test_a_player_without_a_public_name_keeps_no_standing_seek(fresh_referee: Referee) -> None:
    seated = [Seated("a", email="dee@x.test"), Seated("b", email="eve@x.test")]
    create_game(fresh_referee, NewGame("subdivision", seated, {}, trusted=True))
    with pytest.raises(refusals.NeedsName):
        set_standing_seeks(fresh_referee, player("dee@x.test"), [Standing("subdivision", 1)])
    # An empty list needs no name.
    assert set_standing_seeks(fresh_referee, player("dee@x.test"), []) == []


def test_the_sweep_keeps_the_player_in_count_games_of_the_kind(referee: Referee) -> None:
    set_standing_seeks(referee, ANN, [Standing("subdivision", 2, deadline="3d")])
    now = datetime.now(UTC)
    posted = top_up(referee, now)
    assert len(posted) == 2 and top_up(referee, now) == []
    first, second = open_of(referee, ANN.address)
    assert (first.game, first.deadline_seconds, first.min_players) == ("subdivision", 259200, 2)
    assert first.standing_id == second.standing_id == standing_rows(referee)[0].id
    # A stranger joins one: its game starts, and still counts while it is in play.
    game_id = join_seek(referee, BOB, first.id).game_id
    assert top_up(referee, now) == []
    with referee.db.transaction() as session:
        game = session.get(Game, game_id)
        assert game is not None
        game.status = GameStatus.OVER
        session.add(game)
    (again,) = top_up(referee, now)
    assert {s.id for s in open_of(referee, ANN.address)} == {second.id, again}
    # A seek posted by hand is no game of the standing seek.
    post_seek(referee, ANN, NewSeek("subdivision", deadline="3d"))
    assert top_up(referee, now) == []


def test_the_sweep_posts_within_the_players_open_seeks(referee: Referee) -> None:
    post_seek(referee, ANN, NewSeek("mandala"))
    set_standing_seeks(referee, ANN, [Standing("subdivision", 2), Standing("ice_palace", 3, 3, 3)])
    assert len(top_up(referee, datetime.now(UTC))) == PER_PLAYER - 1
    assert len(open_of(referee, ANN.address)) == PER_PLAYER
    assert top_up(referee, datetime.now(UTC)) == []


def test_standing_seeks_of_a_player_long_unseen_pause(referee: Referee) -> None:
    set_standing_seeks(referee, ANN, [Standing("subdivision", 1)])
    later = datetime.now(UTC) + PAUSED_AFTER + timedelta(minutes=1)
    assert top_up(referee, later) == []
    profiles.seen(referee, ANN.address, later)
    assert len(top_up(referee, later)) == 1


def test_seen_is_written_at_most_hourly(referee: Referee) -> None:
    def seen_at() -> str | None:
        with referee.db.reading() as session:
            found = session.get(Address, ANN.address)
            assert found is not None
            return found.seen_at

    first = seen_at()
    assert first is not None
    profiles.seen(referee, ANN.address, datetime.fromisoformat(first) + timedelta(minutes=59))
    assert seen_at() == first
    hour_on = datetime.fromisoformat(first) + timedelta(minutes=61)
    profiles.seen(referee, ANN.address, hour_on)
    assert seen_at() == stamp(hour_on)


def test_putting_the_list_again_keeps_what_is_unchanged_and_withdraws_what_is_gone(
    referee: Referee,
) -> None:
    kept, gone = Standing("subdivision", 1), Standing("mandala", 1)
    set_standing_seeks(referee, ANN, [kept, gone])
    top_up(referee, datetime.now(UTC))
    before = {s.game: s for s in open_of(referee, ANN.address)}
    assert set(before) == {"subdivision", "mandala"}
    set_standing_seeks(referee, ANN, [replace(kept, count=2)])
    assert [s.id for s in open_of(referee, ANN.address)] == [before["subdivision"].id]
    by_id = {s.id: s for s in seeks(referee)}
    assert by_id[before["mandala"].id].status == "withdrawn"
    assert by_id[before["mandala"].id].standing_id is None
    (one,) = top_up(referee, datetime.now(UTC))
    assert by_id.get(one) is None and len(open_of(referee, ANN.address)) == 2


def test_the_seeks_job_expires_then_tops_up(referee: Referee) -> None:
    stale = post_seek(referee, BOB, NewSeek("subdivision"))
    set_standing_seeks(referee, CY, [Standing("subdivision", 1)])
    later = datetime.now(UTC) + timedelta(days=referee.settings.seek_days, minutes=1)
    profiles.seen(referee, CY.address, later)
    done = referee.run_job(SEEKS, (later.isoformat(),))
    assert done["expired"] == [stale.id] and len(done["posted"]) == 1
    assert referee.run_job(SEEKS, ()) == {"expired": [], "posted": []}


def test_signing_in_counts_as_seen(referee: Referee) -> None:
    with referee.db.transaction() as session:
        found = session.get(Address, ANN.address)
        assert found is not None
        found.seen_at = None
        session.add(found)
    assert signing_in.request_sign_in(referee, ANN.address)
    with referee.db.reading() as session:
        notice = session.exec(select(Outbox).where(Outbox.kind == OutboxKind.SIGN_IN)).one()
    token = keys.sign_in_token(referee.secret(), notice.payload["nonce"])
    signing_in.redeem(referee, token)
    with referee.db.reading() as session:
        found = session.get(Address, ANN.address)
        assert found is not None and found.seen_at is not None
