"""The game contract every game of the referee implements.

A game is a value-in/value-out object: it never does I/O, never reads the
clock and never draws randomness except from the seeded `Rng` handed to
`start` (and to `random_move` and `play_random`, which only playouts and the
`random` timeout policy use). Everything above this layer (replay, the store, the API, the
worker, the mail) talks to games only through `Game`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import marshmallow

from referee.rng import Rng

JSON = dict[str, Any]

S = TypeVar("S")
M = TypeVar("M")

RESIGN_NOTATION = "resign"


class IllegalMove(Exception):
    """A move the rules refuse; `reason` is written for the player.

    `code` is a stable machine word (`not_your_turn`, `bad_notation`,
    `illegal_move`, ...). Neither may mention hidden information.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason

    def __repr__(self) -> str:
        return f"IllegalMove({self.code!r}, {self.reason!r})"


class BadOptions(ValueError):
    """Game options that fail validation; `errors` maps option to messages."""

    def __init__(self, errors: Mapping[str, Any]) -> None:
        super().__init__(f"invalid options: {dict(errors)}")
        self.errors = dict(errors)


@dataclass(frozen=True, slots=True)
class Resign:
    """Leaving the game; every game accepts it from any seat still playing."""


@dataclass(frozen=True, slots=True)
class Result:
    """Final scores per seat and the seats that share the win."""

    scores: tuple[int, ...]
    winners: tuple[int, ...]

    def to_json(self) -> JSON:
        return {"scores": list(self.scores), "winners": list(self.winners)}


def rank(scores: Iterable[int], resigned: Iterable[int] = ()) -> Result:
    """The result where the best score wins and ties share the win.

    A resigned seat ranks after every other seat whatever its score, so it
    can only win when every seat has resigned (which cannot happen: the game
    ends as soon as one seat is left).
    """
    scores = tuple(scores)
    out = frozenset(resigned)
    if not out:
        best = max(scores)
        # Most games end with one best score: its seat, without a walk (every
        # playout ends here once).
        if scores.count(best) == 1:
            return Result(scores, (scores.index(best),))
    else:
        best = max([score for seat, score in enumerate(scores) if seat not in out])
    winners = [seat for seat, score in enumerate(scores) if score == best and seat not in out]
    return Result(scores, tuple(winners))


def not_your_turn() -> IllegalMove:
    return IllegalMove("not_your_turn", "it is not your turn")


def game_over() -> IllegalMove:
    return IllegalMove("game_over", "the game is over")


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """How the latest decided round went, as the round-over mail tells it.

    `winners` are the seats that took the round (empty: nobody did), or
    None in games whose rounds nobody wins (Ice Palace's builds). `facts`
    are further (label, value) lines in the order told, None shown as `-`.
    The scores are not repeated here: the mail takes them from `scores`.
    """

    winners: tuple[int, ...] | None = None
    facts: tuple[tuple[str, str | None], ...] = ()


class Played(NamedTuple, Generic[S, M]):
    """A move of the log: the seat that made it, the move, and the state after it.

    A named tuple rather than a frozen dataclass: as immutable, and a playout
    builds one a move, which a frozen dataclass makes cost more than a move
    of some games' rules.
    """

    seat: int
    move: M
    state: S


