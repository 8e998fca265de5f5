"""A card at a glance: the phases its power acts in and one line of what it does.

Both are derived from the catalogue's structured effects (engine/data/tiles.yaml), the same data
the power handlers read, so the tableau's phase icons and one-line powers cannot drift from the
rules code; ``description`` keeps the full wording. An effect type this module does not know, or a
``credits_if`` condition without a short wording here, raises: a new power must say how it reads.

Phases are among Explore, Develop, Settle, Produce and Ship only. A Reassign power works during
Assign, an immediate development once when it is completed, an end-game bonus at the end: none of
them acts in a phase, so a card whose powers are only those has no phase (the client marks
Reassign powers and end-game bonuses apart, from ``dev_kind`` and ``endgame_bonus``).
"""

from __future__ import annotations

from typing import Any

from ..catalogue import DICE, PHASES, TRADE_VALUE, Card

#: effect types that act in the phase their ``phase`` field names
_OWN_PHASE = {
    "credits_at_phase_end",
    "credits_per_count_at_phase_end",
    "vp_at_phase_end",
    "credits_if",
    "draw_tile_end_of_phase",
    "virtual_workers",
    "buy_vp_at_phase_end",
}
#: effect types that always act in one phase
_FIXED_PHASE = {
    "stock_bonus": "explore",
    "scout_place_on_top": "explore",
    "rearrange_construction_zone": "explore",
    "trade_bonus": "ship",
    "trade_buy_vp": "ship",
    "consume_bonus_credits": "ship",
    "consume_bonus_vp": "ship",
    "goods_capacity": "produce",
}
#: effect types that act in no phase: during Assign, or once when the tile is completed
_NO_PHASE = {
    "reassign",
    "dictate_unlimited",
    "dictate_extra",
    "immediate",
    # Ambition: at setup, and at Reveal (Psi-Crystal Forecasters: "neither a Reassign nor a phase
    # power", Ambition rulebook, Fine Points)
    "start_credits_bonus",
    "change_selected_phase_after_reveal",
}
#: the phase of each task a ``credits_per_task`` effect pays for (Ambition)
_TASK_PHASE = {"scout": "explore", "produce": "produce"}
#: the tile a development or world completes in
_BUILT_IN = {"development": "develop", "world": "settle"}

_WORLD = {"novelty": "Novelty", "rare": "Rare Elements", "genes": "Genes", "alien": "Alien Tech."}
_PLACES = {"cup": "to cup", "citizenry": "to Citizenry", "good": "as a good"}
_PHASE = {p: p.capitalize() for p in PHASES}
#: ``credits_if`` conditions are free text in the data (the handlers key them by power id too)
_CONDITIONS = {
    "alien_research_team": "if an Alien explorer scouted",
    "space_tourism": "if you alone own the costliest world",
}


def _effect_phases(e: dict[str, Any]) -> set[str]:
    t = e["type"]
    if t in _OWN_PHASE:
        return {e["phase"]}
    if t in _FIXED_PHASE:
        return {_FIXED_PHASE[t]}
    if t in _NO_PHASE:
        return set()
    if t == "credits_if_most":
        return set(e["phases"])
    if t == "cost_discount":
        return {_BUILT_IN[e["applies_to"]["tile"]]}
    if t in ("credits_on_complete", "pay_to_discount", "remove_die_to_discount"):
        return {_BUILT_IN[tile] for tile in e["tiles"]}
    if t == "credits_per_task":
        return {_TASK_PHASE[e["task"]]}
    if t == "return_workers_to_cup":
        return {_BUILT_IN[e["trigger"].removeprefix("complete_")]}
    raise ValueError(f"effect type {t!r} has no phase here (engine/powers/glance.py)")


def phases(c: Card) -> tuple[str, ...]:
    """The phases a card's powers act in, in phase order (none for a world)."""
    got: set[str] = set()
    for e in c.effects:
        got |= _effect_phases(e)
    return tuple(p for p in PHASES if p in got)


# --- one line ------------------------------------------------------------------------------------
def _dice(colors: Any) -> str:
    return " or ".join(DICE[c].name for c in colors)


def _worlds(colors: Any, noun: str = "worlds", joiner: str = " and ") -> str:
    if colors in (None, "any"):
        return noun
    return joiner.join(_WORLD.get(c, c) for c in colors) + " " + noun


def _goods(colors: Any) -> str:
    """The goods a Trade or Consume bonus pays for: ``any good`` or ``from Rare Elements world``."""
    return "any good" if colors in (None, "any") else f"from {_worlds(colors, 'world', ' or ')}"


def _count(n: Any) -> str:
    return f"{n['min']}-{n['max']}" if isinstance(n, dict) else str(n)


