"""The game's catalogue: dice, factions, home worlds and game tiles, loaded once and validated.

Everything else in the engine reads tile and die facts from here; nothing reads the YAML files
directly. Cards are the unit of the tableau: a game tile has a development card and a world card
(one per side), a faction tile has one or two halves, a home world is one card.

Card keys (stable, used in commands, events and views):
  ``T<n>d`` / ``T<n>w``  development / world side of game tile n (1-55)
  ``F<n>d`` / ``F<n>w`` / ``F<n>w2``  halves of faction tile n (1-9)
  ``H<n>``  home world n (1-9)

Ambition (``install``): a host's component file (``engine.ambition.components``) adds, once per
process, the Leader (black) and Entrepreneur (orange) dice, the Ambition box's extra dice of the
base colours, factions ``F10``-``F23``, home worlds ``H10``-``H16``, game tiles ``T56``- and the
objectives. A base game never sees them: it deals from the base pools (``faction_ids``,
``home_ids``, ``tile_ids``, ``supply_piles`` with ``ambition=False``) and its dice keep ids 0-110.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from .ambition.components import Components, Objective

PHASES: tuple[str, ...] = ("explore", "develop", "settle", "produce", "ship")
PHASE_INDEX: dict[str, int] = {p: i for i, p in enumerate(PHASES)}
WILD = "wild"

DIE_COLORS: tuple[str, ...] = ("white", "red", "purple", "blue", "brown", "green", "yellow")
#: Ambition's new die colours: Leader (black) and Entrepreneur (orange)
AMBITION_DIE_COLORS: tuple[str, ...] = ("black", "orange")
#: every die colour; a game's supply has a pile per colour in this order (7 piles in a base game,
#: 9 in an Ambition game)
ALL_DIE_COLORS: tuple[str, ...] = DIE_COLORS + AMBITION_DIE_COLORS
COLOR_INDEX: dict[str, int] = {c: i for i, c in enumerate(ALL_DIE_COLORS)}
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
    #: a world's end-game bonus (Ambition: Rebel Stronghold ``{type: flat, vp}``), else None
    scoring_bonus: dict[str, Any] | None = None

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
        scoring_bonus=rec.get("scoring_bonus"),
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


def _faction(rec: dict[str, Any]) -> Faction:
    n = int(rec["id"])
    fcards: list[Card] = []
    for i, d in enumerate(rec.get("developments") or []):
        fcards.append(_development(f"F{n}d" + ("" if i == 0 else str(i + 1)), d))
    for i, w in enumerate(rec.get("worlds") or []):
        fcards.append(_world(f"F{n}w" + ("" if i == 0 else str(i + 1)), w))
    return Faction(n, tuple(fcards))


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
        AMBITION_EXTRA[rec["key"]] = int(rec["count_ambition"])
        faces = tuple(f["phases"][0] for f in rec["faces"])
        dice[rec["key"]] = DieType(
            rec["key"], rec["name"], faces, int(rec["count_base"]), rec["matches_world_on_consume"]
        )
    tiles_doc = _load("tiles.yaml")
    cards: dict[str, Card] = {}
    factions: dict[int, Faction] = {}
    for rec in tiles_doc["factions"]:
        factions[int(rec["id"])] = _faction(rec)
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


#: the Ambition box's extra dice of each base colour (filled by ``_build`` from dice.yaml)
AMBITION_EXTRA: dict[str, int] = {}

DICE, FACTIONS, HOME_WORLDS, TILES, CARDS = _build()

#: die id -> colour. Ids are stable: the 111 base dice are numbered colour by colour in DIE_COLORS
#: order; ``install`` appends the Ambition dice (ids 111 on: the extra base-colour dice, then
#: black, then orange), so a base game's dice never change.
DIE_COLOR: list[str] = [c for c in DIE_COLORS for _ in range(DICE[c].count)]
#: die id -> its six face codes (see ``face_phases``)
DIE_FACES: list[tuple[str, ...]] = [DICE[c].faces for c in DIE_COLOR]
DICE_OF_COLOR: dict[str, tuple[int, ...]] = {
    c: tuple(i for i, col in enumerate(DIE_COLOR) if col == c) for c in DIE_COLORS
}
#: the dice of each colour in an Ambition game (filled by ``install``)
AMBITION_DICE_OF_COLOR: dict[str, tuple[int, ...]] = {}
#: the base game's tiles, factions and home worlds
TILE_IDS: tuple[int, ...] = tuple(sorted(TILES))
BASE_FACTION_IDS: tuple[int, ...] = tuple(sorted(FACTIONS))
BASE_HOME_IDS: tuple[int, ...] = tuple(sorted(HOME_WORLDS))
#: the card keys ``install`` added (factions 10 on, home worlds 10 on, game tiles 56 on)
AMBITION_CARDS: set[str] = set()
#: the objective tiles of the installed component file, by id (filled by ``install``)
OBJECTIVES: dict[int, Objective] = {}
#: the installed component file (at most one per process)
_INSTALLED: list[Components] = []


def dev_card(tile: int) -> Card:
    return TILES[tile][0]


def world_card(tile: int) -> Card:
    return TILES[tile][1]


def card(key: str) -> Card:
    return CARDS[key]


#: phantom workers (Major Research Labs, Alien Research Ship, Space Docks, Organic Shipyards) are
#: not dice: they get ids from PHANTOM_BASE up, ``PHANTOM_BASE + 100 * colour index + k``
PHANTOM_BASE = 1000


#: Ambition's talent counters (objectives' reward) are workers with ids from TALENT_BASE up and the
#: colour "talent" (``engine.ambition.objectives``); they are not phantoms, but like phantoms they
#: never enter a cup or a Citizenry
TALENT_BASE = 2000
TALENT = "talent"


def is_phantom(die: int) -> bool:
    return die >= PHANTOM_BASE


def phantom_id(color: str, k: int) -> int:
    return PHANTOM_BASE + 100 * DIE_COLORS.index(color) + k


def color_of(die: int) -> str:
    """The colour of a die, of a phantom worker or of a talent worker (``"talent"``)."""
    if die < PHANTOM_BASE:
        return DIE_COLOR[die]
    if die >= TALENT_BASE:
        return TALENT
    return DIE_COLORS[(die - PHANTOM_BASE) // 100]


def consume_matches(die: int, world_color: str) -> bool:
    """Whether a die earns the Consume colour bonus on a world of this colour (purple matches all).

    Ambition rulebook: "Talent counters used as either goods or shippers during Consume always
    match the color of the world the good is being shipped from."
    """
    if die >= TALENT_BASE:
        return True
    m = DICE[color_of(die)].consume_match
    return m == "all" or m == world_color


def diversity_color(color: str) -> str:
    """The colour a die counts as where colours are counted for diversity: Galactic Exchange's
    bonus and the Diverse Workforce objective's condition.

    Ambition rulebook, New Die Colors: "A Leader (black) die is treated as a Home (white) die
    when checking *Diverse Workforce's* condition or scoring *Galactic Exchange*. Having at least
    one Entrepreneur (orange) die scores +1 VP at game end for *Galactic Exchange*, despite this
    color die not being shown": black counts as white, orange as a colour of its own.
    """
    return "white" if color == "black" else color


# --- face codes -------------------------------------------------------------------------------


def face_phases(face: str) -> tuple[str, ...]:
    """The phases a face shows: ``"wild"`` all five, ``"explore/produce$"`` explore and produce."""
    if face == WILD:
        return PHASES
    return tuple(face.rstrip("$").split("/"))


def face_dollar(face: str) -> bool:
    """Whether a face shows the $ symbol (Ambition): ``"produce$"``, ``"explore/produce$"``."""
    return face.endswith("$")


# --- Ambition -----------------------------------------------------------------------------------


def installed() -> Components | None:
    """The installed Ambition component file, or None (then no game can be an Ambition game)."""
    return _INSTALLED[0] if _INSTALLED else None


def is_ambition(options: dict[str, Any]) -> bool:
    """Whether a game's options make it an Ambition game."""
    return bool(options.get("ambition", False))


