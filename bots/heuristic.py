"""The heuristic bot: plays sensibly from its own seat's view and decision only.

It values what the rulebook's tips value: settle worlds for dice, build cheap tiles that its
workers can finish, keep goods flowing (produce where there is room, trade early for credits to
recruit, consume for VP once the game is under way), recruit the most useful dice, and avoid
locking up workers. Every choice it makes is one of the legal choices it is offered.

Ambition, simply: a Leader (black) die matches every world when consuming and is recruited
early; an Entrepreneur (orange) die matches none and is worth about a Home die; a die showing two
phases goes to the phase it selects when it shows it, else to the one valued more; the die
removed at setup is the rulebook's typical choice (a Home die from the Citizenry); talent
counters (1 VP each when unused) go to work only to finish the tile on top of the stack of the
phase it selects this round.
"""

from __future__ import annotations

from typing import Any

from engine.catalogue import PHASES, TRADE_VALUE
from engine.rng import Rng

from .base import register_bot

WORLD_VALUE = {"alien": 4, "genes": 3, "rare": 2, "novelty": 1, "gray": 0}
#: the die a world colour matches for Consume bonuses
MATCH = {"novelty": "blue", "rare": "brown", "genes": "green", "alien": "yellow"}
#: dice that match every world colour when consuming (Ambition: "a Leader (black) die always
#: matches the world's color", as good or as shipper)
MATCH_ALL = ("purple", "black")
RECRUIT_ORDER = {
    "purple": 6,
    "black": 6,
    "yellow": 5,
    "green": 4,
    "red": 3,
    "brown": 3,
    "blue": 2,
    "orange": 2,
    "white": 1,
}


def _me(view: dict[str, Any]) -> dict[str, Any]:
    me: dict[str, Any] = view["players"][view["seat"]]
    return me


