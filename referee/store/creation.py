"""Creating a game: its row, seats and their tokens, invitations."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from referee.engine import JSON
from referee.games import AnyGame
from referee.replay import new_state
from referee.rng import commitment, new_seed
from referee.store import addresses
from referee.store.appending import Logged, append_to_log, outbox_row, with_forced_moves, write
from referee.store.clock import now
from referee.store.keys import hash_token, new_token, seat_link_token, server_secret
from referee.store.notices import insert_notices
from referee.store.tables import Game, GameStatus, OutboxKind, Seat, TimeoutPolicy


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Created:
    game: Game
    tokens: tuple[str, ...]


def create_game(
    session: Session,
    rules: AnyGame,
    players: Sequence[tuple[str, str | None]],
    options: JSON,
    deadline_seconds: int | None = None,
    on_timeout: TimeoutPolicy | None = None,
    *,
    trusted: bool = False,
    secret: bytes | None = None,
) -> Created:
    """A new game with a fresh secret seed; returns the seat tokens.

    A seat without a mail address gets a random token, and this is its only
    copy. A seat with one gets a token derived from the server `secret`
    (`keys.seat_link_token`; default: `keys.server_secret()`, which callers
    on SQLite fetch before their transaction), so that its personal link can
    be mailed once the address may be written to. `trusted` games (made with
    the API key) mail their seats without waiting for them to accept.

    `options` must already be validated by `rules.load_options`. The
    deadline and what happens when it runs out are service options, not the
    rules': they are kept on the game row, out of `options`. Moves the
    referee records by itself at the start are logged at once.
    """
    seed = new_seed()
    stamp = now()
    state = new_state(rules, seed, len(players), options)
    game = Game(
        id=new_id(),
        name=rules.name,
        rules_version=rules.rules_version,
        options=options,
        seed=seed,
        seed_commitment=commitment(seed),
        status=GameStatus.ACTIVE,
        version=0,
        head_hash=commitment(seed),
        to_act=[],
        created_at=stamp,
        updated_at=stamp,
        deadline_seconds=deadline_seconds,
        on_timeout=None if deadline_seconds is None else on_timeout,
        trusted=trusted,
    )
    rounds_before = rules.rounds_decided(state)
    logged: list[Logged] = []
    state = with_forced_moves(rules, state, logged)
    appended = append_to_log(
        game,
        rules,
        state,
        logged,
        stamp,
        rounds_before=rounds_before,
        seat_count=len(players),
        reachable=frozenset(number for number, (_, email) in enumerate(players) if email),
    )
    for name, value in appended.game.items():
        setattr(game, name, value)
    session.add(game)
    if secret is None and any(email for _, email in players):
        secret = server_secret()
    tokens, invitations = [], []
    for number, (name, email) in enumerate(players):
        token = new_token()
        if email and secret is not None:
            token = seat_link_token(secret, game.id, number)
            addresses.ensure(session, secret, email)
        tokens.append(token)
        session.add(
            Seat(game_id=game.id, seat=number, name=name, email=email, token_hash=hash_token(token))
        )
        payload = {"name": name, "email": email}
        invitations.append(outbox_row(game.id, OutboxKind.INVITATION, number, payload, stamp))
    session.flush()
    insert_notices(session.connection(), invitations)
    write(session.connection(), appended)
    return Created(game, tuple(tokens))
