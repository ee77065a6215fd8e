"""`GET /v1/submissions/{id}`: how a submitted move was decided."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from api.http import seat_auth
from api.http.context import session
from api.http.errors import BAD_QUERY, BAD_TOKEN, SCOPE, Problem, declared
from api.rest.games import submission_json
from api.schemas.submissions import SubmissionOut
from referee.service.submitting import well_formed
from referee.store.tables import Submission

blp = Blueprint(
    "submissions", __name__, url_prefix="/v1/submissions", description="Submitted moves"
)


@blp.route("/<submission_id>", methods=["GET"])
@blp.response(200, SubmissionOut)
@blp.doc(
    operationId="getSubmission",
    security=seat_auth.AS_SEAT_OR_SPECTATOR,
    parameters=seat_auth.SEAT_PARAMETERS,
    **declared(
        {
            401: BAD_TOKEN,
            403: SCOPE,
            404: "not_found: no such submission",
            422: BAD_QUERY,
        }
    ),
)
def show(submission_id: str) -> dict[str, Any]:
    """Pending, accepted (with its `seq`) or rejected (with the reason).

    Only the submitting seat sees the move itself.
    """
    with session() as db:
        found = db.get(Submission, submission_id) if well_formed(submission_id) else None
        if found is None:
            raise Problem(404, "not_found", "there is no submission with this id")
        seat = seat_auth.viewer(db, found.game_id)
    return {"submission": submission_json(found, seat)}
