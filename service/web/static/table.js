// The table: every seat's side of the board (own seat in full), the round's phases, clocks, the
// final scores. Used by the seated player and the spectator alike.
import { h, die, cardTitle, PHASES, PHASE_NAMES, seatName, fmtClock } from "./ui.js";

function dice(list, empty = "none") {
  return list && list.length ? h("span", { class: "dice" }, list.map((d) => die(d))) : h("span", { class: "muted" }, empty);
}

function card(c, goods) {
  return h("li", { class: `card card-${c.kind} ${c.color ? "world-" + c.color : ""}`, title: cardTitle(c.card), tabindex: "0" },
    h("span", { class: "cost", "aria-label": `cost ${c.cost}` }, c.cost),
    h("span", { class: "name" }, c.name),
    c.color && c.kind === "world" ? h("span", { class: "tag" }, c.color) : null,
    goods && goods.length ? h("span", { class: "goods" }, " good: ", dice(goods)) : null);
}

function stack(kind, st) {
  if (!st) return null;
  const label = kind === "development" ? "Development stack" : "World stack";
  const rest = Math.max(0, st.count - (st.top ? 1 : 0));
  return h("div", { class: "stack" },
    h("h4", {}, label),
    st.top ? h("div", { class: "top", title: cardTitle(st.top.card) }, h("span", { class: "cost" }, st.top.cost), " ", st.top.name)
      : h("div", { class: "muted" }, "empty"),
    st.tiles && st.tiles.length > 1
      ? h("ol", { class: "below", start: 2 }, st.tiles.slice(1).map((t) => h("li", { title: cardTitle(t.card) }, `${t.name} (${t.cost})`)))
      : rest ? h("div", { class: "muted" }, `+ ${rest} face down`) : null,
    st.dice && st.dice.length ? h("div", {}, "On it: ", dice(st.dice)) : null);
}

function phaseStrip(p, phases) {
  const cols = p.columns || {};
  return h("div", { class: "strip", role: "group", "aria-label": `Seat ${p.seat}'s phase strip` },
    PHASES.map((ph) => h("div", { class: `col ${phases.includes(ph) ? "on" : ""} ${p.selected === ph ? "sel" : ""}` },
      h("div", { class: "ph" }, PHASE_NAMES[ph], p.selected === ph ? " ★" : ""),
      dice(cols[ph], "·"))),
    p.dictate && p.dictate.length ? h("div", { class: "col dictate" }, h("div", { class: "ph" }, "Dictate"), dice(p.dictate)) : null);
}

export function seatPanel(p, view, game, mine) {
  const clock = ((view.clock || {}).seats || []).find((c) => c.seat === p.seat);
  const pending = (view.pending || {})[String(p.seat)];
  const goodsOn = p.goods || {};
  return h("section", { class: `seat ${mine ? "mine" : ""}`, "aria-label": seatName(game, p.seat), "data-seat": p.seat },
    h("header", {},
      h("h3", {}, mine ? `You — ${seatName(game, p.seat)}` : seatName(game, p.seat)),
      h("span", { class: "faction" }, p.faction ? p.faction.name : ""),
      h("span", { class: "stats" },
        h("span", { class: "stat", title: "Credits" }, `$${p.credits}`),
        h("span", { class: "stat", title: "VP chips" }, `${p.vp_chips} VP`),
        h("span", { class: "stat", title: "Tableau tile squares" }, `${p.tile_squares ?? "?"} ▢`)),
      pending ? h("span", { class: "pending" }, `deciding: ${pending.replace("_", " ")}`) : null,
      clock && clock.deadline ? h("span", { class: "clock", "data-deadline": clock.deadline }, fmtClock(clock.deadline)) : null,
      clock && clock.abandoned ? h("span", { class: "pending" }, "abandoned (bot plays)") : null),
    phaseStrip(p, view.phases || []),
    p.behind_screen ? h("p", { class: "muted" }, `${p.behind_screen} dice behind the screen`) : null,
    h("div", { class: "zones" },
      h("div", {}, h("h4", {}, "Cup"), dice(p.cup, "empty")),
      h("div", {}, h("h4", {}, "Citizenry"), dice(p.citizenry, "empty")),
      stack("development", (p.construction || {}).development),
      stack("world", (p.construction || {}).world)),
    h("div", { class: "tableau" },
      h("div", {}, h("h4", {}, "Worlds"), h("ul", { class: "cards" }, (p.worlds || []).map((c) => card(c, goodsOn[c.card])))),
      h("div", {}, h("h4", {}, "Developments"), h("ul", { class: "cards" }, (p.developments || []).map((c) => card(c))))));
}

export function header(view, game, live) {
  const phases = view.phases || [];
  return h("section", { class: "round", "aria-label": "Round" },
    h("span", {}, h("b", {}, `Round ${view.round}`), " · ", view.step === "over" ? "game over" : `step: ${view.step.replace("_", " ")}`),
    phases.length === 0 ? h("span", { class: "muted" }, view.step === "over" ? "" : "phases: revealed after every seat has assigned") : h("span", { class: "phases", "aria-label": "Phases this round" },
      PHASES.map((ph) => h("span", { class: `chip ${phases.includes(ph) ? "on" : "off"}` }, phases.includes(ph) ? "✓ " : "✗ ", PHASE_NAMES[ph]))),
    h("span", {}, `VP pool ${view.vp_pool} · bag ${view.bag}`),
    view.two_player_die ? h("span", {}, `Home die: ${view.two_player_die}`) : null,
    live ? h("span", { class: `live ${live.state}`, role: "status" }, live.text) : null);
}

export function scores(view, game) {
  const r = view.result;
  if (!r) return null;
  const rows = [...r.scores].sort((a, b) => b.total - a.total || b.tiebreak - a.tiebreak);
  return h("section", { class: "scores", "aria-label": "Final scores" },
    h("h2", {}, "Final scores"),
    r.reason === "abandoned" ? h("p", {}, "The game was abandoned: nobody wins. The scores as they stood:")
      : h("p", {}, r.reason === "resigned" ? "The game ended by resignation. Winner: " : `The game ended (${r.reason.replaceAll("_", " ")}). Winner: `,
        r.winners.map((w) => seatName(game, w)).join(" and "), "."),
    h("table", {},
      h("thead", {}, h("tr", {}, ["Seat", "Total", "VP chips", "Tiles", "Bonuses", "Tie-break"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((s) => h("tr", { class: r.winners.includes(s.seat) ? "win" : "" },
        h("th", { scope: "row" }, seatName(game, s.seat), r.winners.includes(s.seat) ? " — winner" : ""),
        h("td", { class: "total" }, s.total), h("td", {}, s.vp_chips), h("td", {}, s.tiles),
        h("td", {}, Object.values(s.bonuses || {}).reduce((a, b) => a + b, 0)), h("td", {}, s.tiebreak))))),
    h("p", {}, h("a", { href: `#/replay/${game.game_id}`, class: "button" }, "Watch the replay and verify the log")));
}

export function renderBoard(view, game, mySeat) {
  const players = [...view.players];
  if (mySeat !== null && mySeat !== undefined) players.sort((a, b) => (a.seat === mySeat ? -1 : b.seat === mySeat ? 1 : a.seat - b.seat));
  return h("div", { class: "board" }, players.map((p) => seatPanel(p, view, game, p.seat === mySeat)));
}

export function tickClocks(root) {
  for (const el of root.querySelectorAll("[data-deadline]")) el.textContent = fmtClock(el.dataset.deadline);
}
