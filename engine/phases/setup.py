"""Setup: factions, home worlds, starting tiles, starting dice and credits; the start_tiles decision.

Rulebook "Setup": each player gets a random faction and home world, draws two game tiles (one
development side up, one world side up; the first game puts the lower-cost sides up, later games
let the player choose), 3 Home dice in the cup, 2 in the Citizenry, plus the dice granted by the
faction and home world; $1 (Doomed World: $8); a VP pool of 12 chips per player.

Ambition (options ``ambition: true``, ``objectives: true|false``; the component file installed by
``engine.catalogue.install``), Ambition rulebook, Setup:
  "Add the new dice and the faction and home world tiles to those in the base game. Add the 5 new
  game tiles to the bag."                              -> the Ambition pools of ``deal``
  "each player puts 2 Home (white) dice and 1 Leader (black) die in the cup (not 3 Home dice)"
                                                       -> ``_take_start_dice``
  "Die Removal. If a faction or home world instructs you to remove a die, you may choose any of
  your starting dice or dice granted by other tiles. (Typically, you will choose to remove a Home
  (white) die from your Citizenry.)"                   -> ``removal_choices``; the player picks in
                                                          the start_tiles decision (``remove``)
  Objectives: "As part of step 1, shuffle the objective tiles face down. Select 6 to use and flip
  them face up."                                       -> ``deal`` (``objectives``)
"""

from __future__ import annotations

from typing import Any

from .. import rng as rngmod
from ..catalogue import (
    CARDS,
    DIE_COLOR,
    FACTIONS,
    HOME_WORLDS,
    OBJECTIVES,
    dev_card,
    faction_ids,
    home_ids,
    installed,
    is_ambition,
    supply_piles,
    tile_ids,
    world_card,
)
from ..economy import VP_PER_PLAYER, supply_peek, supply_return, supply_take, take_die_from
from ..errors import ChanceMismatch, InvalidEvent, refuse
from ..fold import Ctx, Event, creates, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

MIN_PLAYERS, MAX_PLAYERS = 2, 5
OPTIONS = {"first_game": False}
#: options of an Ambition game; a base game's options hold neither (its GameCreated is unchanged)
AMBITION_OPTIONS = {"ambition": False, "objectives": False}
#: Ambition rulebook, Objectives: "Select 6 to use"
OBJECTIVES_IN_PLAY = 6


def check_config(players: int, options: dict[str, Any]) -> dict[str, Any]:
    if (
        not isinstance(players, int)
        or isinstance(players, bool)
        or not MIN_PLAYERS <= players <= MAX_PLAYERS
    ):
        refuse("players", f"a game has 2 to 5 players, not {players!r}", "players", players)
    known = {**OPTIONS, **AMBITION_OPTIONS}
    unknown = sorted(set(options) - set(known))
    if unknown:
        refuse(
            "options",
            f"unknown option(s) {unknown}; known options: {sorted(known)}",
            "options",
            unknown,
        )
    out = dict(OPTIONS)
    for k, v in options.items():
        if not isinstance(v, bool):
            refuse("options", f"option {k} must be true or false", f"options.{k}", v)
        out[k] = v
    if not out.get("ambition"):
        if out.pop("objectives", False):
            refuse(
                "options",
                "objectives are part of Ambition: set ambition too",
                "options.objectives",
                True,
            )
        out.pop("ambition", None)  # a base game records only the base options
        return out
    if installed() is None:
        refuse(
            "ambition-unavailable",
            "Ambition needs its component file (die faces, objectives) and none is installed",
            "options.ambition",
            True,
        )
    out.setdefault("objectives", False)
    return out


