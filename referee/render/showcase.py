"""What the lobby shows of each game: a line on what it is like, how long it
usually lasts, and a picture of a real position.

The picture is a game of a fixed seed played a few random legal moves in
(`playout.steps`, seeded), drawn from a spectator's view by the game's own
picture: the same bytes every time, and never a position the rules could not
reach.

How long a game lasts is a count of moves, measured: the median of 8 games
played by `greedy` bots in every seat, at the fewest and the most players
(`bench/game_lengths.py` measures it again), rounded to 5 past 20. People play other moves than
bots do, so the lobby says "about".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import islice

from referee import games
from referee.i18n import N_, _, language
from referee.playout import steps
from referee.render import render_svg
from referee.rng import Rng


@dataclass(frozen=True, slots=True)
class Showcase:
    """A game as the lobby sells it (`line` in English: shown through `_`)."""

    line: str
    # Moves a game usually lasts, by number of players (the fewest and the most).
    moves: dict[int, int]
    # How far into a game its picture is.
    shown_after: int


SHOWCASES: dict[str, Showcase] = {
    "subdivision": Showcase(
        N_(
            "Build pyramids on a shared grid: a large one loses worth when small ones crowd "
            "it, and scattered buildings cost points."
        ),
        {2: 30, 4: 60},
        14,
    ),
    "mandala": Showcase(
        N_(
            "Race your pawn along a path of pyramids, taking one at each jump; every set of "
            "five scores by majority once the last has left the path."
        ),
        {2: 7, 5: 18},
        4,
    ),
    "ice_palace": Showcase(
        N_(
            "Win rounds in the yard to carry what was built there into the palace, and decide "
            "whose colours top its stacks: simple moves, a lot of bargaining."
        ),
        {3: 85, 6: 130},
        16,
    ),
    "maniki": Showcase(
        N_(
            "Three circus animals on two stools: be the first to find the orders that turn "
            "them into the card's arrangement."
        ),
        {2: 75, 6: 185},
        3,
    ),
    "mandala_stones": Showcase(
        N_(
            "Move artists around stacks of stones, build towers on your own board and score "
            "them onto a shared mandala."
        ),
        {2: 35, 4: 55},
        12,
    ),
}

# The players of a picture, as people are called.
_NAMES = ("Ann", "Bob", "Cy", "Di", "Ed", "Flo")
_SEED = "lobby"


def showcase(game_name: str) -> Showcase:
    """The lobby's words of a game (KeyError for a game without them)."""
    return SHOWCASES[game_name]


def length_words(game_name: str) -> str:
    """How long a game lasts, as the lobby says it: "about 30 moves with 2 players,
    60 with 4"."""
    (few, short), (many, long) = sorted(SHOWCASES[game_name].moves.items())
    return _("about {short} moves with {few} players, {long} with {many}").format(
        short=short, few=few, long=long, many=many
    )


def picture(game_name: str) -> str:
    """A real position of the game as an SVG: the fewest players, default options,
    a fixed seed's game `shown_after` random legal moves in, seen by a spectator,
    its words in the language spoken here."""
    return _picture(game_name, language())


@cache
def _picture(game_name: str, language_code: str) -> str:
    """`picture` in `language_code` (the argument keeps one picture a language)."""
    game = games.get(game_name)
    players = game.players[0]
    options = game.load_options({}, players)
    moves = steps(game, players, options, _SEED, Rng(f"{_SEED}:moves"))
    *_, last = islice(moves, SHOWCASES[game_name].shown_after)
    return render_svg(game_name, game.view(last.state, None), _NAMES[:players])
