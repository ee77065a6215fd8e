"""A client nobody here wrote plays every game to its end through the served document.

openapi-python-client generates a Python client from `/openapi.json` (into
a temporary directory: it only reads the JSON), with no warning about an
operation or a response it had to drop. The client, talking to the app
in-process over httpx's WSGI transport (a SQLite file, tasks run eagerly),
then plays a whole game of every registered game: moves from the legal
moves, alternately as notation and as typed move JSON, and resignations
where a game would run long. Results and refusals are read from the
generated models' attributes, never from raw JSON.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from flask import Flask

from referee import games
from referee.service import profiles
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import MANAGE, PLAY, READ
from referee.service.players import Player as Signed
from referee.service.tokens import make_token
from tests.tiers import starts_servers

PACKAGE = "referee_client"
# Games whose random play may go on for long: after this many moves their
# seats resign, which ends the game like any other end.
LONG = 40


@pytest.fixture(scope="module")
@starts_servers
def generated(app: Flask, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    where = tmp_path_factory.mktemp("generated")
    document = where / "openapi.json"
    document.write_bytes(app.test_client().get("/openapi.json").get_data())
    config = where / "config.yaml"
    config.write_text("post_hooks: []\n")
    command = Path(sys.executable).parent / "openapi-python-client"
    done = subprocess.run(
        [
            str(command),
            "generate",
            "--path",
            str(document),
            "--meta",
            "none",
            "--output-path",
            str(where / PACKAGE),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    for word in ("warning", "omitted", "skipping", "error"):
        assert word not in said.lower(), said
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


class Generated:
    """The generated package's modules, looked up by name."""

    def __init__(self, package: ModuleType, app: Flask) -> None:
        self.package = package
        self.app = app

    def op(self, name: str) -> Any:
        groups = ("games", "rules", "submissions", "boards", "me", "seeks", "standing_seeks")
        for group in groups:
            try:
                return importlib.import_module(f"{PACKAGE}.api.{group}.{name}")
            except ModuleNotFoundError:
                continue
        raise AssertionError(f"no generated operation {name}")

    def model(self, name: str) -> Any:
        return getattr(importlib.import_module(f"{PACKAGE}.models"), name)

    def client(self, token: str | None = None) -> Any:
        wsgi = httpx.Client(transport=httpx.WSGITransport(app=self.app), base_url="http://referee")
        if token is None:
            made = self.package.Client(base_url="http://referee")
        else:
            made = self.package.AuthenticatedClient(base_url="http://referee", token=token)
        made.set_httpx_client(wsgi)
        if token is not None:
            wsgi.headers["Authorization"] = f"Bearer {token}"
        return made


def _new_game(api: Generated, name: str, players: int) -> Any:
    # Each game has a body model of its own, with its player counts and options.
    model = "New" + "".join(part.capitalize() for part in name.split("_")) + "Game"
    body = api.model(model).from_dict(
        {"game": name, "players": [{"name": f"P{n}"} for n in range(players)]}
    )
    answer = api.op("create_game").sync_detailed(client=api.client(), body=body)
    assert answer.status_code == 201
    assert answer.headers["Cache-Control"] == "no-store"
    created = answer.parsed
    assert isinstance(created, api.model("NewGameOut"))
    assert answer.headers["Location"] == created.links.self_
    return created


def _submit(api: Generated, game_id: str, token: str, legal: Any, as_json: bool) -> Any:
    if as_json:
        body = api.model("MoveJsonIn").from_dict({"move": legal.move.to_dict()})
    else:
        body = api.model("NotationIn")(notation=legal.notation)
    return api.op("submit_move").sync(game_id=game_id, client=api.client(token), body=body, wait=10)


@pytest.mark.parametrize("name", games.names())
def test_a_generated_client_plays_a_whole_game(
    app: Flask, generated: ModuleType, name: str
) -> None:
    api = Generated(generated, app)
    rules = games.get(name)
    players = rules.players[0]
    created = _new_game(api, name, players)
    game_id = created.id
    tokens = {seat.seat: seat.token for seat in created.seats}
    problem, submission_out = api.model("Problem"), api.model("SubmissionOut")

    # Refusals come back as typed problems.
    spectator = api.op("list_legal_moves").sync(game_id=game_id, client=api.client())
    assert isinstance(spectator, problem) and spectator.status == 401
    assert spectator.code == "unauthorized"
    missing = api.op("get_game").sync(game_id="0" * 32, client=api.client())
    assert isinstance(missing, problem) and missing.code == "not_found"

    played = 0
    while True:
        envelope = api.op("get_game_state").sync(game_id=game_id, client=api.client())
        assert isinstance(envelope, api.model("EnvelopeOut"))
        if envelope.status == "over":
            break
        seat = envelope.to_act[0]
        if played >= LONG:
            answer = api.op("resign").sync(
                game_id=game_id, client=api.client(tokens[seat]), wait=10
            )
            assert isinstance(answer, submission_out), answer
            assert answer.submission.status == "accepted"
            continue
        waiting = [s for s in range(players) if s not in envelope.to_act]
        if waiting and played == 0:
            refused = _submit(
                api, game_id, tokens[waiting[0]], _any_legal(api, game_id, tokens[seat]), False
            )
            assert isinstance(refused, problem), refused
            assert (refused.status, refused.code) == (409, "not_your_turn")
        legal = _any_legal(api, game_id, tokens[seat])
        answer = _submit(api, game_id, tokens[seat], legal, as_json=played % 2 == 1)
        assert isinstance(answer, submission_out), answer
        assert answer.submission.status == "accepted", answer.submission
        played += 1

    summary = api.op("get_game").sync(game_id=game_id, client=api.client())
    assert isinstance(summary, api.model("GameOut"))
    assert isinstance(summary.result, api.model("ResultOut"))
    assert len(summary.result.scores) == players
    assert summary.result.winners and set(summary.result.winners) <= set(range(players))
    assert summary.seed is not None
    checked = api.op("verify_game").sync(game_id=game_id, client=api.client())
    assert checked.chain_valid and checked.replay_matches and checked.seed_matches
    record = api.op("get_game_record").sync(game_id=game_id, client=api.client())
    assert isinstance(record, str) and record.count("\n") >= played
    board = api.op("get_board_svg").sync(game_id=game_id, client=api.client())
    assert isinstance(board, str) and board.lstrip().startswith("<")
    late = api.op("resign").sync(game_id=game_id, client=api.client(tokens[0]))
    assert isinstance(late, problem) and (late.status, late.code) == (409, "game_over")


