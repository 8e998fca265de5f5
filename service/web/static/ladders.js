// Ladder boards: the ladders, each one's leaderboard, one rating chart with every entrant on one
// shared scale (inline SVG drawn here from the entrants' rating histories), the head-to-head table
// and the ladder's games with links to watch them live or replay them.
import { api, ApiError } from "./api.js";
import { h } from "./ui.js";

const fmt = (x, d = 1) => (typeof x === "number" ? x.toFixed(d) : x);
const err = (exc) => h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : exc.message);
const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const kid of kids.flat(Infinity))
    if (kid !== null && kid !== undefined) el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return el;
}

// Round, readable steps for an axis from lo to hi (about `count` of them).
function ticks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(6)));
  return out;
}

// One chart: every entrant's conservative rating (μ−3σ) after each rated game of the ladder, all
// on the same axes. Each entrant has its own colour and dash pattern, named in the legend.
export function ratingChart(histories, width) {
  const names = Object.keys(histories).sort();
  const pts = names.flatMap((n) => histories[n].map((p) => [p.n, p.rating]));
  if (!pts.length) return h("p", { class: "muted" }, "No rated game yet: the chart appears after the first one.");
  const W = Math.round(Math.min(960, Math.max(300, width)));
  const H = W < 520 ? 250 : 330;
  const pad = { l: 46, r: 14, t: 14, b: 40 };
  let [x0, x1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1]))];
  if (x1 === x0) {
    x0 -= 1;
    x1 += 1;
  }
  const span = Math.max(1, y1 - y0);
  y0 -= span * 0.06;
  y1 += span * 0.06;
  const w = W - pad.l - pad.r;
  const hh = H - pad.t - pad.b;
  const px = (x) => pad.l + ((x - x0) / (x1 - x0)) * w;
  const py = (y) => pad.t + (1 - (y - y0) / (y1 - y0)) * hh;
  const style = (i) => `s${i % 8} dash${i % 3}`;
  const svg = s(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-title", "font-family": "sans-serif" },
    s(
      "title",
      { id: "chart-title" },
      `Rating of every entrant after each rated game (${names.length} entrants, one scale)`,
    ),
    ticks(y0, y1, H < 300 ? 5 : 7).map((v) => [
      s("line", { class: "grid", x1: pad.l, x2: pad.l + w, y1: py(v).toFixed(1), y2: py(v).toFixed(1) }),
      s(
        "text",
        { x: pad.l - 6, y: (py(v) + 4).toFixed(1), "text-anchor": "end" },
        fmt(v, Math.abs(v) < 10 && v % 1 ? 1 : 0),
      ),
    ]),
    ticks(x0, x1, W < 520 ? 4 : 8)
      .filter((v) => Number.isInteger(v))
      .map((v) => s("text", { x: px(v).toFixed(1), y: pad.t + hh + 16, "text-anchor": "middle" }, v)),
    s("line", { class: "axis", x1: pad.l, x2: pad.l + w, y1: pad.t + hh, y2: pad.t + hh }),
    s("line", { class: "axis", x1: pad.l, x2: pad.l, y1: pad.t, y2: pad.t + hh }),
    s("text", { x: pad.l + w / 2, y: H - 6, "text-anchor": "middle" }, "rated games played on the ladder"),
    names.map((n, i) => {
      const hs = histories[n];
      if (!hs.length) return null;
      const line = hs.map((p) => `${px(p.n).toFixed(1)},${py(p.rating).toFixed(1)}`).join(" ");
      const [lx, ly] = [px(hs[hs.length - 1].n), py(hs[hs.length - 1].rating)];
      return s(
        "g",
        { "data-entrant": n },
        s("title", {}, `${n}: ${fmt(hs[hs.length - 1].rating)} after ${hs.length} games`),
        hs.length > 1 ? s("polyline", { class: `line ${style(i)}`, points: line }) : null,
        s("circle", {
          class: `s${i % 8}`,
          cx: lx.toFixed(1),
          cy: ly.toFixed(1),
          r: 4,
          fill: "white",
          "stroke-width": 2.5,
        }),
      );
    }),
  );
  const legend = h(
    "ul",
    { class: "legend" },
    names.map((n, i) => {
      const hs = histories[n];
      const key = s(
        "svg",
        { width: 26, height: 10, "aria-hidden": "true" },
        s("line", { class: `line ${style(i)}`, x1: 1, x2: 25, y1: 5, y2: 5 }),
      );
      return h("li", {}, key, " ", h("b", {}, n), hs.length ? ` ${fmt(hs[hs.length - 1].rating)}` : " (no game yet)");
    }),
  );
  return h("figure", { class: "chart", "data-lines": names.filter((n) => histories[n].length).length }, svg, legend);
}

