"""The ``ismcts`` bot: the heuristic bot, improved by search where it matters.

It reads its seat's view and nothing else, and searches one level deep: at each decision it
searches, it tries a few candidate commands, plays each on on many determinizations, and keeps
the heuristic bot's own command unless another does clearly better. This is Monte Carlo policy
improvement (Tesauro and Galperin, "On-line policy improvement using Monte-Carlo search", 1996)
over determinizations of the seat's information set, not a tree: the name stays for the seats,
ladders and timeout policies that name the bot.

* **Where it searches.** The decisions named by ``search`` (default: ``assign``, the sealed phase
  selection and dice placement of each round; ``explore``, each explorer's Scout or Stock;
  ``place_tiles``, which side of each drawn tile; ``ship``, Trade or Consume). Every other decision
  (Develop and Settle order, Produce, Manage) is the heuristic bot's.
* **Candidates.** Not random legal commands: the heuristic's own command first, then principled
  variants of it. Assign: the heuristic's plan for each phase it could select
  (``HeuristicBot._assign(..., phase)``), and each plan without its Dictate and Reassign uses
  (``variants``). Explore: Stock with the best stocker, Scout abandoning nothing. Place tiles:
  every choice of sides (up to 3 tiles). Ship: the heuristic's pairs, all traded or all consumed.
  A decision with one candidate is answered at once.
* **Determinizations.** ``engine.sampler`` draws a full state consistent with the view. The other
  seats that sealed their assignment before this one decides are modelled by the heuristic bot
  (``Sampler.draw(sealed=...)``): their dice are rolled anew and they assign as the heuristic
  would on the sampled state. The seats still to decide are played by the heuristic in the
  roll-out anyway.
* **Roll-outs.** On each determinization every live candidate is played, then every seat (this
  one too) is played by the heuristic bot (``rollout="random"``: the random bot) to the end of
  the game (or for ``horizon`` rounds; at most to the arena's round cap). The opponents *are* the
  heuristic bot, so this models them closely except for what is hidden. A finished game scores 1
  for a win (shared on a tie) plus ``margin_weight * tanh(margin / 10)``, the margin being the
  seat's score minus the best other seat's (it separates candidates that all win or all lose); a
  game cut off scores ``0.5 + 0.5 * tanh(margin / 6)`` on the current scores. The heuristic gets
  ``heuristic_view`` in roll-outs, the few fields of a view it reads (same commands, ~5x cheaper).
* **Variance reduction: common random numbers.** Every candidate is played on the same
  determinization, whose later dice and tiles come from the same generator, so two candidates'
  results differ mostly by what the candidates change. Candidates are compared with the heuristic's
  command by the mean and standard error of the paired differences of their rewards.
* **Racing.** From ``min_determinizations`` on, a candidate whose paired mean is below the
  heuristic's (or the leader's) by more than ``prune`` standard errors plus ``margin`` is dropped,
  so the budget goes to the contenders; the search ends early when only the heuristic's is left.
* **Choice.** The heuristic's command, unless another candidate beats it by at least ``margin``
  and by ``z`` standard errors of the paired mean (then the best such one): the search changes
  the heuristic's choice only where it sees evidence, so noise does not make it play worse than
  the policy it improves.
* **Budget**: ``iterations`` roll-outs per searched decision (reproducible; whole
  determinizations are played, so the last one may overrun by fewer than the candidates) or
  ``millis`` read on a ``clock`` the caller passes (bots read no clock themselves; e.g.
  ``time.process_time``; not reproducible). **Seed**: the search draws from the bot's rng (given
  by the caller, one per seat and decision in the arena and the workers) or, with ``seed``, from a
  generator named by the seed and the view's version and seat.

A view the sampler cannot model (the very rare Explore shortfall; every decision of an Ambition
game, whose dice, faces and talents the sampler does not model) is answered by the heuristic.
Figures: docs/bots.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import engine
from engine.canonical import canonical_json
from engine.catalogue import CARDS, PHASES, color_of, dev_card, world_card
from engine.errors import IllegalCommand
from engine.rng import Rng
from engine.sampler import Sampler, SamplerError
from engine.scoring import score
from engine.state import GameState

from .arena import DEFAULT_MAX_ROUNDS
from .base import register_bot
from .heuristic import HeuristicBot
from .random_bot import RandomBot

Command = dict[str, Any]
#: the decisions searched by default (the others are the heuristic bot's)
SEARCHED = ("assign", "explore", "place_tiles", "ship")
SamplerFactory = Callable[[dict[str, Any], Rng], Any]


def _key(cmd: Command) -> str:
    return canonical_json(cmd)


def _dice(ds: list[int]) -> list[dict[str, Any]]:
    return [{"die": d, "color": color_of(d)} for d in ds]


def _stack(tiles: list[int], dice: list[int], card: Callable[[int], Any]) -> dict[str, Any]:
    shown = [{"tile": t, "cost": card(t).cost} for t in tiles]
    return {"count": len(tiles), "top": shown[0] if shown else None, "dice": dice, "tiles": shown}


def heuristic_view(s: GameState, seat: int) -> dict[str, Any]:
    """The part of ``engine.observe(s, seat)`` the heuristic bot reads, built for roll-outs.

    A full view costs about as much as the engine's move itself; the heuristic reads only the
    round, the VP pool, the number of seats and a few fields of its own seat (the other seats are
    ``None`` here). It gives the same commands as the full view (``tests/bots``)."""
    p = s.players[seat]
    me = {
        "credits": p.credits,
        "cup": _dice(sorted(p.cup)),
        "citizenry": _dice(sorted(p.citizenry)),
        "worlds": [{"card": k, "color": CARDS[k].color} for k in p.worlds],
        "goods": p.goods,
        "construction": {
            "development": _stack(p.dev_stack, p.dev_dice, dev_card),
            "world": _stack(p.world_stack, p.world_dice, world_card),
        },
    }
    players: list[dict[str, Any] | None] = [None] * len(s.players)
    players[seat] = me
    return {"seat": seat, "round": s.round, "vp_pool": s.vp_pool, "players": players}


class IsmctsBot:
    name = "ismcts"
    needs_view = True

    def __init__(
        self,
        iterations: int | None = 48,
        millis: float | None = None,
        seed: str | None = None,
        rollout: str = "heuristic",
        horizon: int | None = None,
        search: Iterable[str] = SEARCHED,
        variants: bool = True,
        margin: float = 0.02,
        z: float = 1.0,
        margin_weight: float = 0.25,
        prune: float | None = 2.0,
        min_determinizations: int = 3,
        sampler: SamplerFactory = Sampler,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if iterations is None and millis is None:
            raise ValueError("a budget is needed: iterations or millis")
        if millis is not None and clock is None:
            raise ValueError(
                "a millis budget needs a clock (bots read no clock: pass time.process_time)"
            )
        if rollout not in ("heuristic", "random"):
            raise ValueError("rollout is 'heuristic' or 'random'")
        self.iterations = iterations
        self.millis = millis
        self.seed = seed
        self.rollout = rollout
        self.horizon = horizon
        self.search = frozenset(search)
        self.variants = variants
        self.margin = margin
        self.z = z
        self.margin_weight = margin_weight
        self.prune = prune
        self.min_determinizations = min_determinizations
        self.sampler = sampler
        self.clock = clock
        self._heuristic = HeuristicBot()
        self._random = RandomBot()
        #: roll-outs of the last decision (for benchmarks)
        self.last_iterations = 0

    # --- the Bot protocol -------------------------------------------------------------------------
    def act(self, decision: Command, view: dict[str, Any] | None, rng: Rng) -> Command:
        assert view is not None, "the ismcts bot needs its seat's view"
        seat = int(view["seat"])
        r = Rng.from_seed(f"{self.seed}:{view['version']}:{seat}") if self.seed is not None else rng
        self.last_iterations = 0
        cands = self._candidates(decision, view, r)
        if len(cands) == 1:
            return cands[0]
        try:
            sampler = self.sampler(view, r)
        except SamplerError:
            return cands[0]
        rewards, live = self._evaluate(sampler, seat, cands, r)
        return cands[self._choose(rewards, live)]

    # --- candidates --------------------------------------------------------------------------------
    def _candidates(self, decision: Command, view: dict[str, Any], r: Rng) -> list[Command]:
        """The heuristic's command first, then its principled variants (none where not searched)."""
        out: dict[str, Command] = {}

        def add(cmd: Command) -> None:
            out.setdefault(_key(cmd), cmd)

        add(self._heuristic.act(decision, view, r))
        if decision["kind"] not in self.search:
            return list(out.values())
        first = next(iter(out.values()))
        kind = decision["kind"]
        if kind == "assign":
            plans = [self._heuristic._assign(decision, view, r, ph) for ph in PHASES]
            for cmd in plans:
                add(cmd)
            if self.variants:
                for cmd in [first, *plans]:
                    if cmd.get("reassign"):
                        add({k: v for k, v in cmd.items() if k != "reassign"})
        elif kind == "explore" and decision["explorers"]:
            # Stock with the best stocker, or Scout abandoning nothing
            explorers = sorted(decision["explorers"], key=lambda x: -x["stock"])
            add({"kind": "explore", "task": "stock", "explorer": explorers[0]["die"]})
            add(
                {
                    "kind": "explore",
                    "task": "scout",
                    "explorer": explorers[-1]["die"],
                    "abandon": [],
                }
            )
        elif kind == "place_tiles" and 0 < len(first["placements"]) <= 3:
            # every choice of sides, in the heuristic's order
            tiles = [x["tile"] for x in first["placements"]]
            for mask in range(1 << len(tiles)):
                sides = ["world" if mask >> i & 1 else "development" for i in range(len(tiles))]
                placements = [{"tile": t, "as": a} for t, a in zip(tiles, sides, strict=True)]
                add({"kind": "place_tiles", "placements": placements})
        elif kind == "ship" and first["tasks"]:
            # the heuristic's shippers and goods, every good traded, or every good consumed
            actions = {g["die"]: g.get("actions", ("trade", "consume")) for g in decision["goods"]}
            for action in ("trade", "consume"):
                tasks = [
                    dict(t, action=action if action in actions.get(t["good"], ()) else t["action"])
                    for t in first["tasks"]
                ]
                add({"kind": "ship", "tasks": tasks})
        return list(out.values())

    # --- the search ---------------------------------------------------------------------------------
    def _evaluate(
        self, sampler: Any, me: int, cands: list[Command], r: Rng
    ) -> tuple[list[list[float]], list[int]]:
        """Roll-out rewards, ``out[c][i]`` for candidate ``c`` on determinization ``i``, and the
        candidates still in the race at the end (racing drops the ones clearly behind)."""
        out: list[list[float]] = [[] for _ in cands]
        live = list(range(len(cands)))
        clock = self.clock
        deadline = clock() + self.millis / 1000 if self.millis is not None and clock else None
        n = 0
        while len(live) > 1:
            if self.iterations is not None and n >= self.iterations:
                break
            if deadline is not None and clock is not None and n > 0 and clock() >= deadline:
                break
            det = sampler.draw(sealed=self._sealed)
            for c in live:
                s = det.copy()
                self._play(s, me, cands[c], r)
                self._rollout(s, r)
                out[c].append(self._rewards(s)[me])
                n += 1
            if self.prune is not None and len(out[0]) >= self.min_determinizations:
                live = self._race(out, live)
        self.last_iterations = n
        return out, live

    @staticmethod
    def _paired(rewards: list[float], base: list[float]) -> tuple[float, float]:
        """Mean and standard error of a candidate's reward minus the heuristic's, paired."""
        diffs = [a - b for a, b in zip(rewards, base, strict=True)]
        k = len(diffs)
        mean = sum(diffs) / k
        var = sum((d - mean) ** 2 for d in diffs) / (k - 1) if k > 1 else 0.0
        return mean, math.sqrt(var / k)

    def _race(self, out: list[list[float]], live: list[int]) -> list[int]:
        """Drop the candidates whose paired mean is clearly (``prune`` standard errors, plus the
        margin) below the heuristic's or the leader's; the heuristic's command always stays."""
        stats = {c: self._paired(out[c], out[0]) for c in live if c}
        lead = max([0.0, *(m for m, _ in stats.values())])
        assert self.prune is not None
        return [0] + [
            c for c, (m, se) in stats.items() if m + self.prune * se + self.margin >= lead
        ]

    def _choose(self, rewards: list[list[float]], live: list[int] | None = None) -> int:
        """The heuristic's candidate (0) unless another beats it clearly on the paired rewards."""
        best, best_mean = 0, 0.0
        for c in range(1, len(rewards)) if live is None else live:
            if c == 0:
                continue
            mean, se = self._paired(rewards[c], rewards[0])
            if mean > best_mean and mean >= self.margin and mean >= self.z * se:
                best, best_mean = c, mean
        return best

    def _sealed(self, s: GameState, seat: int, decision: Command, r: Rng) -> Command:
        """The opponent model for a seat that sealed its assignment before us: the heuristic."""
        return self._heuristic.act(decision, heuristic_view(s, seat), r)

    def _policy(self, state: GameState, seat: int, decision: Command, r: Rng) -> Command:
        if self.rollout == "random":
            return self._random.act(decision, None, r)
        return self._heuristic.act(decision, heuristic_view(state, seat), r)

    def _rollout(self, s: GameState, r: Rng) -> None:
        # the arena's cap: two heuristic bots can lock each other up (one die each, recalled
        # every round from a world neither can settle); such a roll-out is cut off
        stop = s.round + self.horizon if self.horizon is not None else DEFAULT_MAX_ROUNDS
        stop = min(stop, DEFAULT_MAX_ROUNDS)
        while not s.over and s.round <= stop:
            pend = engine.pending(s)
            if not pend:  # pragma: no cover - the engine always says who acts
                break
            for seat in sorted(pend):
                d = engine.legal(s, seat)
                if d is None:
                    continue
                self._play(s, seat, self._policy(s, seat, d, r), r)
                if s.over:
                    break

    def _play(self, s: GameState, seat: int, cmd: Command, r: Rng) -> None:
        try:
            engine.play(s, seat, cmd)
        except IllegalCommand:  # pragma: no cover - every command comes from legal()'s choices
            d = engine.legal(s, seat)
            if d is not None:
                engine.play(s, seat, self._random.act(d, None, r))

    def _rewards(self, s: GameState) -> list[float]:
        if s.over:
            totals = [x["total"] for x in s.scores]
            share = 1.0 / len(s.winners)
            w = self.margin_weight
            return [
                (share if p.seat in s.winners else 0.0)
                + w * math.tanh((totals[p.seat] - max(totals[:i] + totals[i + 1 :])) / 10)
                for i, p in enumerate(s.players)
            ]
        totals = [score(p)["total"] for p in s.players]
        out = []
        for i, t in enumerate(totals):
            best_other = max(x for j, x in enumerate(totals) if j != i)
            out.append(0.5 + 0.5 * math.tanh((t - best_other) / 6))
        return out


register_bot("ismcts", IsmctsBot)
