"""The benchmark's floor: insert one row and enqueue a no-op task, nothing else.

Registered only with `REFEREE_BENCH_FLOOR=1`; `bench/service.py` compares
the real move path with it on the same server.
"""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from api.http.context import referee
from referee.service.bench import floor_row

blp = Blueprint("floor", __name__, url_prefix="/bench/floor")


@blp.route("/<game_id>", methods=["POST"])
def floor(game_id: str) -> ResponseReturnValue:
    return jsonify({"id": floor_row(referee(), game_id)}), 202