def deal(
    seed: str, players: int, rules: int, options: dict[str, Any] | None = None
) -> tuple[int, list[dict[str, Any]], list[int]]:
    """The chance outcomes of setup: per seat a faction, a home world and two tiles; with
    Ambition's objectives, the objective tiles in play (drawn after the tiles)."""
    opts = options or {}
    ambition = is_ambition(opts)
    r = rngmod.Rng(rngmod.start_state(seed, rules))
    factions = faction_ids(ambition)
    homes = home_ids(ambition)
    bag = tile_ids(ambition)
    seats: list[dict[str, Any]] = []
    for _ in range(players):
        f = factions.pop(r.below(len(factions)))
        h = homes.pop(r.below(len(homes)))
        seats.append({"faction": f, "home": h})
    for s in seats:
        s["tiles"] = [bag.pop(r.below(len(bag))), bag.pop(r.below(len(bag)))]
    objectives: list[int] = []
    if ambition and opts.get("objectives"):
        pool = sorted(OBJECTIVES)
        for _ in range(min(OBJECTIVES_IN_PLAY, len(pool))):
            objectives.append(pool.pop(r.below(len(pool))))
    return r.state, seats, objectives


#: The rules version a new game is played under, recorded in its GameCreated event, so that a
#: game's log always re-runs under the rules it was played with (a log without it is version 1):
#:   1  the first release
#:   2  a tile already complete at the start of Develop / Settle with more dice on its stack
#:      than it needs: the player chooses which of them complete it (``stack_order``); under
#:      version 1 the oldest dice did, without asking
#:   3  chance comes from the keyed generator and the seed's commitment is labelled
#:      (``engine.rng``): nothing public predicts a roll or a draw any more
#:   4  GameCreated names the game (``game``: the service's game id) and the commitment binds
#:      it with the seed, so games dealt one seed (a duplicate set) publish unrelated commitments
#:   5  a seat of three or more that resigns leaves and the others play on (``engine.leaving``);
#:      under version 4 and before every resignation ended the game
RULES_VERSION = 5


def create(
    seed: str,
    players: int,
    options: dict[str, Any] | None = None,
    table: dict[str, Any] | None = None,
    rules: int | None = None,
    game: str | None = None,
) -> Ctx:
    """Emit GameCreated (and, for a first game, the start tile choices) into a fresh context.

    ``game`` is the name the game is published under (the service's game id); from rules version
    4 GameCreated records it and the seed's commitment binds it. A game played outside the
    service (``rfg simulate``) is named by its seed."""
    opts = check_config(players, dict(options or {}))
    if not isinstance(seed, str) or not seed:
        refuse("seed", "the seed must be a non-empty string", "seed", seed)
    if rules is None:
        rules = RULES_VERSION
    if isinstance(rules, bool) or not isinstance(rules, int) or not 1 <= rules <= RULES_VERSION:
        refuse("rules", f"the rules version must be 1 to {RULES_VERSION}", "rules", rules)
    if game is None:
        game = seed
    if not isinstance(game, str) or not game or "\x00" in game:
        refuse("game", "the game's name must be a non-empty string without NUL", "game", game)
    _, seats, objectives = deal(seed, players, rules, opts)
    ctx = Ctx(None)
    # the commitment's field name says what it is: a bare sha256 of the seed before version 3
    commit_field = "seed_commitment" if rules >= rngmod.KEYED_SINCE_RULES else "seed_sha256"
    created: dict[str, Any] = {
        "seed": seed,
        commit_field: rngmod.commitment(seed, rules, game),
        "players": players,
        "options": opts,
        "seats": seats,
        "table": table or {},
    }
    if rules > 1:  # version 1 logs carry no rules field; they must be reproduced as they are
        created["rules"] = rules
    if rules >= rngmod.BOUND_SINCE_RULES:  # nor do logs before version 4 name their game
        created["game"] = game
    comp = installed()
    if is_ambition(opts) and comp is not None:  # check_config refused Ambition without it
        created["components"] = comp.summary()
        if opts["objectives"]:
            created["objectives"] = objectives
    ctx.emit(ev("GameCreated", **created))
    if opts["first_game"]:
        for p in ctx.state.players:
            dev, world = first_game_arrangement(p.start_tiles)
            chosen: dict[str, Any] = {"development": dev, "world": world}
            if p.start_removals:
                chosen["removed"] = default_removals(p)
            ctx.emit(ev("StartTilesChosen", seat=p.seat, **chosen, auto=True))
    return ctx


