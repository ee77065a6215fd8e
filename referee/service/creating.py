"""Creating a game: its rules and options checked, a secret seed, seats with their tokens.

A seat without a mail address gets a random token, and this is its only
copy. A seat with one gets a token derived from the server secret
(`keys.seat_link_token`), so that its personal link can be mailed once the
address may be written to. `trusted` games (made with the API key) mail
their seats without waiting for them to accept.

A seat may be a bot's (`Player.bot`, one of `referee.bots.levels(game)`):
it has no address, is never invited or mailed, and its token is never
handed out. A game needs one person at least, unless it is made with the
API key: bots playing each other on anyone's request would be free work
for the server. The game keeps the think budget of its bots
(`REFEREE_BOT_SECONDS` now), so that a bot's move can be worked out again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee import bots, games
from referee.engine import JSON, BadOptions
from referee.games import AnyGame
from referee.i18n import _, known_language
from referee.replay import new_state
from referee.rng import commitment, new_seed
from referee.service import notifying, reachability, refusals
from referee.service.bot_pace import current_pace
from referee.service.deciding import with_forced_moves
from referee.service.publishing import Published, publish
from referee.service.turn_clock import parse_deadline
from referee.store import addresses
from referee.store.appending import Appended, Logged, log_entries, outbox_row
from referee.store.clock import now
from referee.store.creation import insert_game, new_id
from referee.store.keys import hash_token, new_token, seat_link_token
from referee.store.tables import Game, GameStatus, OutboxKind, Seat, TimeoutPolicy

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Player:
    name: str
    # The address the referee mails this seat at (after it accepts), or None.
    email: str | None = None
    # The level of the bot that plays this seat (`referee.bots.levels`), or None: a person.
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class NewGame:
    """A game to create: which, who plays, its options and its clock."""

    game: str
    players: Sequence[Player]
    options: JSON
    # A duration such as `72h` (`parse_deadline`), or None for no time limit.
    deadline: str | None = None
    on_timeout: str = TimeoutPolicy.RANDOM
    # Made with the server's API key: its seats are mailed without asking them first.
    trusted: bool = False
    # An earlier version of the game's rules that it keeps (None: the current one).
    rules_version: str | None = None
    # The new game's id where the caller chose it beforehand (a rematch claims it first).
    game_id: str | None = None
    # Every seat's token derived from the server's secret (not only those with
    # an address), so that the referee can hand it out later: a rematch gives
    # each seat of the old game its seat in the new one.
    derived_tokens: bool = False
    # The seed, where the caller drew it beforehand (an open game orders its seats
    # from it); None: a fresh one.
    seed: str | None = None
    # The language mail speaks to a seat whose address is no player's with a language
    # of its own (`referee.i18n.LANGUAGES`; None: English).
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Created:
    game: Game
    # Each seat's secret token, in seat order.
    tokens: tuple[str, ...]
    # Each seat's address's consent to the referee's mail as the game found it
    # (`AddressState`: accepted, invited, stopped), None for a seat without one.
    consent: tuple[str | None, ...] = ()


def rules_named(name: str, rules_version: str | None = None) -> AnyGame:
    """The rules of the game called `name`; refused when no game is called so."""
    try:
        return games.get(name, rules_version)
    except KeyError as error:
        raise refusals.UnknownGame(str(error.args[0])) from None


def checked_options(rules: AnyGame, options: JSON | None, players: int) -> JSON:
    """The options, validated for `players` seats with defaults filled in; refused otherwise."""
    try:
        return rules.load_options(options, players)
    except BadOptions as error:
        if "_players" in error.errors:
            reason = " ".join(error.errors["_players"])
            raise refusals.BadPlayers(reason, errors=error.errors) from None
        raise refusals.BadOptions(_("the options are not valid"), errors=error.errors) from None


def deadline_seconds(text: str | None) -> int | None:
    """The turn's time in seconds; refused for what is not a duration the referee keeps."""
    try:
        return None if text is None else parse_deadline(text)
    except ValueError as error:
        raise refusals.BadRequest(str(error), errors={"deadline": [str(error)]}) from None


def check_bots(rules: AnyGame, players: Sequence[Player], trusted: bool) -> None:
    """Refuse a bot level the game does not offer, a bot with an address, and a game
    of bots alone made without the API key."""
    offered = bots.levels(rules.name)
    errors: dict[str, list[str]] = {}
    for number, player in enumerate(players):
        if player.bot is None:
            continue
        if player.bot not in offered:
            known = ", ".join(offered) if offered else _("none yet")
            errors[f"players.{number}.bot"] = [
                _("{level} is not a bot level of {game} (its levels: {known})").format(
                    level=repr(player.bot), game=_(rules.title), known=known
                )
            ]
        elif player.email:
            errors[f"players.{number}.email"] = [_("a bot's seat has no mail address")]
    if errors:
        reason = " ".join(message for messages in errors.values() for message in messages)
        raise refusals.BadPlayers(reason, errors=errors)
    if players and all(player.bot for player in players) and not trusted:
        # Who asks, not what is asked: refused as a missing credential.
        raise refusals.Unauthorized(
            _(
                "a game needs one person at least: games of bots alone need the server's "
                "API key (X-API-Key)"
            )
        )


