"""Properties every registered game must have, checked on random playouts.

A game that joins the registry is tested here without any change: playouts
end, replaying the log gives the live states, notation and JSON round-trip,
views are JSON and never show the seed, moves out of turn or after the end
are refused, resigning takes a seat out of the game, and what pages, mail
and timeouts read (scores, resigned seats, the pass, the round summary)
agrees with the rules.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.schemas.rules import inline_move_schema
from referee import games
from referee.engine import IllegalMove, Played, Resign, rank
from referee.games import AnyGame
from referee.playout import steps
from referee.record import Header, Record, chain
from referee.replay import replay
from referee.rng import Rng, commitment

CASES = [(game, players) for game in games.all_games() for players in game.players]
IDS = [f"{game.name}-{players}p" for game, players in CASES]

seeds = st.text(alphabet="0123456789abcdef", min_size=8, max_size=16)
examples = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_out(game: AnyGame, players: int, seed: str, chooser: str) -> list[Played[Any, Any]]:
    options = game.load_options({}, players)
    return list(steps(game, players, options, seed, Rng(chooser)))


def record_of(game: AnyGame, players: int, seed: str, played: list[Played[Any, Any]]) -> Record:
    header = Header(
        game.name,
        tuple(f"p{i}" for i in range(players)),
        game.load_options({}, players),
        commitment(seed),
        game.rules_version,
        seed,
    )
    moves = [(step.seat, game.notate(step.move), None) for step in played]
    return Record(header, chain(header.seed_commitment, moves))


def through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds)
def test_playouts_end_and_replay_equals_live_play(
    game: AnyGame, players: int, seed: str, chooser: str
) -> None:
    played = play_out(game, players, seed, chooser)
    final = played[-1].state
    result = game.result(final)
    assert result is not None
    assert len(result.scores) == players and result.winners
    assert game.actors(final) == frozenset()

    replayed = replay(record_of(game, players, seed, played))
    live = [step.state for step in played]
    assert [game.state_to_json(s) for s in replayed.states[1:]] == [
        game.state_to_json(s) for s in live
    ]


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds)
def test_moves_and_states_round_trip(game: AnyGame, players: int, seed: str, chooser: str) -> None:
    for step in play_out(game, players, seed, chooser):
        move = step.move
        assert game.parse(game.notate(move)) == move
        assert game.move_from_json(through_json(game.move_to_json(move))) == move
        assert game.state_from_json(through_json(game.state_to_json(step.state))) == step.state


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds)
def test_legal_moves_round_trip_and_everything_else_is_refused(
    game: AnyGame, players: int, seed: str, chooser: str
) -> None:
    seen: list[Any] = []
    state = game.start(players, game.load_options({}, players), Rng(seed))
    for step in [None, *play_out(game, players, seed, chooser)][::7]:
        state = state if step is None else step.state
        actors = game.actors(state)
        # Resigning is allowed out of turn; any other move of the seats to act is not.
        someone_elses = [m for a in sorted(actors) for m in game.legal_moves(state, a)][:3]
        for seat in range(players):
            legal = game.legal_moves(state, seat)
            if seat not in actors:
                assert legal == []
                for move in someone_elses:
                    with pytest.raises(IllegalMove):
                        game.play(state, seat, move)
                continue
            for move in legal:
                assert game.parse(game.notate(move)) == move
                assert game.move_from_json(through_json(game.move_to_json(move))) == move
            if game.lists_every_move:
                outside = [m for m in seen if m not in legal][-5:]
                for move in outside:
                    with pytest.raises(IllegalMove) as refused:
                        game.play(state, seat, move)
                    assert refused.value.reason
            seen.extend(legal[:10])


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds)
def test_views_are_json_and_never_show_the_seed(
    game: AnyGame, players: int, seed: str, chooser: str
) -> None:
    seed = "s33d" + seed  # distinctive enough never to occur in a view by chance
    for step in play_out(game, players, seed, chooser)[::5]:
        for viewer in [None, *range(players)]:
            text = json.dumps(game.view(step.state, viewer))
            assert seed not in text
            assert json.loads(text) == game.view(step.state, viewer)


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds, cut=st.integers(0, 40))
def test_a_resigned_seat_never_acts_again(
    game: AnyGame, players: int, seed: str, chooser: str, cut: int
) -> None:
    played = play_out(game, players, seed, chooser)
    if cut >= len(played):
        cut = len(played) - 1
    state = (
        played[cut - 1].state
        if cut
        else game.start(players, game.load_options({}, players), Rng(seed))
    )
    if game.result(state) is not None:
        return
    quitter = min(game.actors(state))
    state = game.play(state, quitter, Resign())
    assert quitter in game.resigned(state)
    with pytest.raises(IllegalMove):
        game.play(state, quitter, Resign())
    rng = Rng(chooser)
    for _ in range(100_000):
        result = game.result(state)
        if result is not None:
            break
        assert quitter not in game.actors(state)
        forced = game.forced_move(state)
        if forced is not None:
            state = game.play(state, *forced)
            continue
        seat = rng.choice(sorted(game.actors(state)))
        state = game.play(state, seat, game.random_move(state, seat, rng))
    assert result is not None
    assert quitter not in result.winners
    if players == 2:
        assert result.winners == (1 - quitter,)


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds)
def test_what_pages_mail_and_timeouts_read_agrees_with_the_rules(
    game: AnyGame, players: int, seed: str, chooser: str
) -> None:
    start = game.start(players, game.load_options({}, players), Rng(seed))
    assert game.resigned(start) == frozenset()
    played = play_out(game, players, seed, chooser)
    for state in [start, *(step.state for step in played)][::3]:
        assert len(game.scores(state)) in (0, players)
        assert game.resigned(state) <= frozenset(range(players))
        summary = game.round_summary(state)
        assert all(0 <= seat < players for seat in summary.winners or ())
        for seat in range(players):
            passing = game.pass_move(state, seat)
            if passing is not None:
                # The `pass` timeout policy plays it without asking again.
                assert seat in game.actors(state)
                game.play(state, seat, passing)
    final = played[-1].state
    result = game.result(final)
    assert result is not None and game.scores(final) == result.scores


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
def test_no_move_is_accepted_after_the_end(game: AnyGame, players: int) -> None:
    final = play_out(game, players, "the end", "chooser")[-1].state
    for seat in range(players):
        with pytest.raises(IllegalMove) as refused:
            game.play(final, seat, Resign())
        assert refused.value.code == "game_over"


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_bad_notation_and_bad_json_are_refused_clearly(game: AnyGame) -> None:
    for text in ["", "   ", "%%%", "x" * 5000, "\x00"]:
        with pytest.raises(IllegalMove) as refused:
            game.parse(text)
        assert refused.value.code == "bad_notation"
    for data in [None, 3, "resign", [], {}, {"type": 7}, {"type": "no such move"}]:
        with pytest.raises(IllegalMove) as refused:
            game.move_from_json(data)
        assert refused.value.code == "bad_move"
    assert game.parse("resign") == Resign() == game.parse("  RESIGN ")
    assert game.move_from_json({"type": "resign"}) == Resign()


@pytest.mark.parametrize("game", games.all_games(), ids=games.names())
def test_every_move_fits_the_move_schema_the_api_publishes(game: AnyGame) -> None:
    # The schema of GET /v1/rules and of the OpenAPI document: every move the
    # rules give as JSON (played or offered) fits exactly one kind of it.
    schema = inline_move_schema(game)
    validator = jsonschema_rs.Draft7Validator(schema)
    players = game.players[0]
    for step in play_out(game, players, "schema-seed", "schema-chooser")[:60]:
        for move in [step.move, *game.legal_moves(step.state, min(game.actors(step.state) or {0}))]:
            data = through_json(game.move_to_json(move))
            assert not list(validator.iter_errors(data)), data
    assert not list(validator.iter_errors({"type": "resign"}))
    assert list(validator.iter_errors({"type": "resign", "extra": 1}))
    assert list(validator.iter_errors({"type": "no_such_move"}))


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds, quitting=st.none() | st.integers(0, 200))
def test_the_breakdown_sums_to_each_seats_final_score(
    game: AnyGame, players: int, seed: str, chooser: str, quitting: int | None
) -> None:
    # `quitting`: the move after which the first seat to act resigns, so
    # that games ended or changed by a resignation are broken down too.
    options = game.load_options({}, players)
    start = game.start(players, options, Rng(seed))
    played = play_out(game, players, seed, chooser)
    if quitting is not None and quitting < len(played) - 1:
        played = played[:quitting]
        state = played[-1].state if played else start
        quitter = min(game.actors(state))
        played.append(Played(quitter, Resign(), game.play(state, quitter, Resign())))
        rng = Rng(chooser)
        while game.result(played[-1].state) is None:
            state = played[-1].state
            forced = game.forced_move(state)
            seat, move = forced or (
                (acting := rng.choice(sorted(game.actors(state)))),
                game.random_move(state, acting, rng),
            )
            played.append(Played(seat, move, game.play(state, seat, move)))
    result = game.result(played[-1].state)
    assert result is not None
    lines = game.breakdown(start, played)
    assert len(lines) == players
    assert tuple(sum(line.points for line in seat_lines) for seat_lines in lines) == result.scores
    assert all(line.label for seat_lines in lines for line in seat_lines)


def _built_moves(game: AnyGame, state: Any, seat: int, limit: int) -> set[str]:
    """Every move reachable through the choices of `build`, walked depth first (at most `limit`)."""
    found: set[str] = set()
    pending: list[tuple[str, ...]] = [()]
    while pending and len(found) < limit:
        steps_taken = pending.pop()
        built = game.build(state, seat, steps_taken)
        assert built.steps == steps_taken
        assert built.prompt
        assert built.choices or built.move is not None, steps_taken
        assert len({choice.step for choice in built.choices}) == len(built.choices)
        assert all(choice.label for choice in built.choices)
        if built.move is not None:
            game.play(state, seat, built.move)  # every move built is legal
            found.add(game.notate(built.move))
        pending.extend((*steps_taken, choice.step) for choice in reversed(built.choices))
    return found


@pytest.mark.parametrize(("game", "players"), CASES, ids=IDS)
@examples
@given(seed=seeds, chooser=seeds, walk=seeds)
def test_moves_built_on_the_board_are_the_legal_moves(
    game: AnyGame, players: int, seed: str, chooser: str, walk: str
) -> None:
    """Every move built click by click is legal; where the legal moves are all
    listed, every one of them can be built; a step not offered is refused;
    a random walk through the choices always ends in a move."""
    state = game.start(players, game.load_options({}, players), Rng(seed))
    wanderer = Rng(walk)
    for step in [None, *play_out(game, players, seed, chooser)][::5]:
        state = state if step is None else step.state
        for seat in range(players):
            if seat not in game.actors(state):
                with pytest.raises(IllegalMove):
                    game.build(state, seat, ())
                continue
            built = game.build(state, seat, ())
            with pytest.raises(IllegalMove) as refused:
                game.build(state, seat, ("no such step",))
            assert refused.value.code == "bad_step"
            while built.choices and (built.move is None or wanderer.below(3)):
                chosen = built.choices[wanderer.below(len(built.choices))]
                built = game.build(state, seat, (*built.steps, chosen.step))
            assert built.move is not None
            game.play(state, seat, built.move)
            if game.lists_every_move:
                legal = {game.notate(m) for m in game.legal_moves(state, seat)}
                assert _built_moves(game, state, seat, len(legal) + 1) == legal


@given(
    scores=st.lists(st.integers(min_value=-5, max_value=5), min_size=2, max_size=4),
    resigned=st.sets(st.integers(min_value=0, max_value=3), max_size=2),
)
def test_rank_gives_the_win_to_the_best_seats_still_playing(
    scores: list[int], resigned: set[int]
) -> None:
    resigned = {seat for seat in resigned if seat < len(scores) - 1}
    playing = [seat for seat in range(len(scores)) if seat not in resigned]
    best = max(scores[seat] for seat in playing)
    result = rank(scores, resigned)
    assert result.scores == tuple(scores)
    assert result.winners == tuple(seat for seat in playing if scores[seat] == best)