def first_game_arrangement(tiles: list[int]) -> tuple[int, int]:
    """The lower-cost sides up: the cheaper development; on a tie the cheaper world (dev, world)."""
    a, b = tiles
    ka = (dev_card(a).cost, world_card(b).cost)
    kb = (dev_card(b).cost, world_card(a).cost)
    return (a, b) if ka <= kb else (b, a)


@creates("GameCreated")
def _created(e: Event) -> GameState:
    seed: str = e["seed"]
    n: int = e["players"]
    rules: int = e.get("rules", 1)
    options: dict[str, Any] = dict(e["options"])
    ambition = is_ambition(options)
    if ambition:
        _check_components(e)
    rng_state, seats, objectives = deal(seed, n, rules, options)
    if seats != e["seats"] or objectives != e.get("objectives", []):
        raise ChanceMismatch(
            "GameCreated: the factions, home worlds, tiles or objectives are not the ones the "
            "seed deals"
        )
    used = {t for s in seats for t in s["tiles"]}
    state = GameState(
        seed=seed,
        rng=rng_state,
        players=[],
        options=options,
        bag=[t for t in tile_ids(ambition) if t not in used],
        supply=supply_piles(ambition),
        vp_pool=VP_PER_PLAYER * n,
    )
    if ambition:
        state.components = dict(e["components"])
        state.objectives = list(objectives)
    for seat, s in enumerate(seats):
        p = PlayerState(seat=seat, faction=s["faction"], home=s["home"])
        p.start_tiles = list(s["tiles"])
        p.waiting = "start_tiles"
        state.players.append(p)
        _take_start_dice(state, p, ambition)
    state.step = "start_tiles"
    state.table = dict(e.get("table") or {})
    state.rules = rules
    if rules >= rngmod.BOUND_SINCE_RULES:
        game = e.get("game")
        if not isinstance(game, str) or not game:
            raise InvalidEvent("GameCreated: a game of rules version 4 or later names its game")
        state.game = game
    return state


def _check_components(e: Event) -> None:
    """An Ambition log replays only with the component file it was played with."""
    recorded = e.get("components")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("digest"), str):
        raise InvalidEvent("GameCreated: an Ambition game records its components {name, digest}")
    comp = installed()
    if comp is None or comp.digest != recorded["digest"]:
        now = "none is installed" if comp is None else f"{comp.name!r} ({comp.digest}) is installed"
        raise InvalidEvent(
            f"GameCreated: this Ambition game was played with the component file "
            f"{recorded.get('name')!r} (digest {recorded['digest']}), and {now}; start with that "
            f"component file to replay it"
        )


def _give(state: GameState, p: PlayerState, color: str, where: str, world_key: str) -> int | None:
    die = supply_peek(state, color)
    if die is None:
        return None
    supply_take(state, die)
    if where == "cup":
        p.cup.append(die)
    elif where == "citizenry":
        p.citizenry.append(die)
    else:
        p.goods.setdefault(world_key, []).append(die)
    return die


def _take_start_dice(state: GameState, p: PlayerState, ambition: bool = False) -> None:
    # Rulebook Setup 4a: 3 Home dice in the cup, 2 in the Citizenry. Ambition rulebook, Setup:
    # "each player puts 2 Home (white) dice and 1 Leader (black) die in the cup (not 3 Home dice)"
    cup = ["white", "white", "black"] if ambition else ["white", "white", "white"]
    starting = [_give(state, p, color, "cup", "") for color in cup]
    starting += [_give(state, p, "white", "citizenry", "") for _ in range(2)]
    granted: dict[str, list[int]] = {}
    removing: list[tuple[str, int]] = []
    start_cards = [c.key for c in FACTIONS[p.faction].cards] + [HOME_WORLDS[p.home].key]
    for key in start_cards:
        c = CARDS[key]
        (p.worlds if c.is_world else p.devs).append(key)
        imm = c.immediate
        got = [_give(state, p, g["color"], g["to"], key) for g in imm.get("dice_gained") or []]
        granted[key] = [d for d in got if d is not None]
        if imm.get("start_credits"):
            p.credits = int(imm["start_credits"])
        if ambition and imm.get("dice_removed"):
            removing += [(key, 1)] * int(imm["dice_removed"])
    # Ambition: a start tile's power adds to the starting credits (Interstellar Bank: +$2)
    p.credits = int(registry.fold_value("start_credits", p, p.credits, state, p))
    p.cup.sort()
    p.citizenry.sort()
    # Ambition rulebook, Die Removal: "you may choose any of your starting dice or dice granted
    # by other tiles" (a base game's factions and home worlds remove no dice)
    for key, _ in removing:
        others = [d for k, ds in granted.items() if k != key for d in ds]
        choices = sorted(d for d in starting + others if d is not None)
        p.start_removals.append({"card": key, "choices": choices})


