"""Who is told what after a change: the referee's notices, as outbox rows, and writing them.

Every seat that must act after a change hears of it, each seat hears of a
round's end and of the game's end, a move that came by mail is answered by
mail, and a seat whose move the referee played for it hears of it at once.
A notice for a seat no channel can reach would go nowhere: it is not
written at all. Each notice is written with a delivery on every registered
channel that reaches its seat (`write`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from referee.delivery import CHANNELS
from referee.games import AnyGame
from referee.store import appending
from referee.store.appending import Appended, outbox_row
from referee.store.decision_rows import Reach
from referee.store.tables import OutboxKind, Source

# Every registered channel: a notice gets a delivery on each that reaches its seat.
_ROUTES = tuple(CHANNELS.values())


def write(
    connection: sa.Connection, appended: Appended | None, notices: Sequence[dict[str, Any]] = ()
) -> None:
    """Write the rows of `appended` (not the game's own row) and the notices, each with a
    delivery on every registered channel that reaches its seat now."""
    appending.write(connection, appended, notices, _ROUTES)


def after_moves(
    game_id: str,
    seed: str,
    rules: AnyGame,
    state: Any,
    appended: Appended,
    *,
    rounds_before: int,
    reach: Reach,
    stamp: str,
    asked_before: Mapping[int, Any] | None = None,
) -> list[dict[str, Any]]:
    """The notices of moves just logged (`appended`), `state` being the state after them.

    `rounds_before` is `rules.rounds_decided` of the state before them: a
    change that raises it ends a round, which every seat hears of.
    `asked_before` is what each seat to act before them was answering
    (`asked`): a seat still answering the same is not told again.
    """
    version = appended.game["version"]
    news: list[tuple[OutboxKind, int, dict[str, Any]]]
    if appended.game["result"] is not None:
        result = appended.game["result"]
        news = [
            (OutboxKind.GAME_OVER, seat, {"result": result, "seed": seed})
            for seat in range(reach.seat_count)
        ]
    else:
        news = []
        if rules.rounds_decided(state) > rounds_before:
            # Once over, the game-over mail tells the round's end with the rest.
            news = [
                (OutboxKind.ROUND_OVER, seat, {"version": version})
                for seat in range(reach.seat_count)
            ]
        # Every seat that must act after a change hears of it, even one that
        # already could: a MaNiKi card won by another seat is a new card for all.
        # Not one whose question the change left standing (another seat's wrong
        # answer to the same card): its last turn mail still holds, and a reply
        # to it is still played (docs/design.md, "Stale moves").
        # Not a bot's seat (one handed to a bot may still reach its person).
        asked = asked_before or {}
        news += [
            (OutboxKind.YOUR_TURN, seat, {"version": version})
            for seat in appended.game["to_act"]
            if seat not in reach.bots
            and (seat not in asked or asked[seat] != rules.decision_key(state, seat))
        ]
    return [
        outbox_row(game_id, kind, seat, payload, stamp)
        for kind, seat, payload in news
        if seat in reach.reachable
    ]


def asked(rules: AnyGame, state: Any) -> dict[int, Any]:
    """What each seat to act in `state` is answering (`Game.decision_key`), by seat."""
    if state is None:
        return {}
    return {seat: rules.decision_key(state, seat) for seat in rules.actors(state)}


def answer(
    game_id: str, submission: dict[str, Any], reach: Reach, stamp: str
) -> dict[str, Any] | None:
    """The notice that answers a decided submission, if its source is answered.

    A move that came by mail is answered by mail, accepted or refused; a
    seat whose move the referee played for it hears of it at once.
    """
    source, seat = submission["source"], submission["seat"]
    if source == Source.MAIL or (source == Source.TIMEOUT and seat in reach.reachable):
        payload = {"submission": submission["id"]}
        return outbox_row(game_id, OutboxKind.ANSWER, seat, payload, stamp)
    return None
