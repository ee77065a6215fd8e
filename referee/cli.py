"""The `referee` command: game records offline (new, move, replay, legal, verify)."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import click

from referee import games
from referee.engine import JSON, BadOptions, IllegalMove
from referee.record import Header, Record, RecordError, chain, is_sealed, read
from referee.replay import (
    Replayed,
    ReplayError,
    envelope,
    new_state,
    replay,
)
from referee.replay import verify as verify_record
from referee.rng import commitment, new_seed
from referee.settings import DEFAULT_PUBLIC_URL, BadSetting, Settings

if TYPE_CHECKING:
    from referee.service import Referee


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def _read(path: Path) -> Record:
    """The record in the file; each line that cannot be read is named, then exit 1."""
    try:
        with path.open("rb") as stream:
            return read(stream)
    except RecordError as error:
        for problem in error.problems[:-1]:
            click.echo(f"error: {path}: {problem}", err=True)
        _fail(f"{path}: {error.problems[-1]}")
    except OSError as error:
        _fail(f"{path}: cannot read: {error}")


def _replay(path: Path, record: Record, upto: int | None = None) -> Replayed:
    try:
        return replay(record, upto)
    except ReplayError as error:
        _fail(f"{path}: {error}")


def _check_seat(record: Record, seat: int | None) -> None:
    if seat is not None and not 0 <= seat < len(record.header.players):
        _fail(f"seat {seat} does not exist: this game has seats 0-{len(record.header.players) - 1}")


FILE = click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
SEAT = click.option("--seat", type=int, default=None, help="See as this seat (default: spectator).")


@click.group()
def main() -> None:
    """Referee for Subdivision, Mandala, Ice Palace, MaNiKi and Mandala Stones."""


@main.command("games")
def list_games() -> None:
    """List the games this referee knows, with their player counts."""
    for game in games.all_games():
        counts = ", ".join(str(n) for n in game.players)
        click.echo(f"{game.name:16} {game.title} ({counts} players), rules v{game.rules_version}")


@main.command()
@FILE
@click.option("--at", "at", type=int, default=None, help="After move N (default: the last).")
@SEAT
@click.option("--json", "as_json", is_flag=True, help="Print the state envelope as JSON.")
def replay_cmd(file: Path, at: int | None, seat: int | None, as_json: bool) -> None:
    """Replay a record and print the state after move N."""
    record = _read(file)
    replayed = _replay(file, record, at)
    _check_seat(record, seat)
    version = len(replayed.states) - 1
    data = envelope(replayed.game, replayed.final, version, seat)
    if as_json:
        click.echo(json.dumps(data, sort_keys=True))
        return
    click.echo(f"{replayed.game.title} after move {version}: {data['status']}")
    names = record.header.players
    if data["result"] is None:
        click.echo("to act: " + ", ".join(f"{s} ({names[s]})" for s in data["to_act"]))
    else:
        scores = data["result"]["scores"]
        for s, name in enumerate(names):
            mark = "  winner" if s in data["result"]["winners"] else ""
            click.echo(f"seat {s} {name}: {scores[s]}{mark}")
    click.echo(json.dumps(data["state"], indent=2, sort_keys=True))


main.add_command(replay_cmd, "replay")


@main.command()
@FILE
@SEAT
def legal(file: Path, seat: int | None) -> None:
    """Print a seat's legal moves now, one canonical notation per line."""
    record = _read(file)
    replayed = _replay(file, record)
    _check_seat(record, seat)
    game, state = replayed.game, replayed.final
    if seat is None:
        actors = sorted(game.actors(state))
        if len(actors) != 1:
            _fail(f"say which seat with --seat; seats to act now: {actors or 'none'}")
        seat = actors[0]
    for move in game.legal_moves(state, seat):
        click.echo(game.notate(move))


