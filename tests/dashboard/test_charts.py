"""The SVG charts: well-formed XML whatever the data, accessible, scalable, numbers as text."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import pytest

from broker.domain.billing import format_eur
from dashboard.web.charts import bar_chart, heatmap, sparkline

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element


SVG = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    root = ET.fromstring(str(markup))
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    # Sized by viewBox only: the page's CSS decides how wide it is (a phone, a tablet).
    assert root.get("viewBox") and root.get("width") is None and root.get("height") is None
    x, y, w, h = (float(v) for v in attr(root, "viewBox").split())
    assert (x, y) == (0, 0) and w > 0 and h > 0
    return root


def attr(e: ET.Element, name: str) -> str:
    """An attribute the element must have."""
    value = e.get(name)
    assert value is not None, f"<{e.tag}> has no {name}"
    return value


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


def labelled_by(root: ET.Element) -> tuple[str, str]:
    title_id, desc_id = attr(root, "aria-labelledby").split()
    title = root.find(f"{SVG}title")
    desc = root.find(f"{SVG}desc")
    assert title is not None and desc is not None
    assert title.get("id") == title_id and desc.get("id") == desc_id
    assert title.text is not None and desc.text is not None
    return title.text, desc.text


def money(v: float) -> str:
    return format_eur(int(v))


def bars(items: Any, **kw: Any) -> Any:
    return parse(
        bar_chart(
            items,
            chart_id=kw.pop("chart_id", "rev"),
            title=kw.pop("title", "Tržby"),
            desc=kw.pop("desc", "podľa dní"),
            fmt=kw.pop("fmt", money),
            **kw,
        )
    )


def test_bar_chart_labels_and_values_are_text() -> None:
    root = bars([("pool-01", 1200), ("pool-02", 600)])
    assert labelled_by(root) == ("Tržby", "podľa dní")
    shown = texts(root)
    assert "pool-01" in shown and "12,00 €" in shown and "6,00 €" in shown
    widths = [float(r.get("width")) for r in root.iter(f"{SVG}rect")]
    assert widths[0] == pytest.approx(2 * widths[1])  # proportional to value


def test_bar_chart_empty_says_so() -> None:
    root = bars([], empty="Žiadne tržby")
    assert "Žiadne tržby" in texts(root)
    assert not list(root.iter(f"{SVG}rect"))


def test_bar_chart_one_zero_value() -> None:
    root = bars([("30. 11. 2026", 0)])
    assert "0,00 €" in texts(root)
    assert float(next(root.iter(f"{SVG}rect")).get("width")) == 0


def test_bar_chart_huge_values_stay_inside_the_view_box() -> None:
    root = bars([("a", 10**15), ("b", 1)])
    width = float(attr(root, "viewBox").split()[2])
    for r in root.iter(f"{SVG}rect"):
        assert float(r.get("x")) >= 0 and float(r.get("x")) + float(r.get("width")) <= width


def test_bar_chart_negative_correction_draws_left_of_zero() -> None:
    root = bars([("pool-01", 1000), ("oprava", -250)])
    pos, neg = list(root.iter(f"{SVG}rect"))
    assert float(neg.get("x")) + float(neg.get("width")) == pytest.approx(float(pos.get("x")))
    assert float(neg.get("x")) >= 0
    assert "-2,50 €" in texts(root)
    assert [g.get("class") for g in root.iter(f"{SVG}g")] == ["bar bar-pos", "bar bar-neg"]


def test_text_is_escaped_and_unicode_kept() -> None:
    root = bars([("Zadražil Miro <b>&", 5), ("日本語 čšžťľ", 3)], title="<script>alert(1)</script>")
    shown = texts(root)
    assert "Zadražil Miro <b>&" in shown and "日本語 čšžťľ" in shown
    assert labelled_by(root)[0] == "<script>alert(1)</script>"  # text, not an element
    assert not list(root.iter("script")) and not list(root.iter(f"{SVG}script"))


def test_characters_xml_cannot_hold_are_dropped() -> None:
    root = bars([("a\x00b\x0bc\ud800", 1)], title="t\x1f")
    assert "abc" in texts(root)


def test_long_labels_are_shortened_with_the_full_one_in_the_tooltip() -> None:
    name = "Veľmi dlhé meno člena klubu, ktoré sa nezmestí"
    root = bars([(name, 1)])
    assert any(t.endswith("…") and len(t) <= 24 for t in texts(root))
    assert name in "".join(root.find(f"{SVG}g").find(f"{SVG}title").itertext())


def test_not_finite_values_count_as_zero() -> None:
    root = bars([("a", math.nan), ("b", math.inf), ("c", 5)], fmt=lambda v: f"{v:g}")
    assert texts(root)[1::2] == ["0", "0", "5"]


def heat(rows: Any, cols: Any, **kw: Any) -> Element[str]:
    return parse(heatmap(rows, cols, chart_id="util", title="Vyťaženie", desc="minúty za hodinu", fmt=lambda v: f"{v:g}", **kw))


def cells(root: ET.Element) -> list[ET.Element]:
    rects = [g.find(f"{SVG}rect") for g in root.iter(f"{SVG}g")]
    assert all(r is not None for r in rects), "a cell without its rect"
    return [r for r in rects if r is not None]


def test_heatmap_shades_by_share_of_the_maximum() -> None:
    root = heat({"pool-01": [0, 30, 60], "pool-02": [60, 0, 0]}, ["16", "17", "18"])
    opacity = [float(attr(c, "fill-opacity")) for c in cells(root)]
    assert opacity[0] == opacity[1 + 3] == pytest.approx(0.06)
    assert opacity[2] == opacity[3] == pytest.approx(1.0)
    assert 0.06 < opacity[1] < 1
    shown = texts(root)
    assert shown[:3] == ["16", "17", "18"] and "pool-02" in shown
    assert "30" in shown and shown.count("0") == 0  # empty cells carry no number, the tooltip has it


def test_heatmap_fixed_maximum_and_clamping() -> None:
    root = heat({"t": [120, -5]}, ["a", "b"], max_value=60)
    assert [float(attr(c, "fill-opacity")) for c in cells(root)] == [1.0, pytest.approx(0.06)]


def test_heatmap_ragged_rows_and_dst_day() -> None:
    hours = [f"{h:02d}" for h in range(25)]  # the autumn DST day has 25 hours
    root = heat({"short": [1], "long": list(range(30))}, hours)
    assert len(cells(root)) == 2 * 25


@pytest.mark.parametrize("rows,cols", [({}, ["16"]), ({"pool-01": [1]}, [])])
def test_heatmap_empty(rows: Any, cols: Any) -> None:
    root = heat(rows, cols, empty="Bez údajov")
    assert texts(root) == ["Bez údajov"]


def test_heatmap_all_zero_does_not_divide_by_zero() -> None:
    root = heat({"pool-01": [0, 0]}, ["16", "17"])
    assert all(float(attr(c, "fill-opacity")) == pytest.approx(0.06) for c in cells(root))


@pytest.mark.parametrize("values", [[], [5], [3, 3, 3], [0, 10**12, -4], [math.nan, 1]])
def test_sparkline_edge_cases(values: Any) -> None:
    root = parse(sparkline(values, chart_id="s", title="Pády", desc="za hodinu"))
    assert labelled_by(root) == ("Pády", "za hodinu")
    w, h = (float(v) for v in attr(root, "viewBox").split()[2:])
    for c in root.iter(f"{SVG}circle"):
        assert 0 <= float(attr(c, "cx")) <= w and 0 <= float(attr(c, "cy")) <= h
    assert len(list(root.iter(f"{SVG}circle"))) == (1 if values else 0)
    assert len(list(root.iter(f"{SVG}polyline"))) == (1 if len(values) > 1 else 0)


def test_chart_ids_are_escaped() -> None:
    root = parse(bar_chart([("a", 1)], chart_id='x" onload="y', title="t", desc="d", fmt=str))
    assert root.get("onload") is None
