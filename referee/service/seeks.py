"""Open games (seeks): a player posts the game it wants, strangers join, it starts when full.

A seek names a game, its player counts (`min` to `max`), its options and
clock, whether it is rated, and optionally a bot level and invited
players. Its creator takes the first seat. Each join is counted under the
seek's row lock, so two players asking for the last seat at once get one
seat between them: the one whose join fills it claims the new game's id
and seed in the same transaction, and the game is made once that
transaction is committed (a failure puts the seek back as it was).

The new game's seats are in an order drawn from its own seed (`Rng` of
`<seed>:seats`), so that anyone can check, once the seed is revealed, that
the order was fixed with the game. Its players proved their addresses by
signing in and asked to play, so the game mails them as one made with the
API key would (`trusted`).

With `bots: LEVEL` the creator may start before the game is full: bots of
that level hold the empty seats, and the seek stays listed while one does
(`bot_seats_open`); a player who joins then takes a bot's seat over.
A game started so is not rated (`Seek.rated` turns false).

Its players are told (`referee.service.seek_telling`): invited players when a
private seek is posted, those seated when it starts, is withdrawn or expires.

Strangers see one another by public name only: a seek shows names, never
addresses, and a player needs a name to post or join. Beside each name, the
player's rating at the seek's game (`referee.ratings.shown`; None while it has
played no rated game of it). A seek may ask that joining players' ratings lie
within `rating_min` to `rating_max` (either bound optional): a player unrated
at the game counts as a newcomer's rating (`START`, 1500). Its creator is not
checked. Two players of whom
one blocked the other see none of each other's seeks and cannot join them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlmodel import Session

from referee.engine import JSON
from referee.i18n import _
from referee.names import public_key
from referee.ratings import START, Shown, Skill, shown
from referee.rng import Rng, new_seed
from referee.service import handovers, refusals, seek_telling
from referee.service.creating import (
    NewGame,
    Player,
    check_bots,
    checked_options,
    create_game,
    deadline_seconds,
    rules_named,
)
from referee.service.players import Player as SignedIn
from referee.service.publishing import Published, publish
from referee.store import player_rows, rating_rows, seek_rows
from referee.store.clock import stamp
from referee.store.creation import new_id
from referee.store.seek_told import SeekNews
from referee.store.tables import Seek, SeekStatus, TimeoutPolicy

if TYPE_CHECKING:
    from referee.service import Referee

# What a bot holding a seat is called: the pages show `Open seat 2 (bot, greedy)`.
BOT_SEAT_NAME = "Open seat {number}"
# The most players a private seek invites.
MOST_INVITED = 5
LIST_MOST = 100
# The ratings a seek's range may name (as shown: a newcomer reads 1500).
RATING_LOWEST, RATING_HIGHEST = 0, 4000


@dataclass(frozen=True, slots=True)
class NewSeek:
    """An open game to post: which game, how many players, its options and clock."""

    game: str
    min_players: int | None = None
    max_players: int | None = None
    options: JSON | None = None
    deadline: str | None = None
    on_timeout: str = TimeoutPolicy.RANDOM
    rated: bool = True
    bots: str | None = None
    # Public names of the only players who may join (a private seek), or none.
    invite: tuple[str, ...] = ()
    # The ratings (as shown) a joining player's must lie within (None: no bound).
    rating_min: int | None = None
    rating_max: int | None = None


@dataclass(frozen=True, slots=True)
class SeekShown:
    """An open game as anyone may see it: names, never addresses."""

    id: str
    game: str
    min_players: int
    max_players: int
    options: JSON
    deadline_seconds: int | None
    on_timeout: str | None
    rated: bool
    bots: str | None
    by: str
    seated: tuple[str, ...]
    status: str
    private: bool
    created_at: str
    expires_at: str
    game_id: str | None
    # Seats of the started game that bots hold and a joining player may take.
    bot_seats_open: int
    # The invited players' names: shown to the creator only (empty for others).
    invited: tuple[str, ...]
    # Whether the player asking sits at it, and whether it posted it.
    mine: bool
    by_me: bool
    # The ratings at its game of its creator and of those seated (None: not rated yet).
    by_rating: Shown | None = None
    seated_ratings: tuple[Shown | None, ...] = ()
    # The ratings a joining player's must lie within (None: no bound).
    rating_min: int | None = None
    rating_max: int | None = None

    @property
    def open_seats(self) -> int:
        """Seats a player may still join: empty ones, or once started those bots hold."""
        if self.status == SeekStatus.OPEN:
            return self.max_players - len(self.seated)
        return self.bot_seats_open


@dataclass(frozen=True, slots=True)
class SeekPage:
    seeks: tuple[SeekShown, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class SeekTerms:
    """A seek's game, player counts, options and clock, checked against the game's rules."""

    game: str
    min_players: int
    max_players: int
    options: JSON
    deadline_seconds: int | None


def checked_terms(new: NewSeek) -> SeekTerms:
    """The terms of `new` as the rules read them; refused (unknown game, bad players,
    options or deadline) as posting it would be. Its bots and invitations are not read."""
    rules = rules_named(new.game)
    low, high = _counts(rules.players, new.min_players, new.max_players)
    options = {} if new.options is None else dict(new.options)
    for count in range(low, high + 1):
        checked_options(rules, options, count)
    return SeekTerms(rules.name, low, high, options, deadline_seconds(new.deadline))


def post_seek(referee: Referee, player: SignedIn, new: NewSeek) -> SeekShown:
    """Post an open game, its creator in the first seat."""
    terms = checked_terms(new)
    if new.bots is not None:
        check_bots(rules_named(terms.game), [Player("bot", bot=new.bots)], trusted=True)
    _check_range(new.rating_min, new.rating_max)
    if len(new.invite) > MOST_INVITED:
        reason = _("a private open game invites {most} players at most").format(most=MOST_INVITED)
        raise refusals.BadRequest(reason, errors={"invite": [reason]})
    moment = datetime.now(UTC)
    with referee.db.transaction() as session:
        name_of(session, player.address)
        invited = _invited(session, player.address, new.invite)
        if seek_rows.open_by(session, player.address) >= referee.settings.seeks_per_player:
            raise refusals.TooManySeeks(
                _(
                    "you hold {most} open games already, as many as one may: withdraw one, "
                    "or wait until one starts"
                ).format(most=referee.settings.seeks_per_player)
            )
        seek = open_seek(session, referee, player.address, terms, moment, new, invited)
        mailed = seek_telling.tell(session, seek, SeekNews.INVITED, invited, seek.created_at)
        shown = _shown(session, seek, player.address)
    if invited:
        seek_telling.published(referee, [seek.id], mailed)
    return shown


def open_seek(
    session: Session,
    referee: Referee,
    address: str,
    terms: SeekTerms,
    moment: datetime,
    new: NewSeek | None = None,
    invited: Sequence[str] = (),
    standing_id: int | None = None,
) -> Seek:
    """Write a seek on checked terms, its creator seated (the checks of who may post
    it are the caller's); `new` gives its timeout policy, rating and bots (none: the
    defaults), `standing_id` the standing seek that posts it."""
    new = new or NewSeek(terms.game)
    seconds = terms.deadline_seconds
    seek = Seek(
        id=new_id(),
        game=terms.game,
        min_players=terms.min_players,
        max_players=terms.max_players,
        options=dict(terms.options),
        deadline_seconds=seconds,
        on_timeout=None if seconds is None else TimeoutPolicy(new.on_timeout),
        rated=new.rated,
        bots=new.bots,
        by_address=address,
        private=bool(invited),
        status=SeekStatus.OPEN,
        created_at=stamp(moment),
        expires_at=stamp(moment + timedelta(days=referee.settings.seek_days)),
        standing_id=standing_id,
        rating_min=new.rating_min,
        rating_max=new.rating_max,
    )
    seek_rows.insert(session, seek, invited)
    seek_rows.seat(session, seek.id, address, seek.created_at)
    return seek


def list_seeks(
    referee: Referee,
    viewer: str | None,
    game: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> SeekPage:
    """Public seeks one may join, newest first, but for those of players who are
    blocked by, or block, `viewer`. Pass `next_cursor` back as `cursor`."""
    if game is not None:
        game = rules_named(game).name
    with referee.db.reading() as session:
        hidden = player_rows.apart(session, viewer) if viewer else set()
        found = seek_rows.public(session, game, cursor, min(limit, LIST_MOST), hidden)
        shown = tuple(_shown_many(session, found, viewer))
    more = len(found) == min(limit, LIST_MOST)
    return SeekPage(shown, found[-1].created_at if more and found else None)


def my_seeks(referee: Referee, player: SignedIn) -> tuple[SeekShown, ...]:
    """The player's seeks still listed: posted, joined, or invited to."""
    with referee.db.reading() as session:
        found = seek_rows.of_player(session, player.address)
        return tuple(_shown_many(session, found, player.address))