export async function laddersPage(main) {
  const { ladders } = await api("/ladders");
  main.replaceChildren(
    h("h1", {}, "Ladders"),
    ladders.length
      ? h(
          "ul",
          { class: "ladders" },
          ladders.map((n) => h("li", {}, h("a", { href: `#/ladders/${encodeURIComponent(n)}` }, n))),
        )
      : h(
          "p",
          {},
          "No ladder yet. An operator creates one with ",
          h("code", {}, "rfg ladder create"),
          " or ",
          h("code", {}, "POST /ladders"),
          ".",
        ),
  );
}

function gameRow(g) {
  const live = g.status === "active";
  const won = new Set(g.winners || []);
  return h(
    "tr",
    { "data-game": g.game_id },
    h("td", {}, live ? h("span", { class: "chip on" }, "live") : "finished", ` · round ${g.round}`),
    h(
      "td",
      {},
      g.entrants.map((e, seat) => [seat ? ", " : "", won.has(seat) ? h("b", { title: "winner" }, `${e} ★`) : e]),
    ),
    h("td", {}, g.totals ? g.totals.join(" – ") : live ? "under way" : "being recorded"),
    h("td", {}, h("code", {}, g.game_id)),
    h(
      "td",
      {},
      live
        ? h("a", { class: "button", href: `#/watch/${g.game_id}` }, "Watch live")
        : h("a", { class: "button secondary", href: `#/replay/${g.game_id}` }, "Replay"),
    ),
  );
}

