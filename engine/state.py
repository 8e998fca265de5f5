"""The game state: what every seat owns and where every die and tile is.

The state is mutable and folded in place by ``evolve`` (no deep copy per event); ``copy`` makes an
independent state cheaply when a caller needs one. ``to_dict``/``from_dict`` are the canonical,
JSON-ready form and ``state_hash`` hashes it.

Where things are (rulebook vocabulary):
  cup, citizenry                      dice of a seat
  columns[phase]                      workers assigned below the phase strip (the selector included)
  dictate                             dice parked in the Dictate area (not workers)
  dev_stack / world_stack             the construction zone: tile ids, top tile first
  dev_dice / world_dice               developers / settlers lying on those stacks, oldest first
  devs / worlds                       the tableau: card keys (faction halves and home world included)
  goods                               world card key -> dice lying on it as goods
  supply                              dice nobody owns, per colour, lowest id first
  bag / abandoned                     game tiles not in play / abandoned this Explore phase
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .canonical import canonical_bytes
from .catalogue import ALL_DIE_COLORS, PHASES

STEPS = (
    "start_tiles",
    "assign",
    "explore",
    "develop",
    "settle",
    "produce",
    "ship",
    "manage",
    "over",
)


@dataclass(slots=True)
class PlayerState:
    seat: int
    faction: int
    home: int
    credits: int = 1
    vp: int = 0
    cup: list[int] = field(default_factory=list)
    citizenry: list[int] = field(default_factory=list)
    columns: list[list[int]] = field(default_factory=lambda: [[] for _ in PHASES])
    faces: dict[int, int] = field(default_factory=dict)
    selected: int = -1
    selector: int = -1
    dictate: list[int] = field(default_factory=list)
    dev_stack: list[int] = field(default_factory=list)
    world_stack: list[int] = field(default_factory=list)
    dev_dice: list[int] = field(default_factory=list)
    world_dice: list[int] = field(default_factory=list)
    devs: list[str] = field(default_factory=list)
    worlds: list[str] = field(default_factory=list)
    goods: dict[str, list[int]] = field(default_factory=dict)
    #: the decision this seat owes now ("" when none); see engine.flow
    waiting: str = ""
    #: tiles drawn by a Scout and not yet placed
    drawn: list[int] = field(default_factory=list)
    #: power ids used this round (Reassign powers are once per round)
    used: list[str] = field(default_factory=list)
    #: start tiles offered at setup (until chosen)
    start_tiles: list[int] = field(default_factory=list)
    #: facts kept for powers: scouts by an Alien explorer this phase, goods shipped, ...
    marks: dict[str, int] = field(default_factory=dict)
    #: when this seat resigned (``{"round", "step"}``; empty while it plays): a resigned seat
    #: takes no further part (``engine.leaving``)
    resigned: dict[str, Any] = field(default_factory=dict)
    #: Ambition: the dice a start tile removes, until the start tiles are chosen: per removing
    #: card ``{"card", "choices"}`` (``engine.phases.setup``); never set in a base game
    start_removals: list[dict[str, Any]] = field(default_factory=list)
    #: Ambition objectives: the seat's unused talent counters (ids from
    #: ``catalogue.TALENT_BASE``); assigned ones are workers in ``columns`` (``engine.ambition.objectives``)
    talents: list[int] = field(default_factory=list)

    def copy(self) -> PlayerState:
        return PlayerState(
            self.seat,
            self.faction,
            self.home,
            self.credits,
            self.vp,
            self.cup[:],
            self.citizenry[:],
            [c[:] for c in self.columns],
            dict(self.faces),
            self.selected,
            self.selector,
            self.dictate[:],
            self.dev_stack[:],
            self.world_stack[:],
            self.dev_dice[:],
            self.world_dice[:],
            self.devs[:],
            self.worlds[:],
            {k: v[:] for k, v in self.goods.items()},
            self.waiting,
            self.drawn[:],
            self.used[:],
            self.start_tiles[:],
            dict(self.marks),
            dict(self.resigned),
            [dict(r) for r in self.start_removals],
            self.talents[:],
        )

    def with_own_tableau(self) -> PlayerState:
        """A copy sharing everything but the tableau (``devs``, ``worlds``: its own lists), for
        forecasts that add tiles to it."""
        return PlayerState(
            self.seat,
            self.faction,
            self.home,
            self.credits,
            self.vp,
            self.cup,
            self.citizenry,
            self.columns,
            self.faces,
            self.selected,
            self.selector,
            self.dictate,
            self.dev_stack,
            self.world_stack,
            self.dev_dice,
            self.world_dice,
            self.devs[:],
            self.worlds[:],
            self.goods,
            self.waiting,
            self.drawn,
            self.used,
            self.start_tiles,
            self.marks,
            self.resigned,
            self.start_removals,
            self.talents,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat,
            "faction": self.faction,
            "home": self.home,
            "credits": self.credits,
            "vp": self.vp,
            "cup": self.cup[:],
            "citizenry": self.citizenry[:],
            "columns": {p: self.columns[i][:] for i, p in enumerate(PHASES)},
            "faces": {str(k): v for k, v in sorted(self.faces.items())},
            "selected": PHASES[self.selected] if self.selected >= 0 else None,
            "selector": self.selector if self.selector >= 0 else None,
            "dictate": self.dictate[:],
            "dev_stack": self.dev_stack[:],
            "world_stack": self.world_stack[:],
            "dev_dice": self.dev_dice[:],
            "world_dice": self.world_dice[:],
            "devs": self.devs[:],
            "worlds": self.worlds[:],
            "goods": {k: v[:] for k, v in self.goods.items()},
            "waiting": self.waiting,
            "drawn": self.drawn[:],
            "used": self.used[:],
            "start_tiles": self.start_tiles[:],
            "marks": dict(sorted(self.marks.items())),
            "resigned": dict(self.resigned) or None,
        }
        if self.start_removals:  # Ambition only: a base game's state is unchanged
            out["start_removals"] = [dict(r) for r in self.start_removals]
        if self.talents:  # Ambition objectives only: a base game's state is unchanged
            out["talents"] = self.talents[:]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlayerState:
        return cls(
            seat=d["seat"],
            faction=d["faction"],
            home=d["home"],
            credits=d["credits"],
            vp=d["vp"],
            cup=list(d["cup"]),
            citizenry=list(d["citizenry"]),
            columns=[list(d["columns"][p]) for p in PHASES],
            faces={int(k): v for k, v in d["faces"].items()},
            selected=PHASES.index(d["selected"]) if d["selected"] else -1,
            selector=d["selector"] if d["selector"] is not None else -1,
            dictate=list(d["dictate"]),
            dev_stack=list(d["dev_stack"]),
            world_stack=list(d["world_stack"]),
            dev_dice=list(d["dev_dice"]),
            world_dice=list(d["world_dice"]),
            devs=list(d["devs"]),
            worlds=list(d["worlds"]),
            goods={k: list(v) for k, v in d["goods"].items()},
            waiting=d["waiting"],
            drawn=list(d["drawn"]),
            used=list(d["used"]),
            start_tiles=list(d["start_tiles"]),
            marks=dict(d["marks"]),
            resigned=dict(d.get("resigned") or {}),
            start_removals=[dict(r) for r in d.get("start_removals", ())],
            talents=list(d.get("talents", ())),
        )

    # --- queries in the rulebook's words -------------------------------------------------
    def owned_dice(self) -> list[int]:
        """Every die this seat owns, wherever it lies."""
        out = self.cup + self.citizenry + self.dictate + self.dev_dice + self.world_dice
        for col in self.columns:
            out += col
        for g in self.goods.values():
            out += g
        return out

    def tile_squares(self) -> int:
        """Tile squares in the tableau: faction 2, home world 1, each game tile 1."""
        return (
            3
            + sum(1 for k in self.devs if k[0] == "T")
            + sum(1 for k in self.worlds if k[0] == "T")
        )

    def construction_tiles(self) -> int:
        return len(self.dev_stack) + len(self.world_stack)


@dataclass(slots=True)
class GameState:
    seed: str
    rng: int
    players: list[PlayerState]
    options: dict[str, Any]
    bag: list[int]
    supply: list[list[int]]  # per ALL_DIE_COLORS index (7 piles in a base game, 9 with Ambition)
    vp_pool: int
    step: str = "start_tiles"
    round: int = 0
    phases: list[int] = field(default_factory=list)  # phases happening this round, in order
    phase_pos: int = -1  # index into phases of the current phase
    abandoned: list[int] = field(default_factory=list)
    vp_reserve_used: int = 0  # VP chips taken from the set-aside 10-VP chips
    two_player_die: str | None = None
    #: very rare Explore shortfall: {"seat": scouting seat, "need": tiles still to draw}
    shortfall: dict[str, int] = field(default_factory=dict)
    end_reason: str | None = None
    scores: list[dict[str, Any]] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    seq: int = 0  # events folded so far
    #: chance outcomes fixed in advance (conformance scenarios only): {"tiles": [...],
    #: "two_player_die": [...]}; consumed before the generator is asked
    forced: dict[str, list[Any]] = field(default_factory=dict)
    #: the service's description of the table (seat kinds, time control), recorded at creation;
    #: the rules never read it
    table: dict[str, Any] = field(default_factory=dict)
    #: the rules version the game is played under (``engine.phases.setup.RULES_VERSION``)
    rules: int = 1
    #: the name the seed's commitment binds from rules version 4 (``GameCreated.game``: the
    #: service's game id); empty before
    game: str = ""
    #: Ambition: the component file the game is played with (``{"name", "digest"}``, from
    #: GameCreated); empty in a base game
    components: dict[str, str] = field(default_factory=dict)
    #: Ambition with objectives: the objective tiles in play (ids), dealt at setup
    objectives: list[int] = field(default_factory=list)
    #: Ambition objectives claimed (flipped face down), in order:
    #: ``{"objective", "round", "check", "seats"}`` (``engine.ambition.objectives``)
    claims: list[dict[str, Any]] = field(default_factory=list)

    @property
    def phase(self) -> str | None:
        if 0 <= self.phase_pos < len(self.phases):
            return PHASES[self.phases[self.phase_pos]]
        return None

    @property
    def over(self) -> bool:
        return self.step == "over"

    def playing(self) -> list[PlayerState]:
        """The seats still in the game: every seat but those that resigned (``engine.leaving``)."""
        return [p for p in self.players if not p.resigned]

    def copy(self) -> GameState:
        return GameState(
            self.seed,
            self.rng,
            [p.copy() for p in self.players],
            dict(self.options),
            self.bag[:],
            [s[:] for s in self.supply],
            self.vp_pool,
            self.step,
            self.round,
            self.phases[:],
            self.phase_pos,
            self.abandoned[:],
            self.vp_reserve_used,
            self.two_player_die,
            dict(self.shortfall),
            self.end_reason,
            [dict(s) for s in self.scores],
            self.winners[:],
            self.seq,
            {k: v[:] for k, v in self.forced.items()},
            self.table,
            self.rules,
            self.game,
            self.components,
            self.objectives[:],
            [dict(c) for c in self.claims],
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seed": self.seed,
            "rng": self.rng,
            "players": [p.to_dict() for p in self.players],
            "options": dict(self.options),
            "bag": self.bag[:],
            "supply": {c: pile[:] for c, pile in zip(ALL_DIE_COLORS, self.supply, strict=False)},
            "vp_pool": self.vp_pool,
            "step": self.step,
            "round": self.round,
            "phases": [PHASES[i] for i in self.phases],
            "phase_pos": self.phase_pos,
            "abandoned": self.abandoned[:],
            "vp_reserve_used": self.vp_reserve_used,
            "two_player_die": self.two_player_die,
            "shortfall": dict(self.shortfall),
            "end_reason": self.end_reason,
            "scores": [dict(s) for s in self.scores],
            "winners": self.winners[:],
            "seq": self.seq,
            "forced": {k: v[:] for k, v in self.forced.items()},
            "table": self.table,
            "rules": self.rules,
            "game": self.game,
        }
        if self.components:  # Ambition only: a base game's state is unchanged
            out["components"] = dict(self.components)
            out["objectives"] = self.objectives[:]
        if self.claims:  # Ambition objectives only: a base game's state is unchanged
            out["claims"] = [dict(c) for c in self.claims]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameState:
        return cls(
            seed=d["seed"],
            rng=d["rng"],
            players=[PlayerState.from_dict(p) for p in d["players"]],
            options=dict(d["options"]),
            bag=list(d["bag"]),
            supply=[list(d["supply"][c]) for c in ALL_DIE_COLORS if c in d["supply"]],
            vp_pool=d["vp_pool"],
            step=d["step"],
            round=d["round"],
            phases=[PHASES.index(p) for p in d["phases"]],
            phase_pos=d["phase_pos"],
            abandoned=list(d["abandoned"]),
            vp_reserve_used=d["vp_reserve_used"],
            two_player_die=d["two_player_die"],
            shortfall=dict(d["shortfall"]),
            end_reason=d["end_reason"],
            scores=[dict(s) for s in d["scores"]],
            winners=list(d["winners"]),
            seq=d["seq"],
            forced={k: list(v) for k, v in d.get("forced", {}).items()},
            table=dict(d.get("table", {})),
            rules=d.get("rules", 1),
            game=d.get("game", ""),
            components=dict(d.get("components", {})),
            objectives=list(d.get("objectives", ())),
            claims=[dict(c) for c in d.get("claims", ())],
        )


def state_hash(state: GameState) -> str:
    """A stable hash of the whole state (hex sha256 of its canonical JSON)."""
    return hashlib.sha256(canonical_bytes(state.to_dict())).hexdigest()
