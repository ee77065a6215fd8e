"""The printed components of Mandala Stones that the rulebook text does not give.

The mandala board's layout and the objective cards are printed on the
components, so the referee holds them here as data, in exactly the JSON
shape of the game options `mandala_board` and `objectives` that replace
them (`referee.games.mandala_stones` validates both the same way).

`mandala_board`::

    {"spaces": 61,                      # spaces, numbered in filling order, centre = 1
     "bonuses": {"5": 1, "10": 2},      # space -> points given to whoever covers it
     "hands": {"2": 38, "3": 48, "4": 58}}  # player count -> its hands space

`objectives` is `"off"` or a list of cards, each
`{"card": 7, "points": 6, "condition": {"kind": ..., <its parameters>}}`,
where the condition, checked on the holder's board at the end, is one of:

- `{"kind": "top_pattern_only", "pattern": "*" | "o"}`: at least one
  tower, and every tower shows that pattern on top;
- `{"kind": "tower_count", "count": n}`: exactly n towers;
- `{"kind": "top_colours", "count": n, "min_towers": m}`: exactly n
  distinct colours on top of the towers, and at least m towers;
- `{"kind": "heights_present", "heights": [h, ...]}`: a tower of every
  listed height;
- `{"kind": "towers_of_height", "height": h, "at_least": m}`: at least m towers
  of height h;
- `{"kind": "same_height", "count": n}`: exactly n towers, all of one height.

A "tower" is a non-empty space of the player's board; heights count stones.
"""

from __future__ import annotations

from typing import Any

MANDALA_BOARD: dict[str, Any] = {
    "spaces": 61,
    "bonuses": {
        "5": 1,
        "10": 2,
        "12": 1,
        "19": 1,
        "20": 2,
        "26": 1,
        "30": 2,
        "33": 1,
        "40": 2,
        "45": 1,
        "50": 2,
        "52": 1,
    },
    "hands": {"2": 38, "3": 48, "4": 58},
}

OBJECTIVES: list[dict[str, Any]] = [
    {"card": 1, "points": 7, "condition": {"kind": "top_pattern_only", "pattern": "*"}},
    {"card": 2, "points": 7, "condition": {"kind": "top_pattern_only", "pattern": "o"}},
    {"card": 3, "points": 5, "condition": {"kind": "tower_count", "count": 5}},
    {"card": 4, "points": 5, "condition": {"kind": "tower_count", "count": 1}},
    {"card": 5, "points": 6, "condition": {"kind": "top_colours", "count": 4, "min_towers": 4}},
    {"card": 6, "points": 6, "condition": {"kind": "top_colours", "count": 1, "min_towers": 2}},
    {"card": 7, "points": 6, "condition": {"kind": "heights_present", "heights": [1, 2, 3, 4]}},
    {"card": 8, "points": 5, "condition": {"kind": "towers_of_height", "height": 1, "at_least": 3}},
    {"card": 9, "points": 4, "condition": {"kind": "towers_of_height", "height": 4, "at_least": 1}},
    {"card": 10, "points": 6, "condition": {"kind": "same_height", "count": 3}},
]
