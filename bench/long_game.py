"""A long game built in this process through the service, for the benchmarks of long logs."""

from __future__ import annotations

import time

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.deciding import decide
from referee.service.submitting import KnownSeat, SubmitMove, record_move
from referee.settings import Settings


def new_long_game(referee: Referee) -> str:
    """A new MaNiKi game under rules version 1, whose deck with no card won goes round
    for ever, so that the seats can pass as long as a benchmark needs; its id."""
    referee.db.upgrade()
    endless = NewGame("maniki", [Player("a"), Player("b")], {}, rules_version="1")
    return create_game(referee, endless).game.id


def extend_long_game(referee: Referee, game_id: str, version: int, length: int) -> None:
    """Pass, seat after seat, from `version` moves to `length`, each recorded and decided
    by the service here."""
    for at in range(version, length):
        pass_move = SubmitMove(game_id, KnownSeat(at % 2), {"type": "pass"})
        with referee.db.transaction() as session:
            submission, _fresh = record_move(session, pass_move)
        decided = decide(referee, submission.id)
        assert decided is not None and decided.status == "accepted", decided


def build_long_game(database_url: str, moves: int) -> str:
    """A long game of `moves` passes in the database at `database_url`; its id."""
    referee = Referee(Settings(database_url=database_url))
    try:
        game_id = new_long_game(referee)
        started = time.perf_counter()
        extend_long_game(referee, game_id, 0, moves)
        print(f"  built {moves} moves in {time.perf_counter() - started:.0f} s")
        return game_id
    finally:
        referee.close()