@main.command()
@FILE
@click.option(
    "--bots",
    "with_bots",
    is_flag=True,
    help="Work the bots' moves out again too: each thinks again for as long as it did.",
)
def verify(file: Path, with_bots: bool) -> None:
    """Check a record's hash chain, its seed, that every move replays legally and that
    every move the referee made by itself (forced, a timeout's; a bot's with --bots) is
    the one it makes from that position; say who played the seats people took over from
    bots."""
    from referee.automatic import audit

    record = _read(file)
    for line in _handover_lines(record.header):
        click.echo(line)
    try:
        problems = verify_record(record)
    except ReplayError as error:
        # A running game (`no_seed`): its chain holds; the rest waits for the reveal.
        chained = len([entry for entry in record.entries if not is_sealed(entry)])
        click.echo(f"ok: chain of {chained} moves verified; {error.message}")
        return
    checked = 0
    if not problems:
        replayed = replay(record)
        found = audit(
            record,
            replayed.game,
            replayed.options,
            replayed.states,
            with_bots=with_bots,
            default_bot_seconds=Settings().bot_seconds,
        )
        problems, checked = found.problems, found.checked
        for note in found.notes:
            click.echo(f"note: {note}")
    for problem in problems:
        click.echo(f"FAIL {problem}")
    if problems:
        sys.exit(1)
    done = f"; {checked} moves the referee made by itself worked out again" if checked else ""
    if not with_bots and any(entry.source == "bot" for entry in record.entries):
        done += " (not the bots': --bots)"
    click.echo(f"ok: chain, seed and {len(record.entries)} moves verified{done}")


def _handover_lines(header: Header) -> list[str]:
    """Who played each seat a person took over from a bot, in words."""
    lines = []
    for handover in header.handovers or ():
        name = header.players[handover.seat]
        lines.append(
            f"seat {handover.seat} ({name}): its moves before move {handover.from_seq} were "
            f"played by the {handover.bot} bot, from move {handover.from_seq} on by {name}"
        )
    return lines


@main.command()
@FILE
@click.option("--seat", type=int, required=True, help="The seat whose move is wanted.")
@click.option(
    "--bot",
    "level",
    default=None,
    help="The bot's level (default: the seat's own bot, if the record says so, else strong).",
)
@click.option("--at", "at", type=int, default=None, help="After move N (default: the last).")
def suggest(file: Path, seat: int, level: str | None, at: int | None) -> None:
    """Print a bot's move for a seat, in canonical notation.

    With a finished game's record (it holds the seed) it prints the move the
    service played wherever the referee played by itself: a forced move; a
    timeout's, by the game's policy (`--bot` asks that level with the
    timeout's stream); a bot's seat's, its level drawing from the rng the
    referee gave it and thinking for the record's `bot_seconds` at its
    `bot_pace`.
    """
    from referee import bots

    record = _read(file)
    header = record.header
    _check_seat(record, seat)
    if header.seed is None:
        # A running game's deal is secret: without the seed no position can be rebuilt.
        click.echo(
            "the record has no seed (a game still running keeps it secret): the position "
            "cannot be rebuilt, so no bot can be asked; try once the game is over",
            err=True,
        )
        sys.exit(1)
    replayed = _replay(file, record, at)
    game, state = replayed.game, replayed.final
    version = len(replayed.states) - 1
    offered = bots.levels(game.name)
    if not offered:
        _fail(f"{game.title} has no bots yet")
    own = header.bot_at(seat, version + 1)
    if level is not None and level not in offered:
        _fail(f"{level!r} is not a bot level of {game.title} (its levels: {', '.join(offered)})")
    if seat not in game.actors(state):
        _fail(f"seat {seat} is not to act after move {version}")
    asked = _Asked(replayed, header, seat, version)
    after = record.entries[version] if version < len(record.entries) else None
    source = after.source if after is not None and after.seat == seat else None
    click.echo(game.notate(asked.move(level, own, source)))


