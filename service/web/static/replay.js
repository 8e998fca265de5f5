// The replay viewer: a finished game's exported log (or a log file the person opens), stepped
// event by event with a scrubber, from the public point of view or any seat's, and the verdict
// of POST /replays/verify.
import { api, ApiError } from "./api.js";
import { h, cat, loadCatalogue, describe, cardName, seatName, PHASE_NAMES } from "./ui.js";

function parseLog(text) {
  const events = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let obj;
    try { obj = JSON.parse(line); } catch { continue; }
    if (obj.signature) continue;
    // an export's envelope ({type, seq, payload, ...}), a feed item ({seq, event}) or a bare event
    const e = obj.payload && obj.type ? { type: obj.type, ...obj.payload } : obj.event && obj.type ? obj.event : obj;
    if (e && e.type) events.push({ seq: obj.seq ?? events.length + 1, actor: obj.actor, ts: obj.ts, event: e });
  }
  return events;
}

// What a viewer sees of an event: a seat sees its own events whole, others their public part.
function seen(e, pov) {
  if (pov === "all" || e.seat === undefined || !e.public) return e;
  if (pov !== "public" && Number(pov) === e.seat) return e;
  return { type: e.type, seat: e.seat, ...e.public };
}

// The state the events tell so far: round, phase, each seat's tableau and VP chips won.
function fold(events, upto) {
  const st = { round: 0, phase: "setup", seats: {}, over: null, phases: [] };
  const seat = (n) => (st.seats[n] ||= { tableau: [], vp: 0 });
  for (let i = 0; i <= upto && i < events.length; i++) {
    const e = events[i].event;
    if (e.type === "GameCreated") {
      (e.seats || []).forEach((s, n) => seat(n).tableau.push(...(cat.factions[s.faction] || []), "H" + s.home));
      for (let n = 0; n < e.players; n++) seat(n);
    }
    else if (e.type === "RoundStarted") { st.round = e.round; st.phase = "assign"; st.phases = []; }
    else if (e.type === "PhasesRevealed") st.phases = e.phases;
    else if (e.type === "PhaseStarted") st.phase = e.phase;
    else if (e.type === "ManageStarted") st.phase = "manage";
    else if (e.type === "TileCompleted") seat(e.seat).tableau.push(e.card);
    else if ((e.type === "GoodShipped" || e.type === "PowerPaid") && e.vp) seat(e.seat).vp += e.vp;
    else if (e.type === "GameEnded") { st.over = e; st.phase = "over"; }
  }
  return st;
}

// The badge: green only for a log this server signed (the API's ok is true only then); a log
// that is consistent and complete but unsigned is said to be so, never shown as verified.
function verdictWords(v) {
  if (v.ok && v.origin === "this-server") return ["ok", "✔ Verified: signed by this server"];
  if (v.consistent && v.complete && v.origin === "unsigned") return ["unsigned", "⚠ Consistent and complete, not signed by this server"];
  return ["bad", `✘ Not verified: ${v.verdict}`];
}

