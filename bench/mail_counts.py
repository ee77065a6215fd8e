"""Mails per seat over one whole game of each game: what a player's inbox gets.

Run: `uv run python bench/mail_counts.py [--json FILE]`.

Each game is played to its end by random legal moves on an embedded SQLite
store, every seat with an address (a trusted game: no consent asked), its
mail delivered after every move as the worker does at once, into a mail
folder. It is played twice: with every seat playing by mail, and with seat
0 playing on its game page, open all along (marked as its live stream
does), answering each turn within seconds; the held mail is let out at the
end, a hold's length later. The figures are counts, not times: the same
seed and chooser give the same games, on any machine. docs/mail.md keeps
the table (issue 40).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from referee import games
from referee.rng import Rng
from referee.service import Referee, game_states, page_presence
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.settings import Settings
from referee.store.tables import Game, GameStatus

# Seats per game: the fewest each game is played by, MaNiKi and Ice Palace with three.
SEATS = {"ice_palace": 3, "mandala": 2, "mandala_stones": 2, "maniki": 3, "subdivision": 2}
ON_PAGE = 0


@dataclass(frozen=True, slots=True)
class Played:
    """One whole game: its moves, and the mails each seat got, in the order sent."""

    game: str
    moves: int
    mails: dict[int, list[EmailMessage]]

    def counts(self) -> list[int]:
        return [len(self.mails.get(seat, [])) for seat in range(SEATS[self.game])]


def referee_in(folder: Path) -> Referee:
    made = Referee(
        Settings(
            database_url=f"sqlite:///{folder / 'referee.sqlite3'}",
            mail_dir=str(folder / "mail-out"),
            secret="mail counts",
            bot_seconds=0.05,
        )
    )
    made.db.upgrade()
    return made


def play(referee: Referee, name: str, *, on_page: bool = False) -> Played:
    """Play a whole game of `name` by random moves, delivering mail after each; with
    `on_page`, seat 0 plays on its page, open all along."""
    rules = games.get(name)
    players = [Player(f"P{seat}", f"p{seat}@players.test") for seat in range(SEATS[name])]
    command = NewGame(name, players, {}, trusted=True, seed=f"mail counts {name}")
    created = create_game(referee, command)
    game_id, tokens = created.game.id, created.tokens
    deliver_due(referee, "mail")
    chooser = Rng(f"mail counts chooser {name}")
    moves = 0
    while True:
        with referee.db.reading() as session:
            game = session.get(Game, game_id)
            assert game is not None
            if game.status != GameStatus.ACTIVE or not game.to_act:
                break
            state = game_states.state_at(session, game, game.version)
            to_act = sorted(game.to_act)
        if on_page:
            # The page's stream beats while the player looks at the game.
            page_presence.seen(referee, game_id, ON_PAGE)
        seat = chooser.choice(to_act)
        move = rules.move_to_json(rules.random_move(state, seat, chooser))
        done = submit_move(referee, SubmitMove(game_id, SeatToken(tokens[seat]), move), wait=5)
        assert done.status == "accepted", done
        moves += 1
        deliver_due(referee, "mail")
    # What was held for an open page goes (or is dropped) once the hold has passed.
    hold = timedelta(seconds=referee.settings.mail_page_hold + 1)
    deliver_due(referee, "mail", datetime.now(UTC) + hold)
    return Played(name, moves, mails_by_seat(Path(referee.settings.mail_dir)))


def mails_by_seat(folder: Path) -> dict[int, list[EmailMessage]]:
    """The mails written to `folder`, by seat, in the order of their notices."""
    found: dict[int, list[EmailMessage]] = defaultdict(list)
    for path in folder.glob("*.eml"):
        mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert isinstance(mail, EmailMessage)
        found[int(str(mail["X-Referee-Seat"]))].append(mail)
    for mails in found.values():
        mails.sort(key=notice_of)
    return dict(found)


def notice_of(mail: EmailMessage) -> int:
    """The (first) notice a mail tells, from its Message-ID `<referee.ROW.GAME@domain>`."""
    return int(str(mail["Message-ID"]).split(".")[1])


def kinds_of(mail: EmailMessage) -> list[str]:
    """The kinds of the notices a mail tells (one, for a mail that names no more)."""
    return str(mail["X-Referee-Kinds"] or mail["X-Referee-Kind"]).split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures to this file as well")
    args = parser.parse_args()
    figures: dict[str, dict[str, object]] = {}
    print("| game | seats | moves | mails per seat, by mail | seat 0 on its page; the others |")
    print("|---|---|---|---|---|")
    for name in sorted(SEATS):
        runs = {}
        for on_page in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                referee = referee_in(Path(folder))
                try:
                    runs[on_page] = play(referee, name, on_page=on_page)
                finally:
                    referee.close()
        by_mail, paged = runs[False].counts(), runs[True].counts()
        figures[name] = {"moves": runs[False].moves, "by_mail": by_mail, "on_page": paged}
        print(
            f"| {games.get(name).title} | {SEATS[name]} | {runs[False].moves} "
            f"| {', '.join(map(str, by_mail))} | {paged[0]}; {', '.join(map(str, paged[1:]))} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
