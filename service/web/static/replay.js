// The replay viewer: a finished game drawn as a table at every step of its log - dice, credits,
// goods, VP chips, tableau, construction stacks, phase strips - from the views the server folds at
// that event (GET /games/{id}/view?at=N, and each seat's view once the game is over), stepped by
// event, by phase and by round, with the verdict of POST /replays/verify on the log. A log file
// opened from disk is verified and told in words; its board is drawn when its game is one of this
// server's finished games.
import { api, ApiError } from "./api.js";
import { h, loadCatalogue, describe, seatName, PHASE_NAMES } from "./ui.js";
import * as table from "./table.js";
import { nextStop, prevStop, replayCursor, seenBy, stepTo } from "./state.js";

const STEP_NAMES = {
  setup: "Setup",
  start_tiles: "Start tiles",
  assign: "Assign",
  manage: "Manage",
  over: "Game over",
};
const stepName = (s) => STEP_NAMES[s] || PHASE_NAMES[s] || String(s || "").replaceAll("_", " ");
const words = (exc) => (exc instanceof ApiError ? exc.words : exc.message);

function parseLog(text) {
  const events = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let obj;
    try {
      obj = JSON.parse(line);
    } catch {
      continue;
    }
    if (obj.signature || obj.seed_withheld) continue;
    // an export's envelope ({type, seq, payload, ...}), a feed item ({seq, event}) or a bare event
    const e = obj.payload && obj.type ? { type: obj.type, ...obj.payload } : obj.event && obj.type ? obj.event : obj;
    if (e && e.type)
      events.push({ seq: obj.seq ?? events.length + 1, actor: obj.actor, ts: obj.ts, game: obj.game_id, event: e });
  }
  return events;
}

// A decision a bot made for a person (its actor the clock's policy, or a bot on a seat that is not
// a bot's: the seat was away or handed over), marked on its step; nothing for any other step.
function botMark(it, game) {
  const e = it.event;
  if (e.type !== "CommandSubmitted" || !it.actor) return null;
  const seat = ((game && game.seats) || [])[e.seat];
  if (it.actor !== "timeout" && !(it.actor.startsWith("bot:") && seat && seat.kind !== "bot")) return null;
  return h(
    "span",
    { class: "bot-decided", "data-bot-decided": it.actor },
    it.actor === "timeout"
      ? " · time ran out: the table decided for them"
      : ` · a bot (${it.actor.slice(4)}) decided for them`,
  );
}

// What a viewer sees of an event: a seat sees its own events whole, others their public part.
function seen(e, pov) {
  if (e.seat === undefined || !e.public) return e;
  if (pov !== "public" && Number(pov) === e.seat) return e;
  return { type: e.type, seat: e.seat, ...e.public };
}

// Where each event falls: its round and step, and the events that open a round or a phase (the
// stops of the round and phase buttons).
function landmarks(events) {
  let round = 0;
  let step = "setup";
  const at = [];
  const rounds = [0];
  const phases = [0];
  events.forEach((x, i) => {
    const e = x.event;
    if (e.type === "RoundStarted") {
      round = e.round;
      step = "assign";
      rounds.push(i);
      phases.push(i);
    } else if (e.type === "PhaseStarted") {
      step = e.phase;
      phases.push(i);
    } else if (e.type === "ManageStarted") {
      step = "manage";
      phases.push(i);
    } else if (e.type === "GameEnded") {
      step = "over";
      rounds.push(i);
      phases.push(i);
    }
    at.push({ round, step });
  });
  const uniq = (xs) => [...new Set(xs)].sort((a, b) => a - b);
  return { at, rounds: uniq(rounds), phases: uniq(phases) };
}

// The badge: green only for a log this server signed (the API's ok is true only then); a log
// that is consistent and complete but unsigned is said to be so, never shown as verified.
function verdictWords(v) {
  if (v.ok && v.origin === "this-server") return ["ok", "✔ Verified: signed by this server"];
  if (v.consistent && v.complete && v.origin === "unsigned")
    return ["unsigned", "⚠ Consistent and complete, not signed by this server"];
  return ["bad", `✘ Not verified: ${v.verdict}`];
}

