// Small DOM helpers, the catalogue's names, dice that tell their colour in words and letters,
// and events told in words.
import { api } from "./api.js";

/**
 * An element: its tag, attributes (``class``, ``on<event>`` listeners, ``html`` for trusted static
 * markup, others as attributes; null, undefined and false left out) and children (nested arrays,
 * nodes, text; null, undefined and false left out).
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} kids
 * @returns {any} the element (any: its properties depend on the tag)
 */
export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "html")
      el.innerHTML = v; // only for trusted, static markup
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

let toastTimer = null;
export function toast(text) {
  const t = document.getElementById("toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), 4000);
}

// A notice belongs to the page it was raised on: gone when the person goes to another page.
export function hideToast() {
  clearTimeout(toastTimer);
  document.getElementById("toast").classList.remove("show");
}

export const PHASES = ["explore", "develop", "settle", "produce", "ship"];
// The words every page shows, served once by the API (GET /catalogue: `names`, `decisions`);
// loadCatalogue fills them before a page that shows a game draws.
export const PHASE_NAMES = {};
export const FACE_NAMES = {};
export const GOOD_NAMES = {};
/** @type {Record<string, { title: string, help: string }>} */
export const DECISIONS = {};
// Colour-blind safe: every die carries a letter and its colour's name, not only its colour.
export const DIE = {
  white: { letter: "H", name: "Home (white)" },
  red: { letter: "M", name: "Military (red)" },
  purple: { letter: "C", name: "Consumption (purple)" },
  blue: { letter: "N", name: "Novelty (blue)" },
  brown: { letter: "R", name: "Rare Elements (brown)" },
  green: { letter: "G", name: "Genes (green)" },
  yellow: { letter: "A", name: "Alien Technology (yellow)" },
  // Ambition's dice, and a talent counter at work (a worker, not a die)
  black: { letter: "L", name: "Leader (black)" },
  orange: { letter: "E", name: "Entrepreneur (orange)" },
  talent: { letter: "T", name: "Talent counter" },
};
// The short names of die faces, also the phase icons of a tile row.
export const FACES = { explore: "Exp", develop: "Dev", settle: "Set", produce: "Pro", ship: "Shp", wild: "Wild" };

// A face code's parts (Ambition): "explore/produce$" shows Explore and Produce and a $;
// "wild" and the base game's faces are one part.
export function faceParts(face) {
  const dollar = typeof face === "string" && face.endsWith("$");
  const bare = dollar ? face.slice(0, -1) : String(face);
  return { phases: bare.split("/"), dollar };
}
// A face in words: "Explore or Produce, with $".
export function faceWords(face) {
  const { phases, dollar } = faceParts(face);
  return `${phases.map((p) => FACE_NAMES[p] || p).join(" or ")}${dollar ? ", with $" : ""}`;
}

/**
 * @type {{ cards: Record<string, any>, tiles: Record<string, any>, factions: Record<string, any>, dice: any[],
 *   loaded: boolean, ambition: any, colors: Map<number, string> }}
 */
export const cat = { cards: {}, tiles: {}, factions: {}, dice: [], loaded: false, ambition: null, colors: new Map() };

export async function loadCatalogue() {
  if (cat.loaded) return cat;
  /** @type {import("../../../clients/typescript/src/generated/api").components["schemas"]["Catalogue"]} */
  const c = await api("/catalogue");
  const add = (card) => {
    cat.cards[card.card] = card;
  };
  for (const t of c.tiles) {
    add(t.development);
    add(t.world);
    cat.tiles[t.tile] = t;
  }
  for (const f of c.factions) {
    for (const card of f.cards || []) add(card);
    cat.factions[f.number] = (f.cards || []).map((x) => x.card);
  }
  for (const hw of c.home_worlds) add(hw);
  cat.dice = c.dice;
  // Ambition (when the server plays it): its dice by id, its objective tiles in words, and its
  // cards when they are listed apart from the base game's
  /** @type {any} */
  const amb = c.ambition;
  cat.ambition = amb && amb.available !== false ? amb : null;
  if (cat.ambition) {
    const comp = amb.components;
    cat.ambition.components = typeof comp === "string" ? comp : (comp && comp.name) || "";
    for (const d of amb.dice || []) for (const id of d.ids || []) cat.colors.set(id, d.color);
    for (const t of amb.tiles || []) {
      add(t.development);
      add(t.world);
      cat.tiles[t.tile] = t;
    }
    for (const f of amb.factions || []) {
      for (const card of f.cards || []) add(card);
      cat.factions[f.number] = (f.cards || []).map((x) => x.card);
    }
    for (const hw of amb.home_worlds || []) add(hw);
  }
  Object.assign(PHASE_NAMES, c.names.phases);
  Object.assign(FACE_NAMES, c.names.faces);
  Object.assign(GOOD_NAMES, c.names.goods);
  Object.assign(DECISIONS, c.decisions);
  cat.loaded = true;
  return cat;
}

// Ambition's talent counters are workers with ids from 2000 (engine.catalogue.TALENT_BASE).
export const TALENT_BASE = 2000;
export function colorOf(die) {
  if (die >= TALENT_BASE) return "talent";
  if (cat.colors.has(die)) return cat.colors.get(die);
  for (const d of cat.dice) if (die >= d.first_id && die <= d.last_id) return d.color;
  return "white";
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

// A die for people: its colour's name and letter, the face rolled (if known) and, given, where it
// lies ("in your cup"). Dice ids stay out of every text a person reads: they travel in commands only.
export function dieName(d, where = "") {
  const id = typeof d === "number" ? d : d.die;
  const color = (typeof d === "object" && d.color) || colorOf(id);
  const info = DIE[color] || { letter: "?", name: color };
  const face = typeof d === "object" && d.face ? `, showing ${faceWords(d.face)}` : "";
  return `${info.name}${color === "talent" ? "" : " die"}${face}${where ? `, ${where}` : ""}`;
}
// A die drawn in its colour with its letter and the face rolled: a two-phase face (Ambition) shows
// both phases' abbreviations, a $ face a $ mark.
export function die(d, extra = {}) {
  const id = typeof d === "number" ? d : d.die;
  const color = (typeof d === "object" && d.color) || colorOf(id);
  const face = typeof d === "object" ? d.face : null;
  const info = DIE[color] || { letter: "?", name: color };
  const { where, ...attrs } = extra;
  const label = dieName(d, where);
  const parts = face ? faceParts(face) : null;
  return h(
    "span",
    {
      class: `die die-${color}${parts && parts.phases.length > 1 ? " two-phase" : ""}${parts && parts.dollar ? " dollar" : ""}`,
      title: label,
      "aria-label": label,
      role: "img",
      "data-face": face || null,
      ...attrs,
    },
    h("b", { "aria-hidden": "true" }, info.letter),
    parts
      ? h(
          "small",
          { "aria-hidden": "true" },
          parts.phases.map((p, i) => [i ? "/" : "", h("span", { class: `face-${p}` }, FACES[p] || p)]),
          parts.dollar ? h("span", { class: "dollar-mark" }, "$") : null,
        )
      : null,
  );
}
export function dieText(d, where = "") {
  const id = typeof d === "number" ? d : d.die;
  const color = (typeof d === "object" && d.color) || colorOf(id);
  const info = DIE[color] || { letter: "?", name: color };
  return `${info.letter} · ${dieName(d, where)}`;
}

// Where each of a seat's dice lies, in words (from the seat's side of a view): die id -> words.
export function whereDice(p) {
  const at = new Map();
  if (!p) return at;
  const put = (list, words) => {
    for (const d of list || []) at.set(d.die, words);
  };
  put(p.cup, "in your cup");
  put(p.citizenry, "in your Citizenry");
  for (const [ph, list] of Object.entries(p.columns || {})) put(list, `in the ${PHASE_NAMES[ph] || ph} column`);
  put(p.dictate, "parked by Dictate");
  for (const t of p.talent_counters || []) at.set(t, "unused, behind your screen");
  const cz = p.construction || {};
  for (const [side, st] of Object.entries(cz)) {
    if (!st) continue;
    const top = st.top ? ` (on ${st.top.name})` : "";
    put(st.dice, `worker on your ${side} stack${top}`);
  }
  for (const [world, goods] of Object.entries(p.goods || {})) put(goods, `good on ${cardName(world)}`);
  return at;
}

// A tile card that opens on click, tap, Enter or Space: any element with data-card="<card key>".
export function cardRef(key, ...kids) {
  return h(
    "button",
    {
      type: "button",
      class: "card-ref",
      "data-card": key,
      "aria-haspopup": "dialog",
      title: `${cardName(key)}: show what it does`,
    },
    kids.length ? kids : cardName(key),
  );
}

function otherSide(c) {
  if (!c.card || !/^T\d+[dw]$/.test(c.card)) return null;
  const t = cat.tiles[Number(c.card.slice(1, -1))];
  if (!t) return null;
  return c.kind === "world" ? t.development : t.world;
}

const GOODS = { novelty: "Novelty", rare: "Rare Elements", genes: "Genes", alien: "Alien Technology", gray: "gray" };
function cardFacts(c) {
  return c.kind === "world"
    ? `World · cost ${c.cost} (settlers to complete, and VP at the end) · ${GOODS[c.color] || c.color}`
    : `Development · cost ${c.cost} (developers to complete, and VP at the end)${c.endgame_bonus ? " · scores an end-game bonus" : ""}`;
}

export function openCard(key) {
  const c = cat.cards[key];
  let dlg = /** @type {HTMLDialogElement | null} */ (document.getElementById("card-dialog"));
  if (!dlg) {
    dlg = h("dialog", { id: "card-dialog", class: "card-dialog", "aria-labelledby": "card-dialog-title" });
    dlg.addEventListener("click", (e) => {
      if (e.target === dlg) dlg.close();
    }); // a tap outside closes it
    document.body.append(dlg);
  }
  const other = c ? otherSide(c) : null;
  dlg.replaceChildren(
    ...[
      h("h2", { id: "card-dialog-title" }, c ? c.name : "Unknown tile"),
      c ? h("p", { class: `facts ${c.kind === "world" ? "world-" + c.color : ""}` }, cardFacts(c)) : null,
      h(
        "p",
        { class: "power" },
        c ? c.description || (c.kind === "world" ? "A world." : "No power.") : "This tile is not in the catalogue.",
      ),
      other
        ? h(
            "p",
            { class: "other muted" },
            `Other side of this tile: ${other.name} (${other.kind}, cost ${other.cost}). `,
            h(
              "button",
              { type: "button", class: "small secondary", onclick: () => openCard(other.card) },
              `Show ${other.name}`,
            ),
          )
        : null,
      h("form", { method: "dialog" }, h("button", { type: "submit", class: "primary", autofocus: true }, "Close")),
    ].filter(Boolean),
  );
  if (!dlg.open) dlg.showModal();
}

document.addEventListener("click", (e) => {
  const el = e.target instanceof Element ? e.target.closest("[data-card]") : null;
  if (!(el instanceof HTMLElement)) return;
  if (el.closest("dialog")) return;
  e.preventDefault();
  openCard(el.dataset.card);
});

export function seatName(game, seat) {
  const s = game && game.seats ? game.seats[seat] : null;
  if (!s) return `Seat ${seat}`;
  if (s.name) return s.name;
  if (s.kind === "bot") return `Seat ${seat} (${s.bot} bot)`;
  if (s.kind === "external")
    return `Seat ${seat} (${s.entrant || (s.account ? `bot account ${s.account}` : "external bot")})`;
  return `Seat ${seat}`;
}

const list = (xs) => (xs || []).join(", ");
const count = (x) => (Array.isArray(x) ? x.length : Number(x) || 0);
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const KIND_WORDS = {
  start_tiles: "start tiles",
  assign: "worker assignment",
  explore: "exploring",
  place_tiles: "tile placement",
  abandon_one: "tile to abandon",
  develop: "developers",
  settle: "settlers",
  produce: "production",
  ship: "shipping",
  manage: "empire management",
  forecast: "Psi-Crystal Forecasters",
  buy_vp: "VP chips to buy",
  resign: "resignation",
};
// One engine event in words (the public form, or the seat's own fuller one).
export function describe(e, game) {
  const s = e.seat !== undefined ? seatName(game, e.seat) : "";
  const kind = (e.command && e.command.kind) || e.kind;
  switch (e.type) {
    case "GameCreated":
      return `Game created for ${e.players} players`;
    case "CommandSubmitted":
      if (kind === "back") return `${s} is back and plays on`;
      return `${s} decided (${KIND_WORDS[kind] || "a choice"})`;
    case "StartTilesChosen":
      return `${s} starts building ${cardName("T" + e.development + "d")} and ${cardName("T" + e.world + "w")}`;
    case "RoundStarted":
      return `Round ${e.round} begins`;
    case "DiceRolled":
      return `${s} rolls ${plural(e.faces ? e.faces.length : count(e.dice), "die", "dice")} behind the screen`;
    case "AssignmentSealed":
      return e.selected
        ? `${s} assigns workers, selecting ${PHASE_NAMES[e.selected] || e.selected}`
        : `${s} has assigned workers`;
    case "PhasesRevealed":
      return `Revealed: this round has ${list((e.phases || []).map((p) => PHASE_NAMES[p]))}`;
    case "PhaseStarted":
      return `${PHASE_NAMES[e.phase] || e.phase} phase begins`;
    case "PhaseEnded":
      return `${PHASE_NAMES[e.phase] || e.phase} phase ends`;
    case "TilesScouted":
      return `${s} scouts: draws ${plural(count(e.drawn), "tile", "tiles")}${count(e.abandoned) ? ` after abandoning ${count(e.abandoned)}` : ""}`;
    case "ShortfallDrawn":
      return `${s} draws ${plural(count(e.drawn), "tile", "tiles")} from the refilled bag`;
    case "ExtraTilesDrawn":
      return `${s} draws ${plural(count(e.drawn), "more tile", "more tiles")} (a power)`;
    case "ExplorerStocked":
      return `${s} stocks: +$${e.credits}`;
    case "ExploreFinished":
      return `${s} is done exploring`;
    case "ConstructionRearranged":
      return `${s} rearranges the construction zone`;
    case "TileReturnedToBag":
      return `${s} gives a construction-zone tile back to the bag`;
    case "TilesPlaced":
      return `${s} places tiles in the construction zone`;
    case "WorkersPlaced":
      return `${s} puts ${plural(count(e.dice), "worker", "workers")} on the ${e.phase === "develop" ? "development" : "world"} stack`;
    case "TileCompleted":
      return `${s} completes ${cardName(e.card)}${e.credits ? ` (+$${e.credits})` : ""}`;
    case "GoodsProduced":
      return `${s} produces ${plural(count(e.goods), "good", "goods")}`;
    case "GoodShipped":
      return e.action === "trade" ? `${s} trades a good for $${e.credits}` : `${s} consumes a good for ${e.vp} VP`;
    case "PowerPaid":
      return `${s}: ${String(e.why || "a power pays").replace(/ \((?:[TF]\d+[dw]2?|H\d+)\)/g, "")}${e.vp ? ` (+${e.vp} VP)` : ""}${e.credits ? ` (+$${e.credits})` : ""}`;
    case "WorkersReturned":
      return `${s}: ${plural(count(e.dice), "unused worker returns", "unused workers return")}`;
    case "ManageStarted":
      return `Manage empire (round ${e.round})`;
    case "EmpireManaged":
      return `${s} recruits ${count(e.recruited)} and recalls ${count(e.recalled)}`;
    case "RoundEnded":
      return `Round ${e.round} ends${e.game_over ? ": the game is over" : ""}`;
    case "GameEnded":
      return (e.winners || []).length
        ? `Game over (${(e.reason || "").replaceAll("_", " ")}): ${e.winners.map((w) => seatName(game, w)).join(" and ")} win${e.winners.length > 1 ? "" : "s"}`
        : `Game over (${(e.reason || "").replaceAll("_", " ")}): nobody wins`;
    case "ObjectiveClaimed":
      return `Objective ${e.name || e.objective} claimed by ${(e.seats || []).map((w) => seatName(game, w)).join(" and ")}${
        (e.talents || []).length
          ? `: ${e.talents.map((t) => `${seatName(game, t.seat)} gets ${plural(count(t.counters), "talent counter", "talent counters")}`).join(", ")}`
          : ""
      }`;
    case "ScreensLifted":
      return "Screens lifted: Psi-Crystal Forecasters may change a selected phase";
    case "PhaseReselected":
      return (e.powers || []).length
        ? `${s} moves the phase selection die to ${PHASE_NAMES[e.selected] || e.selected} (Psi-Crystal Forecasters)`
        : `${s} keeps ${PHASE_NAMES[e.selected] || e.selected}`;
    case "SeatResigned":
      return `${s} resigns in round ${e.round}`;
    case "GameAbandoned":
      return "The game is abandoned: it ends with no winner";
    case "GameAborted":
      return `${s} aborts the game before the first round ended: no result, no winner`;
    case "SeatAbandoned":
      return `${s} was abandoned: a bot plays it now`;
    default:
      return `${String(e.type || "Something happened")
        .replace(/([a-z])([A-Z])/g, "$1 $2")
        .toLowerCase()}${s ? ": " + s : ""}`;
  }
}

export function fmtClock(deadline) {
  if (!deadline) return "";
  const ms = new Date(deadline).getTime() - Date.now();
  if (ms <= 0) return "time is up";
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left`;
}
