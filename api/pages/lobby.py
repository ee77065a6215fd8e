"""The lobby (`/`: each game's card, then the games played, 50 a page), each game's
picture (`/pictures/<name>.svg`) and rules page (`/rules/<name>`), and the new-game form
(`/new/<name>`)."""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, current_app, make_response, render_template, request
from marshmallow import ValidationError

from api.http import bodies, throttle
from api.http.context import referee, session
from api.http.errors import Problem
from api.pages import rules_text
from api.pages.form_words import said
from api.pages.in_words import ON_TIMEOUT, on_timeout_words, seat_words, shown_names
from api.pages.kit import JSONish, check_csrf
from api.schemas.games import PlayerIn
from api.schemas.rules import describe
from referee import games
from referee.games import AnyGame
from referee.i18n import LANGUAGES, _, known_language, ngettext, when
from referee.names import shown as shown_name
from referee.render import showcase
from referee.service import creating, refusals
from referee.store import reads

bp = Blueprint("lobby", __name__)

LOBBY_GAMES = 50

_INTEGER = re.compile(r"-?[0-9]{1,9}")
# Opened on its own, a picture runs nothing, loads nothing and is a sandboxed origin of
# its own (as GET /v1/games/<id>/board.svg).
_PICTURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
# A game's start time, as the lobby's "Older games" link gives it.
_CURSOR = re.compile(r"[0-9T:.+\-]{1,40}")


@bp.get("/")
def lobby() -> str:
    before = request.args.get("before")
    if before is not None and not _CURSOR.fullmatch(before):
        raise Problem(
            400, "bad_request", _("'before' is the start time of a game the lobby listed")
        )
    with session() as db:
        found = reads.list_games(db, None, None, before, LOBBY_GAMES + 1)
        now = datetime.now(UTC)
        rows = [
            {
                "game": game,
                "title": _title(game.name),
                "names": shown_names(reads.seats(db, game.id)),
                "started": when(datetime.fromisoformat(game.created_at), now),
            }
            for game in found[:LOBBY_GAMES]
        ]
    older = found[LOBBY_GAMES - 1].created_at if len(found) > LOBBY_GAMES else None
    return render_template(
        "web/lobby.html",
        cards=[_card(rules) for rules in games.all_games()],
        rows=rows,
        older=older,
        paged=before is not None,
    )


def _described(rules: AnyGame) -> JSONish:
    """The game as `GET /v1/rules` describes it, its title in the reader's language."""
    return {**describe(rules), "title": _(rules.title)}


def _card(rules: AnyGame) -> JSONish:
    """A game as the lobby sells it: its line, players, length and picture."""
    described = _described(rules)
    counts = described["players"]
    return {
        "rules": described,
        "line": _(showcase.showcase(rules.name).line),
        "players": _("%(fewest)d\u2013%(most)d players")
        % {"fewest": counts[0], "most": counts[-1]},
        "length": showcase.length_words(rules.name),
    }


@bp.get("/pictures/<name>.svg")
def picture(name: str) -> Response:
    """A real position of the game, for its card in the lobby: the same bytes every time."""
    _rules(name)
    response = make_response(showcase.picture(name))
    response.mimetype = "image/svg+xml"
    response.headers["Cache-Control"] = "public, max-age=86400"
    response.headers["Content-Security-Policy"] = _PICTURE_CSP
    return response


@bp.get("/rules/<name>")
def rules_page(name: str) -> Response:
    """The game's rules, as its rules page in docs/rules/ says them, in the reader's language."""
    rules = _rules(name)
    written = rules_text.languages(rules.name)
    language = _reader_language(written)
    page = render_template(
        "web/rules.html",
        card=_card(rules),
        text=rules_text.rules_html(rules.name, language),
        lang=language,
        others=[other for other in written if other != language],
    )
    response = make_response(page)
    # One address, two languages: a cache must keep them apart.
    response.vary.add("Accept-Language")
    return response


def _reader_language(written: tuple[str, ...]) -> str:
    """`?lang=` if the page is written in it, else the best of Accept-Language, else English."""
    asked = request.args.get("lang", "")
    if asked in written:
        return asked
    # Werkzeug's parser weighs the q-values and lets `fr-FR` match `fr`.
    return request.accept_languages.best_match(written, default="en")


@bp.get("/favicon.ico")
def favicon() -> Response:
    """Browsers ask for /favicon.ico whatever a page links: send them to the SVG icon."""
    response = make_response("", 301)
    # Relative, so that it still points right when a proxy serves the site under a prefix.
    response.headers["Location"] = "assets/favicon.svg"
    return response


