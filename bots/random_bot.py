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
        return {"kind": "start_tiles", "development": opt["development"]}

    def _assign(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        col = {x["die"]: x["column"] for x in d["dice"]}
        wild = []
        for die in d["wild_dice"]:
            to = rng.choice(PHASES)
            wild.append({"die": die, "to": to})
            col[die] = to
        dice = sorted(col)
        selector = rng.choice(dice)
        phase = rng.choice(PHASES)
        col[selector] = phase
        uses: list[dict[str, Any]] = []
        for means in d["means"]:
            for _ in range(means.get("uses", 1)):
                if not rng.chance(1, 3):
                    break
                use = self._reassign_use(means, col, selector, rng)
                if use is None:
                    break
                uses.append(use)
        cmd: dict[str, Any] = {
            "kind": "assign",
            "select": {"die": selector, "phase": phase},
            "wild": wild,
        }
        if uses:
            cmd["reassign"] = uses
        return cmd

    def _reassign_use(
        self, means: dict[str, Any], col: dict[int, str], selector: int, rng: Rng
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
            for _ in range(min(means.get("moves_per_use", 1), len(rest))):
                die = rng.choice(rest)
                rest.remove(die)
                to = rng.choice([p for p in PHASES if p != col[die]])
                col[die] = to
                moves.append({"die": die, "to": to})
            return {"via": "dictate", "park": park, "moves": moves}
        # Reassign powers describe their own candidates: [{die, to: [phases]}], count bounds
        cands = means.get("candidates")
        if not cands:
            return None
        return None

    def _explore(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        explorer = rng.choice(d["explorers"])["die"]
        if rng.chance(1, 2):
            return {"kind": "explore", "task": "stock", "explorer": explorer}
        abandon = [t for t in d["abandonable"] if rng.chance(1, 6)]
        return {"kind": "explore", "task": "scout", "explorer": explorer, "abandon": abandon}

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
        return {"kind": d["kind"], "order": order, "remove": remove}

    _develop = _construct
    _settle = _construct

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
        rng.shuffle(shippers)
        rng.shuffle(goods)
        tasks = []
        for i in range(d["count"]):
            task: dict[str, Any] = {
                "shipper": shippers[i],
                "good": goods[i],
                "action": rng.choice(d["actions"]),
            }
            for opt in d.get("options", []):
                if rng.chance(1, 2):
                    task[opt] = True
            tasks.append(task)
        return {"kind": "ship", "tasks": tasks}

    def _manage(self, d: dict[str, Any], rng: Rng) -> dict[str, Any]:
        citizens = [x["die"] for x in d["citizenry"]]
        rng.shuffle(citizens)
        recruit = sorted(citizens[: d["recruit_count"]])
        recall = [x["die"] for x in d["recallable"] if rng.chance(1, 4)]
        if d["cup"] == 0 and not recruit and not recall and d["recallable"]:
            recall = [rng.choice(d["recallable"])["die"]]
        return {"kind": "manage", "recruit": recruit, "recall": sorted(recall)}


register_bot("random", RandomBot)