def get_seek(referee: Referee, seek_id: str, viewer: str | None) -> SeekShown:
    """One seek, for anyone who may see it: a private one only for those it invites or
    seats, and none of a player one blocks or is blocked by."""
    with referee.db.reading() as session:
        seek = session.get(Seek, seek_id) if len(seek_id) <= 32 else None
        if seek is None or not _visible(session, seek, viewer):
            raise refusals.NotFound(_("there is no open game with this id"))
        return _shown(session, seek, viewer)


def join_seek(referee: Referee, player: SignedIn, seek_id: str) -> SeekShown:
    """Take a seat at an open game; the join that fills it starts the game. Once started
    with bots, a join takes over one of the bots' seats (`referee.service.handovers`)."""
    # Read before the transaction: the first time, it may be read from the database.
    secret = referee.secret()
    starting, taken = None, None
    with referee.db.transaction() as session:
        name_of(session, player.address)
        seek = _locked(session, seek_id, player.address)
        seated = seek_rows.seated(session, seek.id)
        if player.address in seated:
            raise refusals.AlreadyJoined(_("you sit at this open game already"))
        if seek.private and player.address not in seek_rows.invited(session, seek.id):
            raise refusals.NotInvited(_("this open game is private: only its invited players join"))
        if not player_rows.apart(session, player.address).isdisjoint([seek.by_address, *seated]):
            raise refusals.Blocked(_("you cannot join this open game"))
        _check_rating(session, seek, player.address)
        if seek.status == SeekStatus.STARTED and seek.bot_seats_open > 0:
            taken = handovers.take_over(session, secret, seek, player.address, _now())
            seek.bot_seats_open -= 1
            session.add(seek)
        else:
            _check_open(seek, datetime.now(UTC))
            if len(seated) >= seek.max_players:
                raise refusals.SeekFull(_("this open game is full"))
            if len(seated) + 1 == seek.max_players:
                starting = _claim_start(seek)
        seek_rows.seat(session, seek.id, player.address, _now())
        shown = _shown(session, seek, player.address)
    if starting is not None:
        return _start(referee, seek, starting, player.address)
    if taken is not None:
        # Its seat's name changed, and it is told once the seat is its own.
        publish(referee, Published(changed=[taken.game_id], news=taken.at_once))
    return shown