def _title(name: str) -> str:
    try:
        return _(games.get(name).title)
    except KeyError:
        return name


def _rules(name: str) -> AnyGame:
    try:
        return games.get(name)
    except KeyError:
        raise Problem(
            404, "not_found", _("There is no game called %(name)r here.") % {"name": name}
        ) from None


@bp.get("/new/<name>")
def new_game(name: str) -> str:
    rules = _rules(name)
    return render_template("web/new.html", **_form_context(rules, {}, {}))


def _widget(spec: JSONish) -> str:
    """How an option is asked for: a box, a choice, a number, JSON, or text."""
    if spec.get("type") == "boolean":
        return "checkbox"
    if spec.get("enum"):
        return "select"
    if spec.get("type") == "integer":
        return "number"
    if isinstance(spec["default"], dict | list) or spec.get("type") in ("array", "object"):
        return "json"
    return "text"


def _shown(spec: JSONish) -> str:
    """An option's default as its field shows it."""
    default = spec["default"]
    if _widget(spec) == "json":
        return json.dumps(default, indent=1, sort_keys=True)
    return "" if default is None else str(default)


def _form_context(rules: AnyGame, values: Mapping[str, str], errors: dict[str, str]) -> JSONish:
    described = _described(rules)
    options = [
        {
            "name": name,
            "key": f"opt-{name}",
            "label": _(rules.option_labels.get(name, name.replace("_", " ").capitalize())),
            "widget": _widget(spec),
            "default": _shown(spec),
            "checked": (f"opt-{name}" in values) if values else bool(spec["default"]),
            "spec": spec,
            # A choice's words: the game's label of `name=value`, else the value itself.
            "choices": [
                (choice, _(rules.option_labels.get(f"{name}={choice}", str(choice))))
                for choice in spec.get("enum", ())
            ],
        }
        for name, spec in described["options"].items()
    ]
    return {
        "rules": described,
        "notation_help": _(rules.notation_help),
        "options": options,
        "seats": max(rules.players),
        "values": values,
        "errors": errors,
        "needs_key": bool(_api_key()),
        "on_timeout": {policy: on_timeout_words(policy) for policy in ON_TIMEOUT},
        "bots": described["bots"],
    }


def _api_key() -> str | None:
    key = current_app.config.get("REFEREE_API_KEY")
    return str(key) if key else None


def _read_players(form: Mapping[str, str], seats: int, errors: dict[str, str]) -> list[JSONish]:
    players: list[JSONish] = []
    for n in range(seats):
        name = form.get(f"name-{n}", "").strip()
        email = form.get(f"email-{n}", "").strip()
        # "person", or a bot's level; a bot's seat may go unnamed.
        bot = form.get(f"bot-{n}", "person").strip() or "person"
        if bot != "person" and not name:
            name = _("Bot %(number)d") % {"number": n + 1}
        if not name:
            if email:
                errors[f"name-{n}"] = _("Give this player a name (or clear the mail address).")
            continue
        if bot != "person" and email:
            errors[f"email-{n}"] = _("A bot has no mail address: clear it, or choose a person.")
            continue
        try:
            loaded = {"name": name, "email": email or None, "bot": None if bot == "person" else bot}
            players.append(PlayerIn().load(loaded))
        except ValidationError as error:
            found = error.messages if isinstance(error.messages, dict) else {"name": error.messages}
            for field, messages in found.items():
                errors[f"{field}-{n}"] = " ".join(map(said, messages))
    return players


def _read_options(form: Mapping[str, str], described: JSONish, errors: dict[str, str]) -> JSONish:
    options: JSONish = {}
    for name, spec in described["options"].items():
        key = f"opt-{name}"
        if spec.get("type") == "boolean":
            options[name] = key in form
            continue
        if key not in form:
            continue  # the option's default applies
        raw = form.get(key, "").strip()
        widget = _widget(spec)
        if widget == "number":
            if _INTEGER.fullmatch(raw):
                options[name] = int(raw)
            else:
                errors[key] = _("%(option)s: give a whole number.") % {"option": name}
        elif widget == "json":
            try:
                options[name] = bodies.loads(raw)
            except bodies.BadJSON as error:
                errors[key] = f"{name}: {error}"
        else:
            options[name] = raw
    return options


