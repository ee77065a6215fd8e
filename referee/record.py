"""Game records: the JSON Lines file that holds a whole game.

Line 1 is the header (game, rules version, players, options, the seed's
commitment and, once the game is over, the seed). Every further line is one
logged move, in order, carrying its canonical notation and the hash that
chains it to the line before, so a record can be checked offline by anyone.

The chain: `hash = sha256(prev_hash + canonical JSON of {seq, seat, move,
created_at})`, where the first move's `prev_hash` is the seed commitment,
which ties the chain to this one game.

A move line may say where the move came from (`source`): a person's
(`rest`, `mail`) or one the referee made by itself (`forced`, `timeout`,
`bot`), which `referee.automatic` works out again. The source is the
referee's statement beside the chain, not part of the hash: older records
have none, and their chains hold as they were.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee import pace

JSON = dict[str, Any]


class RecordError(ValueError):
    """A record that cannot be read; `line` is 1-based (0: the whole file).

    `problems` holds every line that cannot be read, in the file's order
    (this one first), so that one run names them all.
    """

    def __init__(self, line: int, message: str, more: tuple[RecordError, ...] = ()) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message
        self.problems = (self, *more)


# A record's longest line is its header (names, options): far below this.
# A longer line is reported unread, without being held in memory.
MAX_LINE_BYTES = 1_000_000
# Moves and options nest a few levels; the API takes at most 32. Deeper
# values would reach the recursion limit further on, in hashing or replay.
MAX_DEPTH = 64


# How a record shows a move of a sealed round (MaNiKi's sealed mode) until
# the round is decided.
SEALED_NOTATION = "sealed"

# Where a move came from: a person's (`rest`, `mail`) or the referee's own.
SOURCES = ("rest", "mail", "forced", "timeout", "bot")
# What the referee plays for a seat out of time (`on_timeout`).
TIMEOUT_POLICIES = ("pass", "random", "forfeit", "bot")


def canonical_json(value: Any) -> str:
    """The one JSON spelling of a value that hashes use."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_hash(prev_hash: str, seq: int, seat: int, move: str, created_at: str | None) -> str:
    body = canonical_json({"seq": seq, "seat": seat, "move": move, "created_at": created_at})
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Handover:
    """A seat a bot held until a person took it over: the moves of `seat` before
    `from_seq` were played by the bot of level `bot`, those from it on by the person
    the header's `players` names."""

    seat: int
    from_seq: int
    bot: str

    def to_json(self) -> JSON:
        return {"seat": self.seat, "from_seq": self.from_seq, "bot": self.bot}


@dataclass(frozen=True, slots=True)
class Header:
    game: str
    players: tuple[str, ...]
    options: JSON
    seed_commitment: str
    rules_version: str | None = None
    seed: str | None = None
    # Each seat's bot level (None: a person), when some seat is a bot's; the
    # seconds a bot thinks over a move in this game; and the pace of the machine
    # that played it (its seconds count `bot_pace` times the iterations of pace
    # 1). Absent from older records (pace: 1).
    bots: tuple[str | None, ...] | None = None
    bot_seconds: float | None = None
    bot_pace: float | None = None
    # The seats people took over from bots, by seat; absent when none was.
    handovers: tuple[Handover, ...] | None = None
    # The game's timeout policy, which `referee verify` plays timeouts by again;
    # absent from older records (their timeouts are not checked).
    on_timeout: str | None = None

    def to_json(self) -> JSON:
        data: JSON = {
            "game": self.game,
            "rules_version": self.rules_version,
            "players": list(self.players),
            "options": self.options,
            "seed_commitment": self.seed_commitment,
        }
        if self.rules_version is None:
            del data["rules_version"]
        if self.seed is not None:
            data["seed"] = self.seed
        if self.bots is not None:
            data["bots"] = list(self.bots)
        if self.bot_seconds is not None:
            data["bot_seconds"] = self.bot_seconds
        if self.bot_pace is not None:
            data["bot_pace"] = self.bot_pace
        if self.handovers is not None:
            data["handovers"] = [handover.to_json() for handover in self.handovers]
        if self.on_timeout is not None:
            data["on_timeout"] = self.on_timeout
        return data

    def bot_at(self, seat: int, seq: int) -> str | None:
        """The bot level the header gives `seat` for move `seq`: the level of the bot a
        person took the seat over from, before `from_seq`, else its `bots` entry (None:
        a person)."""
        for handover in self.handovers or ():
            if handover.seat == seat and seq < handover.from_seq:
                return handover.bot
        return None if self.bots is None else self.bots[seat]


