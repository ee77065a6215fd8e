"""The bounds every JSON body meets before any schema reads it (enforced by api/http/bodies.py).

Apart from api/http/bodies.py so that the document's schemas (api/schemas/rules.py)
can state them too without importing the request machinery.
"""

from __future__ import annotations

# Deeper than any move, option set or body the referee takes (they nest 4 or 5 levels).
MAX_DEPTH = 32
# Integers beyond 64 bits are no move number, seat, count or option of any game.
MAX_DIGITS = 19
