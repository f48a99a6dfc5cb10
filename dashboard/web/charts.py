"""Server-side SVG charts for the report pages: pure functions, data in, markup out.

Why SVG drawn here and not a JavaScript library: the dashboard must work on the club's LAN with
the internet down and without a build step, and a chart that is already in the HTML prints,
scales (viewBox, no fixed pixel size) and is read by a screen reader (role="img" with a title and
a description, every number also written as text) without any script running.

Every function returns `Markup` (safe to drop into a Jinja template) and escapes whatever text it
is given; characters XML cannot hold at all (NUL and other C0 controls) are removed, so a member
name pasted from anywhere cannot break the page. Numbers that are not finite count as 0.
Money and other units are formatted by the caller's `fmt`, so the charts know no locale.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import SupportsFloat, cast

from markupsafe import Markup, escape

Formatter = Callable[[float], str]

# Geometry in viewBox units; the browser scales the whole drawing to the box it is given.
WIDTH = 640
FONT = 12
CHAR_W = 7.0  # a rough average glyph width at FONT, enough to size label columns
ROW_H = 26
BAR_H = 18
PAD = 8
MAX_LABEL_CHARS = 24
# Colours as presentation attributes: the page's CSP forbids inline styles, and a chart must
# look right without any stylesheet (printed, or saved on its own).
BAR_FILL, NEG_FILL, HEAT_FILL = "#1d4ed8", "#b91c1c", "#1565c0"

# XML 1.0 allows tab, LF and CR among the C0 controls and nothing else; lone surrogates neither.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _text(value: object) -> str:
    return str(escape(_NOT_XML.sub("", str(value))))


def _num(value: object) -> float:
    try:
        v = float(cast("SupportsFloat", value))  # any value: float() is the check
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) else 0.0


def _short(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _f(x: float) -> str:
    """Coordinates with two decimals at most: small markup, stable output for tests."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _open(chart_id: str, title: str, desc: str, width: float, height: float, css_class: str) -> list[str]:
    cid = _text(chart_id)
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css_class}" viewBox="0 0 {_f(width)} {_f(height)}" '
        f'preserveAspectRatio="xMinYMin meet" role="img" aria-labelledby="{cid}-title {cid}-desc" '
        f'font-family="sans-serif" font-size="{FONT}">',
        f'<title id="{cid}-title">{_text(title)}</title>',
        f'<desc id="{cid}-desc">{_text(desc)}</desc>',
    ]


