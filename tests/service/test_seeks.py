"""Open games and public names as use cases, without HTTP: posting, listing, joining,
leaving, withdrawing, starting (full, early, with bots), expiring, private seeks, blocks,
and every refusal changing nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from referee.rng import Rng
from referee.service import Referee, profiles, refusals
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.seeks import (
    NewSeek,
    expire_seeks,
    get_seek,
    join_seek,
    leave_seek,
    list_seeks,
    my_seeks,
    post_seek,
    start_seek,
    withdraw_seek,
)
from referee.store.tables import Game, Seat, Seek

NAMES = {"ann@x.test": "Ann", "bob@x.test": "Bob", "cy@x.test": "Cyd", "dee@x.test": "Dée"}


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Players known to the referee (each seated once by a trusted client), named."""
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    create_game(fresh_referee, NewGame("subdivision", seated[:2], {}, trusted=True))
    create_game(fresh_referee, NewGame("subdivision", seated[2:], {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(fresh_referee, player(address), name)
    return fresh_referee


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


ANN, BOB, CY, DEE = (player(address) for address in NAMES)


def seek_rows(referee: Referee) -> list[Seek]:
    with referee.db.reading() as session:
        return list(session.exec(select(Seek)))


def test_public_names_are_unique_without_regard_to_case_or_width(referee: Referee) -> None:
    for taken in ("ann", "ANN", "\uff21\uff4e\uff4e", "dée", "DÉE"):
        with pytest.raises(refusals.NameTaken):
            profiles.set_profile(referee, BOB, taken)
    assert profiles.profile(referee, BOB).name == "Bob"
    # One's own name again, in another case: it is still one's own.
    assert profiles.set_profile(referee, ANN, "ANN").name == "ANN"


def test_a_player_no_seat_named_yet_keeps_its_language_zone_and_name(referee: Referee) -> None:
    newcomer = player("newcomer@players.test")
    before = profiles.profile(referee, newcomer)
    assert (before.name, before.language, before.time_zone) == (None, "en", "UTC")
    profiles.set_profile(referee, newcomer, language="fr", time_zone="Europe/Paris")
    profiles.set_profile(referee, newcomer, "Newcomer")
    after = profiles.profile(referee, newcomer)
    assert (after.name, after.language, after.time_zone) == ("Newcomer", "fr", "Europe/Paris")


@pytest.mark.parametrize(
    "refused",
    [
        "ab",
        "x" * 25,
        "ann@x.test",
        "a.b.c",
        "Ann\u200b",
        "  Ann",
        "Ann  Lee",
        "---",
        "\u3164\u3164\u3164",
    ],
)
def test_the_plain_name_rule_refuses_addresses_dots_and_invisible_characters(
    referee: Referee, refused: str
) -> None:
    with pytest.raises(refusals.BadRequest):
        profiles.set_profile(referee, BOB, refused)
    assert profiles.profile(referee, BOB).name == "Bob"


def test_a_seek_fills_and_starts_with_seats_drawn_from_the_games_seed(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("ice_palace", 3, 3))
    assert (seek.status, seek.seated, seek.by, seek.open_seats) == ("open", ("Ann",), "Ann", 2)
    assert join_seek(referee, BOB, seek.id).seated == ("Ann", "Bob")
    started = join_seek(referee, CY, seek.id)
    assert started.status == "started" and started.game_id is not None
    with referee.db.reading() as session:
        game = session.get(Game, started.game_id)
        seats = list(session.exec(select(Seat).where(Seat.game_id == started.game_id)))
    assert game is not None and game.trusted and started.rated
    order = Rng(f"{game.seed}:seats").shuffled(["Ann", "Bob", "Cyd"])
    assert [s.name for s in sorted(seats, key=lambda s: s.seat)] == order
    assert {s.email for s in seats} == {"ann@x.test", "bob@x.test", "cy@x.test"}
    # Started: no longer listed, and a fourth player is refused with its own code.
    assert list_seeks(referee, None).seeks == ()
    with pytest.raises(refusals.SeekStarted):
        join_seek(referee, DEE, seek.id)


def test_every_refusal_has_its_own_code_and_changes_nothing(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("subdivision", 2, 2))
    before = seek_rows(referee)
    with pytest.raises(refusals.AlreadyJoined):
        join_seek(referee, ANN, seek.id)
    with pytest.raises(refusals.NotJoined):
        leave_seek(referee, BOB, seek.id)
    with pytest.raises(refusals.CreatorStays):
        leave_seek(referee, ANN, seek.id)
    with pytest.raises(refusals.NotYourSeek):
        withdraw_seek(referee, BOB, seek.id)
    with pytest.raises(refusals.NotYourSeek):
        start_seek(referee, BOB, seek.id)
    with pytest.raises(refusals.TooFewSeated):
        start_seek(referee, ANN, seek.id)
    assert seek_rows(referee) == before
    withdraw_seek(referee, ANN, seek.id)
    with pytest.raises(refusals.SeekWithdrawn):
        join_seek(referee, BOB, seek.id)


def test_shapes_are_refused_before_anything_is_written(referee: Referee) -> None:
    for bad, kind in (
        (NewSeek("chess"), refusals.UnknownGame),
        (NewSeek("subdivision", 2, 5), refusals.BadPlayers),
        (NewSeek("ice_palace", 4, 3), refusals.BadPlayers),
        (NewSeek("subdivision", deadline="soon"), refusals.BadRequest),
        (NewSeek("subdivision", bots="grandmaster"), refusals.BadPlayers),
        (NewSeek("subdivision", invite=("Nobody",)), refusals.BadRequest),
    ):
        with pytest.raises(kind):
            post_seek(referee, ANN, bad)
    assert seek_rows(referee) == []


def test_a_player_without_a_public_name_can_neither_post_nor_join(
    fresh_referee: Referee,
) -> None:
    create_game(
        fresh_referee,
        NewGame(
            "subdivision",
            [Seated("a", email="ann@x.test"), Seated("b", email="b@x.test")],
            {},
            trusted=True,
        ),
    )
    with pytest.raises(refusals.NeedsName):
        post_seek(fresh_referee, ANN, NewSeek("subdivision"))


def test_the_creator_starts_early_with_at_least_min(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("ice_palace", 3, 5))
    join_seek(referee, BOB, seek.id)
    with pytest.raises(refusals.TooFewSeated):
        start_seek(referee, ANN, seek.id)
    join_seek(referee, CY, seek.id)
    started = start_seek(referee, ANN, seek.id)
    with referee.db.reading() as session:
        seats = list(session.exec(select(Seat).where(Seat.game_id == started.game_id)))
    assert len(seats) == 3 and not any(seat.bot for seat in seats)


def test_with_bots_the_creator_starts_at_once_and_the_seek_stays_listed(
    referee: Referee,
) -> None:
    seek = post_seek(referee, ANN, NewSeek("ice_palace", 3, 3, bots="random"))
    started = start_seek(referee, ANN, seek.id)
    assert (started.status, started.open_seats) == ("started", 2)
    with referee.db.reading() as session:
        game = session.get(Game, started.game_id)
        seats = list(session.exec(select(Seat).where(Seat.game_id == started.game_id)))
    assert game is not None and not started.rated
    assert sorted(seat.bot or "person" for seat in seats) == ["person", "random", "random"]
    assert [s.id for s in list_seeks(referee, None).seeks] == [seek.id]


def test_a_seek_expires_after_its_days(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("subdivision"))
    later = datetime.now(UTC) + timedelta(days=referee.settings.seek_days, minutes=1)
    assert expire_seeks(referee, datetime.now(UTC)) == []
    assert expire_seeks(referee, later) == [seek.id]
    with pytest.raises(refusals.SeekExpired):
        join_seek(referee, BOB, seek.id)


def test_at_most_seeks_per_player_open(referee: Referee) -> None:
    for _ in range(referee.settings.seeks_per_player):
        post_seek(referee, ANN, NewSeek("subdivision"))
    with pytest.raises(refusals.TooManySeeks):
        post_seek(referee, ANN, NewSeek("subdivision"))
    assert len(seek_rows(referee)) == referee.settings.seeks_per_player


def test_a_private_seek_is_seen_and_joined_by_its_invitees_only(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("subdivision", invite=("bob",)))
    assert seek.private and seek.invited == ("Bob",)
    assert list_seeks(referee, None).seeks == ()
    with pytest.raises(refusals.NotFound):
        get_seek(referee, seek.id, CY.address)
    with pytest.raises(refusals.NotInvited):
        join_seek(referee, CY, seek.id)
    assert get_seek(referee, seek.id, BOB.address).invited == ()
    assert [s.id for s in my_seeks(referee, BOB)] == [seek.id]
    assert join_seek(referee, BOB, seek.id).status == "started"


def test_blocked_players_see_none_of_each_others_seeks(referee: Referee) -> None:
    seek = post_seek(referee, ANN, NewSeek("subdivision"))
    profiles.block(referee, BOB, "ann")
    assert list_seeks(referee, BOB.address).seeks == ()
    assert [s.id for s in list_seeks(referee, CY.address).seeks] == [seek.id]
    with pytest.raises(refusals.NotFound):
        join_seek(referee, BOB, seek.id)
    with pytest.raises(refusals.Blocked):
        post_seek(referee, ANN, NewSeek("subdivision", invite=("Bob",)))
    assert profiles.unblock(referee, BOB, "Ann") == []
    assert join_seek(referee, BOB, seek.id).status == "started"
