"""The random bot: uniformly random legal choices, from its own decision only.

It also takes optional powers at random (Dictate, Reassign powers, ...) so that simulations
exercise them.
"""

from __future__ import annotations

from typing import Any

from engine.catalogue import PHASES
from engine.rng import Rng

from .base import register_bot


class RandomBot:
    name = "random"
    needs_view = False

    def act(
        self, decision: dict[str, Any], view: dict[str, Any] | None, rng: Rng
    ) -> dict[str, Any]:
        kind = decision["kind"]
        return getattr(self, "_" + kind)(decision, rng)

    # --- one method per decision kind ------------------------------------------------------
    def _start_tiles(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        opt = rng.choice(d["options"])
        cmd: dict[str, Any] = {"kind": "start_tiles", "development": opt["development"]}
        if d.get("removals"):  # Ambition, Die Removal: any allowed die, a different one each time
            remove: list[int] = []
            for r in d["removals"]:
                remove.append(rng.choice([x for x in r["choices"] if x not in remove]))
            cmd["remove"] = remove
        return cmd

    def _assign(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        col = {x["die"]: x["column"] for x in d["dice"]}
        colors = {x["die"]: x["color"] for x in d["dice"]}
        wild = []
        for die in d["wild_dice"]:
            to = rng.choice(PHASES)
            wild.append({"die": die, "to": to})
            col[die] = to
        two_phase = []  # Ambition: a die showing two phases goes to either column
        for x in d.get("two_phase_dice", ()):
            to = rng.choice(x["phases"])
            if to != col[x["die"]]:
                two_phase.append({"die": x["die"], "to": to})
                col[x["die"]] = to
        dice = sorted(col)
        selector = rng.choice(dice)
        phase = rng.choice(PHASES)
        col[selector] = phase
        uses: list[dict[str, Any]] = []
        order = list(d["means"])
        rng.shuffle(order)  # Dictate and Reassign powers may be used in any order
        for means in order:
            for _ in range(means.get("uses", 1)):
                if not rng.chance(1, 3):
                    break
                use = self._reassign_use(means, col, colors, selector, rng)
                if use is None:
                    break
                uses.append(use)
        cmd: dict[str, Any] = {
            "kind": "assign",
            "select": {"die": selector, "phase": phase},
            "wild": wild,
        }
        if two_phase:
            cmd["two_phase"] = two_phase
        if uses:
            cmd["reassign"] = uses
        # Ambition: put some unused talent counters to work (never asked in a base game)
        talents = [
            {"die": t, "to": rng.choice(PHASES)} for t in d.get("talents", ()) if rng.chance(1, 2)
        ]
        if talents:
            cmd["talents"] = talents
        return cmd

    def _reassign_use(
        self,
        means: dict[str, Any],
        col: dict[int, str],
        colors: dict[int, str],
        selector: int,
        rng: Rng,
    ) -> dict[str, Any] | None:
        via = means["via"]
        movable = [x for x in sorted(col) if x != selector]
        if via == "dictate":
            if len(movable) < 1:
                return None
            park = rng.choice(movable)
            del col[park]
            rest = [x for x in movable if x != park]
            moves = []
            most = min(means.get("moves_per_use", 1), len(rest))
            for _ in range(rng.below(most) + 1 if most > 0 else 0):
                die = rng.choice(rest)
                rest.remove(die)
                to = rng.choice([p for p in PHASES if p != col[die]])
                col[die] = to
                moves.append({"die": die, "to": to})
            return {"via": "dictate", "park": park, "moves": moves}
        # a Reassign power: {count_min, count_max, from {die_colors, exclude_die_colors, phases,
        # same_phase}, to: [phases] or "selected"}; moves are checked against the columns as
        # they stand when the use starts
        src = means.get("from") or {}
        dest = means.get("to", list(PHASES))
        targets = [col[selector]] if dest == "selected" else list(dest)
        cands = [
            x
            for x in movable
            if (not src.get("die_colors") or colors.get(x) in src["die_colors"])
            and colors.get(x) not in (src.get("exclude_die_colors") or ())
            and (not src.get("phases") or col[x] in src["phases"])
            and any(t != col[x] for t in targets)
        ]
        if src.get("same_phase"):
            groups: dict[str, list[int]] = {}
            for x in cands:
                groups.setdefault(col[x], []).append(x)
            fit = [g for _, g in sorted(groups.items()) if len(g) >= means["count_min"]]
            if not fit:
                return None
            cands = rng.choice(fit)
        lo, hi = means["count_min"], min(means["count_max"], len(cands))
        if hi < lo or hi <= 0:
            return None
        count = lo + rng.below(hi - lo + 1)
        chosen: list[tuple[int, str]] = []
        for _ in range(count):
            die = rng.choice(cands)
            cands.remove(die)
            chosen.append((die, rng.choice([t for t in targets if t != col[die]])))
        for die, t in chosen:
            col[die] = t
        return {"via": via, "moves": [{"die": die, "to": t} for die, t in chosen]}

    def _explore(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        tasks = d["tasks"]
        if "rearrange" in tasks and rng.chance(1, 3):
            cmd = self._rearrange(d["stacks"], rng)
            if cmd is not None:
                return cmd
        if not d["explorers"]:
            return {"kind": "explore", "task": "finish"}
        explorer = rng.choice(d["explorers"])["die"]
        if rng.chance(1, 2):
            return {"kind": "explore", "task": "stock", "explorer": explorer}
        abandon = [t for t in d["abandonable"] if rng.chance(1, 6)]
        return {"kind": "explore", "task": "scout", "explorer": explorer, "abandon": abandon}

    def _rearrange(self, stacks: dict[str, list[int]], rng: Rng) -> dict[str, Any] | None:
        """Advanced Logistics: a random new order of the construction zone (None: no change)."""
        tiles = stacks["development"] + stacks["world"]
        rng.shuffle(tiles)
        dev: list[int] = []
        world: list[int] = []
        for t in tiles:
            (dev if rng.chance(1, 2) else world).append(t)
        if dev == stacks["development"] and world == stacks["world"]:
            return None
        return {"kind": "explore", "task": "rearrange", "development": dev, "world": world}

    def _place_tiles(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        tiles = [x["tile"] for x in d["tiles"]]
        rng.shuffle(tiles)
        out = []
        for t in tiles:
            x: dict[str, Any] = {"tile": t, "as": rng.choice(d["sides"])}
            if d.get("on_top") and rng.chance(1, 2):
                x["on_top"] = True
            out.append(x)
        return {"kind": "place_tiles", "placements": out}

    def _abandon_one(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        return {"kind": "abandon_one", "tile": rng.choice(d["tiles"])}

    def _construct(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        order = [w["die"] for w in d["workers"]]
        rng.shuffle(order)
        pool = list(d["removable"])
        remove = []
        for _ in d["removals"]:
            die = rng.choice(pool)
            pool.remove(die)
            remove.append(die)
        # a tile already complete at the start with dice to spare: sometimes choose which of the
        # dice on the stack complete it (the order they are used), else oldest first
        on_stack = list(d["dice_on_stack"])
        chosen = None
        if d.get("stack_choice") and rng.chance(1, 2):
            chosen = on_stack[:]
            rng.shuffle(chosen)
            on_stack = chosen
        # follow the completions as the engine will: each takes the next 'cost' dice of the stack
        # (dice already on it first, then the workers in order); a removal takes its die out of
        # the dice still to be used, and once too few are left no further tile completes
        seq = on_stack + order
        returns: list[list[int]] = []
        r = 0
        for c in d["completions"]:
            if len(seq) < c["cost"]:
                break
            used, seq = seq[: c["cost"]], seq[c["cost"] :]
            die = remove[r] if c["removal"] else None
            r += 1 if c["removal"] else 0
            if die in seq:
                seq.remove(die)
            # dice only: a worker that is no die (an Ambition talent counter) has no cup to go to
            cands = [x for x in used if x != die and x < 1000]
            n = rng.below(min(c["returns_max"], len(cands)) + 1) if c["returns_max"] else 0
            picks = []
            for _ in range(n):
                x = rng.choice(cands)
                cands.remove(x)
                picks.append(x)
            returns.append(picks)
        cmd: dict[str, Any] = {"kind": d["kind"], "order": order, "remove": remove}
        if chosen is not None:
            cmd["stack_order"] = chosen
        if any(returns):
            cmd["returns"] = returns
        return cmd

    def _develop(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        return self._construct(d, rng)

    def _settle(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        return self._construct(d, rng)

    def _produce(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        producers = [x["die"] for x in d["producers"]]
        rng.shuffle(producers)
        slots = [w["world"] for w in d["worlds"] for _ in range(w["room"])]
        rng.shuffle(slots)
        goods = [{"die": producers[i], "world": slots[i]} for i in range(d["count"])]
        return {"kind": "produce", "goods": goods}

    def _ship(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        shippers = [x["die"] for x in d["shippers"]]
        goods = [x["die"] for x in d["goods"]]
        # Ambition: a good that cannot be traded (Alien Refinery) lists the actions it allows
        allowed = {x["die"]: x.get("actions", d["actions"]) for x in d["goods"]}
        rng.shuffle(shippers)
        rng.shuffle(goods)
        tasks = []
        for i in range(d["count"]):
            task: dict[str, Any] = {
                "shipper": shippers[i],
                "good": goods[i],
                "action": rng.choice(d["actions"]),
            }
            if task["action"] not in allowed[goods[i]]:
                task["action"] = allowed[goods[i]][0]
            # optional per-task power flags (Galactic Bankers), on the actions they allow; their
            # cost is always affordable after a Trade's income, so a coin flip is enough
            for opt in d.get("options", []):
                if task["action"] in opt["actions"] and rng.chance(1, 2):
                    task[opt["option"]] = True
            tasks.append(task)
        return {"kind": "ship", "tasks": tasks}

    def _forecast(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        # Ambition, Psi-Crystal Forecasters: keep the selected phase or move to another
        return {"kind": "forecast", "phase": rng.choice(d["phases"])}

    def _buy_vp(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        # Ambition, Deficit Spending: $0 up to the most allowed, before or after other powers
        return {
            "kind": "buy_vp",
            "spend": rng.below(d["spend_max"] + 1),
            "first": rng.chance(1, 2),
        }

    def _manage(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        citizens = [x["die"] for x in d["citizenry"]]
        rng.shuffle(citizens)
        recruit = sorted(citizens[: d["recruit_count"]])
        recall = [x["die"] for x in d["recallable"] if rng.chance(1, 4)]
        if d["cup"] == 0 and not recruit and not recall and d["recallable"]:
            recall = [rng.choice(d["recallable"])["die"]]
        return {"kind": "manage", "recruit": recruit, "recall": sorted(recall)}


register_bot("random", RandomBot)