def leave_seek(referee: Referee, player: SignedIn, seek_id: str) -> SeekShown:
    """Give up one's seat at an open game that has not started."""
    with referee.db.transaction() as session:
        seek = _locked(session, seek_id, player.address)
        if seek.by_address == player.address:
            raise refusals.CreatorStays(
                _("you posted this open game: withdraw it instead of leaving it")
            )
        if player.address not in seek_rows.seated(session, seek.id):
            raise refusals.NotJoined(_("you do not sit at this open game"))
        _check_open(seek, datetime.now(UTC))
        seek_rows.unseat(session, seek.id, player.address)
        return _shown(session, seek, player.address)


def withdraw_seek(referee: Referee, player: SignedIn, seek_id: str) -> SeekShown:
    """The creator takes its open game back (those seated are told); one started with bots
    stops taking players."""
    told = None
    with referee.db.transaction() as session:
        seek = _locked(session, seek_id, player.address)
        if seek.by_address != player.address:
            raise refusals.NotYourSeek(_("only the player who posted an open game withdraws it"))
        if seek.status == SeekStatus.STARTED and seek.bot_seats_open > 0:
            seek.bot_seats_open = 0
        else:
            _check_open(seek, datetime.now(UTC))
            seek.status = SeekStatus.WITHDRAWN
            seek.ended_at = at = _now()
            others = seek_telling.seated_but_creator(session, seek)
            told = seek_telling.tell(session, seek, SeekNews.WITHDRAWN, others, at)
        session.add(seek)
        session.flush()
        shown = _shown(session, seek, player.address)
    if told is not None:
        seek_telling.published(referee, [seek.id], told)
    return shown


