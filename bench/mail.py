"""Cost per mail: building your-turn mails (with their PNG) and sending them, beside a floor.

Run: `uv run python bench/mail.py [--cards N] [--json FILE]`.

It plays MaNiKi cards in a six-seat game on an embedded SQLite store (a
card sends twelve mails: a round-over and a your-turn mail to each seat),
and a Mandala Stones game (97 legal moves to list), then builds every
mail the outbox holds, as the worker does (`referee.delivery.compose.build`),
timing each build in CPU time of the building thread. In the same run it
sends the built mails to an aiosmtpd server in this process, one SMTP
connection, and, as the floor, the same bytes prebuilt to the same server:
the figures are mails per second on one core, build-and-send beside send
alone. Goal (issue 15): p50 build <= 15 ms per mail.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import time
from email import policy
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlmodel import col, select

from referee import games
from referee.delivery import compose
from referee.delivery.channel import Consent
from referee.delivery.mail import SmtpTransport
from referee.rng import Rng
from referee.service import Referee, game_states
from referee.service.creating import NewGame, Player, create_game
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.settings import Settings
from referee.store.tables import Game, Outbox

GOAL_MS = 15.0


class Sink:
    """An SMTP server that takes every message and keeps nothing but a count."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.count += 1
        return "250 2.0.0 OK"


def play(referee: Referee, name: str, players: int, moves: int, seed: str) -> str:
    """A game of `players` seats, all with mail, and `moves` random moves decided."""
    rules = games.get(name)
    seats = [Player(f"P{i}", f"p{i}@players.test") for i in range(players)]
    game_id = create_game(referee, NewGame(name, seats, {})).game.id
    chooser = Rng(seed)
    for _ in range(moves):
        with referee.db.reading() as session:
            game = session.get(Game, game_id)
            assert game is not None
            state = game_states.state_at(session, game, game.version)
        if not rules.actors(state):
            break
        seat = min(rules.actors(state))
        move = rules.move_to_json(rules.random_move(state, seat, chooser))
        submit_move(referee, SubmitMove(game_id, KnownSeat(seat), move))
    return game_id


def build_all(referee: Referee, game_ids: list[str]) -> tuple[list[float], list[Any]]:
    """Every outbox row of the games built once: CPU ms per build, and the mails."""
    secret = referee.secret()
    site = compose.Site.of(referee.settings)
    # Every address here has accepted the referee's mail: full mails, as players get them.
    accepted = Consent(ask=False, accept_token="bench", stop_token="bench")
    times, mails = [], []
    with referee.db.reading() as session:
        rows = session.exec(
            select(Outbox).where(col(Outbox.game_id).in_(game_ids)).order_by(col(Outbox.id))
        ).all()
        for row in rows:
            started = time.thread_time()
            mail = compose.build(session, row, secret, site).mail("p@players.test", accepted, None)
            times.append((time.thread_time() - started) * 1000)
            mails.append(mail)
    return times, mails


def send_rate(sender: SmtpTransport, mails: list[Any], prebuilt: bool) -> float:
    """Mails per second: each sent as built (prebuilt: as bytes made before the clock starts)."""
    payloads = [mail.as_bytes(policy=policy.SMTP) for mail in mails] if prebuilt else mails
    connection = sender._connect()
    started = time.perf_counter()
    for item in payloads:
        if prebuilt:
            connection.sendmail("referee@referee.test", ["p@players.test"], item)
        else:
            sender.send(item)
    return len(payloads) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=12, help="MaNiKi moves to play")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-mail-")
    referee = Referee(
        Settings(
            database_url=f"sqlite:///{folder}/bench.sqlite3",
            secret="bench",
            mail_domain="referee.test",
            mail_dir=f"{folder}/mail-out",
        )
    )
    referee.db.upgrade()
    game_ids = [
        play(referee, "maniki", 6, args.cards, "bench-maniki"),
        play(referee, "mandala_stones", 2, 6, "bench-stones"),
        play(referee, "subdivision", 2, 10, "bench-subdivision"),
    ]
    cold, mails = build_all(referee, game_ids)
    warm, _ = build_all(referee, game_ids)
    # The worker builds each row once: `cold` is the figure that counts (a
    # picture drawn once per distinct view, then shared); `warm` has every
    # picture drawn already and shows the cost of the rest of a build.
    sink = Sink()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = Controller(sink, hostname="127.0.0.1", port=port)
    server.start()
    try:
        sender = SmtpTransport(f"smtp://127.0.0.1:{port}")
        floor = send_rate(sender, mails, prebuilt=True)
        started = time.perf_counter()
        compose._PICTURES.clear()
        _times, built = build_all(referee, game_ids)
        for mail in built:
            sender.send(mail)
        both = len(built) / (time.perf_counter() - started)
        sender.close()
    finally:
        server.stop()
    figures = {
        "mails": len(mails),
        "build_ms_p50": statistics.median(cold),
        "build_ms_p90": statistics.quantiles(cold, n=10)[-1],
        "build_ms_max": max(cold),
        "build_ms_p50_pictures_drawn": statistics.median(warm),
        "pictures_drawn": len(compose._PICTURES),
        "floor_sent_per_s": floor,
        "built_and_sent_per_s": both,
        "ratio": both / floor,
    }
    print(f"mails built: {len(mails)} ({len(compose._PICTURES)} distinct pictures)")
    print(
        f"build CPU per mail: p50 {figures['build_ms_p50']:.1f} ms, "
        f"p90 {figures['build_ms_p90']:.1f} ms, max {figures['build_ms_max']:.1f} ms "
        f"(goal p50 <= {GOAL_MS:.0f} ms); with every picture drawn already: "
        f"p50 {figures['build_ms_p50_pictures_drawn']:.1f} ms"
    )
    print(
        f"one core: floor (prebuilt bytes) {floor:.0f} mails/s, built and sent "
        f"{both:.0f} mails/s ({figures['ratio']:.0%} of the floor)"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=1)


if __name__ == "__main__":
    main()
