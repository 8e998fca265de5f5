// Small DOM helpers, the catalogue's names, dice that tell their colour in words and letters,
// and events told in words.
import { api } from "./api.js";

export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "html") el.innerHTML = v; // only for trusted, static markup
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

export function toast(text) {
  const t = document.getElementById("toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 4000);
}

export const PHASES = ["explore", "develop", "settle", "produce", "ship"];
export const PHASE_NAMES = { explore: "Explore", develop: "Develop", settle: "Settle", produce: "Produce", ship: "Ship" };
// Colour-blind safe: every die carries a letter and its colour's name, not only its colour.
export const DIE = {
  white: { letter: "H", name: "Home (white)" },
  red: { letter: "M", name: "Military (red)" },
  purple: { letter: "C", name: "Consumption (purple)" },
  blue: { letter: "N", name: "Novelty (blue)" },
  brown: { letter: "R", name: "Rare elements (brown)" },
  green: { letter: "G", name: "Genes (green)" },
  yellow: { letter: "A", name: "Alien technology (yellow)" },
};
const FACES = { explore: "Exp", develop: "Dev", settle: "Set", produce: "Pro", ship: "Shp", wild: "Wild" };

export const cat = { cards: {}, tiles: {}, factions: {}, dice: [], loaded: false };

export async function loadCatalogue() {
  if (cat.loaded) return cat;
  const c = await api("/catalogue");
  const add = (card) => { cat.cards[card.card] = card; };
  for (const t of c.tiles) { add(t.development); add(t.world); cat.tiles[t.tile] = t; }
  for (const f of c.factions) {
    for (const card of f.cards || []) add(card);
    cat.factions[f.number] = (f.cards || []).map((x) => x.card);
  }
  for (const hw of c.home_worlds) add(hw);
  cat.dice = c.dice;
  cat.loaded = true;
  return cat;
}

export function colorOf(die) {
  for (const d of cat.dice) if (die >= d.first_id && die <= d.last_id) return d.color;
  return die >= 1000 ? "white" : "white";
}
export function cardName(key) {
  const c = cat.cards[key];
  return c ? c.name : key;
}
export function cardLabel(key) {
  const c = cat.cards[key];
  return c ? `${c.name} (${c.kind === "world" ? "world" : "development"}, ${c.cost})` : key;
}
export function tileLabel(tile) {
  const t = cat.tiles[tile];
  if (!t) return `tile ${tile}`;
  return `${t.development.name} (dev ${t.development.cost}) / ${t.world.name} (world ${t.world.cost})`;
}
export function cardTitle(key) {
  const c = cat.cards[key];
  if (!c) return key;
  return [c.name, c.description, c.endgame_bonus ? "End-game bonus" : ""].filter(Boolean).join(" — ");
}

// A die: its colour, a letter naming the colour, the face rolled (if known), the id for commands.
export function die(d, extra = {}) {
  const id = typeof d === "number" ? d : d.die;
  const color = (typeof d === "object" && d.color) || colorOf(id);
  const face = typeof d === "object" ? d.face : null;
  const info = DIE[color] || { letter: "?", name: color };
  const label = `${info.name} die #${id}${face ? `, showing ${face}` : ""}`;
  return h("span", { class: `die die-${color}`, title: label, "aria-label": label, role: "img", ...extra },
    h("b", { "aria-hidden": "true" }, info.letter),
    face ? h("small", { "aria-hidden": "true" }, FACES[face] || face) : null);
}
export function dieText(d) {
  const id = typeof d === "number" ? d : d.die;
  const color = (typeof d === "object" && d.color) || colorOf(id);
  const info = DIE[color] || { letter: "?", name: color };
  const face = typeof d === "object" && d.face ? ` showing ${d.face}` : "";
  return `${info.letter} · ${info.name} #${id}${face}`;
}

export function seatName(game, seat) {
  const s = game && game.seats ? game.seats[seat] : null;
  if (!s) return `Seat ${seat}`;
  if (s.name) return s.name;
  if (s.kind === "bot") return `Seat ${seat} (${s.bot} bot)`;
  if (s.kind === "external") return `Seat ${seat} (${s.entrant || "external bot"})`;
  return `Seat ${seat}`;
}

const list = (xs) => (xs || []).join(", ");
// One engine event in words (payload may be the public or a seat's redacted form).
export function describe(e, game) {
  const s = e.seat !== undefined ? seatName(game, e.seat) : "";
  const pub = e.public || {};
  switch (e.type) {
    case "GameCreated": return `Game created for ${e.players} players (rules ${e.rules ?? 1})${e.seed ? `, seed ${e.seed}` : ""}`;
    case "CommandSubmitted": return `${s} decided: ${(e.command && e.command.kind) || pub.kind || e.kind || "?"}`;
    case "StartTilesChosen": return `${s} starts with ${cardName("T" + e.development + "d")} and ${cardName("T" + e.world + "w")}`;
    case "RoundStarted": return `Round ${e.round} begins`;
    case "DiceRolled": return `${s} rolls ${e.faces ? e.faces.length : pub.dice} dice behind the screen`;
    case "AssignmentSealed": return e.selected ? `${s} assigns workers, selecting ${e.selected}` : `${s} has assigned workers`;
    case "PhasesRevealed": return `Revealed: this round has ${list((e.phases || []).map((p) => PHASE_NAMES[p]))}`;
    case "PhaseStarted": return `${PHASE_NAMES[e.phase] || e.phase} phase begins`;
    case "PhaseEnded": return `${PHASE_NAMES[e.phase] || e.phase} phase ends`;
    case "TilesScouted": return `${s} scouts: draws ${e.drawn ? e.drawn.length : pub.drawn} tile(s)`;
    case "ExplorerStocked": return `${s} stocks: +$${e.credits}`;
    case "TilesPlaced": return `${s} places tiles in the construction zone`;
    case "WorkersPlaced": return `${s} puts ${(e.dice || []).length} worker(s) on the ${e.phase === "develop" ? "development" : "world"} stack`;
    case "TileCompleted": return `${s} completes ${cardName(e.card)}${e.credits ? ` (+$${e.credits})` : ""}`;
    case "GoodsProduced": return `${s} produces ${(e.goods || []).length} good(s)`;
    case "GoodShipped": return e.action === "trade" ? `${s} trades a good for $${e.credits}` : `${s} consumes a good for ${e.vp} VP`;
    case "PowerPaid": return `${s}: ${e.why || e.power}${e.vp ? ` (+${e.vp} VP)` : ""}${e.credits ? ` (+$${e.credits})` : ""}`;
    case "WorkersReturned": return `${s}: ${(e.dice || []).length} unused worker(s) return`;
    case "ManageStarted": return `Manage empire (round ${e.round})`;
    case "EmpireManaged": return `${s} recruits ${(e.recruited || []).length} and recalls ${(e.recalled || []).length}`;
    case "RoundEnded": return `Round ${e.round} ends${e.game_over ? ": the game is over" : ""}`;
    case "GameEnded": return (e.winners || []).length
      ? `Game over (${(e.reason || "").replaceAll("_", " ")}): ${e.winners.map((w) => seatName(game, w)).join(" and ")} win${e.winners.length > 1 ? "" : "s"}`
      : `Game over (${(e.reason || "").replaceAll("_", " ")}): nobody wins`;
    case "SeatResigned": return `${s} resigns: the game ends now`;
    case "GameAbandoned": return "The game is abandoned: it ends with no winner";
    case "SeatAbandoned": return `${s} was abandoned: a bot plays it now`;
    default: return `${e.type}${s ? " — " + s : ""}`;
  }
}

export function fmtClock(deadline) {
  if (!deadline) return "";
  const ms = new Date(deadline).getTime() - Date.now();
  if (ms <= 0) return "time is up";
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left`;
}
