"""The referee's web app: the REST API of docs/api.md (`api/rest/`, its schemas in
`api/schemas/`, its event streams in `api/streams/`) and the pages (`api/pages/`), on the
HTTP kit they share (`api/http/`). `create_app` makes it.

The API checks the shape of each request, authenticates the seat, records a
submission and enqueues it; it never decides a move (the worker does).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from flask import Flask
from flask_smorest import Api
from flask_smorest.spec import prepare_response
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from api.http import bodies, errors, headers, undeclared
from api.http.context import EXTENSION
from api.schemas.events import (
    GAME_EVENT,
    MESSAGE_EVENT,
    PLAYER_EVENT,
    GameEventOut,
    MessageEventOut,
    PlayerEventOut,
)
from api.schemas.games import NewGameIn
from api.schemas.problems import ProblemSchema
from api.schemas.rules import (
    STANDING_SEEK,
    move_components,
    new_game_components,
    new_seek_components,
)
from api.schemas.seeks import NewSeekIn, StandingSeekIn
from referee.i18n import install
from referee.service import Referee
from referee.service.refusals import Refusal
from referee.settings import Settings

MAX_BODY = 64 * 1024


class ProblemApi(Api):  # type: ignore[misc]
    """flask-smorest, with every error documented and answered as problem+json."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        # As flask-smorest's own, but errors are served as problem+json.
        named = [(status.name, status.phrase) for status in HTTPStatus if status >= 400]
        for name, description in [*named, ("DEFAULT_ERROR", "an error")]:
            response: dict[str, Any] = {"description": description, "schema": ProblemSchema}
            prepare_response(response, self.spec, errors.PROBLEM)
            self.spec.components.response(name, response, lazy=True)

    def handle_http_exception(self, error: HTTPException) -> Any:
        return errors.from_http(error)


def create_app(chosen: Settings, referee: Referee | None = None) -> Flask:
    """The referee's Flask app, on the settings `chosen` (or the `referee` given, built on them)."""
    from api.pages import (
        consent,
        game,
        kit,
        lobby,
        me,
        players,
        profile,
        seat_links,
        seeks,
        sign_in,
        speech,
        talk,
        turn_mail,
        vacation,
    )
    from api.rest import boards, floor, games, rematch, rules, submissions
    from api.rest import me as me_api
    from api.rest import messages as messages_api
    from api.rest import players as players_api
    from api.rest import profile as profile_api
    from api.rest import seeks as seeks_api
    from api.rest import sign_in as sign_in_api
    from api.rest import standing_seeks as standing_seeks_api
    from api.rest import turn_mail as turn_mail_api
    from api.rest import vacation as vacation_api
    from api.streams import games as game_stream
    from api.streams import players as player_stream

    app = Flask("referee")
    app.extensions[EXTENSION] = referee or Referee(chosen)
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY,
        API_TITLE="referee",
        API_VERSION="v1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        REFEREE_API_KEY=chosen.api_key,
        API_SPEC_OPTIONS={
            "components": {
                "securitySchemes": {
                    "seat": {"type": "http", "scheme": "bearer"},
                    # A player's personal token (`rp_...`), made on /me.
                    "player": {"type": "http", "scheme": "bearer"},
                    # A signed-in browser: the session cookie sign-in sets.
                    "session": {"type": "apiKey", "in": "cookie", "name": "player"},
                    "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                }
            }
        },
    )
    install(app.jinja_env)
    # Answers speak the language `Accept-Language` asks for; pages choose again.
    app.before_request(speech.from_accept_language)
    # And speak English in UTC again once it is answered: the thread goes on to other
    # work (a test client runs the next test in it; a server thread, the next request).
    app.teardown_request(speech.done)
    app.before_request(headers.routing_redirect)
    app.before_request(bodies.check_request)
    app.after_request(headers.nosniff)
    api = ProblemApi(app)
    described = move_components() | new_game_components(NewGameIn)
    described |= new_seek_components(NewSeekIn)
    described |= new_seek_components(StandingSeekIn, STANDING_SEEK, "a standing seek")
    for name, schema in described.items():
        api.spec.components.schema(name, component=schema)
    api.spec.components.schema(GAME_EVENT, schema=GameEventOut)
    api.spec.components.schema(MESSAGE_EVENT, schema=MessageEventOut)
    api.spec.components.schema(PLAYER_EVENT, schema=PlayerEventOut)
    # In this order: it is the order of the document's tags.
    api.register_blueprint(rules.blp)
    api.register_blueprint(games.blp)
    api.register_blueprint(submissions.blp)
    api.register_blueprint(boards.blp)
    api.register_blueprint(game_stream.blp)
    api.register_blueprint(player_stream.blp)
    api.register_blueprint(rematch.blp)
    api.register_blueprint(messages_api.blp)
    api.register_blueprint(sign_in_api.blp)
    api.register_blueprint(vacation_api.blp)
    api.register_blueprint(me_api.blp)
    api.register_blueprint(turn_mail_api.blp)
    api.register_blueprint(profile_api.blp)
    api.register_blueprint(seeks_api.blp)
    api.register_blueprint(standing_seeks_api.blp)
    api.register_blueprint(players_api.blp)
    pages = (
        lobby.bp,
        seat_links.bp,
        game.bp,
        talk.bp,
        sign_in.bp,
        vacation.bp,
        me.bp,
        profile.bp,
        turn_mail.bp,
        seeks.bp,
        players.bp,
    )
    every_page = kit.pages(*pages, speech.bp)
    every_page.before_request(speech.choose)
    every_page.after_request(speech.vary)
    app.register_blueprint(every_page)
    app.register_blueprint(consent.bp)
    app.register_blueprint(game_stream.page_bp)
    kit.install_log_redaction()
    if chosen.bench_floor:
        app.register_blueprint(floor.blp)
    undeclared.install(app, api.spec.to_dict())
    app.register_error_handler(HTTPException, errors.from_http)
    app.register_error_handler(errors.Problem, errors.from_problem)
    app.register_error_handler(Refusal, errors.from_refusal)
    app.register_error_handler(OperationalError, errors.from_database_down)
    app.register_error_handler(PoolTimeout, errors.from_database_down)
    app.register_error_handler(Exception, errors.from_anything)
    return app