// The table at one step, as live play draws it (table.js), without what belongs to live play only:
// clocks (their deadlines passed long ago) and the link to this very replay.
function drawStep(view, game, pov) {
  const still = { ...view, clock: null };
  const seat = pov === "public" ? null : Number(pov);
  const el =
    typeof table.drawTable === "function"
      ? table.drawTable(still, { game, seat })
      : h(
          "div",
          { class: "table-view" },
          table.header(still, game, null),
          still.step === "over" ? table.scores(still, game) : null,
          table.renderBoard(still, game, seat),
        );
  for (const a of el.querySelectorAll('a[href^="#/replay/"]')) a.closest("p")?.remove();
  // the seat whose point of view is shown is not the person watching the replay
  for (const title of el.querySelectorAll(".seat.mine h3"))
    title.textContent = `${title.textContent.replace(/^You — /, "")} (point of view)`;
  return el;
}

// The recent finished games (GET /games?status=finished, newest first), a page at a time: each
// opens its replay. `cursor`: the page's cursor (the previous page's next_cursor), or null.
async function recentGames(cursor) {
  const q = new URLSearchParams({ status: "finished", limit: "10" });
  if (cursor) q.set("cursor", cursor);
  const box = h(
    "section",
    { class: "recent-games", "aria-labelledby": "recent-title" },
    h("h2", { id: "recent-title" }, "Recent finished games"),
  );
  try {
    const page = await api(`/games?${q}`);
    const result = (g) =>
      g.end_reason === "abandoned"
        ? "abandoned"
        : g.end_reason === "aborted"
          ? "aborted"
          : g.winners && g.winners.length
            ? `won by ${g.winners.map((w) => seatName(g, w)).join(" and ")}${g.end_reason === "resigned" ? " (resignation)" : ""}`
            : "over";
    box.append(
      page.items.length
        ? h(
            "ul",
            { class: "recent-list" },
            page.items.map((g) =>
              h(
                "li",
                { "data-game": g.game_id },
                h(
                  "a",
                  { href: `#/replay/${encodeURIComponent(g.game_id)}` },
                  `${g.players} players: `,
                  (g.seats || []).map((x) => seatName(g, x.seat)).join(", "),
                ),
                h("span", { class: "muted" }, ` · ${result(g)} · `, h("code", {}, g.game_id)),
              ),
            ),
          )
        : h(
            "p",
            { class: "muted" },
            cursor ? "No more finished games." : "No finished games yet: a game shows here once it ends.",
          ),
      h(
        "p",
        {},
        cursor ? h("a", { href: "#/replay", class: "button secondary" }, "Newest games") : null,
        " ",
        page.next_cursor
          ? h(
              "a",
              {
                href: `#/replay?${new URLSearchParams({ cursor: page.next_cursor })}`,
                class: "button secondary",
                rel: "next",
              },
              "Older games →",
            )
          : null,
      ),
    );
  } catch (exc) {
    box.append(h("p", { class: "error", role: "alert" }, words(exc)));
  }
  return box;
}