@dataclass(frozen=True, slots=True)
class _Asked:
    """A position of a finished game's record at which `referee suggest` is asked."""

    replayed: Replayed
    header: Header
    seat: int
    version: int

    def move(self, level: str | None, own: str | None, source: str | None) -> Any:
        """The move the service plays here: the referee's own where the record says
        it made it (forced, a timeout's by the game's policy, or `level` drawing from
        the timeout's stream), else the bot's of `level` (default: the seat's own, else
        `strong`), its own level's with the service's fallback."""
        from referee import automatic, bots
        from referee.pace import paced
        from referee.playout import bot_rng, timeout_rng

        game, state = self.replayed.game, self.replayed.final
        header, seat, version = self.header, self.seat, self.version
        assert header.seed is not None
        forced = game.forced_move(state)
        if forced is not None and forced[0] == seat:
            return forced[1]
        seconds = paced(header.bot_seconds or Settings().bot_seconds, header.bot_pace)
        players, options = len(header.players), self.replayed.options
        if source == automatic.TIMEOUT and level is None and header.on_timeout is not None:
            return automatic.timeout_move(
                game,
                state,
                seat,
                header.on_timeout,
                header.seed,
                version,
                players=players,
                options=options,
                bot_seconds=seconds,
            )
        chosen = level or own or "strong"
        if source == automatic.TIMEOUT:
            rng = timeout_rng(header.seed, version, seat)
        elif chosen == own:
            seats = [s for s in range(players) if header.bot_at(s, version + 1)]
            return automatic.bot_choice(
                game,
                chosen,
                state,
                seat,
                header.seed,
                version,
                players=players,
                options=options,
                seconds=seconds,
                bots_seats=seats,
            ).move
        else:
            rng = bot_rng(header.seed, version, seat)
        return bots.decide(
            game, chosen, state, seat, players=players, options=options, rng=rng, seconds=seconds
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@main.command()
@click.argument("game_name", metavar="GAME")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--player", "players", multiple=True, required=True, help="A player's name, in seat order."
)
@click.option("--options", "options_json", default="{}", help="Game options as a JSON object.")
@click.option("--seed", default=None, help="The seed (default: a fresh random one).")
def new(
    game_name: str, file: Path, players: tuple[str, ...], options_json: str, seed: str | None
) -> None:
    """Start a game record for local play; the seed is kept in the file."""
    if file.exists():
        _fail(f"{file} exists already; choose another file")
    try:
        game = games.get(game_name)
    except KeyError as error:
        _fail(str(error.args[0]))
    try:
        raw = json.loads(options_json)
    except json.JSONDecodeError as error:
        _fail(f"--options is not JSON: {error.msg}")
    if not isinstance(raw, dict):
        _fail("--options must be a JSON object")
    try:
        options = game.load_options(raw, len(players))
    except BadOptions as error:
        _fail(f"bad options: {error.errors}")
    seed = seed or new_seed()
    header = Header(game.name, players, options, commitment(seed), game.rules_version, seed)
    state = new_state(game, seed, len(players), options)
    forced = [(s, game.notate(m), _now()) for s, m, _ in game.forced_moves(state)]
    file.write_text(Record(header, chain(header.seed_commitment, forced)).dumps(), encoding="utf-8")
    click.echo(f"{file}: new {game.title} game for {', '.join(players)}")


@main.command()
@FILE
@click.argument("notation")
@click.option("--seat", type=int, required=True, help="The seat making the move.")
def move(file: Path, notation: str, seat: int) -> None:
    """Append a move to a local record, with any moves the referee then records itself."""
    record = _read(file)
    replayed = _replay(file, record)
    _check_seat(record, seat)
    game, state = replayed.game, replayed.final
    try:
        chosen: Any = game.parse(notation, replayed.options)
        state = game.play(state, seat, chosen)
    except IllegalMove as error:
        _fail(f"{error.reason} ({error.code})")
    played: list[tuple[int, str, str | None]] = [
        (e.seat, e.move, e.created_at) for e in record.entries
    ]
    played.append((seat, game.notate(chosen), _now()))
    for forced_seat, forced, after in game.forced_moves(state):
        played.append((forced_seat, game.notate(forced), _now()))
        state = after
    file.write_text(
        Record(record.header, chain(record.header.seed_commitment, played)).dumps(),
        encoding="utf-8",
    )
    data: JSON = envelope(game, state, len(played), None)
    click.echo(f"{game.notate(chosen)} accepted; now {data['status']}, to act: {data['to_act']}")