def _counter(per: dict[str, Any]) -> str:
    div = int(per.get("divisor", 1))
    each = f"per {div}" if div > 1 else "per"
    c = per["counter"]
    if c == "dice_in_citizenry":
        return f"{each} {_dice(per['die_colors'])} in Citizenry"
    if c == "goods_on_own_worlds":
        return f"{each} good on {_worlds(per.get('world_colors'))}"
    if c == "goods_by_die_color":
        return f"{each} {_dice(per['die_colors'])} good"
    if c == "goods_shipped_this_phase":
        return f"{each} goods shipped"
    raise ValueError(f"counter {c!r} has no words here (engine/powers/glance.py)")


def _to(spec: Any) -> str:
    if spec == "any":
        return "to any phase"
    if spec == "selected":
        return "to your selected phase"
    return "to " + " or ".join(_PHASE[p] for p in spec)


def _reassign(e: dict[str, Any]) -> str:
    n, src = e["count"], e["from"]
    many = isinstance(n, dict) or n > 1
    src = {} if src == "any" else src
    noun = (
        ("dice" if many else "die")
        if src.get("die_colors") or src.get("exclude_die_colors")
        else ("workers" if many else "worker")
    )
    if src.get("die_colors"):
        noun = f"{_dice(src['die_colors'])} {noun}"
    if src.get("exclude_die_colors"):
        noun = f"non-{_dice(src['exclude_die_colors'])} {noun}"
    if src.get("phases"):
        noun += " from " + " or ".join(_PHASE[p] for p in src["phases"])
    if src.get("same_phase"):
        noun += " from one phase"
    exactly = "exactly " if e.get("exactly") else ""
    line = f"Reassign {exactly}{_count(n)} {noun} {_to(e['to'])}"
    if e.get("condition"):
        line += " if most Novelty worlds"
    return line


def _effect_line(c: Card, e: dict[str, Any]) -> str:
    t = e["type"]
    amount = e.get("amount", 0)
    when = f"{_PHASE.get(e.get('phase', ''), '')} end: "
    if t == "credits_at_phase_end":
        return f"{when}+${amount}"
    if t == "vp_at_phase_end":
        return f"{when}+{amount} VP"
    if t == "credits_per_count_at_phase_end":
        return f"{when}+${amount} {_counter(e['per'])}"
    if t == "credits_if":
        return f"+${amount} more {_CONDITIONS[c.power_id or '']}"
    if t == "credits_if_most":
        ends = " and ".join(_PHASE[p] for p in e["phases"])
        return f"{ends} end: +${amount} if most developments"
    if t == "draw_tile_end_of_phase":
        return f"{when}draw {e['count']} more tile"
    if t == "virtual_workers":
        role = {"explore": "explorer", "ship": "shipper"}[e["phase"]]
        dice = e["dice"]
        return f"{_PHASE[e['phase']]}: +{len(dice)} phantom {role}{'s' if len(dice) > 1 else ''} ({_dice(dice).replace(' or ', ', ')})"
    if t == "stock_bonus":
        return f"Stock by {_dice(e['explorer_die_colors'])} explorer: ${e['stock_total']}"
    if t == "scout_place_on_top":
        return "Scout: new tiles may go on top of stacks"
    if t == "rearrange_construction_zone":
        return "Explore: reorder and flip your stacks' tiles"
    if t == "trade_bonus":
        return f"Trade {_goods(e['world_colors'])}: +${amount}"
    if t == "trade_buy_vp":
        return f"Trade: may pay ${e['cost']} for {e['vp']} VP"
    if t == "consume_bonus_credits":
        return f"Consume {_goods(e['world_colors'])}: +${amount}"
    if t == "consume_bonus_vp":
        return f"Consume {_goods(e['world_colors'])}: +{amount} VP"
    if t == "goods_capacity":
        return f"Non-gray worlds hold {e['per_world']} goods"
    if t == "cost_discount":
        on = e["applies_to"]
        if on["tile"] == "development":
            what = "Reassign developments" if on.get("has_reassign_power") else "Developments"
        else:
            what = _worlds(on.get("world_colors"))
        return f"{what[0].upper()}{what[1:]} cost -{amount} (min {e['minimum']})"
    if t == "credits_on_complete":
        built = " or ".join(e["tiles"])
        bonus = "".join(
            f", +${b} if {_WORLD[col]}" for col, b in (e.get("bonus_by_world_color") or {}).items()
        )
        least = (e.get("condition") or {}).get("world_cost_at_least")
        if least is not None:
            built = f"{built} of cost {least}+"
        if e.get("per"):  # Uplift Mercenaries: the per clause is the rulebook's pairing rule
            return f"+${amount} per Military + Genes pair completing a {built}"
        return f"+${amount} per {built} completed{bonus}"
    if t == "credits_per_task":
        task = {"scout": "Scout", "produce": "good produced"}[e["task"]]
        on = (e.get("condition") or {}).get("world_colors")
        return f"+${amount} per {task}" + (f" on {_worlds(on)}" if on else "")
    if t == "start_credits_bonus":
        return f"Start with ${amount} more"
    if t == "pay_to_discount":
        built = " or ".join(e["tiles"])
        return f"Pay ${e['pay']}: a {built} needs {e['discount']} worker fewer (min {e['minimum']})"
    if t == "remove_die_to_discount":
        built = " or ".join(e["tiles"])
        die = _dice(e["remove"]["die_colors"])
        return f"Return a {die} die: a {built} needs {e['discount']} fewer (min {e['minimum']})"
    if t == "buy_vp_at_phase_end":
        rate = e.get("rate") or {"credits": 1, "vp": 1}
        return f"{when}may pay up to ${e['max_spend']}, ${rate['credits']} per {rate['vp']} VP"
    if t == "change_selected_phase_after_reveal":
        return "Reveal: may change your selected phase"
    if t == "return_workers_to_cup":
        built = e["trigger"].removeprefix("complete_")
        role = {"world": "settlers", "development": "developers"}[built]
        if e["die_colors"] != "any":
            role = f"{_dice(e['die_colors'])} {role}"
        up_to = "all" if e["max"] == "all" else f"up to {e['max']}"
        return f"{built.capitalize()} completed: {up_to} {role} to cup"
    if t == "reassign":
        return _reassign(e)
    if t == "dictate_unlimited":
        return "Dictate any number of times a round"
    if t == "dictate_extra":
        return f"Dictate moves up to {e['reassign_max']} workers"
    if t == "immediate":
        gains = [f"+{_dice([g['color']])} die {_PLACES[g['to']]}" for g in e["dice_gained"]]
        if e.get("credits"):
            gains.append(f"+${e['credits']}")
        lost = "remove 1 die, " if e.get("dice_removed") else ""
        when = "When completed: " if c.tile is not None else "Start: "  # Ambition: Negotiators
        return when + lost + ", ".join(_merge(gains))
    raise ValueError(f"effect type {t!r} has no words here (engine/powers/glance.py)")