def _any_legal(api: Generated, game_id: str, token: str) -> Any:
    listed = api.op("list_legal_moves").sync(game_id=game_id, client=api.client(token))
    assert isinstance(listed, api.model("LegalMovesOut")), listed
    assert listed.moves
    return listed.moves[0]


def test_the_rules_give_typed_move_and_option_schemas(app: Flask, generated: ModuleType) -> None:
    api = Generated(generated, app)
    described = api.op("get_rules").sync(client=api.client())
    assert isinstance(described, api.model("RulesOut"))
    by_name = {rule.name: rule for rule in described.games}
    assert set(by_name) == set(games.names())
    stones = by_name["mandala_stones"].options.to_dict()
    assert stones["mandala_board"]["type"] == "object"
    kinds = [choice.get("type") for choice in stones["objectives"]["oneOf"]]
    assert kinds == ["string", "array"]
    assert stones["objectives"]["oneOf"][0]["enum"] == ["off"]


def test_a_generated_client_lists_my_games_and_plays_with_a_player_token(
    app: Flask, generated: ModuleType
) -> None:
    api = Generated(generated, app)
    referee = app.extensions["referee"]
    players = [Player("Ann", "ann.generated@example.org"), Player("Bob", None)]
    game_id = create_game(referee, NewGame("subdivision", players, {}, trusted=True)).game.id
    signed_in = Signed("ann.generated@example.org", frozenset({READ, PLAY, MANAGE}))
    token = make_token(referee, signed_in, "generated client", [READ, PLAY]).secret

    listed = api.op("list_my_games").sync(
        client=api.client(token), to_act=api.model("ListMyGamesToAct")("me")
    )
    assert isinstance(listed, api.model("MyGamesOut")), listed
    assert [game.id for game in listed.games] == [game_id]
    mine = listed.games[0]
    assert mine.my_turn and [seat.me for seat in mine.seats] == [True, False]
    legal = _any_legal(api, game_id, token)
    answer = _submit(api, game_id, token, legal, as_json=True)
    assert isinstance(answer, api.model("SubmissionOut")), answer
    assert answer.submission.seat == 0 and answer.submission.status == "accepted"
    refused = api.op("list_my_tokens").sync(client=api.client(token))
    assert isinstance(refused, api.model("Problem")) and refused.code == "forbidden"


def test_a_generated_client_posts_and_joins_an_open_game(app: Flask, generated: ModuleType) -> None:
    api = Generated(generated, app)
    referee = app.extensions["referee"]
    tokens = {}
    for name in ("Gen Ann", "Gen Bob"):
        address = f"{name.split()[1].lower()}.seeks.generated@example.org"
        players = [Player("Me", address), Player("Them", None)]
        create_game(referee, NewGame("subdivision", players, {}, trusted=True))
        signed_in = Signed(address, frozenset({READ, PLAY, MANAGE}))
        profiles.set_profile(referee, signed_in, name)
        tokens[name] = make_token(referee, signed_in, "generated client", [READ, PLAY]).secret

    body = api.model("NewSubdivisionSeek").from_dict({"game": "subdivision", "deadline": "2d"})
    posted = api.op("post_seek").sync(client=api.client(tokens["Gen Ann"]), body=body)
    assert isinstance(posted, api.model("SeekOut")), posted
    assert (posted.status, posted.by.name, posted.open_seats) == ("open", "Gen Ann", 1)
    again = api.op("join_seek").sync(seek_id=posted.id, client=api.client(tokens["Gen Ann"]))
    assert isinstance(again, api.model("Problem")) and again.code == "already_joined"
    joined = api.op("join_seek").sync(seek_id=posted.id, client=api.client(tokens["Gen Bob"]))
    assert isinstance(joined, api.model("SeekOut")), joined
    assert joined.status == "started" and isinstance(joined.game_id, str)

    wanted = [api.model("StandingMandalaSeek").from_dict({"game": "mandala", "count": 2})]
    standing = api.op("set_standing_seeks").sync(client=api.client(tokens["Gen Bob"]), body=wanted)
    assert isinstance(standing, list) and [(s.game, s.count) for s in standing] == [("mandala", 2)]