@dataclass(frozen=True, slots=True)
class Entry:
    """One logged move; `move` is its canonical notation."""

    seq: int
    seat: int
    move: str
    created_at: str | None = None
    prev_hash: str | None = None
    hash: str | None = None
    # Where the move came from (`SOURCES`); None in older records.
    source: str | None = None

    def to_json(self) -> JSON:
        data: JSON = {"seq": self.seq, "seat": self.seat, "move": self.move}
        for key in ("created_at", "prev_hash", "hash", "source"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


@dataclass(frozen=True, slots=True)
class Record:
    header: Header
    entries: tuple[Entry, ...] = ()
    # The file line of each entry, for error messages; empty for built records.
    entry_lines: tuple[int, ...] = field(default=(), compare=False)

    def line_of(self, seq: int) -> int:
        """The file line holding move `seq` (1-based), as best known."""
        return self.entry_lines[seq - 1] if self.entry_lines else seq + 1

    def lines(self) -> Iterator[str]:
        yield canonical_json(self.header.to_json())
        for entry in self.entries:
            yield canonical_json(entry.to_json())

    def dumps(self) -> str:
        return "".join(line + "\n" for line in self.lines())


def chain(commitment: str, moves: Iterable[tuple[int, str, str | None]]) -> tuple[Entry, ...]:
    """Entries for `(seat, notation, created_at)` moves, hashes filled in."""
    entries = []
    prev = commitment
    for seq, (seat, move, created_at) in enumerate(moves, start=1):
        digest = entry_hash(prev, seq, seat, move, created_at)
        entries.append(Entry(seq, seat, move, created_at, prev, digest))
        prev = digest
    return tuple(entries)


def is_sealed(entry: Entry) -> bool:
    """A move of a sealed round not yet decided: shown as `sealed`, with no hash to check."""
    return entry.move == SEALED_NOTATION and entry.hash is None


def chain_problems(record: Record) -> list[str]:
    """What is wrong with the record's hash chain (empty when it holds).

    Sealed moves are the log's tail while their round is open: they are not
    chained yet, and only a move after one of them is a problem.
    """
    problems = []
    prev = record.header.seed_commitment
    sealed_since: int | None = None
    for entry in record.entries:
        number = record.line_of(entry.seq)
        if is_sealed(entry):
            sealed_since = sealed_since or entry.seq
            continue
        if sealed_since is not None:
            problems.append(f"line {number}: move {entry.seq} follows sealed move {sealed_since}")
        if entry.hash is None:
            problems.append(f"line {number}: move {entry.seq} has no hash")
            prev = ""
            continue
        if entry.prev_hash is not None and entry.prev_hash != prev:
            problems.append(f"line {number}: prev_hash does not match the line before")
        expected = entry_hash(prev, entry.seq, entry.seat, entry.move, entry.created_at)
        if entry.hash != expected:
            problems.append(f"line {number}: hash does not match the move (changed or forged)")
        prev = entry.hash
    return problems


def _too_deep(value: Any) -> bool:
    # A walk with a list of its own, so that measuring depth cannot itself recurse.
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return False


def _object(line: int, raw: bytes) -> JSON:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RecordError(line, "not UTF-8 text") from None
    except RecursionError:
        raise RecordError(line, f"nests deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise RecordError(line, f"not JSON: {error.msg}") from None
    except ValueError:  # an integer of more digits than Python converts
        raise RecordError(line, "a number too long: more digits than any record holds") from None
    if not isinstance(value, dict):
        raise RecordError(line, "expected a JSON object")
    if _too_deep(value):
        raise RecordError(line, f"nests deeper than {MAX_DEPTH} levels")
    return value


def _field(
    line: int, data: JSON, key: str, kind: type | tuple[type, ...], optional: bool = False
) -> Any:
    if key not in data:
        if optional:
            return None
        raise RecordError(line, f"missing field {key!r}")
    value = data[key]
    if optional and value is None:
        return None
    # bool is an int in Python, never a seat or a sequence number here.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise RecordError(line, f"field {key!r} has the wrong type")
    return value


def _header(line: int, data: JSON) -> Header:
    players = _field(line, data, "players", list)
    if not players or not all(isinstance(name, str) for name in players):
        raise RecordError(line, "field 'players' must be a non-empty list of names")
    return Header(
        game=_field(line, data, "game", str),
        players=tuple(players),
        options=_field(line, data, "options", dict, optional=True) or {},
        seed_commitment=_field(line, data, "seed_commitment", str),
        rules_version=_field(line, data, "rules_version", str, optional=True),
        seed=_field(line, data, "seed", str, optional=True),
        bots=_bots(line, data, len(players)),
        bot_seconds=_bot_seconds(line, data),
        bot_pace=_bot_pace(line, data),
        handovers=_handovers(line, data, len(players)),
        on_timeout=_one_of(line, data, "on_timeout", TIMEOUT_POLICIES),
    )


def _one_of(line: int, data: JSON, key: str, allowed: tuple[str, ...]) -> str | None:
    found: str | None = _field(line, data, key, str, optional=True)
    if found is not None and found not in allowed:
        raise RecordError(line, f"field {key!r} must be one of {', '.join(allowed)}")
    return found


def _bots(line: int, data: JSON, players: int) -> tuple[str | None, ...] | None:
    found = _field(line, data, "bots", list, optional=True)
    if found is None:
        return None
    if len(found) != players or not all(level is None or isinstance(level, str) for level in found):
        raise RecordError(line, "field 'bots' must give each seat a bot level or null")
    return tuple(found)


def _bot_seconds(line: int, data: JSON) -> float | None:
    found = _field(line, data, "bot_seconds", (int, float), optional=True)
    if found is None:
        return None
    if isinstance(found, bool) or not 0 < found <= 3600:
        raise RecordError(line, "field 'bot_seconds' must be a number of seconds above 0")
    return float(found)


def _bot_pace(line: int, data: JSON) -> float | None:
    found = _field(line, data, "bot_pace", (int, float), optional=True)
    if found is None:
        return None
    if isinstance(found, bool) or not pace.is_pace(found):
        raise RecordError(line, f"field 'bot_pace' must be a number {pace.BOUNDS_TEXT}")
    return float(found)


# The longest bot level a record names (`seat.bot` holds 20 characters).
_LEVEL_LONGEST = 20


def _handovers(line: int, data: JSON, players: int) -> tuple[Handover, ...] | None:
    found = _field(line, data, "handovers", list, optional=True)
    if found is None:
        return None
    shape = (
        "field 'handovers' must list objects {seat, from_seq, bot}: a seat of the game "
        "at most once, a move number from 1, a bot level"
    )
    handovers: list[Handover] = []
    for item in found:
        if not isinstance(item, dict) or set(item) != {"seat", "from_seq", "bot"}:
            raise RecordError(line, shape)
        seat, from_seq, bot = item["seat"], item["from_seq"], item["bot"]
        if (
            type(seat) is not int
            or not 0 <= seat < players
            or type(from_seq) is not int
            or not 1 <= from_seq <= 10_000_000
            or not isinstance(bot, str)
            or not 0 < len(bot) <= _LEVEL_LONGEST
            or any(earlier.seat == seat for earlier in handovers)
        ):
            raise RecordError(line, shape)
        handovers.append(Handover(seat, from_seq, bot))
    return tuple(handovers)


def _entry(line: int, data: JSON, expected_seq: int) -> Entry:
    seq = _field(line, data, "seq", int)
    if seq != expected_seq:
        raise RecordError(line, f"expected move {expected_seq}, found seq {seq}")
    return Entry(
        seq=seq,
        seat=_field(line, data, "seat", int),
        move=_field(line, data, "move", str),
        created_at=_field(line, data, "created_at", str, optional=True),
        prev_hash=_field(line, data, "prev_hash", str, optional=True),
        hash=_field(line, data, "hash", str, optional=True),
        source=_one_of(line, data, "source", SOURCES),
    )


class Lines(Protocol):
    """What a record is read from: a file opened for bytes, say."""

    def readline(self, size: int, /) -> bytes: ...


def _lines(stream: Lines) -> Iterator[tuple[int, bytes | None]]:
    """Each line of `stream` that is not blank, numbered from 1; None for a line longer
    than MAX_LINE_BYTES (its end aside), which is read past in pieces, never held whole."""
    number = 0
    # Room for the line's end ("\r\n"), which is not counted.
    while line := stream.readline(MAX_LINE_BYTES + 2):
        number += 1
        if len(line.rstrip(b"\r\n")) > MAX_LINE_BYTES:
            if not line.endswith(b"\n"):
                while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass
            yield number, None
        elif line.strip():
            yield number, line


def _read_line(number: int, raw: bytes | None, seq: int) -> Header | Entry:
    """The header (`seq` 0) or move `seq` a line holds; RecordError saying why it is neither."""
    if raw is None:
        raise RecordError(number, f"longer than {MAX_LINE_BYTES} bytes")
    data = _object(number, raw)
    return _header(number, data) if seq == 0 else _entry(number, data, seq)


def read(stream: Lines) -> Record:
    """Read a record line by line; blank lines are ignored, line numbers are the file's.

    Each line is read within MAX_LINE_BYTES and MAX_DEPTH; every line that
    cannot be read is named in the RecordError raised (`problems`).
    """
    header: Header | None = None
    entries: list[Entry] = []
    numbers: list[int] = []
    problems: list[RecordError] = []
    for seq, (number, raw) in enumerate(_lines(stream)):
        try:
            found = _read_line(number, raw, seq)
        except RecordError as problem:
            problems.append(problem)
            continue
        if isinstance(found, Header):
            header = found
        else:
            entries.append(found)
            numbers.append(number)
    if problems:
        first, *more = problems
        raise RecordError(first.line, first.message, tuple(more))
    if header is None:
        raise RecordError(0, "the record is empty: expected a header line")
    return Record(header, tuple(entries), tuple(numbers))


class _InMemory:
    """Text as `read` reads a file: a line at a time, at most `size` bytes of it."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.at = 0

    def readline(self, size: int) -> bytes:
        end = self.data.find(b"\n", self.at, self.at + size)
        stop = min(self.at + size, len(self.data)) if end < 0 else end + 1
        line, self.at = self.data[self.at : stop], stop
        return line


def loads(text: str) -> Record:
    """Read a record held in memory, line by line as `read` reads a file."""
    return read(_InMemory(text))