def _merge(gains: list[str]) -> list[str]:
    """``+X die to cup, +X die to cup`` -> ``+2 X dice to cup``."""
    out: list[str] = []
    for g in gains:
        n = gains.count(g)
        if n > 1:
            g = g.replace("+", f"+{n} ", 1).replace(" die ", " dice ")
        if g not in out:
            out.append(g)
    return out


_OF = {
    "developments_in_tableau": "development",
    "worlds_in_tableau": "world",
    "goods_on_own_worlds": "good on your worlds",
    "distinct_die_colors_owned": "die colour owned",
    "dice_owned": "die",
}


def _bonus(b: dict[str, Any]) -> str:
    t = b["type"]
    f = b.get("filter") or {}
    of = _OF.get(b.get("of", ""), b.get("of", ""))
    if f.get("world_colors"):
        of = _worlds(f["world_colors"], of)
    if f.get("die_colors"):
        of = f"{_dice(f['die_colors'])} {of}"
    if "has_reassign_power" in f:
        of = ("Reassign " if f["has_reassign_power"] else "non-Reassign ") + of
    if "cost_at_least" in f:  # Ambition: Terraforming Unlimited
        of = f"{of} of cost {f['cost_at_least']}+"
    if t == "count":
        div = int(b.get("divisor", 1))
        per = f"per {div} {of.replace('die', 'dice')}" if div > 1 else f"per {of}"
        return f"+{b['multiplier']} VP {per}"
    if t == "sum_cost":
        part = {2: "1/2", 3: "1/3"}[int(b["divisor"])]
        return f"+{part} cost of {of}s"
    if t == "triangular":
        return "+VP for VP chips (1, 3, 6, 10...)"
    raise ValueError(f"end-game bonus {t!r} has no words here (engine/powers/glance.py)")


def _world_line(c: Card) -> str:
    color = c.color or ""
    parts = [
        f"{_WORLD[color]} good, trades ${TRADE_VALUE[color]}" if color in _WORLD else "No goods"
    ]
    imm = c.immediate
    gains = [f"+{_dice([g['color']])} die {_PLACES[g['to']]}" for g in imm.get("dice_gained") or []]
    if imm.get("credits"):
        gains.append(f"+${imm['credits']}")
    if imm.get("dice_removed"):
        gains.insert(0, "remove 1 die")
    if gains:
        parts.append(("Settled: " if c.tile is not None else "Start: ") + ", ".join(_merge(gains)))
    if imm.get("start_credits"):
        parts.append(f"Start with ${imm['start_credits']}")
    specials = {
        "cannot_trade_goods_from_this_world": "Goods cannot be traded",
        "cost_cannot_be_modified": "Cost cannot be modified",
        "remove_completing_settler": "Its completing settler is lost",
    }
    parts += [specials[s["type"]] for s in imm.get("special") or ()]
    if c.scoring_bonus:
        parts.append(f"End: +{c.scoring_bonus['vp']} VP")
    return " · ".join(parts)


def summary(c: Card) -> str:
    """One line of what a card does: its powers, then ``End:`` and its end-game bonus."""
    if c.is_world:
        return _world_line(c)
    parts = [_effect_line(c, e) for e in c.effects]
    if c.endgame_bonus:
        parts.append("End: " + _bonus(c.endgame_bonus))
    return " · ".join(parts)
