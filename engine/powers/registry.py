"""The registry from development power id to its handlers, and the hooks the phases consult.

A power handler is registered for one hook with ``@power("power_id", "hook")``. The phase code asks
``handlers(p, "hook")`` for the handlers a seat's tableau activates, in tableau order, and calls
them; adding a power never changes the structure of the phase code.

Hooks (arguments in brackets):
  tile_cost        (state, p, card, cost) -> cost            Develop/Settle cost discounts
  goods_capacity   (state, p, world card) -> capacity        goods a world can hold
  stock_value      (state, p, explorer die, value) -> value  credits of a Stock
  trade_value      (state, p, world card, good die, value) -> value
  consume_vp       (state, p, world card, good, shipper, vp) -> vp
  dictate_limit    (state, p, limit) -> limit                Dictate uses per round
  dictate_moves    (state, p, limit) -> limit                moves per Dictate
  reassign         (state, p, plan, use, field) -> None      a Reassign power's moves (Assign)
  virtual_workers  (state, p, phase) -> [colours]            phantom workers of a phase
  phase_start      (state, p, phase, ctx)                    when a phase begins
  phase_end        (state, p, phase, ctx)                    when a phase ends (even with no workers)
  completed        (state, p, card, dice, ctx)               after a tile joins the tableau
  scouted          (state, p, explorer die, ctx)             after a Scout task
  consume_credits  (state, p, world card, good, shipper, $) -> $   credits a Consume pays
  ship_options     (state, p) -> [options]                   optional per-task flags (Bankers)
  ...              each phase module lists the hooks it calls; grep ``handlers(p, "`` to see them

Ambition (``catalogue.install``) adds cards, and so power ids, to the catalogue after the power
modules were imported. Each module registers its data-driven handlers in a function marked
``@registrar``: it runs at import and again whenever the catalogue has grown (``sync``, called by
``handlers``, ``effects`` and ``all_power_ids``), so an installed component file's powers get their
handlers with the effects that file gives them.

A handler that changes what an event records adds its power id to the event's ``powers`` list, so
logs, ``rfg simulate``'s ``powers_used`` and the scenario coverage test can see every power fire.
Phantom workers have ids from ``catalogue.PHANTOM_BASE`` up and never enter the Citizenry or cup.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import yaml

from ..catalogue import CARDS
from ..state import PlayerState

Handler = Callable[..., Any]

_HANDLERS: dict[str, dict[str, Handler]] = {}  # hook -> power id -> handler


_REGISTRARS: list[Callable[[], None]] = []
#: how many cards the catalogue had when the effects were last read (it only grows)
_SEEN: list[int] = [0]


def registrar(fn: Callable[[], None]) -> Callable[[], None]:
    """Mark a module's registration function: run it now and again after the catalogue grows."""
    sync()
    _REGISTRARS.append(fn)
    fn()
    return fn


def sync() -> None:
    """Read the catalogue's power effects again if cards were installed since the last read, and
    re-run every registrar (a no-op while the catalogue is unchanged)."""
    if len(CARDS) == _SEEN[0]:
        return
    _SEEN[0] = len(CARDS)
    _EFFECTS.clear()
    _EFFECTS.update(_SHIPPED_AMBITION)
    _EFFECTS.update({c.power_id: c.effects for c in CARDS.values() if c.power_id is not None})
    _MEMO.clear()
    for fn in _REGISTRARS:
        fn()


def power(power_id: str, hook: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the handler of ``power_id`` for ``hook``."""

    def register(fn: Handler) -> Handler:
        _HANDLERS.setdefault(hook, {})[power_id] = fn
        _MEMO.clear()
        return fn

    return register


def registered(hook: str | None = None) -> set[str]:
    """Power ids with a handler (for one hook, or for any)."""
    if hook is not None:
        return set(_HANDLERS.get(hook, {}))
    out: set[str] = set()
    for by_id in _HANDLERS.values():
        out |= set(by_id)
    return out


def tableau_powers(p: PlayerState) -> list[str]:
    """Power ids of the developments in a seat's tableau (faction halves included), in order."""
    out = []
    for key in p.devs:
        pid = CARDS[key].power_id
        if pid:
            out.append(pid)
    return out


#: (tableau developments, hook) -> active handlers; tableaux only grow, and few distinct ones occur
_MEMO: dict[tuple[tuple[str, ...], str], list[tuple[str, Handler]]] = {}
_MEMO_LIMIT = 4096


def handlers(p: PlayerState, hook: str) -> list[tuple[str, Handler]]:
    """The (power id, handler) pairs a seat's tableau activates for a hook."""
    key = (tuple(p.devs), hook)
    got = _MEMO.get(key)
    if got is not None:
        return got
    sync()
    by_id = _HANDLERS.get(hook)
    out = [(pid, by_id[pid]) for pid in tableau_powers(p) if pid in by_id] if by_id else []
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[key] = out
    return out


def has_power(p: PlayerState, power_id: str) -> bool:
    return any(CARDS[k].power_id == power_id for k in p.devs)


def fold_value(hook: str, p: PlayerState, value: Any, *args: Any) -> Any:
    """Thread a value through every active handler of a hook: ``value = h(*args, value)``."""
    for _pid, h in handlers(p, hook):
        value = h(*args, value)
    return value


def fold_tracked(hook: str, p: PlayerState, value: Any, *args: Any) -> tuple[Any, list[str]]:
    """Like ``fold_value``, also returning the power ids that changed the value (for events)."""
    used: list[str] = []
    for pid, h in handlers(p, hook):
        new = h(*args, value)
        if new != value:
            used.append(pid)
        value = new
    return value, used


def effects(power_id: str) -> list[dict[str, Any]]:
    """The catalogue's structured effects of a power (see engine/data/tiles.yaml)."""
    sync()
    return list(_EFFECTS.get(power_id, ()))


def all_power_ids() -> list[str]:
    """Every development power id of the catalogue (game tiles and faction halves)."""
    sync()
    return sorted(_EFFECTS)


def _shipped_ambition() -> dict[str, tuple[dict[str, Any], ...]]:
    """Power id -> effects of the engine's own Ambition tiles (engine/data/ambition_tiles.yaml):
    their handlers are registered from the start, so the power table is the same in every
    process; ``sync`` replaces them with the installed component file's effects."""
    text = (resources.files("engine") / "data" / "ambition_tiles.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    devs = [d for f in doc.get("factions") or () for d in f.get("developments") or ()]
    devs += [t["development"] for t in doc.get("game_tiles") or ()]
    return {d["power_id"]: tuple(d.get("effects") or ()) for d in devs if d.get("power_id")}


_SHIPPED_AMBITION = _shipped_ambition()
#: power id -> its effects: the base catalogue's, the shipped Ambition tiles', and once installed
#: the Ambition component file's (``sync``)
_EFFECTS: dict[str, tuple[dict[str, Any], ...]] = {}
