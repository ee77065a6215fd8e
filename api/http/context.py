"""The app's `Referee`: the service, with the settings `create_app` was given."""

from __future__ import annotations

from flask import current_app
from sqlmodel import Session

from referee.service import Referee, refusals
from referee.service.submitting import well_formed
from referee.settings import Settings
from referee.store.tables import Game

EXTENSION = "referee"


def referee() -> Referee:
    """The referee of the app serving this request."""
    found: Referee = current_app.extensions[EXTENSION]
    return found


def settings() -> Settings:
    """The settings of the app serving this request."""
    return referee().settings


def session() -> Session:
    """A session for reading (on SQLite it leaves the write lock to writers)."""
    return referee().db.reading()


def find(db: Session, game_id: str) -> Game:
    """The game with this id; refused as not found for any other id."""
    game = db.get(Game, game_id) if well_formed(game_id) else None
    if game is None:
        raise refusals.NotFound.game()
    return game