def default_removals(p: PlayerState) -> list[int]:
    """The dice removed when the player does not choose: each time the rulebook's typical choice,
    "a Home (white) die from your Citizenry", else a Home die, else the lowest-numbered choice."""
    out: list[int] = []
    for r in p.start_removals:
        choices = [d for d in r["choices"] if d not in out]
        citizens = [d for d in choices if d in p.citizenry and DIE_COLOR[d] == "white"]
        homes = [d for d in choices if DIE_COLOR[d] == "white"]
        out.append((citizens or homes or choices)[0])
    return out


# --- the start_tiles decision ------------------------------------------------------------


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    a, b = p.start_tiles
    out: dict[str, Any] = {
        "kind": "start_tiles",
        "options": [
            {
                "development": a,
                "world": b,
                "development_card": dev_card(a).key,
                "world_card": world_card(b).key,
            },
            {
                "development": b,
                "world": a,
                "development_card": dev_card(b).key,
                "world_card": world_card(a).key,
            },
        ],
    }
    if p.start_removals:
        # Ambition: the die each removing start tile takes, in order ("remove": [die, ...])
        out["removals"] = [dict(r) for r in p.start_removals]
        out["default_remove"] = default_removals(p)
    return out


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    dev = cmd.get("development")
    if dev not in p.start_tiles:
        refuse(
            "start_tiles",
            f"'development' must be one of your two start tiles {p.start_tiles}, not {dev!r}",
            "development",
            dev,
        )
    world = p.start_tiles[1] if dev == p.start_tiles[0] else p.start_tiles[0]
    chosen: dict[str, Any] = {"development": dev, "world": world}
    if p.start_removals:
        chosen["removed"] = _removals(p, cmd.get("remove"))
    elif cmd.get("remove") not in (None, []):
        refuse("start_tiles", "none of your start tiles removes a die", "remove", cmd.get("remove"))
    ctx.emit(ev("StartTilesChosen", seat=p.seat, **chosen))


def _removals(p: PlayerState, remove: Any) -> list[int]:
    """The dice the player removes (``remove``: one die per removal, in order; default: the
    rulebook's typical Home die from the Citizenry)."""
    if remove is None:
        return default_removals(p)
    n = len(p.start_removals)
    if not isinstance(remove, list) or len(remove) != n:
        refuse(
            "start_tiles",
            f"'remove' must list {n} die id(s), one per start tile that removes a die",
            "remove",
            remove,
        )
    taken: list[int] = []
    for i, (r, die) in enumerate(zip(p.start_removals, remove, strict=True)):
        if die not in r["choices"] or die in taken:
            refuse(
                "start_tiles",
                f"{r['card']} removes one of your starting dice or a die another start tile "
                f"granted: one of {[d for d in r['choices'] if d not in taken]}, not {die!r}",
                f"remove[{i}]",
                die,
            )
        taken.append(die)
    return taken


@folds("StartTilesChosen")
def _start_tiles(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.dev_stack = [e["development"]]
    p.world_stack = [e["world"]]
    p.start_tiles = []
    p.waiting = ""
    for die in e.get("removed", ()):
        # Ambition, Die Removal: returned to the supply (rulebook: "return it ... to the center")
        take_die_from(p, die)
        supply_return(state, die)
    p.start_removals = []
