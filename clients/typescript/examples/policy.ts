/**
 * `legalChoice`: a minimal policy answering any decision with a legal command, chosen at random
 * among the simple ones (optional powers left unused, which is always legal). It reads only the
 * decision the server sent (a turn signal's `decision`): the legal choices are in it, typed by
 * the `*Decision` schemas of openapi.yaml. A starting point for a real bot.
 */

import type { components } from "../src/generated/api.js";

type S = components["schemas"];
export type Decision = S["Decision"];
export type Command = S["Command"];
type Phase = S["Phase"];

const PHASES: Phase[] = ["explore", "develop", "settle", "produce", "ship"];

function pick<T>(items: readonly T[]): T {
  if (items.length === 0) throw new Error("nothing to choose from");
  return items[Math.floor(Math.random() * items.length)]!;
}

function chance(a: number, b: number): boolean {
  return Math.random() * b < a;
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function assign(d: S["AssignDecision"]): S["AssignCommand"] {
  const dice = d.dice.map((x) => x.die);
  const wild = d.wild_dice.map((die) => ({ die, to: pick(PHASES) }));
  return { kind: "assign", select: { die: pick([...dice, ...d.wild_dice]), phase: pick(PHASES) }, wild };
}

function explore(d: S["ExploreDecision"]): S["ExploreCommand"] {
  if (d.explorers.length === 0) return { kind: "explore", task: "finish" };
  const explorer = pick(d.explorers).die;
  if (chance(1, 2)) return { kind: "explore", task: "stock", explorer };
  return { kind: "explore", task: "scout", explorer, abandon: d.abandonable.filter(() => chance(1, 6)) };
}

function placeTiles(d: S["PlaceTilesDecision"]): S["PlaceTilesCommand"] {
  const placements = shuffled(d.tiles.map((t) => t.tile)).map((tile) => {
    const p: S["Placement"] = { tile, as: pick(d.sides) };
    if (d.on_top && chance(1, 2)) p.on_top = true;
    return p;
  });
  return { kind: "place_tiles", placements };
}

function construct(d: S["ConstructDecision"]): S["ConstructCommand"] {
  const order = shuffled(d.workers.map((w) => w.die));
  const pool = [...d.removable];
  const remove: number[] = [];
  for (let i = 0; i < d.removals.length; i++) {
    const die = pick(pool);
    pool.splice(pool.indexOf(die), 1);
    remove.push(die);
  }
  // the completions as the server follows them: each takes the next `cost` dice of the stack
  let stack = [...d.dice_on_stack, ...order];
  const returns: number[][] = [];
  let r = 0;
  for (const c of d.completions) {
    if (stack.length < c.cost) break;
    const used = stack.slice(0, c.cost);
    stack = stack.slice(c.cost);
    const removed = c.removal ? remove[r] : undefined;
    if (c.removal) r++;
    if (removed !== undefined && stack.includes(removed)) stack.splice(stack.indexOf(removed), 1);
    const candidates = used.filter((x) => x !== removed);
    const n = c.returns_max ? Math.floor(Math.random() * (Math.min(c.returns_max, candidates.length) + 1)) : 0;
    returns.push(shuffled(candidates).slice(0, n));
  }
  const command: S["ConstructCommand"] = { kind: d.kind, order, remove };
  if (returns.some((x) => x.length > 0)) command.returns = returns;
  return command;
}

function produce(d: S["ProduceDecision"]): S["ProduceCommand"] {
  const producers = shuffled(d.producers.map((x) => x.die));
  const slots = shuffled(d.worlds.flatMap((w) => Array<S["CardKey"]>(w.room).fill(w.world)));
  const goods = Array.from({ length: d.count }, (_, i) => ({ die: producers[i]!, world: slots[i]! }));
  return { kind: "produce", goods };
}

function ship(d: S["ShipDecision"]): S["ShipCommand"] {
  const shippers = shuffled(d.shippers.map((x) => x.die));
  const goods = shuffled(d.goods);
  // Ambition: a good may allow fewer actions (Alien Refinery's goods cannot be traded)
  const tasks = Array.from({ length: d.count }, (_, i) => ({
    shipper: shippers[i]!,
    good: goods[i]!.die,
    action: pick(goods[i]!.actions ?? d.actions),
  }));
  return { kind: "ship", tasks };
}

function manage(d: S["ManageDecision"]): S["ManageCommand"] {
  const recruit = shuffled(d.citizenry.map((x) => x.die))
    .slice(0, d.recruit_count)
    .sort((a, b) => a - b);
  let recall = d.recallable.filter(() => chance(1, 4)).map((x) => x.die);
  if (d.cup === 0 && recruit.length === 0 && recall.length === 0 && d.recallable.length > 0) {
    recall = [pick(d.recallable).die];
  }
  return { kind: "manage", recruit, recall: recall.sort((a, b) => a - b) };
}

/** A legal command answering `decision`. */
export function legalChoice(decision: Decision): Command {
  switch (decision.kind) {
    case "start_tiles":
      return { kind: "start_tiles", development: pick(decision.options).development };
    case "assign":
      return assign(decision);
    case "explore":
      return explore(decision);
    case "place_tiles":
      return placeTiles(decision);
    case "abandon_one":
      return { kind: "abandon_one", tile: pick(decision.tiles) };
    case "develop":
    case "settle":
      return construct(decision);
    case "produce":
      return produce(decision);
    case "ship":
      return ship(decision);
    case "manage":
      return manage(decision);
    case "forecast": // Ambition, Psi-Crystal Forecasters: keep the selected phase
      return { kind: "forecast" };
    case "buy_vp": // Ambition, Deficit Spending: buy nothing
      return { kind: "buy_vp", spend: 0 };
  }
}
