"""Determinization: full game states drawn to fit what one seat sees.

A seat's view (``observe(state, seat)``) hides the other seats' dice behind their screens during
Assign (which dice, their faces, where they were assigned, the phase selected), the tiles below the
top of the other seats' construction stacks, the tiles another seat has drawn and not yet placed,
the tiles abandoned during Explore, the bag's contents, the dice supply and the seed. ``Sampler``
reads nothing but that view and, from its own generator, deals those hidden things anew: every
state it returns shows the seat exactly its view again (``observe(sample, seat) == view`` except
for the seed's commitment, since a sample has a seed of its own) and holds the counts the rules fix
(each colour's dice, the 55 game tiles).

What is drawn, and how (the view allows nothing finer):

* **Tiles.** The tiles the seat cannot see are the 55 minus every tile its view shows (tableaux,
  stack tops, its own stacks and drawn tiles, start tiles). They are shuffled uniformly and dealt
  to the hidden places: below each other seat's stack tops, the other seats' drawn tiles, the
  abandoned tiles, the bag. So every consistent deal is equally likely. The bag is kept sorted,
  as the engine keeps it (a draw picks a uniform position, so the bag's order carries nothing).
* **Drawn tiles of other seats.** Their total is fixed by the counts; when several other seats owe
  ``place_tiles`` at once, each gets one tile and the rest go one by one to a uniformly chosen
  seat among them (assumption: the view does not say how many each drew).
* **Dice behind other seats' screens** (Assign only). Colours are fixed by the view (each seat's
  dice by colour minus the dice it shows); which ids of a colour they are is a label the rules
  never read, drawn uniformly from the ids the view does not show (the rest form the supply, lowest
  id first as the engine keeps it). Faces are rolled uniformly, as the real roll was. A seat that
  has not sealed yet has its dice in the columns of their faces. A seat that has sealed is assumed
  to have placed its wild dice and its selector uniformly at random and to have used no Dictate or
  Reassign power (assumption: any model of the opponent's choice is one; this one is the simplest
  and cheap). ``draw(sealed=model)`` asks a caller's model instead, on the finished sample (a
  search bot passes the bot it expects the opponents to be).
* **Faces shown in the view** name a phase; a die whose face appears on several of its sides gets
  one of them uniformly (the rules read only the phase).
* **Bookkeeping the view does not carry.** The generator is keyed from the sampler's own generator
  (never the game's seed, which must stay secret) and the sample's seed is a label naming that key;
  the VP chips taken from the set-aside reserve follow from the chips held and the pool; the
  per-round power marks are inferred where the view implies them (Advanced Logistics' "done", Alien
  Research Team's end-of-Explore draw) and otherwise start empty (assumption: an Alien explorer's
  first-Scout credit may be paid again in a sample). Options other than ``first_game`` (which only
  matters at setup) do not exist.
* **Not sampled:** the very rare Explore shortfall (the bag and the abandoned tiles ran out). Its
  bookkeeping is not in any view; the sampler raises ``SamplerError`` when the view shows it.
  Nor an Ambition game (the view says ``ambition``): its tiles, dice, faces kept from round to
  round, talent workers behind the screens and objectives are not modelled; ``SamplerError``.

Deterministic: the same view and the same generator state give the same samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import rng as rngmod
from .catalogue import (
    DICE_OF_COLOR,
    DIE_COLOR,
    DIE_COLORS,
    DIE_FACES,
    FACTIONS,
    PHANTOM_BASE,
    PHASE_INDEX,
    PHASES,
    TILE_IDS,
    WILD,
)
from .economy import VP_PER_PLAYER
from .errors import EngineError
from .fold import Ctx
from .phases import assign, explore
from .powers import registry
from .rng import Rng
from .state import GameState, PlayerState

View = Mapping[str, Any]
#: an opponent model for sealed assignments: (sample, seat, its assign decision, rng) -> command
SealPolicy = Callable[[GameState, int, dict[str, Any], Rng], dict[str, Any]]


class SamplerError(EngineError):
    """The view cannot be determinized (malformed, or a state the sampler does not model)."""


def _ids(dice: list[Mapping[str, Any]]) -> list[int]:
    return [int(d["die"]) for d in dice]


def _face_index(die: int, face: str, r: Rng) -> int:
    sides = [i for i, f in enumerate(DIE_FACES[die]) if f == face]
    if not sides:
        raise SamplerError(f"die {die} has no {face!r} face")
    return sides[r.below(len(sides))] if len(sides) > 1 else sides[0]


def _home_number(card: str) -> int:
    if not card.startswith("H"):
        raise SamplerError(f"home world card {card!r} is not H<n>")
    return int(card[1:])


def _tile_of(key: str) -> int | None:
    """The game tile of a ``T<n>d`` / ``T<n>w`` card key (None for faction halves, home worlds)."""
    return int(key[1:-1]) if key[0] == "T" else None


class Sampler:
    """Draws determinizations of one seat's view: ``Sampler(view, rng).draw()`` -> GameState.

    The view is parsed once; each ``draw`` deals the hidden parts again from ``rng`` (the
    sampler's own generator: pass ``Rng.from_seed(...)``, ``Rng.keyed(...)`` or a bot's rng).
    """

    def __init__(self, view: View, rng: Rng | str) -> None:
        self.rng = Rng.from_seed(rng) if isinstance(rng, str) else rng
        if view.get("ambition"):
            # its dice pools, talent counters and objectives are not modelled: a searching bot
            # falls back on its heuristic's choice
            raise SamplerError("an Ambition game is not modelled by the sampler")
        try:
            self.seat = int(view["seat"])
            self._parse(view)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise SamplerError(f"not a seat's view: {exc!r}") from exc

    # --- what the view fixes -------------------------------------------------------------------
    def _parse(self, view: View) -> None:
        """Read the view once: the known state (``self.base``) and what each draw must deal."""
        if view.get("ambition"):
            raise SamplerError("an Ambition game: the sampler models the base game only")
        self.screens_down = view["step"] != "assign"
        self._refuse_shortfall(view)
        shown_dice: set[int] = set()
        shown_tiles: set[int] = set()
        base: list[PlayerState] = []
        #: per seat: hidden tiles below the stack tops, colour counts of unseen screen dice
        self.hidden_below: list[tuple[int, int]] = []
        self.screen_colors: list[dict[str, int]] = []
        self.placing: list[int] = []  # other seats that owe place_tiles (their drawn tiles hidden)
        for pv in view["players"]:
            p = self._player(pv)
            self._count_shown_dice(p, pv, shown_dice)
            self._count_shown_tiles(p, shown_tiles)
            base.append(p)
        self.shown_faces = [self._faces(pv) for pv in view["players"]]
        self.unseen_tiles = [t for t in TILE_IDS if t not in shown_tiles]
        self.unseen_dice = {
            c: [d for d in DICE_OF_COLOR[c] if d not in shown_dice] for c in DIE_COLORS
        }
        self._check_hidden_counts(view)
        self.base = self._base_state(view, base)
        decision = view.get("decision") or {}
        if decision.get("kind") == "manage":  # the Citizenry in its real order (the view sorts it)
            base[self.seat].citizenry = _ids(decision["citizenry"])
        self.own_extra_drawn = decision.get("source") == "alien_research_team"

    @staticmethod
    def _refuse_shortfall(view: View) -> None:
        pend = view["pending"]
        for pv in view["players"]:
            w = pv["pending"]
            if w == "abandon_one" or (w and str(pv["seat"]) not in pend):
                raise SamplerError("an Explore shortfall is under way: not modelled by the sampler")

    def _player(self, pv: View) -> PlayerState:
        """One seat's known state; notes its hidden stack tiles and whether it places tiles."""
        seat = int(pv["seat"])
        p = PlayerState(
            seat=seat,
            faction=int(pv["faction"]["number"]),
            home=_home_number(pv["home_world"]["card"]),
        )
        if p.faction not in FACTIONS:
            raise SamplerError(f"seat {seat}: no faction {p.faction}")
        p.credits = int(pv["credits"])
        p.vp = int(pv["vp_chips"])
        p.cup = _ids(pv["cup"])
        p.citizenry = _ids(pv["citizenry"])
        p.devs = [c["card"] for c in pv["developments"]]
        p.worlds = [c["card"] for c in pv["worlds"]]
        p.goods = {w: _ids(g) for w, g in pv["goods"].items()}
        p.waiting = pv["pending"] or ""
        p.resigned = dict(pv.get("resigned") or {})
        p.start_tiles = [int(t["tile"]) for t in pv.get("start_tiles", ())]
        cz = pv["construction"]
        dev, world = cz["development"], cz["world"]
        p.dev_dice = _ids(dev["dice"])
        p.world_dice = _ids(world["dice"])
        if seat == self.seat:
            p.dev_stack = [int(t["tile"]) for t in dev["tiles"]]
            p.world_stack = [int(t["tile"]) for t in world["tiles"]]
            p.drawn = [int(t["tile"]) for t in pv["drawn"]]
            self.hidden_below.append((0, 0))
        else:
            p.dev_stack = [int(dev["top"]["tile"])] if dev["top"] else []
            p.world_stack = [int(world["top"]["tile"])] if world["top"] else []
            self.hidden_below.append(
                (int(dev["count"]) - len(p.dev_stack), int(world["count"]) - len(p.world_stack))
            )
            if p.waiting == "place_tiles":
                self.placing.append(seat)
        if "columns" in pv:  # screens down, or the seat's own screen
            for i, ph in enumerate(PHASES):
                col = pv["columns"][ph]
                p.columns[i] = _ids(col)
            p.selected = PHASE_INDEX[pv["selected"]] if pv["selected"] else -1
            p.selector = -1 if pv["selector"] is None else int(pv["selector"])
            p.dictate = _ids(pv["dictate"])
        return p

    def _count_shown_dice(self, p: PlayerState, pv: View, shown_dice: set[int]) -> None:
        """Add the seat's shown dice to ``shown_dice``; note the colours behind its screen."""
        seat = p.seat
        for d in p.owned_dice():
            if d < PHANTOM_BASE:
                if d in shown_dice:
                    raise SamplerError(f"die {d} is shown twice")
                shown_dice.add(d)
        seen_colors: dict[str, int] = {}
        for d in p.owned_dice():
            if d < PHANTOM_BASE:
                seen_colors[DIE_COLOR[d]] = seen_colors.get(DIE_COLOR[d], 0) + 1
        unseen = {c: k - seen_colors.get(c, 0) for c, k in pv["dice_by_color"].items()}
        if any(k < 0 for k in unseen.values()):
            raise SamplerError(f"seat {seat} shows more dice than it owns")
        unseen = {c: k for c, k in unseen.items() if k}
        if sum(unseen.values()) != (0 if "columns" in pv else int(pv["behind_screen"])):
            raise SamplerError(f"seat {seat}: the dice behind its screen do not add up")
        self.screen_colors.append(unseen)

    @staticmethod
    def _count_shown_tiles(p: PlayerState, shown_tiles: set[int]) -> None:
        tiles = [_tile_of(k) for k in p.devs + p.worlds]
        tiles += p.dev_stack + p.world_stack + p.drawn + p.start_tiles
        for t in tiles:
            if t is None:
                continue
            if t in shown_tiles:
                raise SamplerError(f"tile {t} is shown twice")
            shown_tiles.add(t)

    @staticmethod
    def _faces(pv: View) -> list[tuple[int, str]]:
        """The faces the view shows, by phase name (their side index is drawn in each sample)."""
        faces: list[tuple[int, str]] = []
        if "columns" in pv:
            for ph in PHASES:
                for d in pv["columns"][ph]:
                    if d["die"] < PHANTOM_BASE and d["face"] is not None:
                        faces.append((int(d["die"]), d["face"]))
        return faces

    def _check_hidden_counts(self, view: View) -> None:
        """The hidden tiles and dice the view implies must fit the game's tiles and dice."""
        self.bag = int(view["bag"])
        self.abandoned = int(view["abandoned"])
        below = sum(a + b for a, b in self.hidden_below)
        self.drawn_hidden = len(self.unseen_tiles) - below - self.bag - self.abandoned
        if self.drawn_hidden < 0 or min(a for hb in self.hidden_below for a in hb) < 0:
            raise SamplerError("the view's tile counts exceed the 55 game tiles")
        if self.drawn_hidden and len(self.placing) > self.drawn_hidden:
            raise SamplerError("more seats place tiles than there are tiles to place")
        if self.drawn_hidden and not self.placing:
            raise SamplerError(f"{self.drawn_hidden} game tile(s) are nowhere in the view")
        if self.placing and not self.drawn_hidden:
            raise SamplerError("a seat places tiles, but no tile is left for it")
        for c, ds in self.unseen_dice.items():
            if sum(sc.get(c, 0) for sc in self.screen_colors) > len(ds):
                raise SamplerError(f"more {c} dice behind screens than exist")

    @staticmethod
    def _base_state(view: View, base: list[PlayerState]) -> GameState:
        """The game's known state around the seats (step, phases, VP pool and reserve, result)."""
        step = view["step"]
        phases = [PHASE_INDEX[ph] for ph in view["phases"]]
        if step in PHASE_INDEX:
            phase_pos = phases.index(PHASE_INDEX[step])
        elif step == "manage":
            phase_pos = len(phases)
        else:
            phase_pos = -1
        result = view.get("result") or {}
        held = sum(p.vp for p in base)
        return GameState(
            seed="",
            rng=0,
            players=base,
            options={"first_game": False},
            bag=[],
            supply=[[] for _ in DIE_COLORS],
            vp_pool=int(view["vp_pool"]),
            step=step,
            round=int(view["round"]),
            phases=phases,
            phase_pos=phase_pos,
            abandoned=[],
            vp_reserve_used=max(0, held - (VP_PER_PLAYER * len(base) - int(view["vp_pool"]))),
            two_player_die=view["two_player_die"],
            end_reason=result.get("reason"),
            scores=[dict(s) for s in result.get("scores", ())],
            winners=list(result.get("winners", ())),
            seq=int(view["version"]),
            rules=int(view["rules"]),
        )

    # --- one determinization --------------------------------------------------------------------
    def draw(self, sealed: SealPolicy | None = None) -> GameState:
        """One full state consistent with the view, dealt from the sampler's generator.

        ``sealed`` models the seats that have sealed their assignment behind their screen: it is
        asked for each one's ``assign`` command on the finished sample (its dice rolled, every
        tile dealt), instead of the uniform selector and phase of the default model.
        """
        r = self.rng
        s = self.base.copy()
        key = b"".join(r.below(1 << 32).to_bytes(4, "big") for _ in range(8))
        s.rng = rngmod.keyed_state(key)
        s.seed = "sample:" + key.hex()
        for p, faces in zip(s.players, self.shown_faces, strict=True):
            for die, face in faces:
                p.faces[die] = _face_index(die, face, r)
        # dice: ids for the dice behind other seats' screens, the rest to the supply
        free = {c: ds[:] for c, ds in self.unseen_dice.items()}
        for p, colors in zip(s.players, self.screen_colors, strict=True):
            if not colors:
                continue
            dice = []
            for c in DIE_COLORS:
                for _ in range(colors.get(c, 0)):
                    dice.append(free[c].pop(r.below(len(free[c]))))
            self._screen(s, p, sorted(dice), r, seal=sealed is None)
        s.supply = [sorted(free[c]) for c in DIE_COLORS]
        # tiles: a uniform deal of the unseen tiles to the hidden places
        tiles = self.unseen_tiles[:]
        r.shuffle(tiles)
        for p, (dev, world) in zip(s.players, self.hidden_below, strict=True):
            p.dev_stack += tiles[:dev]
            del tiles[:dev]
            p.world_stack += tiles[:world]
            del tiles[:world]
        if self.placing:
            counts = dict.fromkeys(self.placing, 1)
            for _ in range(self.drawn_hidden - len(self.placing)):
                counts[self.placing[r.below(len(self.placing))]] += 1
            for seat in self.placing:
                s.players[seat].drawn = tiles[: counts[seat]]
                del tiles[: counts[seat]]
        s.abandoned = tiles[: self.abandoned]
        s.bag = sorted(tiles[self.abandoned :])
        self._marks(s)
        if sealed is not None:
            for p, colors in zip(s.players, self.screen_colors, strict=True):
                if colors and not p.waiting:
                    self._seal(s, p, sealed(s, p.seat, assign.legal(s, p), r))
        return s

    def draws(self, count: int) -> list[GameState]:
        return [self.draw() for _ in range(count)]

    def _screen(
        self, s: GameState, p: PlayerState, dice: list[int], r: Rng, seal: bool = True
    ) -> None:
        """Roll the dice behind another seat's screen; seal an assignment if the seat has sealed
        (a uniform one, unless ``seal`` is false: ``draw`` then asks its opponent model)."""
        for die in dice:
            face = r.below(6)
            p.faces[die] = face
            p.columns[assign.rolled_column(DIE_FACES[die][face])].append(die)
        if p.waiting or not seal:  # still to assign: the dice lie where they were rolled
            return
        wild = [d for d in dice if DIE_FACES[d][p.faces[d]] == WILD]
        selector = dice[r.below(len(dice))]
        cmd = {
            "kind": "assign",
            "select": {"die": selector, "phase": PHASES[r.below(len(PHASES))]},
            "wild": [{"die": d, "to": PHASES[r.below(len(PHASES))]} for d in wild],
        }
        self._seal(s, p, cmd)

    @staticmethod
    def _seal(s: GameState, p: PlayerState, cmd: dict[str, Any]) -> None:
        """Seal ``cmd`` as the seat's assignment (the sample's event count stays the view's)."""
        seq = s.seq
        assign.apply(s, p, cmd, Ctx(s))
        s.seq = seq

    def _marks(self, s: GameState) -> None:
        """The per-round marks the view implies (see the module docstring)."""
        if s.step != "explore":
            return
        anyone_exploring = any(q.waiting == "explore" for q in s.players)
        for p in s.players:
            if p.seat == self.seat:
                extra = self.own_extra_drawn
            else:
                extra = (
                    p.waiting == "place_tiles"
                    and not p.columns[explore.EXPLORE]
                    and not anyone_exploring
                    and bool(registry.handlers(p, "explore_draw"))
                )
            if extra:
                p.marks[explore.EXTRA_DRAWN] = 1
            if registry.has_power(p, explore.LOGISTICS) and (
                p.waiting == "" or (p.waiting == "place_tiles" and extra)
            ):
                p.marks[explore.DONE] = 1


def sample(view: View, count: int, seed: str) -> list[GameState]:
    """``count`` determinizations of a seat's view, deterministic from ``seed``."""
    return Sampler(view, Rng.from_seed(seed)).draws(count)