export async function replayPage(main, gid, onLeave) {
  await loadCatalogue();
  const verdictBox = h("section", { class: "verdict", "aria-live": "polite", "aria-label": "Verification" });
  const viewer = h("div", {});
  const err = h("div", {});
  const file = h("input", { type: "file", accept: ".jsonl,.ndjson,.txt,application/x-ndjson", id: "logfile" });
  const idInput = h("input", { type: "text", id: "gameid", placeholder: "game id", value: gid || "" });
  main.replaceChildren(
    h("h1", {}, "Replay viewer"),
    h("div", { class: "replay-pick" },
      h("form", { onsubmit: (e) => { e.preventDefault(); if (idInput.value.trim()) location.hash = `#/replay/${encodeURIComponent(idInput.value.trim())}`; } },
        h("label", { for: "gameid" }, "A finished game: "), idInput, " ", h("button", { type: "submit" }, "Load")),
      h("div", {}, h("label", { for: "logfile" }, "…or open a log file (JSON Lines export): "), file)),
    err, verdictBox, viewer);

  const verify = async (text) => {
    verdictBox.replaceChildren(h("p", { class: "muted" }, "Verifying the log with POST /replays/verify…"));
    try {
      const v = await api("/replays/verify", { method: "POST", body: text });
      const [kind, words] = verdictWords(v);
      const why = kind === "unsigned" ? [h("p", { class: "muted" }, "It is a legal game that reaches its end, but anyone can write such a log for any seed: nothing shows that it was played here.")] : [];
      verdictBox.replaceChildren(h("h2", {}, "Verification"),
        h("p", { class: `badge ${kind}`, "data-verdict": v.verdict, "data-origin": v.origin }, words),
        ...why,
        h("ul", {},
          h("li", {}, `consistent (every event follows from the seed and the commands): ${v.consistent ? "yes" : "no"}`),
          h("li", {}, `complete (nothing missing, reaches the end): ${v.complete ? "yes" : "no"}`),
          h("li", {}, `authentic (signed by this server): ${v.authentic === null ? "not checked" : v.authentic ? "yes" : "no"} — ${v.authenticity}`),
          h("li", {}, `${v.events} events, ${v.commands} commands re-run (${v.mode})`),
          v.reason ? h("li", {}, `first bad event: ${v.first_bad_event ?? "-"}: ${v.reason}`) : null));
    } catch (exc) { verdictBox.replaceChildren(h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : exc.message)); }
  };

  const show = (events, players, game = null) => {
    if (!events.length) { viewer.replaceChildren(h("p", { class: "error" }, "This log holds no events.")); return; }
    let pos = events.length - 1;
    let pov = "public";
    const scrub = h("input", { type: "range", min: 0, max: events.length - 1, value: 0, id: "scrubber", "aria-label": "Event" });
    const where = h("output", { for: "scrubber", class: "where" });
    const state = h("div", { class: "replay-state" });
    const list = h("ol", { class: "log replay-log" });
    const detail = h("pre", { class: "detail" });
    const go = (i) => {
      pos = Math.max(0, Math.min(events.length - 1, i));
      scrub.value = pos;
      const it = events[pos];
      where.textContent = `event ${pos + 1} of ${events.length} (seq ${it.seq})`;
      const st = fold(events, pos);
      state.replaceChildren(
        h("p", {}, h("b", {}, `Round ${st.round}`), ` · ${PHASE_NAMES[st.phase] || st.phase}`, st.phases.length ? ` · phases: ${st.phases.map((p) => PHASE_NAMES[p]).join(", ")}` : ""),
        h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Seat"), h("th", { scope: "col" }, "VP chips won"), h("th", { scope: "col" }, "Tableau"))),
          h("tbody", {}, Object.entries(st.seats).map(([n, s]) => h("tr", {}, h("th", { scope: "row" }, seatName(game, Number(n))), h("td", {}, s.vp), h("td", {}, s.tableau.map(cardName).join(", ")))))),
        st.over ? h("p", { class: "final" }, describe(st.over, game), " — scores: ", st.over.scores.map((s) => `${seatName(game, s.seat)}: ${s.total}`).join(", ")) : null);
      const lo = Math.max(0, pos - 6);
      list.replaceChildren(...events.slice(lo, pos + 7).map((x, k) => h("li", { value: x.seq, class: lo + k === pos ? "now" : "", "aria-current": lo + k === pos ? "step" : null },
        h("span", { class: "seq" }, `#${x.seq}`), " ", describe(seen(x.event, pov), game))));
      detail.textContent = JSON.stringify(seen(it.event, pov), null, 1);
    };
    scrub.addEventListener("input", () => go(Number(scrub.value)));
    const btn = (label, fn, aria) => h("button", { type: "button", class: "secondary", onclick: fn, "aria-label": aria }, label);
    const povSel = h("select", { id: "pov", onchange: (e) => { pov = e.target.value; go(pos); } },
      h("option", { value: "public" }, "Public (spectator)"),
      Array.from({ length: players }, (_, n) => h("option", { value: String(n) }, seatName(game, n))));
    viewer.replaceChildren(h("section", { class: "replay", "aria-label": "Replay", tabindex: "0",
      onkeydown: (e) => {
        if (e.target.tagName === "SELECT") return;
        if (e.key === "ArrowRight") { go(pos + 1); e.preventDefault(); }
        else if (e.key === "ArrowLeft") { go(pos - 1); e.preventDefault(); }
        else if (e.key === "End") { go(events.length - 1); e.preventDefault(); }
        else if (e.key === "Home") { go(0); e.preventDefault(); }
      } },
    h("div", { class: "controls" },
      btn("|◀", () => go(0), "first event"), btn("◀", () => go(pos - 1), "previous event"),
      scrub,
      btn("▶", () => go(pos + 1), "next event"), btn("▶|", () => go(events.length - 1), "last event"),
      h("label", { for: "pov" }, " Point of view: "), povSel),
    where, h("p", { class: "muted" }, "Arrow keys step through the events; Home and End jump."),
    h("div", { class: "replay-grid" }, h("div", {}, state, list), detail)));
    go(0);
  };

  file.addEventListener("change", async () => {
    const f = file.files[0];
    if (!f) return;
    const text = await f.text();
    const events = parseLog(text);
    const created = events.find((e) => e.event.type === "GameCreated");
    show(events, created ? created.event.players : 5);
    verify(text);
  });

  if (!gid) return;
  try {
    const game = await api(`/games/${encodeURIComponent(gid)}`);
    if (game.status !== "finished") {
      err.replaceChildren(h("p", { class: "warn" }, "This game is still running: the replay shows the public events so far. ",
        h("a", { href: `#/watch/${gid}` }, "Watch it live"), " instead; the full log and its verification come when it ends."));
    }
    const resp = await api(`/games/${encodeURIComponent(gid)}/log`, { raw: true, headers: { Accept: "application/x-ndjson" } });
    const text = await resp.text();
    const events = parseLog(text);
    show(events, game.players, game);
    if (resp.headers.get("Log-Kind") === "withheld") {
      err.replaceChildren(h("p", { class: "warn" }, "This game is over, but other games of its duplicate set, dealt the same seed, are still running: ",
        "its seed, full log and verification come when every game of the set has ended."));
    }
    if (resp.headers.get("Log-Kind") === "full") await verify(text);
  } catch (exc) { err.replaceChildren(h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : exc.message)); }
  void onLeave;
}
