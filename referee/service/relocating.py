"""The operator's ways off one machine and back: a whole database copied into an empty
one (`referee db copy --to URL`: the embedded SQLite to PostgreSQL), every game's
log checked afresh (`referee db verify`: after a copy or a restore), and every
game's record written out as files (`referee export DIR`).

A copy refuses a target that holds any row, and is one transaction of the
target's: it lands whole or not at all. After it, every game is checked afresh
on both databases (kept outcomes are not trusted: the logs are checked), and a
game whose outcome differs is named. The records written out are the ones
anyone may have (`GET /v1/games/{id}/log.jsonl`): the seed of a game in play
stays in the database, which its backups hold.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from referee.service.game_states import state_at
from referee.service.verification import Checked, check_afresh
from referee.store import copying
from referee.store.db import Database
from referee.store.reads import every_game_id, game_by_id
from referee.store.records import public_record

if TYPE_CHECKING:
    from referee.service import Referee


class CopyRefused(Exception):
    """The copy was not made, and why (the target is not empty, or not reachable)."""


@dataclass(slots=True)
class Copied:
    rows: dict[str, int]
    games: int = 0
    # Each game whose log checks out differently on the two databases, in words.
    differing: list[str] = field(default_factory=list)


def copy_database(
    referee: Referee, target_url: str, told: Callable[[str, int], None] = lambda _t, _n: None
) -> Copied:
    """Copy the referee's whole database into the empty database at `target_url`, then
    check every game afresh on both."""
    referee.db.upgrade()
    target = Database(target_url, pool_size=1)
    try:
        target.upgrade()
        held = {name: count for name, count in copying.rows_held(target.engine).items() if count}
        if held:
            tables = ", ".join(f"{name} ({count})" for name, count in sorted(held.items()))
            raise CopyRefused(f"the target database is not empty: {tables}")
        copied = Copied(copying.copy_all(referee.db.engine, target.engine, told))
        theirs = dict(check_every_game(target))
        for game_id, checked in check_every_game(referee.db):
            copied.games += 1
            if theirs.pop(game_id, None) != checked:
                copied.differing.append(f"game {game_id} checks out differently on the copy")
        copied.differing += [f"game {game_id} is only on the copy" for game_id in theirs]
        return copied
    finally:
        target.dispose()


def check_every_game(db: Database) -> Iterator[tuple[str, Checked]]:
    """Every game's id and its log's check, worked out afresh, one game at a time."""
    with db.reading() as session:
        game_ids = every_game_id(session)
    for game_id in game_ids:
        with db.reading() as session:
            game = game_by_id(session, game_id)
            if game is not None:
                yield game_id, check_afresh(session, game)


def export_records(referee: Referee, folder: Path) -> int:
    """Write every game's public record to `folder/<id>.jsonl`; how many. Each file is
    written whole under a temporary name first, so a file there is never half one."""
    folder.mkdir(parents=True, exist_ok=True)
    with referee.db.reading() as session:
        game_ids = every_game_id(session)
    written = 0
    for game_id in game_ids:
        with referee.db.reading() as session:
            game = game_by_id(session, game_id)
            if game is None:
                continue
            text = public_record(session, game, state_at(session, game, game.version)).dumps()
        partial = folder / f".{game_id}.jsonl.part"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, folder / f"{game_id}.jsonl")
        written += 1
    return written