def start_seek(referee: Referee, player: SignedIn, seek_id: str) -> SeekShown:
    """The creator starts its open game with those seated (at least `min`), or at once
    with bots in the empty seats where the seek names a bot level."""
    with referee.db.transaction() as session:
        seek = _locked(session, seek_id, player.address)
        if seek.by_address != player.address:
            raise refusals.NotYourSeek(_("only the player who posted an open game starts it"))
        _check_open(seek, datetime.now(UTC))
        seated = len(seek_rows.seated(session, seek.id))
        if seek.bots is None and seated < seek.min_players:
            raise refusals.TooFewSeated(
                _("{seated} seated: this open game starts with {least} at least").format(
                    seated=seated, least=seek.min_players
                )
            )
        starting = _claim_start(seek)
    return _start(referee, seek, starting, player.address)


def expire_seeks(referee: Referee, moment: datetime, most: int = 200) -> list[str]:
    """Mark the open seeks whose `REFEREE_SEEK_DAYS` ran out as expired, and tell those
    seated at each; their ids."""
    expired = []
    mailed = 0
    with referee.db.transaction() as session:
        for seek_id in seek_rows.due_to_expire(session, stamp(moment), most):
            seek = seek_rows.locked(session, seek_id)
            if seek is None or seek.status != SeekStatus.OPEN:
                continue
            seek.status = SeekStatus.EXPIRED
            seek.ended_at = at = stamp(moment)
            session.add(seek)
            seated = seek_rows.seated(session, seek.id)
            mailed += seek_telling.tell(session, seek, SeekNews.EXPIRED, seated, at)
            expired.append(seek_id)
        session.flush()
    if expired:
        seek_telling.published(referee, expired, mailed)
    return expired


@dataclass(frozen=True, slots=True)
class _Starting:
    game_id: str
    seed: str


def _claim_start(seek: Seek) -> _Starting:
    """Mark the seek started under its lock, naming the game it starts."""
    starting = _Starting(new_id(), new_seed())
    seek.status = SeekStatus.STARTED
    seek.game_id = starting.game_id
    seek.ended_at = _now()
    return starting


def _start(referee: Referee, seek: Seek, starting: _Starting, viewer: str) -> SeekShown:
    """Make the game a seek claimed; on failure the seek is open again as it was."""
    with referee.db.reading() as session:
        seated = seek_rows.seated(session, seek.id)
        names = player_rows.names_of(session, seated)
    people = [Player(names[address], email=address) for address in seated]
    empty = seek.max_players - len(people) if seek.bots is not None else 0
    bots = [Player("", bot=seek.bots)] * empty
    # A bot's seat is named by its place at the table, known once the order is drawn.
    players = [
        Player(BOT_SEAT_NAME.format(number=number), bot=player.bot) if player.bot else player
        for number, player in enumerate(Rng(f"{starting.seed}:seats").shuffled([*people, *bots]), 1)
    ]
    deadline = None if seek.deadline_seconds is None else f"{seek.deadline_seconds}s"
    command = NewGame(
        game=seek.game,
        players=players,
        options=seek.options,
        deadline=deadline,
        on_timeout=seek.on_timeout or TimeoutPolicy.RANDOM,
        trusted=True,
        game_id=starting.game_id,
        seed=starting.seed,
    )
    try:
        create_game(referee, command)
    except BaseException:
        with referee.db.transaction() as session:
            found = seek_rows.locked(session, seek.id)
            if found is not None and found.game_id == starting.game_id:
                found.status, found.game_id, found.ended_at = SeekStatus.OPEN, None, None
                session.add(found)
        raise
    with referee.db.transaction() as session:
        found = seek_rows.locked(session, seek.id)
        assert found is not None
        found.bot_seats_open = len(bots)
        found.rated = found.rated and not bots
        session.add(found)
        session.flush()
        return _shown(session, found, viewer)