# -- the service ---------------------------------------------------------------


def _referee(chosen: Settings) -> Referee:
    """This process's referee, on the settings it read once."""
    from referee.service import Referee

    return Referee(chosen)


def _settings() -> Settings:
    """The settings the environment gives, or exit saying which variable is wrong."""
    try:
        return Settings.from_environ()
    except BadSetting as error:
        _fail(str(error))


class AccessLog:
    """WSGI middleware: one line per request in gunicorn's format, with the time taken."""

    def __init__(self, app: WSGIApplication, logger: logging.Logger) -> None:
        self.app = app
        self.logger = logger

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = time.monotonic()

        def logged(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            length = next((v for k, v in headers if k.lower() == "content-length"), "-")
            query = environ.get("QUERY_STRING")
            path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
            when = datetime.now(UTC).strftime("%d/%b/%Y:%H:%M:%S %z")
            self.logger.info(
                '%s - - [%s] "%s %s %s" %s %s "%s" "%s" %.1fms',
                environ.get("REMOTE_ADDR", "-"),
                when,
                environ.get("REQUEST_METHOD", "-"),
                f"{path}?{query}" if query else path,
                environ.get("SERVER_PROTOCOL", "-"),
                status.split(" ", 1)[0],
                length,
                environ.get("HTTP_REFERER", "-"),
                environ.get("HTTP_USER_AGENT", "-"),
                (time.monotonic() - started) * 1000,
            )
            return start_response(status, headers, exc_info)

        return self.app(environ, logged)


def _logging(access_log: str | None) -> logging.Logger:
    """Waitress's own lines to stderr; the access log to stdout, a file or nowhere;
    seat tokens cut out of both (api/pages/kit.py's filter); a reader leaving an event
    stream is not told, as it is how every stream ends (api/server.py's filter)."""
    from api.pages.kit import RedactSeatLinks
    from api.server import StreamEnds

    server = logging.getLogger("waitress")
    server.setLevel(logging.INFO)
    server.addHandler(logging.StreamHandler(sys.stderr))
    access = logging.getLogger("referee.access")
    access.propagate = False
    if access_log:
        handler = (
            logging.StreamHandler(sys.stdout)
            if access_log == "-"
            else logging.FileHandler(access_log, encoding="utf-8")
        )
        access.addHandler(handler)
        access.setLevel(logging.INFO)
    else:
        access.disabled = True
    for logger in (server, access):
        logger.addFilter(RedactSeatLinks())
    server.addFilter(StreamEnds())
    return access


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--threads",
    type=int,
    default=None,
    show_default="REFEREE_THREADS or 16",
    help="Requests served at once besides REFEREE_EVENTS_MAX event streams "
    "(a `?wait=` request holds one).",
)
def serve(host: str, port: int, threads: int | None) -> None:
    """Run the API in this one process on waitress, a production WSGI server.

    The database is migrated first. Without REDIS_URL moves are decided in
    this process (and a sweeper thread sends the sweeps), so this one command
    is a whole referee. Access log: REFEREE_ACCESS_LOG (`-`: stdout, the
    default; empty: none; else a file). One client address holds at most
    REFEREE_CLIENT_CONNECTIONS connections, and one silent for
    REFEREE_IDLE_TIMEOUT seconds is closed (docs/operations.md). For several
    processes: gunicorn, see deploy/.
    """
    from api import create_app, server

    chosen = _settings()
    if chosen.public_url == DEFAULT_PUBLIC_URL:
        if host in ("0.0.0.0", "::", ""):
            click.echo(
                "referee: set REFEREE_PUBLIC_URL to the address browsers use: "
                "forms from any other origin are refused",
                err=True,
            )
        else:
            # Unset: the server's own address, which browsers' forms come from.
            named = f"[{host}]" if ":" in host else host
            chosen = replace(chosen, public_url=f"http://{named}:{port}")
    referee = _referee(chosen)
    app = AccessLog(create_app(chosen, referee), _logging(chosen.access_log))
    referee.db.upgrade()
    # Made now rather than by whichever request or task first needs it: a running
    # referee's requests then write no server-wide row.
    referee.secret()
    if referee.queue.eager:
        referee.queue.start_sweeper()
    # As in deploy/gunicorn.conf.py: event streams hold threads of their own beside
    # those every other request shares, so followers can never take them all.
    threads = (threads or chosen.threads) + chosen.events_max
    waitress = server.create(app, chosen, host, port, threads)
    lobby = chosen.public_url.rstrip("/")
    click.echo(f"referee: the lobby is at {lobby}/  (the API: {lobby}/v1/rules)")
    click.echo(f"referee: listening on {host}:{port}, database {referee.db.url}")
    waitress.run()


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option(
    "--role",
    type=click.Choice(["all", "decide", "deliver", "bots"]),
    default="all",
    show_default=True,
    help="decide (queue REFEREE_QUEUE), deliver mail and webhooks (REFEREE_QUEUE.delivery), "
    "play the bots' seats (REFEREE_QUEUE.bots), or all: a deciding worker that starts a "
    "delivering one and a bots' one as its children",
)
@click.pass_context
def worker(ctx: click.Context, role: str) -> None:
    """Run a Celery worker (needs REDIS_URL); extra arguments go to Celery."""
    referee = _referee(_settings())
    if referee.queue.eager:
        _fail("set REDIS_URL: without a broker moves are decided inside `referee serve`")
    import workers

    workers.run(referee, list(ctx.args), role)


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def beat(ctx: click.Context) -> None:
    """Run Celery beat: the one process that sends the periodic sweeps.

    For deployments with REFEREE_SWEEPS=beat (workers then leave the sweeps
    to it); extra arguments go to Celery (e.g. --schedule FILE).
    """
    referee = _referee(_settings())
    if referee.queue.eager:
        _fail("set REDIS_URL: without a broker `referee serve` runs the sweeps itself")
    if referee.queue.sweeps_in_workers():
        _fail(
            "set REFEREE_SWEEPS=beat for the workers and this process: "
            "with the default (worker) every worker sweeps by itself"
        )
    import workers

    workers.run_beat(referee, list(ctx.args))