def install(components: Components) -> bool:
    """Add an Ambition component file to the catalogue, once per process.

    Returns True when it was installed now, False when the same file (same digest) already was.
    A different file raises CatalogueError: a process plays with one set of components. Base-game
    ids, dice and deals are untouched.
    """
    if _INSTALLED:
        if _INSTALLED[0].digest == components.digest:
            return False
        raise CatalogueError(
            f"the Ambition components {_INSTALLED[0].name!r} ({_INSTALLED[0].digest}) are "
            f"installed; {components.name!r} ({components.digest}) cannot be installed beside them"
        )
    factions: dict[int, Faction] = {}
    for rec in components.factions:
        factions[int(rec["id"])] = _faction(rec)
    homes = {
        int(rec["id"]): _world(f"H{rec['id']}", rec["world"]) for rec in components.home_worlds
    }
    tiles: dict[int, tuple[Card, Card]] = {}
    for rec in components.game_tiles:
        n = int(rec["id"])
        tiles[n] = (
            _development(f"T{n}d", rec["development"], n),
            _world(f"T{n}w", rec["world"], n),
        )
    clash = (
        (set(factions) & set(FACTIONS))
        | (set(homes) & set(HOME_WORLDS))
        | (set(tiles) & set(TILES))
    )
    if clash:
        raise CatalogueError(f"Ambition tile numbers {sorted(clash)} are base-game numbers")
    # dice: the extra base-colour dice first, then black, then orange (ids 111 on)
    extra: dict[str, list[int]] = {c: [] for c in ALL_DIE_COLORS}
    for color in DIE_COLORS:
        for _ in range(AMBITION_EXTRA.get(color, 0)):
            extra[color].append(len(DIE_COLOR))
            DIE_COLOR.append(color)
            DIE_FACES.append(DICE[color].faces)
    for color in AMBITION_DIE_COLORS:
        die = components.dice[color]
        # Ambition rulebook, New Die Colors: "a Leader (black) die always matches the world's
        # color ... An Entrepreneur (orange) die does not match any world colors during Consume"
        DICE[color] = DieType(
            color, die.name, die.faces, die.count, "all" if color == "black" else "none"
        )
        for _ in range(die.count):
            extra[color].append(len(DIE_COLOR))
            DIE_COLOR.append(color)
            DIE_FACES.append(die.faces)
    for color in ALL_DIE_COLORS:
        AMBITION_DICE_OF_COLOR[color] = DICE_OF_COLOR.get(color, ()) + tuple(extra[color])
    FACTIONS.update(factions)
    HOME_WORLDS.update(homes)
    TILES.update(tiles)
    for f in factions.values():
        for c in f.cards:
            CARDS[c.key] = c
    for c in homes.values():
        CARDS[c.key] = c
    for d, w in tiles.values():
        CARDS[d.key] = d
        CARDS[w.key] = w
    AMBITION_CARDS.update(c.key for f in factions.values() for c in f.cards)
    AMBITION_CARDS.update(c.key for c in homes.values())
    AMBITION_CARDS.update(c.key for pair in tiles.values() for c in pair)
    for o in components.objectives:
        OBJECTIVES[o.id] = o
    _INSTALLED.append(components)
    return True