class HeuristicBot:
    name = "heuristic"
    needs_view = True

    def act(
        self, decision: dict[str, Any], view: dict[str, Any] | None, rng: Rng
    ) -> dict[str, Any]:
        assert view is not None, "the heuristic bot needs its seat's view"
        kind = decision["kind"]
        method = getattr(self, "_" + kind, None)
        if method is None:  # a decision kind this bot does not know: fall back to random play
            from .random_bot import RandomBot

            return RandomBot().act(decision, view, rng)
        out: dict[str, Any] = method(decision, view, rng)
        return out

    # --- setup ---------------------------------------------------------------------------------
    def _start_tiles(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        from engine.catalogue import dev_card, world_card

        def value(opt: dict[str, Any]) -> float:
            w = world_card(opt["world"])
            dv = dev_card(opt["development"])
            return -w.cost - 0.7 * dv.cost + WORLD_VALUE[w.color or "gray"] * 0.3

        best = max(d["options"], key=value)
        cmd: dict[str, Any] = {"kind": "start_tiles", "development": best["development"]}
        if d.get("removals"):  # Ambition, Die Removal: the typical choice, a Home die
            cmd["remove"] = list(d["default_remove"])
        return cmd

    # --- assign --------------------------------------------------------------------------------
    def _phase_values(
        self, me: dict[str, Any], view: dict[str, Any], count: dict[str, int]
    ) -> dict[str, float]:
        cz = me["construction"]
        goods = sum(len(g) for g in me["goods"].values())
        free_worlds = sum(
            1
            for w in me["worlds"]
            if w["color"] not in (None, "gray") and w["card"] not in me["goods"]
        )
        late = view["vp_pool"] <= 4 * len(view["players"])
        vals: dict[str, float] = {}
        for ph, stack in (("develop", cz["development"]), ("settle", cz["world"])):
            top = stack["top"]
            if top is None:
                vals[ph] = -5.0
                continue
            have = len(stack["dice"]) + count[ph]
            need = top["cost"] - have
            vals[ph] = (top["cost"] + (2.5 if ph == "settle" else 1.5)) / (
                1 + max(need - 1, 0)
            ) + 0.3 * have
        vals["produce"] = 2.2 * min(free_worlds, count["produce"] + 1) if free_worlds else -5.0
        vals["ship"] = (
            (2.0 + (1.5 if late else 0.5)) * min(goods, count["ship"] + 1) if goods else -5.0
        )
        tiles = cz["development"]["count"] + cz["world"]["count"]
        vals["explore"] = 1.5 + (2.5 if tiles <= 1 else 0) + (2.0 if me["credits"] <= 2 else 0)
        return vals

    def _assign(
        self, d: dict[str, Any], view: dict[str, Any], rng: Rng, phase: str | None = None
    ) -> dict[str, Any]:
        """Select the phase valued most (or ``phase``: the search bots try each one this way)."""
        me = _me(view)
        col = {x["die"]: x["column"] for x in d["dice"]}
        wild = set(d["wild_dice"])
        count = {
            ph: sum(1 for die, c in col.items() if c == ph and die not in wild) for ph in PHASES
        }
        vals = self._phase_values(me, view, count)
        best = phase or max(PHASES, key=lambda ph: (vals[ph], -PHASES.index(ph)))
        # wild dice join the phase we select
        wild_moves = [{"die": die, "to": best} for die in sorted(wild)]
        for die in wild:
            col[die] = best
        # Ambition: a die showing two phases goes to the one we select, else to the one valued more
        two_phase: list[dict[str, Any]] = []
        for x in d.get("two_phase_dice", ()):
            die = x["die"]
            to = best if best in x["phases"] else max(x["phases"], key=lambda ph: vals[ph])
            if to != col[die]:
                two_phase.append({"die": die, "to": to})
                col[die] = to

        # the selector: a die from the column we value least (its face is then ignored)
        def worth(die: int) -> float:
            c = col[die]
            return vals[c] if c != best else 100.0

        selector = min(sorted(col), key=worth)
        col[selector] = best
        cmd: dict[str, Any] = {
            "kind": "assign",
            "select": {"die": selector, "phase": best},
            "wild": wild_moves,
        }
        talents = self._talents(d, me, best, col)
        if talents:
            cmd["talents"] = [{"die": t, "to": best} for t in talents]
        colors = {x["die"]: x["color"] for x in d["dice"]}
        uses: list[dict[str, Any]] = []
        # Reassign powers first: move workers out of columns we do not expect to happen into ours
        for m in d["means"]:
            if m["via"] == "dictate" or not m.get("uses") or m.get("exactly"):
                continue
            if m["to"] != "selected" and best not in m["to"]:
                continue
            src = m.get("from") or {}
            movers = [
                die
                for die, c in sorted(col.items())
                if die != selector
                and vals[c] < 0
                and c != best
                and (not src.get("die_colors") or colors[die] in src["die_colors"])
                and colors[die] not in src.get("exclude_die_colors", [])
                and (not src.get("phases") or c in src["phases"])
            ][: m["count_max"]]
            if len(movers) >= m["count_min"]:
                uses.append(
                    {"via": m["via"], "moves": [{"die": die, "to": best} for die in movers]}
                )
                for die in movers:
                    col[die] = best
        # Dictate: park a worker from a useless column, move another useless one into our phase
        useless = sorted(
            (die for die, c in col.items() if die != selector and vals[c] < 0 and c != best),
            key=worth,
        )
        if len(useless) >= 2 and any(m["via"] == "dictate" for m in d["means"]):
            park, mover = useless[0], useless[1]
            uses.append({"via": "dictate", "park": park, "moves": [{"die": mover, "to": best}]})
        if two_phase:
            cmd["two_phase"] = [m for m in two_phase if m["die"] != selector]
        if uses:
            cmd["reassign"] = uses
        return cmd

    @staticmethod
    def _talents(
        d: dict[str, Any], me: dict[str, Any], best: str, col: dict[int, str]
    ) -> list[int]:
        """Ambition: the talent counters to put to work in the selected phase: just enough to
        finish the tile on top of its stack this round (an unused counter is 1 VP at the end)."""
        if not d.get("talents") or best not in ("develop", "settle"):
            return []
        stack = me["construction"]["development" if best == "develop" else "world"]
        if stack["top"] is None:
            return []
        need = stack["top"]["cost"] - len(stack["dice"]) - sum(1 for c in col.values() if c == best)
        return list(d["talents"][:need]) if 0 < need <= len(d["talents"]) else []

    # --- Ambition powers' decisions -----------------------------------------------------------
    def _forecast(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        """Psi-Crystal Forecasters at Reveal: when another seat selected our phase too (it occurs
        anyway), move the selection to the phase valued most that nobody selected; else keep."""
        taken = set((d.get("others") or {}).values())
        if d["selected"] not in taken:
            return {"kind": "forecast"}
        me = _me(view)
        cols = me.get("columns") or {}
        vals = self._phase_values(me, view, {ph: len(cols.get(ph, ())) for ph in PHASES})
        free = [ph for ph in d["phases"] if ph not in taken]
        if not free:
            return {"kind": "forecast"}
        best = max(free, key=lambda ph: (vals[ph], -PHASES.index(ph)))
        return {"kind": "forecast", "phase": best} if vals[best] > 0 else {"kind": "forecast"}

    def _buy_vp(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        """Deficit Spending: late in the game, every $ allowed for VP; earlier only the $ above
        the $4 that recruiting needs (a whole number of VP chips' price)."""
        late = view["vp_pool"] <= 4 * len(view["players"])
        most = int(d["spend_max"])
        budget = most if late else max(0, min(most, int(d.get("credits", 0)) - 4))
        price = int((d.get("rate") or {}).get("credits") or 1)
        return {"kind": "buy_vp", "spend": budget - budget % price}

    # --- explore -------------------------------------------------------------------------------
    def _explore(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        me = _me(view)
        cz = me["construction"]
        explorers = sorted(d["explorers"], key=lambda x: -x["stock"])
        tiles = cz["development"]["count"] + cz["world"]["count"]
        if not explorers:  # only a power's step is left (e.g. Advanced Logistics): finish it
            return {"kind": "explore", "task": "finish"}
        if me["credits"] <= 3 or (tiles >= 3 and me["credits"] < 8) or d.get("bag", 1) == 0:
            return {"kind": "explore", "task": "stock", "explorer": explorers[0]["die"]}
        abandon = []
        for stack in (cz["development"], cz["world"]):
            for t in stack.get("tiles", [])[1:]:
                if t["cost"] >= 5:
                    abandon.append(t["tile"])
        return {
            "kind": "explore",
            "task": "scout",
            "explorer": explorers[-1]["die"],
            "abandon": abandon[:2],
        }

    def _place_tiles(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        from engine.catalogue import dev_card, world_card

        me = _me(view)
        cz = me["construction"]
        ndev, nworld = cz["development"]["count"], cz["world"]["count"]
        out = []
        for t in d["tiles"]:
            tile = t["tile"]
            w, dv = world_card(tile), dev_card(tile)
            world_score = 6 - w.cost + WORLD_VALUE[w.color or "gray"] - nworld
            dev_score = 6 - dv.cost + (1.5 if dv.cost == 6 else 0) - ndev
            side = "world" if world_score >= dev_score else "development"
            if side == "world":
                nworld += 1
            else:
                ndev += 1
            out.append({"tile": tile, "as": side})
        return {"kind": "place_tiles", "placements": out}

    def _abandon_one(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        return {"kind": "abandon_one", "tile": d["tiles"][-1]}

    # --- develop / settle ----------------------------------------------------------------------
    def _construct(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        # common colours first: rarer dice stay on the stack for the tile being built
        workers = sorted(d["workers"], key=lambda w: (RECRUIT_ORDER.get(w["color"], 0), w["die"]))
        order = [w["die"] for w in workers]
        me = _me(view)
        candidates = [x["die"] for x in me["citizenry"] if x["color"] == "white"]
        candidates += [x["die"] for x in me["cup"] if x["color"] == "white"]
        candidates += [x for x in d["removable"] if x not in candidates]
        remove = candidates[: len(d["removals"])]
        return {"kind": d["kind"], "order": order, "remove": remove}

    _develop = _construct
    _settle = _construct

    # --- produce / ship ------------------------------------------------------------------------
    def _produce(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        producers = list(d["producers"])
        slots = sorted(
            ((w["world"], w["color"]) for w in d["worlds"] for _ in range(w["room"])),
            key=lambda x: -WORLD_VALUE[x[1]],
        )
        goods = []
        for world, color in slots[: d["count"]]:
            match = next(
                (p for p in producers if p["color"] in (MATCH.get(color), *MATCH_ALL)), None
            )
            pick = match or min(producers, key=lambda p: RECRUIT_ORDER.get(p["color"], 0))
            producers.remove(pick)
            goods.append({"die": pick["die"], "world": world})
        return {"kind": "produce", "goods": goods}

    def _ship(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        me = _me(view)
        shippers = list(d["shippers"])
        goods = sorted(d["goods"], key=lambda g: -TRADE_VALUE.get(g["world_color"], 0))
        early = view["vp_pool"] > 6 * len(view["players"]) and view["round"] <= 6
        credits = me["credits"]
        tasks = []
        for g in goods[: d["count"]]:
            wc = g["world_color"]

            good_match = g["color"] in (MATCH.get(wc), *MATCH_ALL)

            def consume_vp(s: dict[str, Any], wc: str = wc, good_match: bool = good_match) -> int:
                return (s["color"] in (MATCH.get(wc), *MATCH_ALL)) + good_match

            trade = credits < 4 or (early and credits < 7)
            trade = trade and "trade" in g.get("actions", ("trade",))  # Ambition: Alien Refinery
            if trade:
                # trade with the least useful shipper for consuming
                s = min(shippers, key=lambda s: (consume_vp(s), s["color"] in MATCH_ALL))
                credits = min(10, credits + g.get("trade", TRADE_VALUE.get(wc, 3)))
            else:
                s = max(shippers, key=consume_vp)
            shippers.remove(s)
            tasks.append(
                {"shipper": s["die"], "good": g["die"], "action": "trade" if trade else "consume"}
            )
        return {"kind": "ship", "tasks": tasks}

    # --- manage --------------------------------------------------------------------------------
    def _manage(self, d: dict[str, Any], view: dict[str, Any], rng: Rng) -> dict[str, Any]:
        citizens = sorted(
            d["citizenry"], key=lambda x: (-RECRUIT_ORDER.get(x["color"], 0), x["die"])
        )
        recruit = sorted(x["die"] for x in citizens[: d["recruit_count"]])
        recall: list[int] = []
        if d["cup"] + len(recruit) == 0 and d["recallable"]:
            recall = [d["recallable"][0]["die"]]
        return {"kind": "manage", "recruit": recruit, "recall": recall}


register_bot("heuristic", HeuristicBot)