def _counts(allowed: Sequence[int], low: int | None, high: int | None) -> tuple[int, int]:
    """The seek's player counts: `min` to `max`, each a count the game is played by."""
    low = min(allowed) if low is None and high is None else low
    low, high = (high, high) if low is None else (low, low if high is None else high)
    assert low is not None and high is not None
    counts = ", ".join(str(n) for n in allowed)
    if low > high or any(count not in allowed for count in range(low, high + 1)):
        reason = _("players from {low} to {high}: the game is played by {counts} players").format(
            low=low, high=high, counts=counts
        )
        raise refusals.BadPlayers(reason, errors={"players": [reason]})
    return low, high


def name_of(session: Session, address: str) -> str:
    """The player's public name; refused (`needs_name`) when it has none."""
    name = player_rows.public_name(session, address)
    if name is None:
        raise refusals.NeedsName(
            _(
                "choose a public name first (on /me, or PUT /v1/me/profile): it is what "
                "other players see of you"
            )
        )
    return name


def _invited(session: Session, creator: str, names: Sequence[str]) -> list[str]:
    """The addresses of the invited players' names; refused for unknown names, the
    creator itself, and players who blocked the creator."""
    found = []
    blocking = player_rows.apart(session, creator)
    for name in names:
        address = player_rows.address_named(session, public_key(name))
        if address is None or address == creator:
            reason = _("no other player is called {name}").format(name=repr(name))
            raise refusals.BadRequest(reason, errors={"invite": [reason]})
        if address in blocking:
            raise refusals.Blocked(_("you cannot invite {name}").format(name=repr(name)))
        if address not in found:
            found.append(address)
    return found


def _check_range(low: int | None, high: int | None) -> None:
    for bound in (low, high):
        if bound is not None and not RATING_LOWEST <= bound <= RATING_HIGHEST:
            reason = _("a rating bound is a number from {low} to {high}").format(
                low=RATING_LOWEST, high=RATING_HIGHEST
            )
            raise refusals.BadRequest(reason, errors={"rating": [reason]})
    if low is not None and high is not None and low > high:
        reason = _("a rating range from {low} to {high} holds no rating").format(low=low, high=high)
        raise refusals.BadRequest(reason, errors={"rating": [reason]})


def rating_at(session: Session, address: str, game: str) -> Shown:
    """The player's rating at `game` as shown; a newcomer's where it has none yet."""
    found = rating_rows.of_players(session, [address], game).get(address)
    return shown(START if found is None else Skill(found.mu, found.sigma))


def _check_rating(session: Session, seek: Seek, address: str) -> None:
    """Refuse a joining player whose rating lies outside the seek's range."""
    if seek.rating_min is None and seek.rating_max is None:
        return
    rating = rating_at(session, address, seek.game).rating
    low = -math.inf if seek.rating_min is None else seek.rating_min
    high = math.inf if seek.rating_max is None else seek.rating_max
    if not low <= rating <= high:
        wanted = (
            _("from {low} to {high}")
            if seek.rating_min is not None and seek.rating_max is not None
            else _("of {low} at least")
            if seek.rating_min is not None
            else _("of {high} at most")
        ).format(low=seek.rating_min, high=seek.rating_max)
        raise refusals.RatingOutOfRange(
            _("this open game asks for a rating {wanted}: yours at this game is {rating}").format(
                wanted=wanted, rating=rating
            )
        )


