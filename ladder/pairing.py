"""Choosing the next ladder game: close ratings, few recent meetings, rotated seats.

``choose_table`` picks the entrants of one game: it starts from the entrant with the fewest games
(so newcomers get played) and adds, one by one, the candidate with the lowest cost, where the cost
is the rating gap plus a penalty per recent meeting. ``seatings`` gives the seat orders of one
game or of a duplicate set: the same seed played once per rotation of the seats, so every entrant
plays every seat of the same deal (the multiplayer counterpart of paired openings), which cuts the
luck of the deal from the comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.rng import Rng

MEETING_PENALTY = 2.0


def choose_table(
    entrants: Sequence[str],
    players: int,
    ratings: Mapping[str, float],
    games: Mapping[str, int],
    recent_meetings: Mapping[tuple[str, str], int],
    rng: Rng,
    meeting_penalty: float = MEETING_PENALTY,
) -> list[str]:
    if players > len(entrants):
        raise ValueError(
            f"a {players}-player game needs {players} entrants; the ladder has {len(entrants)}"
        )
    pool = sorted(entrants)
    fewest = min(games.get(e, 0) for e in pool)
    starters = [e for e in pool if games.get(e, 0) == fewest]
    table = [rng.choice(starters)]
    while len(table) < players:
        best_cost, best = None, []
        for c in pool:
            if c in table:
                continue
            cost = sum(abs(ratings.get(c, 0.0) - ratings.get(t, 0.0)) for t in table) / len(table)
            cost += meeting_penalty * sum(recent_meetings.get(_pair(c, t), 0) for t in table)
            if best_cost is None or cost < best_cost - 1e-9:
                best_cost, best = cost, [c]
            elif abs(cost - best_cost) <= 1e-9:
                best.append(c)
        table.append(rng.choice(best))
    return table


def seatings(table: Sequence[str], duplicate: bool, rng: Rng) -> list[list[str]]:
    """Seat orders: one random order, or every rotation of one random order (duplicate format)."""
    order = list(table)
    rng.shuffle(order)
    if not duplicate:
        return [order]
    return [order[i:] + order[:i] for i in range(len(order))]


def _pair(a: str, b: str) -> tuple[str, str]:
    """The key of two entrants' meetings, the same whichever is named first."""
    return (a, b) if a <= b else (b, a)
