"""Ratings: an OpenSkill Plackett-Luce table folded from finished games, in finishing order.

Each finished game contributes its final ranking (by score, then the rulebook's tie-break of cup
dice + credits; players still equal share the rank: a shared win is a tie). The displayed rating
is the conservative ``mu - 3 * sigma``; an entrant is provisional while sigma is above a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

DEFAULT_PROVISIONAL_SIGMA = 3.0
_MODEL = PlackettLuce()


@dataclass
class Entry:
    entrant: str
    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma
    games: int = 0
    wins: float = 0.0  # a shared first place counts 1/k
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rating(self) -> float:
        return self.mu - 3 * self.sigma

    def to_dict(self, provisional_sigma: float = DEFAULT_PROVISIONAL_SIGMA) -> dict[str, Any]:
        return {
            "entrant": self.entrant,
            "mu": round(self.mu, 6),
            "sigma": round(self.sigma, 6),
            "rating": round(self.rating, 6),
            "games": self.games,
            "wins": round(self.wins, 6),
            "win_rate": round(self.wins / self.games, 6) if self.games else 0.0,
            "provisional": self.sigma > provisional_sigma,
        }


@dataclass(frozen=True)
class Result:
    """One finished game: entrants by seat with their final score and tie-break."""

    game_id: str
    entrants: tuple[str, ...]
    totals: tuple[int, ...]
    tiebreaks: tuple[int, ...]

    def ranks(self) -> list[int]:
        """1-based ranks by (total, tie-break), equal keys sharing a rank."""
        keys = list(zip(self.totals, self.tiebreaks, strict=True))
        return [1 + sum(1 for other in keys if other > k) for k in keys]

    @classmethod
    def from_game(cls, game_id: str, entrants: list[str], scores: list[dict[str, Any]]) -> Result:
        return cls(
            game_id,
            tuple(entrants),
            tuple(s["total"] for s in scores),
            tuple(s["tiebreak"] for s in scores),
        )


class RatingTable:
    """Folds results into ratings; ``apply`` them in the order the games finished."""

    def __init__(self, provisional_sigma: float = DEFAULT_PROVISIONAL_SIGMA) -> None:
        self.entries: dict[str, Entry] = {}
        self.provisional_sigma = provisional_sigma
        self.applied = 0

    def entry(self, entrant: str) -> Entry:
        if entrant not in self.entries:
            self.entries[entrant] = Entry(entrant)
        return self.entries[entrant]

    def apply(self, result: Result) -> None:
        if len(set(result.entrants)) != len(result.entrants):
            raise ValueError(
                f"game {result.game_id}: an entrant holds two seats; ladder games seat distinct entrants"
            )
        ranks = result.ranks()
        entries = [self.entry(e) for e in result.entrants]
        teams = [[_MODEL.rating(mu=e.mu, sigma=e.sigma, name=e.entrant)] for e in entries]
        rated = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
        firsts = ranks.count(1)
        self.applied += 1
        for e, team, rank in zip(entries, rated, ranks, strict=True):
            e.mu, e.sigma = team[0].mu, team[0].sigma
            e.games += 1
            if rank == 1:
                e.wins += 1.0 / firsts
            e.history.append(
                {
                    "game_id": result.game_id,
                    "n": self.applied,
                    "mu": round(e.mu, 6),
                    "sigma": round(e.sigma, 6),
                    "rating": round(e.rating, 6),
                    "rank": rank,
                }
            )

    def leaderboard(self) -> list[dict[str, Any]]:
        rows = [e.to_dict(self.provisional_sigma) for e in self.entries.values()]
        rows.sort(key=lambda r: (-r["rating"], r["entrant"]))
        for i, r in enumerate(rows, start=1):
            r["position"] = i
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "leaderboard": self.leaderboard()}


def rebuild(
    results: list[Result], provisional_sigma: float = DEFAULT_PROVISIONAL_SIGMA
) -> RatingTable:
    table = RatingTable(provisional_sigma)
    for r in results:
        table.apply(r)
    return table
