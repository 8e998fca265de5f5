"""The game's catalogue: dice, factions, home worlds and game tiles, loaded once and validated.

Everything else in the engine reads tile and die facts from here; nothing reads the YAML files
directly. Cards are the unit of the tableau: a game tile has a development card and a world card
(one per side), a faction tile has one or two halves, a home world is one card.

Card keys (stable, used in commands, events and views):
  ``T<n>d`` / ``T<n>w``  development / world side of game tile n (1-55)
  ``F<n>d`` / ``F<n>w`` / ``F<n>w2``  halves of faction tile n (1-9)
  ``H<n>``  home world n (1-9)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

PHASES: tuple[str, ...] = ("explore", "develop", "settle", "produce", "ship")
PHASE_INDEX: dict[str, int] = {p: i for i, p in enumerate(PHASES)}
WILD = "wild"

DIE_COLORS: tuple[str, ...] = ("white", "red", "purple", "blue", "brown", "green", "yellow")
WORLD_COLORS: tuple[str, ...] = ("novelty", "rare", "genes", "alien", "gray")
TRADE_VALUE: dict[str, int] = {"novelty": 3, "rare": 4, "genes": 5, "alien": 6}

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(name: str) -> Any:
    # the package's own files: a compiled module's ``__file__`` need not say where they lie
    text = (resources.files("engine") / "data" / name).read_text(encoding="utf-8")
    return yaml.load(text, Loader=_Loader)


@dataclass(frozen=True, slots=True)
class DieType:
    color: str
    name: str
    faces: tuple[str, ...]  # six phase names, or "wild"
    count: int
    consume_match: str  # "none", "all" or a world colour


@dataclass(frozen=True, slots=True)
class Card:
    """One tableau card: a world or a development (one side of a tile, a faction half, a home world)."""

    key: str
    name: str
    cost: int
    kind: str  # "development" or "world"
    color: str | None = None  # world colour; None for developments
    dev_kind: str | None = None  # "reassign", "power" or "immediate" for developments
    power_id: str | None = None
    effects: tuple[dict[str, Any], ...] = ()
    endgame_bonus: dict[str, Any] | None = None
    immediate: dict[str, Any] = field(default_factory=dict)  # dice_gained, credits, dice_removed
    tile: int | None = None  # game tile id for game-tile cards
    description: str = ""

    @property
    def is_world(self) -> bool:
        return self.kind == "world"

    @property
    def has_reassign_power(self) -> bool:
        return self.dev_kind == "reassign"


@dataclass(frozen=True, slots=True)
class Faction:
    number: int
    cards: tuple[Card, ...]

    @property
    def name(self) -> str:
        return " / ".join(c.name for c in self.cards)


def _world(key: str, rec: dict[str, Any], tile: int | None = None) -> Card:
    imm = dict(rec.get("immediate") or {})
    return Card(
        key=key,
        name=rec["name"],
        cost=int(rec["cost"]),
        kind="world",
        color=rec["color"],
        immediate=imm,
        tile=tile,
    )


def _development(key: str, rec: dict[str, Any], tile: int | None = None) -> Card:
    effects = tuple(rec.get("effects") or ())
    imm: dict[str, Any] = {}
    for eff in effects:
        if eff.get("type") == "immediate":
            imm = {k: v for k, v in eff.items() if k != "type"}
    return Card(
        key=key,
        name=rec["name"],
        cost=int(rec["cost"]),
        kind="development",
        dev_kind=rec["kind"],
        power_id=rec.get("power_id"),
        effects=effects,
        endgame_bonus=rec.get("endgame_bonus"),
        immediate=imm,
        tile=tile,
        description=rec.get("description", ""),
    )


class CatalogueError(ValueError):
    """The packaged catalogue is inconsistent (a broken install, never bad user input)."""


def _build() -> tuple[
    dict[str, DieType],
    dict[int, Faction],
    dict[int, Card],
    dict[int, tuple[Card, Card]],
    dict[str, Card],
]:
    dice_doc = _load("dice.yaml")
    dice: dict[str, DieType] = {}
    for rec in dice_doc["dice"]:
        faces = tuple(f["phases"][0] for f in rec["faces"])
        dice[rec["key"]] = DieType(
            rec["key"], rec["name"], faces, int(rec["count_base"]), rec["matches_world_on_consume"]
        )
    tiles_doc = _load("tiles.yaml")
    cards: dict[str, Card] = {}
    factions: dict[int, Faction] = {}
    for rec in tiles_doc["factions"]:
        n = int(rec["id"])
        fcards: list[Card] = []
        for i, d in enumerate(rec.get("developments") or []):
            fcards.append(_development(f"F{n}d" + ("" if i == 0 else str(i + 1)), d))
        for i, w in enumerate(rec.get("worlds") or []):
            fcards.append(_world(f"F{n}w" + ("" if i == 0 else str(i + 1)), w))
        factions[n] = Faction(n, tuple(fcards))
    homes: dict[int, Card] = {}
    for rec in tiles_doc["home_worlds"]:
        n = int(rec["id"])
        homes[n] = _world(f"H{n}", rec["world"])
    tiles: dict[int, tuple[Card, Card]] = {}
    for rec in tiles_doc["game_tiles"]:
        n = int(rec["id"])
        tiles[n] = (
            _development(f"T{n}d", rec["development"], n),
            _world(f"T{n}w", rec["world"], n),
        )
    for f in factions.values():
        for c in f.cards:
            cards[c.key] = c
    for c in homes.values():
        cards[c.key] = c
    for d, w in tiles.values():
        cards[d.key] = d
        cards[w.key] = w
    _validate(dice, factions, homes, tiles)
    return dice, factions, homes, tiles, cards


def _validate(
    dice: dict[str, DieType],
    factions: dict[int, Faction],
    homes: dict[int, Card],
    tiles: dict[int, tuple[Card, Card]],
) -> None:
    if tuple(dice) != DIE_COLORS:
        raise CatalogueError(f"die colours {tuple(dice)} != {DIE_COLORS}")
    if sum(d.count for d in dice.values()) != 111:
        raise CatalogueError("the base game has 111 dice")
    for d in dice.values():
        if len(d.faces) != 6 or any(f not in PHASES and f != WILD for f in d.faces):
            raise CatalogueError(f"die {d.color} has bad faces {d.faces}")
    if sorted(tiles) != list(range(1, 56)):
        raise CatalogueError("game tiles must be numbered 1-55")
    if sorted(factions) != list(range(1, 10)) or sorted(homes) != list(range(1, 10)):
        raise CatalogueError("factions and home worlds must be numbered 1-9")
    kinds = [d.dev_kind for d, _ in tiles.values()]
    if (kinds.count("reassign"), kinds.count("power"), kinds.count("immediate")) != (18, 34, 3):
        raise CatalogueError("the 55 developments split 18 Reassign / 34 power / 3 immediate")
    for _, w in tiles.values():
        if w.color not in WORLD_COLORS:
            raise CatalogueError(f"world {w.name} has colour {w.color}")


DICE, FACTIONS, HOME_WORLDS, TILES, CARDS = _build()

#: die id -> colour. Ids are stable: the 111 dice are numbered colour by colour in DIE_COLORS order.
DIE_COLOR: tuple[str, ...] = tuple(c for c in DIE_COLORS for _ in range(DICE[c].count))
#: die id -> its six faces
DIE_FACES: tuple[tuple[str, ...], ...] = tuple(DICE[c].faces for c in DIE_COLOR)
DIE_COUNT = len(DIE_COLOR)
DICE_OF_COLOR: dict[str, tuple[int, ...]] = {
    c: tuple(i for i, col in enumerate(DIE_COLOR) if col == c) for c in DIE_COLORS
}
TILE_IDS: tuple[int, ...] = tuple(sorted(TILES))


def dev_card(tile: int) -> Card:
    return TILES[tile][0]


def world_card(tile: int) -> Card:
    return TILES[tile][1]


def card(key: str) -> Card:
    return CARDS[key]


#: phantom workers (Major Research Labs, Alien Research Ship, Space Docks, Organic Shipyards) are
#: not dice: they get ids from PHANTOM_BASE up, ``PHANTOM_BASE + 100 * colour index + k``
PHANTOM_BASE = 1000


def is_phantom(die: int) -> bool:
    return die >= PHANTOM_BASE


def phantom_id(color: str, k: int) -> int:
    return PHANTOM_BASE + 100 * DIE_COLORS.index(color) + k


def color_of(die: int) -> str:
    """The colour of a die or of a phantom worker."""
    if die < PHANTOM_BASE:
        return DIE_COLOR[die]
    return DIE_COLORS[(die - PHANTOM_BASE) // 100]


def consume_matches(die: int, world_color: str) -> bool:
    """Whether a die earns the Consume colour bonus on a world of this colour (purple matches all)."""
    m = DICE[color_of(die)].consume_match
    return m == "all" or m == world_color
