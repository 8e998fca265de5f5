"""Setup: factions, home worlds, starting tiles, starting dice and credits; the start_tiles decision.

Rulebook "Setup": each player gets a random faction and home world, draws two game tiles (one
development side up, one world side up; the first game puts the lower-cost sides up, later games
let the player choose), 3 Home dice in the cup, 2 in the Citizenry, plus the dice granted by the
faction and home world; $1 (Doomed World: $8); a VP pool of 12 chips per player.
"""

from __future__ import annotations

from typing import Any

from .. import rng as rngmod
from ..catalogue import (
    CARDS,
    DICE_OF_COLOR,
    DIE_COLORS,
    FACTIONS,
    HOME_WORLDS,
    TILE_IDS,
    dev_card,
    world_card,
)
from ..economy import VP_PER_PLAYER, supply_peek, supply_take
from ..errors import ChanceMismatch, InvalidEvent, refuse
from ..fold import Ctx, Event, creates, ev, folds
from ..state import GameState, PlayerState

MIN_PLAYERS, MAX_PLAYERS = 2, 5
OPTIONS = {"first_game": False}


def check_config(players: int, options: dict[str, Any]) -> dict[str, Any]:
    if (
        not isinstance(players, int)
        or isinstance(players, bool)
        or not MIN_PLAYERS <= players <= MAX_PLAYERS
    ):
        refuse("players", f"a game has 2 to 5 players, not {players!r}", "players", players)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        refuse(
            "options",
            f"unknown option(s) {unknown}; known options: {sorted(OPTIONS)}",
            "options",
            unknown,
        )
    out = dict(OPTIONS)
    for k, v in options.items():
        if not isinstance(v, bool):
            refuse("options", f"option {k} must be true or false", f"options.{k}", v)
        out[k] = v
    return out


def deal(seed: str, players: int, rules: int) -> tuple[int, list[dict[str, Any]]]:
    """The chance outcomes of setup: per seat a faction, a home world and two tiles."""
    r = rngmod.Rng(rngmod.start_state(seed, rules))
    factions = sorted(FACTIONS)
    homes = sorted(HOME_WORLDS)
    bag = list(TILE_IDS)
    seats: list[dict[str, Any]] = []
    for _ in range(players):
        f = factions.pop(r.below(len(factions)))
        h = homes.pop(r.below(len(homes)))
        seats.append({"faction": f, "home": h})
    for s in seats:
        s["tiles"] = [bag.pop(r.below(len(bag))), bag.pop(r.below(len(bag)))]
    return r.state, seats


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
    _, seats = deal(seed, players, rules)
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
    ctx.emit(ev("GameCreated", **created))
    if opts["first_game"]:
        for p in ctx.state.players:
            dev, world = first_game_arrangement(p.start_tiles)
            ctx.emit(ev("StartTilesChosen", seat=p.seat, development=dev, world=world, auto=True))
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
    rng_state, seats = deal(seed, n, rules)
    if seats != e["seats"]:
        raise ChanceMismatch(
            "GameCreated: the factions, home worlds or tiles are not the ones the seed deals"
        )
    used = {t for s in seats for t in s["tiles"]}
    state = GameState(
        seed=seed,
        rng=rng_state,
        players=[],
        options=dict(e["options"]),
        bag=[t for t in TILE_IDS if t not in used],
        supply=[list(DICE_OF_COLOR[c]) for c in DIE_COLORS],
        vp_pool=VP_PER_PLAYER * n,
    )
    for seat, s in enumerate(seats):
        p = PlayerState(seat=seat, faction=s["faction"], home=s["home"])
        p.start_tiles = list(s["tiles"])
        p.waiting = "start_tiles"
        state.players.append(p)
        _take_start_dice(state, p)
    state.step = "start_tiles"
    state.table = dict(e.get("table") or {})
    state.rules = rules
    if rules >= rngmod.BOUND_SINCE_RULES:
        game = e.get("game")
        if not isinstance(game, str) or not game:
            raise InvalidEvent("GameCreated: a game of rules version 4 or later names its game")
        state.game = game
    return state


def _give(state: GameState, p: PlayerState, color: str, where: str, world_key: str) -> None:
    die = supply_peek(state, color)
    if die is None:
        return
    supply_take(state, die)
    if where == "cup":
        p.cup.append(die)
    elif where == "citizenry":
        p.citizenry.append(die)
    else:
        p.goods.setdefault(world_key, []).append(die)


def _take_start_dice(state: GameState, p: PlayerState) -> None:
    for _ in range(3):
        _give(state, p, "white", "cup", "")
    for _ in range(2):
        _give(state, p, "white", "citizenry", "")
    start_cards = [c.key for c in FACTIONS[p.faction].cards] + [HOME_WORLDS[p.home].key]
    for key in start_cards:
        c = CARDS[key]
        (p.worlds if c.is_world else p.devs).append(key)
        imm = c.immediate
        for g in imm.get("dice_gained") or []:
            _give(state, p, g["color"], g["to"], key)
        if imm.get("start_credits"):
            p.credits = int(imm["start_credits"])
    p.cup.sort()
    p.citizenry.sort()


# --- the start_tiles decision ------------------------------------------------------------


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    a, b = p.start_tiles
    return {
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
    ctx.emit(ev("StartTilesChosen", seat=p.seat, development=dev, world=world))


@folds("StartTilesChosen")
def _start_tiles(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.dev_stack = [e["development"]]
    p.world_stack = [e["world"]]
    p.start_tiles = []
    p.waiting = ""