def _empty(chart_id: str, title: str, desc: str, message: str, css_class: str) -> Markup:
    parts = _open(chart_id, title, desc, WIDTH, 3 * ROW_H, css_class)
    parts.append(f'<text x="{WIDTH / 2}" y="{1.7 * ROW_H}" text-anchor="middle" class="chart-empty">{_text(message)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


# --- bar chart ---------------------------------------------------------------------------


def bar_chart(
    items: Sequence[tuple[str, float]],
    *,
    chart_id: str,
    title: str,
    desc: str,
    fmt: Formatter,
    empty: str = "—",
) -> Markup:
    """Horizontal bars, one row per (label, value), in the order given.

    Horizontal because labels are days and table names: they stay readable on a phone, where
    vertical bars would need rotated text. Negative values (a manager's correction) draw left
    of the zero line, so a day that lost money still shows as what it is.
    """
    rows = [(_short(_NOT_XML.sub("", str(label))), str(label), _num(value)) for label, value in items]
    if not rows:
        return _empty(chart_id, title, desc, empty, "chart-bars")
    texts = [fmt(v) for _, _, v in rows]
    label_w = PAD + CHAR_W * max(len(short) for short, _, _ in rows)
    value_w = PAD + CHAR_W * max(len(t) for t in texts)
    lo = min(0.0, *(v for _, _, v in rows))
    hi = max(0.0, *(v for _, _, v in rows))
    span = (hi - lo) or 1.0
    plot_w = max(WIDTH - label_w - 2 * value_w - 2 * PAD, 80.0)  # a value label may sit left of a negative bar
    x0 = label_w + PAD + value_w * (lo < 0)
    zero = x0 + plot_w * (-lo / span)
    height = ROW_H * len(rows) + 2 * PAD
    width = x0 + plot_w + value_w + PAD
    parts = _open(chart_id, title, desc, width, height, "chart-bars")
    for i, ((short, full, v), text) in enumerate(zip(rows, texts)):
        y = PAD + i * ROW_H
        length = plot_w * abs(v) / span
        left = zero - length if v < 0 else zero
        mid = y + ROW_H / 2
        kind = "neg" if v < 0 else "pos"
        parts.append(f'<g class="bar bar-{kind}"><title>{_text(full)}: {_text(text)}</title>')
        parts.append(f'<text x="{_f(label_w)}" y="{_f(mid)}" text-anchor="end" dominant-baseline="middle">{_text(short)}</text>')
        parts.append(
            f'<rect x="{_f(left)}" y="{_f(mid - BAR_H / 2)}" width="{_f(length)}" height="{BAR_H}" rx="2" '
            f'fill="{NEG_FILL if v < 0 else BAR_FILL}"/>'
        )
        if v < 0:
            parts.append(
                f'<text x="{_f(left - 4)}" y="{_f(mid)}" text-anchor="end" dominant-baseline="middle" class="value">{_text(text)}</text>'
            )
        else:
            parts.append(f'<text x="{_f(left + length + 4)}" y="{_f(mid)}" dominant-baseline="middle" class="value">{_text(text)}</text>')
        parts.append("</g>")
    parts.append(f'<line x1="{_f(zero)}" y1="{PAD / 2}" x2="{_f(zero)}" y2="{_f(height - PAD / 2)}" class="axis" stroke="currentColor"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


# --- heatmap -----------------------------------------------------------------------------


def heatmap(
    rows: Mapping[str, Sequence[float]],
    columns: Sequence[str],
    *,
    chart_id: str,
    title: str,
    desc: str,
    fmt: Formatter,
    max_value: float | None = None,
    empty: str = "—",
) -> Markup:
    """A grid: one row per key of `rows` (tables), one column per label in `columns` (hours).

    Shade is value / max_value (default: the largest value), so the busiest hour is the
    darkest; a fixed max_value (60 minutes in an hour) makes days comparable instead. Cells
    with a value also carry it as text, so the grid reads without colour.
    A row shorter than `columns` is padded with zeros, a longer one cut.
    """
    if not rows or not columns:
        return _empty(chart_id, title, desc, empty, "chart-heatmap")
    cols = [_NOT_XML.sub("", str(c)) for c in columns]
    grid = [
        (_NOT_XML.sub("", str(name)), [_num(v) for v in list(values)[: len(cols)]] + [0.0] * max(0, len(cols) - len(values)))
        for name, values in rows.items()
    ]
    top = _num(max_value) if max_value is not None else max((v for _, vs in grid for v in vs), default=0.0)
    top = top if top > 0 else 1.0
    label_w = PAD + CHAR_W * max(len(_short(name, 16)) for name, _ in grid)
    cell_w = max((WIDTH - label_w - PAD) / len(cols), 14.0)
    head_h = ROW_H
    height = head_h + ROW_H * len(grid) + PAD
    width = label_w + PAD + cell_w * len(cols)
    parts = _open(chart_id, title, desc, width, height, "chart-heatmap")
    for j, col in enumerate(cols):
        cx = label_w + PAD + cell_w * (j + 0.5)
        parts.append(f'<text x="{_f(cx)}" y="{_f(head_h * 0.6)}" text-anchor="middle" class="col">{_text(col)}</text>')
    for i, (name, values) in enumerate(grid):
        y = head_h + i * ROW_H
        parts.append(
            f'<text x="{_f(label_w)}" y="{_f(y + ROW_H / 2)}" text-anchor="end" dominant-baseline="middle" class="row">{_text(_short(name, 16))}</text>'
        )
        for j, v in enumerate(values):
            share = min(max(v / top, 0.0), 1.0)
            x = label_w + PAD + cell_w * j
            text = fmt(v)
            parts.append(
                f'<g class="cell"><title>{_text(name)} {_text(cols[j])}: {_text(text)}</title>'
                f'<rect x="{_f(x + 1)}" y="{_f(y + 1)}" width="{_f(cell_w - 2)}" height="{ROW_H - 2}" '
                f'fill="{HEAT_FILL}" fill-opacity="{_f(0.06 + 0.94 * share)}"/>'
            )
            if v:
                colour = "#fff" if share > 0.5 else "#000"
                parts.append(
                    f'<text x="{_f(x + cell_w / 2)}" y="{_f(y + ROW_H / 2)}" text-anchor="middle" '
                    f'dominant-baseline="middle" fill="{colour}" font-size="{FONT - 2}">{_text(text)}</text>'
                )
            parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


# --- sparkline ---------------------------------------------------------------------------


def sparkline(values: Sequence[float], *, chart_id: str, title: str, desc: str, width: float = 120, height: float = 24) -> Markup:
    """A small line of a series (e.g. drops per hour beside a table's name), ends marked."""
    points = [_num(v) for v in values]
    parts = _open(chart_id, title, desc, width, height, "chart-spark")
    if points:
        lo, hi = min(points), max(points)
        span = (hi - lo) or 1.0
        step = (width - 4) / max(len(points) - 1, 1)

        def at(i: int, v: float) -> tuple[float, float]:
            # A flat series sits in the middle rather than on the floor: "steady", not "nothing".
            y = height / 2 if hi == lo else height - 2 - (height - 4) * (v - lo) / span
            return 2 + step * i, y

        coords = [at(i, v) for i, v in enumerate(points)]
        if len(coords) > 1:
            parts.append(
                '<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="'
                + " ".join(f"{_f(x)},{_f(y)}" for x, y in coords)
                + '"/>'
            )
        x, y = coords[-1]
        parts.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="2" fill="currentColor"/>')
    parts.append("</svg>")
    return Markup("".join(parts))
