"""A rating-history plot as SVG (no plotting library needed): one line per entrant."""

from __future__ import annotations

from html import escape
from typing import Any

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def history_svg(
    histories: dict[str, list[dict[str, Any]]], title: str, width: int = 720, height: int = 360
) -> str:
    """``histories``: entrant -> [{"n": result number, "rating": conservative rating}, ...]."""
    pad_l, pad_r, pad_t, pad_b = 56, 150, 36, 36
    points = [(h["n"], h["rating"]) for hs in histories.values() for h in hs]
    xs = [p[0] for p in points] or [0, 1]
    ys = [p[1] for p in points] or [0, 1]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = min(ys), max(max(ys), min(ys) + 1)
    w, h = width - pad_l - pad_r, height - pad_t - pad_b

    def px(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * w

    def py(y: float) -> float:
        return pad_t + (1 - (y - y0) / (y1 - y0)) * h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{pad_l}" y="20" font-size="14">{escape(title)}</text>',
        f'<line x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" y2="{pad_t + h}" stroke="#444"/>',
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + h}" stroke="#444"/>',
    ]
    for i in range(5):
        yv = y0 + (y1 - y0) * i / 4
        out.append(f'<text x="{pad_l - 6}" y="{py(yv) + 4:.1f}" text-anchor="end">{yv:.1f}</text>')
        out.append(
            f'<line x1="{pad_l}" y1="{py(yv):.1f}" x2="{pad_l + w}" y2="{py(yv):.1f}" stroke="#ddd"/>'
        )
    out.append(
        f'<text x="{pad_l + w / 2}" y="{height - 8}" text-anchor="middle">rated games</text>'
    )
    for i, (name, hs) in enumerate(sorted(histories.items())):
        color = COLORS[i % len(COLORS)]
        if hs:
            pts = " ".join(f"{px(p['n']):.1f},{py(p['rating']):.1f}" for p in hs)
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
        out.append(
            f'<rect x="{pad_l + w + 12}" y="{pad_t + 18 * i}" width="10" height="10" fill="{color}"/>'
        )
        out.append(f'<text x="{pad_l + w + 28}" y="{pad_t + 18 * i + 10}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