@main.group()
def db() -> None:
    """The database named by DATABASE_URL."""


@db.command()
def upgrade() -> None:
    """Migrate the database's schema to the latest version."""
    from referee.store.db import Database

    database = Database.of(_settings())
    database.upgrade()
    click.echo(f"{database.url}: up to date")


@db.command("copy")
@click.option("--to", "target", required=True, help="The empty database to copy into (a URL).")
def copy_db(target: str) -> None:
    """Copy the whole database into an empty one (the embedded SQLite to PostgreSQL, say),
    then check every game's log afresh on both. Refuses a target that holds any row."""
    from referee.service.relocating import CopyRefused, copy_database

    referee = _referee(_settings())
    try:
        copied = copy_database(referee, target, lambda table, rows: click.echo(f"{table}: {rows}"))
    except CopyRefused as refused:
        _fail(f"nothing copied: {refused}")
    finally:
        referee.close()
    click.echo(f"{sum(copied.rows.values())} rows copied; {copied.games} games checked on both")
    for line in copied.differing:
        click.echo(line)
    if copied.differing:
        sys.exit(1)
    click.echo("every game checks out the same on the copy")


@db.command("verify")
def verify_db() -> None:
    """Check every game's log afresh (its hash chain, and its replay against the stored
    state): after a restore or a copy. Exits 1 naming each game that fails."""
    from referee.service.relocating import check_every_game

    referee = _referee(_settings())
    failed = checked = 0
    try:
        for game_id, outcome in check_every_game(referee.db):
            checked += 1
            if not (outcome.chain_valid and outcome.replay_matches):
                failed += 1
                click.echo(f"game {game_id}: " + "; ".join(outcome.problems))
    finally:
        referee.close()
    click.echo(f"{checked} games checked, {failed} failed")
    if failed:
        sys.exit(1)