def _said(field: str, messages: Any) -> str:
    """Marshmallow's messages (nested for lists and objects) as one sentence."""
    if isinstance(messages, dict):
        return " ".join(_said(f"{field}[{key}]", inner) for key, inner in messages.items())
    text = " ".join(map(said, messages)) if isinstance(messages, list | tuple) else said(messages)
    return text if field.startswith("_") else f"{field}: {text}"


def _form_errors(refused: refusals.Refusal) -> dict[str, str]:
    """The new-game form's messages for a refusal of the service, by field."""
    if isinstance(refused, refusals.BadRequest):
        return {"deadline": _("Time per turn: %(reason)s") % {"reason": refused.reason}}
    if isinstance(refused, refusals.Unauthorized):
        # Bots alone, without the server's key.
        return {"players": refused.reason[:1].upper() + refused.reason[1:] + "."}
    told = {}
    for field, messages in refused.extra.get("errors", {}).items():
        seat = _SEAT_FIELD.fullmatch(field)
        if seat is not None:
            # A seat's field (`players.1.bot`): said beside that seat's row.
            told[f"{seat[2]}-{seat[1]}"] = " ".join(map(said, messages))
            continue
        target = "players" if field in ("_players", "players") else f"opt-{field}"
        told[target] = (
            _said(field, messages) if target != "players" else " ".join(map(said, messages))
        )
    return told


_SEAT_FIELD = re.compile(r"players\.([0-9]+)\.(bot|email|name)")


def _form_game(rules: AnyGame, form: Mapping[str, str], errors: dict[str, str]) -> JSONish:
    """The new game the form asks for, as the service's command fields; notes what is wrong."""
    key = _api_key()
    given = form.get("api_key", "")
    if key and not hmac.compare_digest(given.encode(), key.encode()):
        errors["api_key"] = _("This server needs its API key to create games.")
    players = _read_players(form, max(rules.players), errors)
    options = _read_options(form, describe(rules), errors)
    counts = ", ".join(map(str, rules.players))
    if len(players) not in rules.players and "players" not in errors:
        errors["players"] = ngettext(
            "%(game)s is played by %(counts)s players; you named %(num)d.",
            "%(game)s is played by %(counts)s players; you named %(num)d.",
            len(players),
        ) % {"game": _(rules.title), "counts": counts, "num": len(players)}
    on_timeout = form.get("on_timeout", "random")
    if on_timeout not in ON_TIMEOUT:
        errors["on_timeout"] = _("Choose what happens when time runs out.")
    language = form.get("language", "en")
    if language not in LANGUAGES:
        errors["language"] = _("Choose a language the referee speaks.")
    return {
        "game": rules.name,
        "players": [creating.Player(p["name"], p["email"], p["bot"]) for p in players],
        "options": options,
        "deadline": form.get("deadline", "").strip() or None,
        "on_timeout": on_timeout,
        "language": known_language(language),
        # With the server's key this is a trusted client, as for the API.
        "trusted": key is not None,
    }


@bp.post("/new/<name>")
def create_game(name: str) -> tuple[str, int]:
    check_csrf()
    rules = _rules(name)
    form = request.form
    errors: dict[str, str] = {}
    command = creating.NewGame(**_form_game(rules, form, errors))
    if not errors and not command.trusted:
        throttle.check("create")
    created = None
    try:
        if not errors:
            created = creating.create_game(referee(), command)
    except (
        refusals.BadPlayers,
        refusals.BadOptions,
        refusals.BadRequest,
        refusals.Unauthorized,
    ) as refused:
        errors |= _form_errors(refused)
    if created is None:
        values = {k: v for k, v in form.items() if k not in ("csrf", "api_key")}
        return render_template("web/new.html", **_form_context(rules, values, errors)), 422
    game_id = created.game.id
    # A seat with a mail address gets its link there, not on this page.
    links = [
        {
            "seat": n,
            "name": shown_name(player.name) or seat_words(n),
            "link": None
            if (player.email and not command.trusted) or player.bot
            else _seat_link(game_id, token),
            "bot": player.bot,
            # What the mail does for this seat: None (no address), or the address's consent.
            "mail": consent,
        }
        for n, (player, token, consent) in enumerate(
            zip(command.players, created.tokens, created.consent, strict=True)
        )
    ]
    page = render_template("web/created.html", rules=describe(rules), game_id=game_id, links=links)
    return page, 201


def _seat_link(game_id: str, token: str) -> str:
    """A seat's link under REFEREE_PUBLIC_URL, as mail gives it: never under the Host
    header of the request, which its sender writes, for a link handed on to a player."""
    return f"{referee().settings.public_url}/g/{game_id}/seat/{token}"
