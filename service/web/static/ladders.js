// Ladder boards: the ladders, each one's leaderboard, head-to-head and rating history plots (the
// SVG the API serves).
import { api, ApiError } from "./api.js";
import { h } from "./ui.js";

const fmt = (x, d = 1) => (typeof x === "number" ? x.toFixed(d) : x);
const err = (exc) => h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : exc.message);

export async function laddersPage(main) {
  const { ladders } = await api("/ladders");
  main.replaceChildren(h("h1", {}, "Ladders"),
    ladders.length ? h("ul", { class: "ladders" }, ladders.map((n) => h("li", {}, h("a", { href: `#/ladders/${encodeURIComponent(n)}` }, n))))
      : h("p", {}, "No ladder yet. An operator creates one with ", h("code", {}, "rfg ladder create"), " or ", h("code", {}, "POST /ladders"), "."));
}

export async function ladderPage(main, name) {
  const base = `/ladders/${encodeURIComponent(name)}`;
  let ladder, board, h2h;
  try {
    [ladder, board, h2h] = await Promise.all([api(base), api(`${base}/leaderboard`), api(`${base}/head-to-head`)]);
  } catch (exc) { main.replaceChildren(h("h1", {}, `Ladder ${name}`), err(exc)); return; }
  main.replaceChildren(
    h("h1", {}, `Ladder ${ladder.name}`),
    h("p", {}, `${ladder.results} rated games · ${ladder.running} running · players per table: ${ladder.players.join(", ")}`,
      ladder.paused ? " · paused" : "", ladder.duplicate ? " · duplicate deals" : ""),
    h("section", { "aria-labelledby": "lb" }, h("h2", { id: "lb" }, "Leaderboard"),
      h("table", { class: "leaderboard" },
        h("thead", {}, h("tr", {}, ["#", "Entrant", "Rating (μ−3σ)", "μ", "σ", "Games", "Wins", "Win rate"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, board.rows.map((r) => h("tr", {},
          h("td", {}, r.position ?? "–"),
          h("th", { scope: "row" }, r.entrant, r.provisional ? h("span", { class: "tag", title: "few games yet: the rating is still uncertain" }, " provisional") : null),
          h("td", {}, fmt(r.rating)), h("td", {}, fmt(r.mu)), h("td", {}, fmt(r.sigma)), h("td", {}, r.games),
          h("td", {}, fmt(r.wins, r.wins % 1 ? 2 : 0)), h("td", {}, `${Math.round(r.win_rate * 100)}%`)))))),
    h("section", { "aria-labelledby": "hh" }, h("h2", { id: "hh" }, "Head to head"),
      h2h.pairs.length ? h("table", {},
        h("thead", {}, h("tr", {}, ["Entrant", "against", "Games", "W", "L", "T", "Win rate (95% interval)"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, h2h.pairs.map((p) => h("tr", {}, h("th", { scope: "row" }, p.a), h("td", {}, p.b), h("td", {}, p.games),
          h("td", {}, p.wins), h("td", {}, p.losses), h("td", {}, p.ties),
          h("td", {}, `${Math.round(p.win_rate * 100)}% (${Math.round(p.ci95[0] * 100)}–${Math.round(p.ci95[1] * 100)}%)`)))))
        : h("p", { class: "muted" }, "No games yet.")),
    h("section", { "aria-labelledby": "hist" }, h("h2", { id: "hist" }, "Rating history"),
      h("div", { class: "plots" }, board.rows.filter((r) => r.games > 0).map((r) => h("figure", {},
        h("img", { src: `${base}/entrants/${encodeURIComponent(r.entrant)}/history.svg`, alt: `Rating history of ${r.entrant}`, loading: "lazy" }),
        h("figcaption", {}, r.entrant))))));
}
