"""The benchmark's floor: insert one row and enqueue a no-op task, nothing else.

Registered only with `REFEREE_BENCH_FLOOR=1`; `bench/service.py` compares
the real move path with it on the same server.
"""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from referee.queue import NOOP, enqueue
from referee.store import db, delivery

blp = Blueprint("floor", __name__, url_prefix="/bench")


@blp.route("/floor/<game_id>", methods=["POST"])
def floor(game_id: str) -> ResponseReturnValue:
    with db.transaction() as session:
        row_id = delivery.bench_row(session, game_id)
    enqueue(NOOP, row_id)
    return jsonify({"id": row_id}), 202