def create_game(referee: Referee, command: NewGame) -> Created:
    """Create a game, with a fresh secret seed; returns it with its seats' tokens."""
    rules = rules_named(command.game, command.rules_version)
    check_bots(rules, command.players, command.trusted)
    options = checked_options(rules, command.options, len(command.players))
    seconds = deadline_seconds(command.deadline)
    derived = command.derived_tokens or any(player.email for player in command.players)
    secret = referee.secret() if derived else None
    # Measured once per process, before any lock is taken (a fraction of a second).
    pace = current_pace(referee.settings) if any(p.bot for p in command.players) else None
    with referee.db.transaction() as session:
        game = _game_row(rules, options, seconds, command)
        game.bot_seconds = referee.settings.bot_seconds
        game.bot_pace = pace
        state, appended, rounds_before = _first_entries(game, rules, len(command.players))
        for name, value in appended.game.items():
            setattr(game, name, value)
        seats, tokens = _seats(session, game.id, command, secret)
        consent = tuple(_consent(session, player.email) for player in command.players)
        insert_game(session, game, seats, appended)
        # An invitation for each seat, then the news of the moves logged at the start.
        notices = [
            outbox_row(
                game.id,
                OutboxKind.INVITATION,
                number,
                {"name": p.name, "email": p.email},
                game.created_at,
            )
            for number, p in enumerate(command.players)
            if not p.bot
        ]
        reach = reachability.reach(session, game.id)
        notices += notifying.after_moves(
            game.id,
            game.seed,
            rules,
            state,
            appended,
            rounds_before=rounds_before,
            reach=reach,
            stamp=game.created_at,
        )
        notifying.write(session.connection(), None, notices)
    # Announced as a change, so that its players' streams (`GET /v1/me/events`) hear of it;
    # and a bot's turn, when a bot plays first. Delivery is woken only when a seat can
    # be told anything: notices are delivered to the seats some channel reaches.
    news = bool(reach.reachable)
    publish(referee, Published(changed=[game.id], news=news, bots=_bots_first(game, command)))
    return Created(game, tuple(tokens), consent)


def _consent(session: Any, email: str | None) -> str | None:
    known = addresses.find(session, email) if email else None
    return None if known is None else str(known.state)


def _seats(
    session: Any, game_id: str, command: NewGame, secret: bytes | None
) -> tuple[list[Seat], list[str]]:
    """The game's seats, and each one's token (derived from the secret where it is mailed,
    or handed on later; a bot's never)."""
    seats, tokens = [], []
    for number, player in enumerate(command.players):
        token = new_token()
        if (player.email or command.derived_tokens) and secret is not None and not player.bot:
            token = seat_link_token(secret, game_id, number)
        if player.email and secret is not None:
            addresses.ensure(session, secret, player.email)
        tokens.append(token)
        seats.append(
            Seat(
                game_id=game_id,
                seat=number,
                name=player.name,
                email=player.email,
                token_hash=hash_token(token),
                bot=player.bot,
            )
        )
    return seats, tokens


def _bots_first(game: Game, command: NewGame) -> list[tuple[str, int]]:
    """The bots' turn to publish when a bot's seat acts first."""
    bot_seats = frozenset(n for n, player in enumerate(command.players) if player.bot)
    if game.status != GameStatus.ACTIVE or bot_seats.isdisjoint(game.to_act):
        return []
    return [(game.id, game.version)]


def _game_row(rules: AnyGame, options: JSON, seconds: int | None, command: NewGame) -> Game:
    seed = command.seed or new_seed()
    stamp = now()
    return Game(
        id=command.game_id or new_id(),
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
        # The deadline and what happens when it runs out are service options,
        # not the rules': they are kept on the game row, out of `options`.
        deadline_seconds=seconds,
        on_timeout=None if seconds is None else TimeoutPolicy(command.on_timeout),
        trusted=command.trusted,
        language=known_language(command.language),
    )


def _first_entries(game: Game, rules: AnyGame, players: int) -> tuple[Any, Appended, int]:
    """The state after the moves the referee records by itself at the start, their log
    entries, and the rounds decided before them."""
    state = new_state(rules, game.seed, players, game.options)
    rounds_before = rules.rounds_decided(state)
    logged: list[Logged] = []
    state = with_forced_moves(rules, state, logged)
    return state, log_entries(game, rules, state, logged, game.created_at), rounds_before