export async function replayPage(main, gid, onLeave, params = new URLSearchParams()) {
  await loadCatalogue();
  const verdictBox = h("section", { class: "verdict", "aria-live": "polite", "aria-label": "Verification" });
  const viewer = h("div", {});
  const err = h("div", {});
  const file = h("input", { type: "file", accept: ".jsonl,.ndjson,.txt,application/x-ndjson", id: "logfile" });
  const idInput = h("input", { type: "text", id: "gameid", placeholder: "game id", value: gid || "" });
  main.replaceChildren(
    h("h1", {}, "Replay viewer"),
    h(
      "div",
      { class: "replay-pick" },
      h(
        "form",
        {
          onsubmit: (e) => {
            e.preventDefault();
            if (idInput.value.trim()) location.hash = `#/replay/${encodeURIComponent(idInput.value.trim())}`;
          },
        },
        h("label", { for: "gameid" }, "A finished game: "),
        idInput,
        " ",
        h("button", { type: "submit" }, "Load"),
      ),
      h("div", {}, h("label", { for: "logfile" }, "…or open a log file (JSON Lines export): "), file),
    ),
    err,
    verdictBox,
    viewer,
  );

  const verify = async (text) => {
    verdictBox.replaceChildren(h("p", { class: "muted" }, "Verifying the log with POST /replays/verify…"));
    try {
      const v = await api("/replays/verify", { method: "POST", body: text });
      const [kind, said] = verdictWords(v);
      const why =
        kind === "unsigned"
          ? [
              h(
                "p",
                { class: "muted" },
                "It is a legal game that reaches its end, but anyone can write such a log for any seed: nothing shows that it was played here.",
              ),
            ]
          : [];
      verdictBox.replaceChildren(
        h("h2", {}, "Verification"),
        h("p", { class: `badge ${kind}`, "data-verdict": v.verdict, "data-origin": v.origin }, said),
        ...why,
        h(
          "ul",
          {},
          h(
            "li",
            {},
            `consistent (every event follows from the seed and the commands): ${v.consistent ? "yes" : "no"}`,
          ),
          h("li", {}, `complete (nothing missing, reaches the end): ${v.complete ? "yes" : "no"}`),
          h(
            "li",
            {},
            `authentic (signed by this server): ${v.authentic === null ? "not checked" : v.authentic ? "yes" : "no"}${v.authenticity ? ` — ${v.authenticity}` : ""}`,
          ),
          h("li", {}, `${v.events} events, ${v.commands} commands re-run${v.mode ? ` (${v.mode})` : ""}`),
          v.reason ? h("li", {}, `first bad event: ${v.first_bad_event ?? "none"}: ${v.reason}`) : null,
        ),
      );
      return v;
    } catch (exc) {
      verdictBox.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
      return null;
    }
  };

  // events: the log; game: the game resource (names, seats), or null; boardOf: the game id whose
  // views this server gives, or null (the events are then told in words only)
  const show = (events, players, game, boardOf) => {
    if (!events.length) {
      viewer.replaceChildren(h("p", { class: "error" }, "This log holds no events."));
      return;
    }
    const marks = landmarks(events);
    const last = events.length - 1;
    let cur = replayCursor(events.length);
    let asked = 0;
    const views = new Map();
    const scrub = h("input", {
      type: "range",
      min: 0,
      max: last,
      value: 0,
      id: "scrubber",
      "aria-label": "Step through the events",
    });
    const where = h("output", { for: "scrubber", class: "where", "aria-live": "polite" });
    const now = h("p", { class: "now-event" });
    const list = h("ol", { class: "log replay-log", "aria-label": "Events around this step" });
    const board = h("div", { class: "replay-board", "aria-label": "The table at this step" });
    const viewOf = (seq) => {
      const { pov } = cur;
      const key = `${pov}:${seq}`;
      if (!views.has(key)) {
        const path =
          pov === "public"
            ? `/games/${encodeURIComponent(boardOf)}/view?at=${seq}`
            : `/games/${encodeURIComponent(boardOf)}/seats/${pov}/view?at=${seq}`;
        views.set(
          key,
          api(path).catch((exc) => {
            views.delete(key);
            throw exc;
          }),
        );
        if (views.size > 300) views.delete(views.keys().next().value);
      }
      return views.get(key);
    };
    const drawBoard = async (seq) => {
      const mine = ++asked;
      board.setAttribute("aria-busy", "true");
      try {
        const r = await viewOf(seq);
        if (mine !== asked) return;
        board.replaceChildren(drawStep(r.view, game, cur.pov));
        board.dataset.at = String(r.at);
      } catch (exc) {
        if (mine === asked) board.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
      } finally {
        if (mine === asked) board.removeAttribute("aria-busy");
      }
    };
    let timer = null;
    const go = (i, { soon = false } = {}) => {
      cur = stepTo(cur, i);
      const { pos, pov } = cur;
      scrub.value = pos;
      const it = events[pos];
      const m = marks.at[pos];
      where.textContent = `Step ${pos + 1} of ${events.length} · ${m.round ? `round ${m.round} · ` : ""}${stepName(m.step)}`;
      now.replaceChildren(
        ...[
          h("b", {}, "This step: "),
          describe(seen(it.event, pov), game),
          botMark(it, game),
          it.ts ? h("span", { class: "muted" }, ` · ${new Date(it.ts).toLocaleTimeString()}`) : null,
        ].filter(Boolean), // (replaceChildren writes a null as the text "null")
      );
      const lo = Math.max(0, pos - 5);
      list.replaceChildren(
        ...events
          .slice(lo, pos + 6)
          .map((x, k) =>
            h(
              "li",
              { value: x.seq, class: lo + k === pos ? "now" : "", "aria-current": lo + k === pos ? "step" : null },
              describe(seen(x.event, pov), game),
              botMark(x, game),
            ),
          ),
      );
      if (!boardOf) return;
      clearTimeout(timer);
      if (soon) timer = setTimeout(() => drawBoard(it.seq), 90);
      else drawBoard(it.seq);
    };
    const next = (stops) => nextStop(cur, stops);
    const prev = (stops) => prevStop(cur, stops);
    scrub.addEventListener("input", () => go(Number(scrub.value), { soon: true }));
    const btn = (label, fn, aria) =>
      h("button", { type: "button", class: "secondary", onclick: fn, "aria-label": aria, title: aria }, label);
    const povSel = h(
      "select",
      {
        id: "pov",
        onchange: (e) => {
          cur = seenBy(cur, e.target.value);
          go(cur.pos);
        },
      },
      h("option", { value: "public" }, "Spectator (public)"),
      boardOf ? Array.from({ length: players }, (_, n) => h("option", { value: String(n) }, seatName(game, n))) : null,
    );
    viewer.replaceChildren(
      h(
        "section",
        {
          class: "replay",
          "aria-label": "Replay",
          tabindex: "0",
          onkeydown: (e) => {
            if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
            const keys = {
              ArrowRight: () => go(cur.pos + 1),
              ArrowLeft: () => go(cur.pos - 1),
              End: () => go(last),
              Home: () => go(0),
              PageDown: () => go(next(marks.phases)),
              PageUp: () => go(prev(marks.phases)),
            };
            if (keys[e.key]) {
              keys[e.key]();
              e.preventDefault();
            }
          },
        },
        h(
          "div",
          { class: "controls" },
          h("div", { class: "scrub" }, scrub),
          h(
            "div",
            { class: "steps", role: "group", "aria-label": "Step" },
            btn("|◀ Start", () => go(0), "first event"),
            btn("◀ Round", () => go(prev(marks.rounds)), "previous round"),
            btn("◀ Phase", () => go(prev(marks.phases)), "previous phase"),
            btn("◀ Event", () => go(cur.pos - 1), "previous event"),
            btn("Event ▶", () => go(cur.pos + 1), "next event"),
            btn("Phase ▶", () => go(next(marks.phases)), "next phase"),
            btn("Round ▶", () => go(next(marks.rounds)), "next round"),
            btn("End ▶|", () => go(last), "last event"),
          ),
          boardOf ? h("label", { class: "pov" }, h("span", {}, "Point of view: "), povSel) : null,
          where,
        ),
        now,
        h(
          "p",
          { class: "muted hint" },
          "Arrow keys step one event, Page Up and Page Down one phase; Home and End jump.",
        ),
        boardOf
          ? board
          : h(
              "p",
              { class: "muted" },
              "The board is drawn for this server's finished games; this log's events are told in words below.",
            ),
        h("details", { class: "events", open: !boardOf }, h("summary", {}, "Events around this step"), list),
      ),
    );
    go(0);
  };

  file.addEventListener("change", async () => {
    const f = file.files[0];
    if (!f) return;
    const text = await f.text();
    const events = parseLog(text);
    const created = events.find((e) => e.event.type === "GameCreated");
    const id = created ? created.game || created.event.game : null;
    show(events, created ? created.event.players : 5, null, null);
    const v = await verify(text);
    // only a log this server signed is one of its games: its board is drawn from the server's views
    if (!id || !v || v.origin !== "this-server") return;
    let game = null;
    try {
      game = await api(`/games/${encodeURIComponent(id)}`);
    } catch {
      game = null;
    }
    const ours = game && game.status === "finished" && game.version === events[events.length - 1].seq;
    if (ours) show(events, created.event.players, game, id);
  });

  if (!gid) {
    // the list until a log file is opened (its replay then takes the place)
    const recent = await recentGames(params.get("cursor"));
    if (!viewer.childElementCount) viewer.replaceChildren(recent);
    return;
  }
  try {
    const game = await api(`/games/${encodeURIComponent(gid)}`);
    const resp = await api(`/games/${encodeURIComponent(gid)}/log`, {
      raw: true,
      headers: { Accept: "application/x-ndjson" },
    });
    const text = await resp.text();
    const events = parseLog(text);
    if (game.status !== "finished") {
      err.replaceChildren(
        h(
          "p",
          { class: "warn" },
          "This game is still being played: its replay, drawn step by step, and the verification of its log come when it ends. ",
          h("a", { href: `#/watch/${gid}` }, "Watch it live"),
          " meanwhile; its public events so far are below.",
        ),
      );
      show(events, game.players, game, null);
      return;
    }
    show(events, game.players, game, gid);
    if (resp.headers.get("Log-Kind") === "withheld") {
      err.replaceChildren(
        h(
          "p",
          { class: "warn" },
          "This game is over, but other games of its duplicate set, dealt the same seed, are still running: ",
          "its seed, each player's point of view and the verification of its log come when every game of the set has ended.",
        ),
      );
    }
    if (resp.headers.get("Log-Kind") === "full") await verify(text);
  } catch (exc) {
    err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
  }
  void onLeave;
}