# `Played(...)` runs the named tuple's Python `__new__`, which costs as much
# again as building the tuple directly, and a playout builds one a move.
_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One line of a seat's final score: what the points are for, and how many
    (negative where the rules take points away)."""

    label: str
    points: int


# Per seat, the lines of its final score, in the order the rules count them.
Breakdown = tuple[tuple[ScoreLine, ...], ...]


@dataclass(frozen=True, slots=True)
class Choice:
    """One thing a player may click next while building a move on the board.

    `step` is the short token the page sends back (and the board's target
    carries as `data-step`); `label` is the target's accessible name, the
    words a screen reader says ("Place on c4").
    """

    step: str
    label: str


@dataclass(frozen=True, slots=True)
class Building(Generic[M]):
    """A move being built click by click (`Game.build`).

    `choices` are the steps that may come next, each legal: a step not among
    them can never be taken. `move` is the move the steps taken make now,
    which the player may send (None while they make none yet; a move may
    also go on, like a MaNiKi sequence). `view` is the seat's view with the
    move so far shown on it (the animals where the orders take them), built
    from the seat's view only, so a preview can show nothing the seat could
    not see. `prompt` says what to click next, in a few words.
    """

    steps: tuple[str, ...]
    choices: tuple[Choice, ...]
    move: M | None
    view: JSON
    prompt: str


def bad_step(step: str) -> IllegalMove:
    """The refusal of a step that is not among the choices of its building."""
    return IllegalMove("bad_step", f"{step!r} cannot be chosen here")


def walk(
    paths: Iterable[tuple[Sequence[Choice], M]], steps: Sequence[str]
) -> tuple[tuple[Choice, ...], M | None]:
    """The next choices and the move made, where each legal move is reached by
    its own path of choices: the games whose moves can all be listed build
    them this way. Raises `bad_step` for steps no path starts with.
    """
    depth = len(steps)
    taken = tuple(steps)
    following: dict[str, Choice] = {}
    made: M | None = None
    reached = False
    for path, move in paths:
        if tuple(choice.step for choice in path[:depth]) != taken:
            continue
        reached = True
        if len(path) == depth:
            made = move
        else:
            following.setdefault(path[depth].step, path[depth])
    if depth and not reached:
        raise bad_step(taken[-1])
    return tuple(following.values()), made


class Game(ABC, Generic[S, M]):
    """One board game: its rules as pure functions over immutable states.

    States and moves are plain immutable values. `state_to_json` and
    `move_to_json` give their JSON form, which round-trips exactly; the
    JSON form of a move is an object with a `type` key (`{"type":
    "resign"}` for resigning).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    rules_version: ClassVar[str]
    players: ClassVar[tuple[int, ...]]
    options_schema: ClassVar[type[marshmallow.Schema]]
    notation_help: ClassVar[str]
    # The JSON moves the game accepts: for each `type` but `resign` (which
    # every game takes, with no other field), a JSON Schema object of the
    # move's other fields, `{"properties": {...}, "required": [...]}`. The
    # API publishes it as the game's move schema; a contract test checks
    # that every move `move_to_json` gives fits it.
    move_fields: ClassVar[Mapping[str, JSON]]
    # False where `legal_moves` offers only some of the legal moves: pieces
    # to write a sequence with (MaNiKi), or one maximal plan (Ice Palace).
    lists_every_move: ClassVar[bool] = True
    # What the new-game form calls each option of `options_schema` (by its name) and
    # each value of a choice (`name=value`), marked with `N_` for the games catalogue;
    # the names and values stay the machine's.
    option_labels: ClassVar[Mapping[str, str]] = {}
    # What the game page calls the numbers `scores` gives ("Cards" in MaNiKi), marked
    # with `N_` for the games catalogue.
    score_label: ClassVar[str]

    # -- options ---------------------------------------------------------

    def load_options(self, raw: Mapping[str, Any] | None, players: int) -> JSON:
        """Validate options for a game of `players` seats, defaults filled in.

        Raises `BadOptions` with a message per faulty option (`_players` for
        a player count the game does not support).
        """
        if players not in self.players:
            allowed = ", ".join(str(n) for n in self.players)
            raise BadOptions({"_players": [f"{self.title} is played by {allowed} players"]})
        try:
            options: JSON = self.options_schema().load(dict(raw or {}))
        except marshmallow.ValidationError as error:
            messages = error.messages
            errors = messages if isinstance(messages, dict) else {"_schema": messages}
            raise BadOptions(errors) from None
        self.check_options(options, players)
        return options

    def check_options(self, options: JSON, players: int) -> None:
        """Checks that depend on the player count; raise `BadOptions`."""

    # -- the rules -------------------------------------------------------

    @abstractmethod
    def start(self, players: int, options: JSON, rng: Rng) -> S:
        """The initial state; every random draw of the whole game is made here."""

    @abstractmethod
    def actors(self, state: S) -> frozenset[int]:
        """The seats that may act now: empty exactly when the game is over.

        `play` and `random_move` refuse every other seat, so this is the
        one place a game says whose turn it is.
        """

    @abstractmethod
    def legal_moves(self, state: S, seat: int) -> list[M]:
        """The legal moves of `seat` now, `Resign` left out (it is always legal).

        Empty for a seat that may not act. Where the set is not finite or
        not practical, the pieces moves are made of (see `lists_every_move`).
        """

    def random_move(self, state: S, seat: int, rng: Rng) -> M:
        """A random legal move of `seat` (never `Resign`): playouts use it.

        Refused like `play` refuses a move: after the end, or out of turn.
        """
        self._check_turn(state, seat)
        return self._random_move_in_turn(state, seat, rng)

    def play_random(self, state: S, seat: int, rng: Rng) -> tuple[M, S]:
        """`random_move` of `seat` and the state after `play` of it, in one call.

        Playouts (`referee.playout.steps`, the bots' searches) use it. This
        default is exactly those two calls; a game whose random move is
        cheaper to play while it is being drawn may say so, with the same
        draws from `rng`, the same move, the same state and the same refusals.
        """
        move = self.random_move(state, seat, rng)
        return move, self.play(state, seat, move)

    def random_playout(self, state: S, rng: Rng) -> Iterator[Played[S, M]]:
        """Random legal moves from `state` until the game ends, each with its
        seat and the state after it.

        First come the moves the referee records by itself (`forced_move`),
        then the seat to act (drawn from `rng` where more than one may) plays
        its `play_random`, and so on. `referee.playout.steps` plays it; a game
        may play its moves cheaper by keeping what it works out from one move
        to the next, with the same draws, moves and states.
        """
        forces_moves = self.forces_moves
        actors_of, play_random = self.actors, self.play_random
        while True:
            if forces_moves:
                state = yield from self.forced_moves(state)
            # No seat acts exactly when the game is over (the contract): asking
            # `result` instead would score the final position once more.
            actors = actors_of(state)
            if not actors:
                return
            if len(actors) == 1:
                (seat,) = actors
            else:
                seat = rng.choice(sorted(actors))
            move, state = play_random(state, seat, rng)
            yield _new_tuple(Played, (seat, move, state))

    def forced_moves(self, state: S) -> Generator[Played[S, M], None, S]:
        """The moves the referee records by itself from `state` on (`forced_move`
        after `forced_move`), each with its seat and the state after it; returns
        the state after the last. A live driver (the worker, a playout) appends
        them to the log right after every move; replay needs nothing special
        because they are logged."""
        while self.result(state) is None:
            forced = self.forced_move(state)
            if forced is None:
                break
            seat, move = forced
            state = self.play(state, seat, move)
            yield Played(seat, move, state)
        return state

    def play(self, state: S, seat: int, move: M) -> S:
        """The state after `seat` plays `move`; raises `IllegalMove`.

        What every game refuses alike is refused here, so that no game can
        differ: any move once the game is over (`game_over`), and a move
        other than `Resign` from a seat not in `actors` (`not_your_turn`).
        `Resign` then goes to `_resign`, any other move to `_play_in_turn`.
        """
        if isinstance(move, Resign):
            if not self.actors(state):
                raise game_over()
            return self._resign(state, seat)
        self._check_turn(state, seat)
        return self._play_in_turn(state, seat, move)

    def _check_turn(self, state: S, seat: int) -> None:
        """Refuse `seat` unless the game runs and `seat` is one of `actors`."""
        actors = self.actors(state)
        if not actors:
            raise game_over()
        if seat not in actors:
            raise self._out_of_turn_refusal(state, seat)

    def _out_of_turn_refusal(self, state: S, seat: int) -> IllegalMove:
        """Why `seat`, not in `actors`, may not move now; games may say more."""
        return not_your_turn()

    @abstractmethod
    def _random_move_in_turn(self, state: S, seat: int, rng: Rng) -> M:
        """`random_move` once the game runs and `seat` is one of `actors`."""

    @abstractmethod
    def _play_in_turn(self, state: S, seat: int, move: M) -> S:
        """`play` of a move other than `Resign`, once the game runs and `seat`
        is one of `actors`: the game's own rules; raises `IllegalMove`."""

    @abstractmethod
    def _resign(self, state: S, seat: int) -> S:
        """`play` of `Resign` by `seat` while the game runs.

        The seat may be any seat, so each game refuses a seat out of range
        or already resigned in its own words. A resigned seat is never in
        `actors` again, and when one seat is left the game ends.
        """

    def forced_move(self, state: S) -> tuple[int, M] | None:
        """A move the referee records by itself now, if the rules say so.

        Only where every seat can see that there is nothing to choose (Ice
        Palace's build with nothing to place): a move made at once, with
        no submission, tells everyone that its seat had no choice, so a
        move that only hidden information forces (a pass for want of a
        playable piece in a hidden hand) is asked of its seat like any
        other. Most games have none and skip players inside `actors`.
        """
        return None

    @property
    def forces_moves(self) -> bool:
        """Whether the game has forced moves at all (it overrides `forced_move`):
        drivers that play many moves skip asking `forced_move` where it never
        gives one."""
        return type(self).forced_move is not Game.forced_move

    def pass_move(self, state: S, seat: int) -> M | None:
        """The pass `seat` may play now; None where the rules have none or forbid it now.

        The `pass` timeout policy plays it for a seat out of time (and a
        random move where there is none): MaNiKi's pass on a card, Ice
        Palace's pass in a yard that has a lead.
        """
        return None

    @abstractmethod
    def view(self, state: S, seat: int | None) -> JSON:
        """The state as `seat` may see it (None: a spectator); JSON-safe."""

    @abstractmethod
    def result(self, state: S) -> Result | None:
        """None while the game runs; the final result once it is over."""

    @abstractmethod
    def breakdown(self, start: S, played: Sequence[Played[S, M]]) -> Breakdown:
        """Each seat's final score as the rules count it, for the page of a finished game.

        `start` is the state before the first move and `played` the whole
        log, each move with the state after it: some counts depend on when
        they were made (Mandala's ties, Mandala Stones' scorings). The lines
        of a seat sum to exactly its score in `result`, and say only what
        every seat may see at the end.
        """

    def scores(self, state: S) -> tuple[int, ...]:
        """Each seat's score now, which every seat may see: pages show it by
        the players' names and the round-over mail lists it.

        Games that keep no score while they run need not say: this default
        gives the result's scores once the game is over and none before.
        """
        result = self.result(state)
        return () if result is None else result.scores

    @abstractmethod
    def resigned(self, state: S) -> frozenset[int]:
        """The seats that have resigned (the pages mark them)."""

    def rounds_decided(self, state: S) -> int:
        """How many rounds of the game are over in `state`; 0 in games without rounds.

        It never falls as moves are played, so a rise tells the referee that
        a move (or a move it recorded by itself) ended a round: MaNiKi
        counts the cards decided, won or not, Ice Palace the builds done.
        """
        return 0

    def round_summary(self, state: S) -> RoundSummary:
        """How the latest round decided in `state` went, for the round-over mail.

        Only what every seat may see. Empty by default: games without
        rounds send no such mail, and a game whose rounds only change the
        scores has nothing to add to them.
        """
        return RoundSummary()

    def decision_key(self, state: S, seat: int) -> Any:
        """What `seat` is answering in `state`, as a value compared with `==`.

        A move made while seeing one state and decided in another is judged
        only if the key is the same in both (`referee.service.deciding.judge`,
        docs/design.md "Stale moves"). By default the seat's whole view:
        any change it could see makes its move stale. Games where others'
        moves leave the question standing say less (MaNiKi: the card).
        """
        return self.view(state, seat)

    def answer_note(self, before: S, after: S, seat: int) -> str | None:
        """What the answer to `seat`'s accepted move should say beyond "accepted".

        `before` and `after` are the states around the move. Only what
        `seat` may see: a MaNiKi sequence that missed the card put its
        seat out of the card, which "accepted" alone would hide.
        """
        return None

    def hidden_tail(self, state: S) -> int:
        """How many of the latest logged moves must be shown as `sealed` now.

        Only simultaneous secret submissions (MaNiKi's sealed mode) hide
        moves, and only until their round is decided.
        """
        return 0

    # -- building a move on the board -----------------------------------

    @abstractmethod
    def build(self, state: S, seat: int, steps: Sequence[str]) -> Building[M]:
        """The move `seat` builds by taking `steps` in order, each one of the
        choices the steps before it offered; raises `IllegalMove` (`bad_step`
        for a step not offered, the turn's refusals for a seat that may not
        act). With no steps: the first choices. Every legal move can be built
        (contract tests walk the choices), and every move built is legal.
        """

    # -- notation and JSON ------------------------------------------------

    @abstractmethod
    def parse(self, text: str, options: JSON | None = None) -> M:
        """A move from its notation, forgiving of case and spacing.

        `options` are the game's options, for notations that depend on them
        (MaNiKi's `crazy_circus` names); records hold canonical notation and
        are parsed without. Raises `IllegalMove("bad_notation", ...)` saying
        what was expected.
        """

    @abstractmethod
    def notate(self, move: M) -> str:
        """The canonical notation; `parse(notate(m)) == m`."""

    def written(self, move: M, options: JSON) -> str:
        """The move as the players of a game with `options` write it, so that
        `parse(written(m, options), options) == m`: the canonical notation,
        unless the options name things otherwise (MaNiKi's `crazy_circus`).
        """
        return self.notate(move)

    @abstractmethod
    def move_to_json(self, move: M) -> JSON: ...

    @abstractmethod
    def move_from_json(self, data: Any) -> M:
        """Raises `IllegalMove("bad_move", ...)` for a malformed object."""

    @abstractmethod
    def state_to_json(self, state: S) -> JSON:
        """The whole state, secrets included: for snapshots, never for clients."""

    @abstractmethod
    def state_from_json(self, data: JSON) -> S: ...
