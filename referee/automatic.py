"""The moves the referee makes by itself, each a function of what a finished game's record
holds, and the audit that works them out again.

Three kinds, as a record's move lines mark them (`source`):

- `forced`: what the rules leave no choice in (`Game.forced_move`); recorded
  at once after the move that led to it.
- `timeout`: the move played for a seat out of time, by the game's policy
  (`on_timeout`): `pass` where the rules allow one now, else `random`;
  `forfeit` resigns; `bot` is the `greedy` bot's move. Random draws come
  from the stream `"{seed}:timeout:{n}:{seat}"` (`timeout_rng`), `n` being
  the number of moves logged before this one.
- `bot`: a bot's seat's move, the level the header names for that seat
  asked with the stream `"{seed}:bot:{n}:{seat}"` (`bot_rng`) and the
  record's think budget (`bot_seconds` at `bot_pace`). When the level's own
  move cannot be played (the rules refuse it, the bot fails, the service
  refuses its submission) the seat plays the `random` level's move, drawn
  afresh from the same stream.

`timeout_move` and `bot_choice` are what the service plays and what `referee
verify` and `referee suggest` work out again: one function each, never two
copies that could drift.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee import bots
from referee.engine import JSON, IllegalMove, Resign
from referee.games import AnyGame
from referee.pace import paced
from referee.playout import bot_rng, timeout_rng
from referee.record import Entry, Record

# The bot that plays for a seat out of time under `on_timeout: bot`.
TIMEOUT_BOT = "greedy"
# The level a bot's seat falls back on when its own level's move cannot be played.
FALLBACK_LEVEL = "random"
# A record's `source` of the moves the referee makes by itself.
FORCED, TIMEOUT, BOT = "forced", "timeout", "bot"


def timeout_move(
    game: AnyGame,
    state: Any,
    seat: int,
    policy: str,
    seed: str,
    moves: int,
    *,
    players: int,
    options: JSON,
    bot_seconds: float,
) -> Any:
    """The move the referee plays for `seat`, out of time in `state` after `moves` logged
    moves, under the timeout `policy` (`pass`, `random`, `forfeit` or `bot`)."""
    if policy == "forfeit":
        return Resign()
    passing = game.pass_move(state, seat) if policy == "pass" else None
    if passing is not None:
        return passing
    rng = timeout_rng(seed, moves, seat)
    if policy == "bot":
        return bots.decide(
            game,
            TIMEOUT_BOT,
            state,
            seat,
            players=players,
            options=options,
            rng=rng,
            seconds=bot_seconds,
        )
    return game.random_move(state, seat, rng)


@dataclass(frozen=True, slots=True)
class BotChoice:
    """A bot's seat's move; `refused` says why its level's own move was replaced by
    the `random` level's (None: it was not)."""

    move: Any
    refused: str | None = None


def fallback_move(
    game: AnyGame, state: Any, seat: int, seed: str, moves: int, *, players: int, options: JSON
) -> Any:
    """The `random` level's move, which a bot's seat plays when its own cannot be played."""
    return bots.decide(
        game,
        FALLBACK_LEVEL,
        state,
        seat,
        players=players,
        options=options,
        rng=bot_rng(seed, moves, seat),
        seconds=0.0,
    )


def bot_choice(
    game: AnyGame,
    level: str,
    state: Any,
    seat: int,
    seed: str,
    moves: int,
    *,
    players: int,
    options: JSON,
    seconds: float,
    bots_seats: Iterable[int] = (),
) -> BotChoice:
    """The move the bot of `level` plays for `seat` after `moves` logged moves: its own,
    or the `random` level's when its own fails or the rules refuse it."""
    try:
        move = bots.decide(
            game,
            level,
            state,
            seat,
            players=players,
            options=options,
            rng=bot_rng(seed, moves, seat),
            seconds=seconds,
            bots=bots_seats,
        )
        game.play(state, seat, move)
        game.move_to_json(move)
    except IllegalMove as refused:
        reason = f"the rules refuse its move ({refused.code})"
    # A bot's bug of any kind must not stop its game: the seat plays on at random,
    # which an auditor works out alike from the record.
    except Exception as failed:
        reason = f"the bot failed ({type(failed).__name__})"
    else:
        return BotChoice(move)
    fallback = fallback_move(game, state, seat, seed, moves, players=players, options=options)
    return BotChoice(fallback, reason)


# -- the audit of a record ------------------------------------------------------------


