"""Head-to-head statistics: how often one entrant finished above another, with a 95% interval.

A pair's games are those both played; finishing above counts 1, equal ranks 1/2. The interval is
Wilson's score interval at 95% (z = 1.96), which behaves at 0% and 100% and for few games.
"""

from __future__ import annotations

import math
from typing import Any

from .ratings import Result

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def head_to_head(results: list[Result]) -> list[dict[str, Any]]:
    """Rows {a, b, games, wins, losses, ties, win_rate, ci95} for every ordered pair that met."""
    tally: dict[tuple[str, str], list[int]] = {}
    for r in results:
        ranks = r.ranks()
        for i, a in enumerate(r.entrants):
            for j, b in enumerate(r.entrants):
                if i == j:
                    continue
                t = tally.setdefault((a, b), [0, 0, 0])
                if ranks[i] < ranks[j]:
                    t[0] += 1
                elif ranks[i] > ranks[j]:
                    t[1] += 1
                else:
                    t[2] += 1
    rows = []
    for (a, b), (w, lo, ti) in sorted(tally.items()):
        n = w + lo + ti
        score = w + 0.5 * ti
        low, high = wilson(score, n)
        rows.append(
            {
                "a": a,
                "b": b,
                "games": n,
                "wins": w,
                "losses": lo,
                "ties": ti,
                "win_rate": round(score / n, 6),
                "ci95": [round(low, 6), round(high, 6)],
            }
        )
    return rows