@main.command("export")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def export(folder: Path) -> None:
    """Write every game's record to FOLDER/<id>.jsonl, as anyone may have it (the seed once
    the game is over): records `referee verify` reads, for a backup beside the database's."""
    from referee.service.relocating import export_records

    referee = _referee(_settings())
    try:
        written = export_records(referee, folder)
    finally:
        referee.close()
    click.echo(f"{written} game records written to {folder}")


@main.group()
def ratings() -> None:
    """The players' ratings, a projection of the finished games."""


@ratings.command()
@click.option("--check", is_flag=True, help="Only compare: exit 1 when anything differs.")
def rebuild(check: bool) -> None:
    """Work every rating and player's totals out again from the finished games, in the
    order they were taken in, and make the stored figures the replay's; print what
    differed (nothing when the two agree). With --check nothing is written and a
    difference exits 1."""
    from referee.service.rating import rebuild as rebuild_ratings

    referee = _referee(_settings())
    try:
        rebuilt = rebuild_ratings(referee, write=not check)
    finally:
        referee.close()
    click.echo(
        f"{rebuilt.games} games replayed; {rebuilt.players} players rated "
        f"({rebuilt.ratings} ratings)"
    )
    for difference in rebuilt.differences:
        click.echo(difference)
    if rebuilt.differences:
        done = "differed" if check else "differed and were rewritten"
        click.echo(f"{len(rebuilt.differences)} figures {done}")
        if check:
            sys.exit(1)
    else:
        click.echo("the stored figures are the replay's")


@main.command("mail-in")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=2525, show_default=True)
def mail_in(host: str, port: int) -> None:
    """Take replies to turn mails over SMTP (aiosmtpd) and submit their moves.

    Point the MX of the reply domain (REFEREE_MAIL_DOMAIN) here; the moves go
    to the workers like REST moves (REDIS_URL), or are decided in this
    process in the embedded default.
    """
    from mailin import server

    referee = _referee(_settings())
    referee.db.upgrade()
    if referee.queue.eager:
        # Answers to replies go out from here too (leases keep them single).
        referee.queue.start_delivery()
    click.echo(f"referee mail-in: smtp://{host}:{port}  (database {referee.db.url})")
    server.serve(referee, host, port)


@main.command()
@click.option(
    "--bounced",
    is_flag=True,
    required=True,
    help="Those no longer mailed: their mail bounced REFEREE_MAIL_BOUNCES times.",
)
def addresses(bounced: bool) -> None:
    """Mail addresses the referee knows: with --bounced, each that bounced out (one a
    line: the address, when, its hard bounces), the latest first. A reply from one, or
    its accepting the mail again, clears it."""
    from referee.service.bounces import bounced_addresses

    referee = _referee(_settings())
    try:
        found = bounced_addresses(referee)
    finally:
        referee.close()
    for one in found:
        click.echo(f"{one.address}\t{one.bounced_at}\t{one.bounces}")
    click.echo(f"{len(found)} bounced out", err=True)


@main.group()
def catalogues() -> None:
    """The translation catalogues (referee/locale/<language>/LC_MESSAGES/*.po)."""


@catalogues.command("update")
def update_catalogues() -> None:
    """Write every language's catalogues from the code: new words added untranslated,
    words no longer used dropped, translations kept."""
    from referee import catalogues as kept

    for path in kept.update():
        click.echo(str(path))


@catalogues.command("check")
def check_catalogues() -> None:
    """List what is missing, stale or untranslated; exit 1 when anything is."""
    from referee import catalogues as kept

    found = kept.problems()
    for problem in found:
        click.echo(str(problem))
    if found:
        _fail(f"{len(found)} problems in the catalogues")
    click.echo("the catalogues hold every word the code asks for, translated")