def _locked(session: Session, seek_id: str, viewer: str) -> Seek:
    """The seek to act on, locked. A private seek is acted on by id like any other (a
    stranger who joins it is told it is private, `not_invited`); one of a player the
    viewer blocks or is blocked by is not found, as it is not seen."""
    seek = seek_rows.locked(session, seek_id) if len(seek_id) <= 32 else None
    if seek is None or not _visible(session, seek, viewer, private_too=True):
        raise refusals.NotFound(_("there is no open game with this id"))
    return seek


def _check_open(seek: Seek, moment: datetime) -> None:
    """Refuse what only an open seek allows, naming why this one is not."""
    if seek.status == SeekStatus.WITHDRAWN:
        raise refusals.SeekWithdrawn(_("this open game was withdrawn by the player who posted it"))
    if seek.status == SeekStatus.EXPIRED or (
        seek.status == SeekStatus.OPEN and seek.expires_at <= stamp(moment)
    ):
        raise refusals.SeekExpired(_("this open game expired before enough players joined"))
    if seek.status == SeekStatus.STARTED and seek.bots is not None:
        raise refusals.SeekStarted(
            _("this open game has started, and no seat a bot holds is left to take")
        )
    if seek.status == SeekStatus.STARTED:
        raise refusals.SeekStarted(_("this open game has started"))


def _visible(
    session: Session, seek: Seek, viewer: str | None, *, private_too: bool = False
) -> bool:
    """Whether `viewer` (None: anyone) may see the seek at all; with `private_too`, a
    private seek is seen as a public one would be."""
    if viewer is None:
        return private_too or not seek.private
    if viewer == seek.by_address:
        return True
    seated = seek_rows.seated(session, seek.id)
    if viewer in seated:
        return True
    if seek.private and not private_too and viewer not in seek_rows.invited(session, seek.id):
        return False
    return seek.by_address not in player_rows.apart(session, viewer)


def _shown(session: Session, seek: Seek, viewer: str | None) -> SeekShown:
    return _shown_many(session, [seek], viewer)[0]


def _shown_many(session: Session, seeks: Sequence[Seek], viewer: str | None) -> list[SeekShown]:
    seated = seek_rows.seated_at(session, [seek.id for seek in seeks])
    everyone = {address for addresses in seated.values() for address in addresses}
    everyone |= {seek.by_address for seek in seeks}
    invited = {
        seek.id: seek_rows.invited(session, seek.id)
        for seek in seeks
        if seek.private and seek.by_address == viewer
    }
    for addresses in invited.values():
        everyone |= set(addresses)
    names = player_rows.names_of(session, everyone)
    ratings = _ratings(session, seeks, everyone)
    return [
        SeekShown(
            id=seek.id,
            game=seek.game,
            min_players=seek.min_players,
            max_players=seek.max_players,
            options=seek.options,
            deadline_seconds=seek.deadline_seconds,
            on_timeout=seek.on_timeout,
            rated=seek.rated,
            bots=seek.bots,
            by=names.get(seek.by_address, ""),
            seated=tuple(names.get(address, "") for address in seated[seek.id]),
            status=seek.status,
            private=seek.private,
            created_at=seek.created_at,
            expires_at=seek.expires_at,
            game_id=seek.game_id,
            bot_seats_open=seek.bot_seats_open,
            invited=tuple(names.get(address, "") for address in invited.get(seek.id, ())),
            mine=viewer is not None and viewer in seated[seek.id],
            by_me=viewer is not None and viewer == seek.by_address,
            by_rating=ratings.get((seek.by_address, seek.game)),
            seated_ratings=tuple(ratings.get((address, seek.game)) for address in seated[seek.id]),
            rating_min=seek.rating_min,
            rating_max=seek.rating_max,
        )
        for seek in seeks
    ]


def _ratings(
    session: Session, seeks: Sequence[Seek], everyone: set[str]
) -> dict[tuple[str, str], Shown]:
    """The shown ratings of `everyone` at the seeks' games, by address and game."""
    ratings = {}
    for game in {seek.game for seek in seeks}:
        for address, rating in rating_rows.of_players(session, everyone, game).items():
            ratings[(address, game)] = shown(Skill(rating.mu, rating.sigma))
    return ratings


def _now() -> str:
    return stamp(datetime.now(UTC))