function gamesSection(base) {
  const body = h("tbody", {});
  const more = h("p", {});
  const box = h("div", {});
  const load = async (cursor) => {
    try {
      const page = await api(`${base}/games?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      body.append(...page.games.map(gameRow));
      more.replaceChildren(
        page.next_cursor
          ? h("button", { type: "button", class: "secondary", onclick: () => load(page.next_cursor) }, "Older games")
          : "",
      );
      if (!body.childElementCount)
        box.replaceChildren(h("p", { class: "muted" }, "No games yet: the workers start them while the ladder runs."));
    } catch (exc) {
      more.replaceChildren(err(exc));
    }
  };
  box.append(
    h(
      "div",
      { class: "scroll-x" },
      h(
        "table",
        { class: "ladder-games" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Game", "Entrants by seat (★ won)", "VP totals", "Id", ""].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        body,
      ),
    ),
    more,
  );
  load(null);
  return box;
}

export async function ladderPage(main, name) {
  const base = `/ladders/${encodeURIComponent(name)}`;
  let ladder, board, h2h;
  try {
    [ladder, board, h2h] = await Promise.all([api(base), api(`${base}/leaderboard`), api(`${base}/head-to-head`)]);
  } catch (exc) {
    main.replaceChildren(h("h1", {}, `Ladder ${name}`), err(exc));
    return;
  }
  // the bot accounts among the entrants (not those that left): a person can challenge one from the lobby's form
  const accounts = Object.fromEntries(
    (ladder.entrants || []).filter((e) => e.account && !e.left_at).map((e) => [e.entrant, e.account]),
  );
  const chartBox = h("div", { class: "chart-box" }, h("p", { class: "muted" }, "Loading the ratings…"));
  main.replaceChildren(
    h(
      "div",
      { class: "ladder" },
      h("h1", {}, `Ladder ${ladder.name}`),
      h(
        "p",
        {},
        `${ladder.results} rated games · ${ladder.running} running · players per table: ${ladder.players.join(", ")}`,
        ladder.paused ? " · paused" : "",
        ladder.duplicate ? " · duplicate deals" : "",
      ),
      h(
        "section",
        { "aria-labelledby": "lb" },
        h("h2", { id: "lb" }, "Leaderboard"),
        h(
          "div",
          { class: "scroll-x" },
          h(
            "table",
            { class: "leaderboard" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["#", "Entrant", "Rating (μ−3σ)", "μ", "σ", "Games", "Wins", "Win rate"].map((t) =>
                  h("th", { scope: "col" }, t),
                ),
              ),
            ),
            h(
              "tbody",
              {},
              board.rows.map((r) =>
                h(
                  "tr",
                  {},
                  h("td", {}, r.position ?? "–"),
                  h(
                    "th",
                    { scope: "row" },
                    r.entrant,
                    r.provisional
                      ? h(
                          "span",
                          { class: "tag", title: "few games yet: the rating is still uncertain" },
                          " provisional",
                        )
                      : null,
                    accounts[r.entrant]
                      ? [
                          " ",
                          h(
                            "a",
                            {
                              class: "small-link",
                              href: `#/?account=${accounts[r.entrant]}`,
                              title: `a new game against bot account ${accounts[r.entrant]}: it is asked first`,
                            },
                            "play it",
                          ),
                        ]
                      : null,
                  ),
                  h("td", {}, fmt(r.rating)),
                  h("td", {}, fmt(r.mu)),
                  h("td", {}, fmt(r.sigma)),
                  h("td", {}, r.games),
                  h("td", {}, fmt(r.wins, r.wins % 1 ? 2 : 0)),
                  h("td", {}, `${Math.round(r.win_rate * 100)}%`),
                ),
              ),
            ),
          ),
        ),
      ),
      h(
        "section",
        { "aria-labelledby": "hist" },
        h("h2", { id: "hist" }, "Ratings over time"),
        h("p", { class: "muted" }, "Every entrant's conservative rating (μ−3σ) after each rated game, on one scale."),
        chartBox,
      ),
      h("section", { "aria-labelledby": "games" }, h("h2", { id: "games" }, "Games"), gamesSection(base)),
      h(
        "section",
        { "aria-labelledby": "hh" },
        h("h2", { id: "hh" }, "Head to head"),
        h2h.pairs.length
          ? h(
              "div",
              { class: "scroll-x" },
              h(
                "table",
                {},
                h(
                  "thead",
                  {},
                  h(
                    "tr",
                    {},
                    ["Entrant", "against", "Games", "W", "L", "T", "Win rate (95% interval)"].map((t) =>
                      h("th", { scope: "col" }, t),
                    ),
                  ),
                ),
                h(
                  "tbody",
                  {},
                  h2h.pairs.map((p) =>
                    h(
                      "tr",
                      {},
                      h("th", { scope: "row" }, p.a),
                      h("td", {}, p.b),
                      h("td", {}, p.games),
                      h("td", {}, p.wins),
                      h("td", {}, p.losses),
                      h("td", {}, p.ties),
                      h(
                        "td",
                        {},
                        `${Math.round(p.win_rate * 100)}% (${Math.round(p.ci95[0] * 100)}–${Math.round(p.ci95[1] * 100)}%)`,
                      ),
                    ),
                  ),
                ),
              ),
            )
          : h("p", { class: "muted" }, "No games yet."),
      ),
    ),
  );
  try {
    const entrants = board.rows.map((r) => r.entrant);
    const got = await Promise.all(entrants.map((e) => api(`${base}/entrants/${encodeURIComponent(e)}/history`)));
    const histories = Object.fromEntries(got.map((x) => [x.entrant, x.history]));
    chartBox.replaceChildren(ratingChart(histories, chartBox.clientWidth || main.clientWidth));
  } catch (exc) {
    chartBox.replaceChildren(err(exc));
  }
}
