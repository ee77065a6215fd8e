"""The rating chart of a profile (`referee.render.rating_chart`): well-formed SVG, one dot
per rated game, nothing that runs or needs a style sheet, text escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from referee.render.rating_chart import Point, rating_chart

SVG = "{http://www.w3.org/2000/svg}"


def points(count: int, same_time: bool = False) -> list[Point]:
    return [
        Point(
            at=0.0 if same_time else n * 86400.0,
            rating=1500 + 13 * n - (n % 3) * 20,
            deviation=max(60, 350 - 15 * n),
            provisional=350 - 15 * n > 110,
            label=f"day {n}",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [1, 2, 20, 200])
def test_the_chart_is_svg_with_one_dot_per_game_and_no_script(count: int) -> None:
    drawn = rating_chart(points(count), "Ann's rating", "2026-03-01", "2026-03-20")
    root = ET.fromstring(drawn)
    assert root.tag == f"{SVG}svg" and root.get("viewBox") == "0 0 480 210"
    assert len(root.findall(f"{SVG}circle")) == count
    assert len(root.findall(f"{SVG}polyline")) == (1 if count > 1 else 0)
    for element in root.iter():
        assert element.tag != f"{SVG}script" and element.tag != f"{SVG}style"
        assert "style" not in element.attrib
        assert not any(name.startswith("on") for name in element.attrib)
    # Each dot says its figures in its tooltip; the ends of the time axis are written.
    tips = [c.find(f"{SVG}title") for c in root.findall(f"{SVG}circle")]
    assert tips[0] is not None and tips[0].text == "1500 ± 350, day 0"
    texts = [t.text for t in root.findall(f"{SVG}text")]
    assert "2026-03-01" in texts and "2026-03-20" in texts


def test_dots_follow_time_and_higher_ratings_are_drawn_higher() -> None:
    drawn = ET.fromstring(rating_chart(points(20), "t", "a", "b"))
    dots = [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in drawn.iter(f"{SVG}circle")]
    assert [x for x, _ in dots] == sorted(x for x, _ in dots)
    ratings = [p.rating for p in points(20)]
    highest, lowest = ratings.index(max(ratings)), ratings.index(min(ratings))
    assert dots[highest][1] < dots[lowest][1]
    # Games at one moment are spread evenly rather than drawn on one another.
    stacked = ET.fromstring(rating_chart(points(3, same_time=True), "t", "a", "b"))
    assert len({c.get("cx") for c in stacked.iter(f"{SVG}circle")}) == 3


def test_text_is_escaped() -> None:
    drawn = rating_chart(points(2), "<script>alert(1)</script> & co", "<b>", "</svg>")
    root = ET.fromstring(drawn)
    assert root.find(f"{SVG}title") is not None
    assert "<script>" not in drawn and "</svg>" not in drawn[:-6]
