"""The words of marshmallow's messages, which a form shows beside the field they refuse.

marshmallow writes them in English when it checks a value. They are registered
here like the rules' reasons (`referee.games.reasons`), so that a page says
each in its reader's language (`said`), their values kept.
"""

from __future__ import annotations

from referee.games.reasons import reason, reason_words
from referee.i18n import N_

# Those a form of ours can meet: its fields' own, and their validators'.
for _template in (
    N_("Missing data for required field."),
    N_("Field may not be null."),
    N_("Invalid value."),
    N_("Not a valid string."),
    N_("Not a valid integer."),
    N_("Not a valid number."),
    N_("Not a valid boolean."),
    N_("Not a valid email address."),
    N_("Not a valid list."),
    N_("Not a valid mapping type."),
    N_("Invalid input type."),
    N_("Unknown field."),
    N_("String does not match expected pattern."),
    N_("Must be one of: {choices}."),
    N_("Length must be between {min} and {max}."),
    N_("Shorter than minimum length {min}."),
    N_("Longer than maximum length {max}."),
    N_("Must be greater than or equal to {min} and less than or equal to {max}."),
    N_("Must be greater than or equal to {min}."),
    N_("Must be less than or equal to {max}."),
):
    reason(_template)


def said(message: object) -> str:
    """One of marshmallow's messages (or a reason of ours) in the reader's language."""
    return reason_words(str(message))
