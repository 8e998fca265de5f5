"""An attacker who knows every published algorithm and reads only what it may read.

It gathers every string in what it was shown (views, feeds, the lobby, a seat's own view) as a
candidate secret, rebuilds a generator from each candidate by every construction the project has
ever published, and keeps the ones that re-deal the setup it can see. With one left, it predicts
the next roll; with none, it guesses. The same attacker against a game played under the old rules
(version 2: SplitMix64 from the first 8 bytes of the published sha256 of the seed) predicts every
die: that is the control that shows the attack works.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from engine import rng as rngmod
from engine.catalogue import faction_ids, home_ids, tile_ids
from engine.rng import Rng

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def strings(doc: Any) -> Iterator[str]:
    """Every string (keys too) anywhere in a JSON document."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v)


def generators(candidate: str) -> Iterator[int]:
    """Generator states every published construction would build from ``candidate``."""
    if _HEX64.match(candidate):  # rules 1-2: the state is the first 8 bytes of sha256(seed)
        yield int(candidate[:16], 16)
    yield rngmod.seed_state(candidate)  # the candidate as a rules 1-2 seed
    yield rngmod.start_state(candidate, rngmod.KEYED_SINCE_RULES)  # ... as a rules 3 seed


def deal(r: Rng, players: int) -> tuple[list[tuple[int, int]], list[list[int]]]:
    """setup.deal's draws for a base game, replayed on a candidate generator: (faction, home
    world) per seat, then each seat's two start tiles (sorted)."""
    factions, homes, bag = faction_ids(False), home_ids(False), tile_ids(False)
    seats = [
        (factions.pop(r.below(len(factions))), homes.pop(r.below(len(homes))))
        for _ in range(players)
    ]
    tiles = [sorted([bag.pop(r.below(len(bag))), bag.pop(r.below(len(bag)))]) for _ in seats]
    return seats, tiles


def _deal(r: Rng, players: int) -> list[tuple[int, int]]:
    """setup.deal's draws of factions and home worlds, replayed on a candidate generator (``r``
    then stands where the deal left it)."""
    return deal(r, players)[0]


def public_start_tiles(feed: list[dict[str, Any]], players: int) -> list[list[int]] | None:
    """Each seat's two start tiles (sorted) as the public events show them once chosen
    (``StartTilesChosen``), None while some seat has not chosen."""
    chosen = {
        item["event"]["seat"]: sorted([item["event"]["development"], item["event"]["world"]])
        for item in feed
        if item["type"] == "StartTilesChosen"
    }
    return [chosen[s] for s in range(players)] if len(chosen) == players else None


def public_setup(view: dict[str, Any]) -> list[tuple[int, int]]:
    return [
        (p["faction"]["number"], int(p["home_world"]["card"].lstrip("H"))) for p in view["players"]
    ]


def predict_first_roll(shown: list[Any], view: dict[str, Any]) -> dict[int, list[int]] | None:
    """Each seat's first-roll faces (in die order), or None when no candidate re-deals the setup.

    ``view`` is the public view just before the first roll (the cups are public)."""
    seen = public_setup(view)
    cups = [sorted(d["die"] for d in p["cup"]) for p in view["players"]]
    for candidate in {s for doc in shown for s in strings(doc)}:
        for state in generators(candidate):
            r = Rng(state)
            if _deal(r, len(seen)) != seen:
                continue
            # start tiles draw nothing; the first roll draws each seat's cup in seat order
            return {seat: [r.below(6) for _ in cup] for seat, cup in enumerate(cups)}
    return None