def is_ambition_card(key: str) -> bool:
    """Whether a card key is one of Ambition's (added by ``install``)."""
    return key in AMBITION_CARDS


def _ambition_ready() -> Components:
    comp = installed()
    if comp is None:
        raise CatalogueError("no Ambition components are installed (catalogue.install)")
    return comp


def faction_ids(ambition: bool) -> list[int]:
    """The factions a game deals from: the base nine, plus Ambition's in an Ambition game.

    Ambition rulebook, Setup: "Add the new dice and the faction and home world tiles to those in
    the base game."""
    if not ambition:
        return list(BASE_FACTION_IDS)
    _ambition_ready()
    return sorted(FACTIONS)


def home_ids(ambition: bool) -> list[int]:
    """The home worlds a game deals from (see ``faction_ids``)."""
    if not ambition:
        return list(BASE_HOME_IDS)
    _ambition_ready()
    return sorted(HOME_WORLDS)


def tile_ids(ambition: bool) -> list[int]:
    """The game tiles in a game's bag. Ambition rulebook, Setup: "Add the 5 new game tiles to the
    bag" (the shipped tiles hold four of them)."""
    if not ambition:
        return list(TILE_IDS)
    _ambition_ready()
    return sorted(TILES)


def supply_piles(ambition: bool) -> list[list[int]]:
    """A game's dice supply at the start, a pile per colour (``ALL_DIE_COLORS`` order): the base
    game's 111 dice, or with Ambition its 38 dice too ("Add the new dice")."""
    if not ambition:
        return [list(DICE_OF_COLOR[c]) for c in DIE_COLORS]
    _ambition_ready()
    return [list(AMBITION_DICE_OF_COLOR[c]) for c in ALL_DIE_COLORS]


def die_ids(ambition: bool) -> list[int]:
    """Every die of a game."""
    return sorted(d for pile in supply_piles(ambition) for d in pile)