@dataclass(slots=True)
class Audit:
    """What checking a replayed record's own moves found: `problems` fail it; `notes`
    say what was not, or could not be, checked; `checked` counts the moves re-derived."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: int = 0


def audit(
    record: Record,
    game: AnyGame,
    options: JSON,
    states: Sequence[Any],
    *,
    with_bots: bool,
    default_bot_seconds: float,
) -> Audit:
    """Work out again every move of the record the referee made by itself, from the
    revealed seed and the position before it (`states[n]`: after `n` moves); bots'
    moves only `with_bots` (they think again for as long as they did)."""
    header = record.header
    assert header.seed is not None
    seconds = paced(header.bot_seconds or default_bot_seconds, header.bot_pace)
    found = Audit()
    for index, entry in enumerate(record.entries):
        line = record.line_of(entry.seq)
        forced = game.forced_move(states[index])
        if forced is not None or entry.source == FORCED:
            found.checked += 1
            problem = _forced_problem(game, states[index], entry, forced)
        elif entry.source == TIMEOUT:
            problem = _timeout_problem(record, game, options, states, index, found, seconds)
        elif entry.source == BOT and with_bots:
            found.checked += 1
            problem = _bot_problem(record, game, options, states, index, found, seconds)
        else:
            continue
        if problem:
            found.problems.append(f"line {line}: move {entry.seq} ({entry.move!r}): {problem}")
    return found


def _forced_problem(game: AnyGame, state: Any, entry: Entry, forced: tuple[int, Any] | None) -> str:
    if forced is None:
        # Older logs hold moves the referee once made where the seat had only one
        # (Ice Palace's passes of a stuck hand): forced in all but the rules' name.
        only = game.legal_moves(state, entry.seat)
        if [game.notate(move) for move in only] == [entry.move]:
            return ""
        return "marked forced, but the rules leave the seat a choice here"
    seat, move = forced
    if (entry.seat, entry.move) != (seat, game.notate(move)):
        return f"the referee records {game.notate(move)!r} for seat {seat} here by itself"
    if entry.source not in (None, FORCED):
        return f"marked {entry.source}, but it is the move the rules force"
    return ""


def _timeout_problem(
    record: Record,
    game: AnyGame,
    options: JSON,
    states: Sequence[Any],
    index: int,
    found: Audit,
    seconds: float,
) -> str:
    header, entry = record.header, record.entries[index]
    if header.on_timeout is None:
        found.notes.append(
            f"line {record.line_of(entry.seq)}: move {entry.seq} is a timeout's, not checked: "
            "the record does not name its timeout policy"
        )
        return ""
    found.checked += 1
    assert header.seed is not None

    def played_at(moves: int) -> str:
        return game.notate(
            timeout_move(
                game,
                states[index],
                entry.seat,
                header.on_timeout or "",
                header.seed or "",
                moves,
                players=len(header.players),
                options=options,
                bot_seconds=seconds,
            )
        )

    expected = played_at(index)
    if entry.move == expected:
        return ""
    # Before streams were keyed by the moves logged, the seats of one sweep (a MaNiKi
    # round's) all drew at the version the sweep found: the first of their run.
    start = _sweep_start(record.entries, index)
    if start != index and entry.move == played_at(start):
        return ""
    return f"a timeout under {header.on_timeout!r} plays {expected!r} here"


def _sweep_start(entries: Sequence[Entry], index: int) -> int:
    """The index of the first of the timeouts right before `index` that one sweep played
    (the same stamp)."""
    start = index
    while (
        entries[index].created_at is not None
        and start > 0
        and entries[start - 1].source == TIMEOUT
        and entries[start - 1].created_at == entries[index].created_at
    ):
        start -= 1
    return start


def _bot_problem(
    record: Record,
    game: AnyGame,
    options: JSON,
    states: Sequence[Any],
    index: int,
    found: Audit,
    seconds: float,
) -> str:
    header, entry = record.header, record.entries[index]
    level = header.bot_at(entry.seat, entry.seq)
    if level is None:
        return f"marked bot, but the header names no bot for seat {entry.seat}"
    if level not in bots.levels(game.name):
        return f"the header names {level!r}, not a bot level of {game.title}"
    assert header.seed is not None
    players = len(header.players)
    seats = [seat for seat in range(players) if header.bot_at(seat, entry.seq)]
    expected = ""
    # The bot thought at the version it was asked at: the one before its move, or, where
    # others' moves left its decision as it was (a MaNiKi round), one before those.
    for moves in _asked_at(record.entries, index, states, game):
        choice = bot_choice(
            game,
            level,
            states[moves],
            entry.seat,
            header.seed,
            moves,
            players=players,
            options=options,
            seconds=seconds,
            bots_seats=seats,
        )
        chosen = game.notate(choice.move)
        expected = expected or chosen
        if chosen == entry.move:
            if choice.refused:
                found.notes.append(
                    f"move {entry.seq}: the {level} bot's own move was replaced by the "
                    f"{FALLBACK_LEVEL} level's: {choice.refused}"
                )
            return ""
        fallback = fallback_move(
            game, states[moves], entry.seat, header.seed, moves, players=players, options=options
        )
        if game.notate(fallback) == entry.move:
            found.notes.append(
                f"move {entry.seq}: the {level} bot's {chosen!r} was refused by the service; "
                f"the seat played the {FALLBACK_LEVEL} level's move"
            )
            return ""
    return f"the {level} bot plays {expected!r} here"


def _asked_at(
    entries: Sequence[Entry], index: int, states: Sequence[Any], game: AnyGame
) -> list[int]:
    """The numbers of moves a bot's move may have been thought after: the move's own
    position first, then earlier ones back to the seat's previous move, while the seat
    could act in them (another seat's move that left its decision as it was)."""
    seat = entries[index].seat
    found = [index]
    moves = index - 1
    while moves >= 0 and entries[moves].seat != seat and seat in game.actors(states[moves]):
        found.append(moves)
        moves -= 1
    return found


def source_at(record: Record, seq: int) -> str | None:
    """The source the record gives move `seq` (None: none, or no such move)."""
    return record.entries[seq - 1].source if 0 < seq <= len(record.entries) else None
