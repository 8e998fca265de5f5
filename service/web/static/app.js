// The web client's pages (fragment routes of /play/): lobby, table, spectator, replay, ladders.
import { api, ApiError, Stream, tokenFor, saveToken, mySeats, newId } from "./api.js";
import { h, toast, hideToast, loadCatalogue, describe, seatName, whereDice } from "./ui.js";
import {
  header,
  objectivesPanel,
  opponentBoards,
  opponentStrip,
  ownBoard,
  renderBoard,
  scores,
  tickClocks,
} from "./table.js";
import { decisionPanel } from "./panels.js";
import { decisionClock, handOver, handOverField } from "./clock.js";
import {
  LOG_KEPT,
  commandFor,
  decisionKey,
  eventSeen,
  owed,
  polls,
  streamStatus,
  tableState,
  turnSignalled,
  viewRead,
} from "./state.js";
import { replayPage } from "./replay.js";
import { laddersPage, ladderPage } from "./ladders.js";
import {
  invitePanel,
  joinPage,
  lastName,
  leaveControls,
  movePage,
  movePanel,
  nameField,
  rememberName,
} from "./friends.js";
import { liveGames, paceField, paceOf } from "./watch.js";
import { ACCOUNT_ID, accountField, challenge, challengePage, myChallenges } from "./challenge.js";

const main = document.getElementById("main");
let cleanup = [];
export function onLeave(fn) {
  cleanup.push(fn);
}

// Each route counts one up: a page still loading when the person went on to another route draws
// nothing once it has loaded.
let routeCount = 0;
function show(...kids) {
  main.replaceChildren(...kids.flat().filter(Boolean));
}
function shower() {
  const mine = routeCount;
  const draw = (...kids) => {
    if (!draw.stale()) show(...kids);
  };
  draw.stale = () => mine !== routeCount;
  return draw;
}
export function problem(exc) {
  return h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : String(exc.message || exc));
}

// ------------------------------------------------------------------------------ lobby

async function lobby(params) {
  const show = shower();
  const status = params.get("status") || "";
  const players = params.get("players") || "";
  const bots = (await api("/bots")).bots;
  // the Ambition expansion, offered when the server has its component file (GET /catalogue)
  const ambition = (await loadCatalogue()).ambition;
  // #/?account=<id> (a ladder's "play it"): seat 1 is that bot account
  const preset = ACCOUNT_ID.test(params.get("account") || "") ? params.get("account") : null;
  const seatRow = (i) =>
    h(
      "label",
      { class: "field" },
      h("span", {}, `Seat ${i}`),
      h(
        "select",
        { name: `seat${i}`, "data-seat": i },
        i === 0 ? h("option", { value: "human", selected: true }, "You (human)") : null,
        h("option", { value: "human" }, "A friend (invite by link)"),
        i > 0 ? h("option", { value: "account" }, "A bot account (its id below)") : null,
        h("option", { value: "none" }, "— empty —"),
        bots.map((b, k) =>
          h("option", { value: `bot:${b}`, selected: i > 0 && k === (i === 1 ? 0 : bots.length - 1) }, `${b} bot`),
        ),
      ),
    );
  const err = h("div", {});
  const form = h(
    "form",
    {
      class: "create",
      "aria-labelledby": "create-title",
      onsubmit: async (e) => {
        e.preventDefault();
        err.replaceChildren();
        /** @type {Array<{ kind: string, account?: string, bot?: string, name?: string }>} */
        const seats = [];
        const account = form.querySelector("[name=account]").value.trim().toLowerCase();
        for (const s of form.querySelectorAll("select[data-seat]")) {
          if (s.value === "none") continue;
          seats.push(
            s.value === "human"
              ? { kind: "human" }
              : s.value === "account"
                ? { kind: "external", account }
                : { kind: "bot", bot: s.value.slice(4) },
          );
        }
        /** @type {{ first_game: boolean, expansions?: string[], objectives?: boolean }} */
        const options = { first_game: form.querySelector("[name=first_game]").checked };
        if (ambition && form.querySelector("[name=ambition]").checked) {
          options.expansions = ["ambition"];
          options.objectives = form.querySelector("[name=objectives]").checked;
        }
        const body = { seats, options };
        const per = Number(form.querySelector("[name=per_decision]").value);
        if (per > 0) body.time_control = { per_decision: per };
        if (per > 0 && handOver(form)) body.hand_over = true;
        if (paceOf(form)) body.bot_pace_seconds = paceOf(form);
        if (seats.some((s) => s.kind === "external")) {
          // a bot account plays: it is asked first
          if (!ACCOUNT_ID.test(account)) {
            err.replaceChildren(
              problem(
                new Error(
                  "A bot account's id is 16 hex digits (its author got it on registering); type it in the field under the seats.",
                ),
              ),
            );
            return;
          }
          const name = form.querySelector("[name=name]").value.trim();
          if (name) for (const s of seats) if (s.kind === "human") s.name = name; // (the one seat a challenge gives you)
          try {
            await challenge(body, saveToken);
            rememberName(name);
          } catch (exc) {
            err.replaceChildren(problem(exc));
          }
          return;
        }
        try {
          const game = await api("/games", { method: "POST", body });
          const mine = game.seats.find((s) => s.kind === "human");
          if (!mine) {
            location.hash = `#/watch/${game.game_id}`;
            return;
          }
          const name = form.querySelector("[name=name]").value.trim();
          const claim = await api(`/games/${game.game_id}/seats/${mine.seat}/claim`, {
            method: "POST",
            body: name ? { name } : {},
          });
          rememberName(name);
          saveToken(game.game_id, mine.seat, claim.token);
          location.hash = `#/games/${game.game_id}/seats/${mine.seat}`;
        } catch (exc) {
          err.replaceChildren(problem(exc));
        }
      },
    },
    h("h2", { id: "create-title" }, "New game"),
    h(
      "p",
      {},
      "Play against the built-in bots and friends: you take seat 0, the bots move as soon as you do; a friend's seat gets an invite link on the table. A bot account's seat asks it first: the game starts when it accepts.",
    ),
    nameField("create-name"),
    h(
      "div",
      { class: "seats" },
      [0, 1, 2, 3, 4].map((i) => {
        const row = seatRow(i);
        if (i === 4) row.querySelector("select").value = "none";
        if (i === 1 && preset) row.querySelector("select").value = "account";
        return row;
      }),
    ),
    accountField(preset),
    h(
      "label",
      { class: "choice" },
      h("input", { type: "checkbox", name: "first_game" }),
      " First-game setup (start tiles chosen for you)",
    ),
    ambition ? ambitionFields(ambition) : null,
    h(
      "label",
      { class: "field" },
      h("span", {}, "Seconds per decision (0: no clock)"),
      h("input", { type: "number", name: "per_decision", min: 0, max: 3600, value: 0 }),
    ),
    paceField(),
    h("button", { type: "submit", class: "primary" }, "Create game and take my seat"),
    err,
  );
  form.querySelector("[name=per_decision]").closest("label").after(handOverField(form));

  const q = new URLSearchParams({ limit: "25" });
  if (status) q.set("status", status);
  if (players) q.set("players", players);
  if (params.get("cursor")) q.set("cursor", params.get("cursor"));
  let list;
  try {
    const page = await api(`/games?${q}`);
    const filt = (name, val, label) =>
      h(
        "a",
        {
          href: `#/?${new URLSearchParams({ ...(status ? { status } : {}), ...(players ? { players } : {}), [name]: val })}`,
          class: `chip ${(name === "status" ? status : players) === val ? "on" : ""}`,
        },
        label,
      );
    const mine = new Set(mySeats().map((m) => m.gid));
    list = h(
      "section",
      { "aria-labelledby": "games-title" },
      h("h2", { id: "games-title" }, "Games"),
      h(
        "nav",
        { class: "filters", "aria-label": "Filters" },
        "Show: ",
        h("a", { href: `#/?${players ? "players=" + players : ""}`, class: `chip ${status ? "" : "on"}` }, "all"),
        filt("status", "active", "active"),
        filt("status", "finished", "finished"),
        " · players: ",
        [2, 3, 4, 5].map((n) => filt("players", String(n), String(n))),
      ),
      page.items.length
        ? h(
            "table",
            { class: "games" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Game", "Status", "Seats", "Round", ""].map((t) => h("th", { scope: "col" }, t)),
              ),
            ),
            h(
              "tbody",
              {},
              page.items.map((g) =>
                h(
                  "tr",
                  {},
                  h("td", {}, h("code", {}, g.game_id), mine.has(g.game_id) ? " (yours)" : ""),
                  h(
                    "td",
                    {},
                    g.status,
                    g.end_reason === "abandoned"
                      ? " — abandoned"
                      : g.end_reason === "aborted"
                        ? " — aborted"
                        : g.winners && g.winners.length
                          ? ` — won by ${g.winners.map((w) => seatName(g, w)).join(", ")}`
                          : "",
                    g.end_reason === "resigned" ? " (resignation)" : "",
                  ),
                  h(
                    "td",
                    {},
                    g.seats
                      .map((s) =>
                        s.kind === "bot"
                          ? s.bot
                          : s.kind === "external"
                            ? s.entrant || "bot"
                            : s.claimed
                              ? s.name || "human"
                              : s.invited
                                ? "invited"
                                : "open",
                      )
                      .join(", "),
                  ),
                  h("td", {}, g.round),
                  h(
                    "td",
                    { class: "links" },
                    g.seats
                      .filter((s) => tokenFor(g.game_id, s.seat))
                      .map((s) =>
                        h(
                          "a",
                          { class: "button", href: `#/games/${g.game_id}/seats/${s.seat}` },
                          `Play seat ${s.seat}`,
                        ),
                      ),
                    g.status === "active"
                      ? g.seats
                          .filter((s) => s.kind === "human" && !s.claimed && !s.invited)
                          .map((s) =>
                            h(
                              "button",
                              {
                                type: "button",
                                class: "secondary",
                                onclick: async () => {
                                  try {
                                    const name = lastName();
                                    const c = await api(`/games/${g.game_id}/seats/${s.seat}/claim`, {
                                      method: "POST",
                                      body: name ? { name } : {},
                                    });
                                    saveToken(g.game_id, s.seat, c.token);
                                    location.hash = `#/games/${g.game_id}/seats/${s.seat}`;
                                  } catch (exc) {
                                    toast(exc.words || exc.message);
                                  }
                                },
                              },
                              `Take seat ${s.seat}`,
                            ),
                          )
                      : null,
                    h("a", { class: "button secondary", href: `#/watch/${g.game_id}` }, "Watch"),
                    g.status === "finished"
                      ? h("a", { class: "button secondary", href: `#/replay/${g.game_id}` }, "Replay")
                      : null,
                  ),
                ),
              ),
            ),
          )
        : h("p", { class: "muted" }, "No games yet."),
      page.next_cursor
        ? h(
            "p",
            {},
            h(
              "a",
              {
                href: `#/?${new URLSearchParams({ ...(status ? { status } : {}), ...(players ? { players } : {}), cursor: page.next_cursor })}`,
              },
              "Older games →",
            ),
          )
        : null,
    );
  } catch (exc) {
    list = problem(exc);
  }
  const waiting = myChallenges();
  show(
    h("h1", {}, "Lobby"),
    waiting.length
      ? h(
          "p",
          { class: "notice" },
          "Your challenges waiting for an answer: ",
          waiting.map((cid, k) => [k ? ", " : "", h("a", { href: `#/challenges/${cid}` }, cid)]),
        )
      : null,
    await liveGames(),
    h("div", { class: "lobby" }, form, list),
  );
}

// The table creation form's Ambition choices: the expansion, and its objectives with it.
function ambitionFields(ambition) {
  const objectives = h("input", { type: "checkbox", name: "objectives", disabled: true });
  return h(
    "fieldset",
    { class: "choices expansions" },
    h("legend", {}, "Expansion"),
    h(
      "label",
      { class: "choice" },
      h("input", {
        type: "checkbox",
        name: "ambition",
        onchange: (e) => {
          objectives.disabled = !e.target.checked;
          if (!e.target.checked) objectives.checked = false;
        },
      }),
      " Ambition (the Leader and Entrepreneur dice, new factions and tiles)",
    ),
    h("label", { class: "choice" }, objectives, " with objectives (talent counters)"),
    h("p", { class: "muted" }, `Components: ${ambition.components}`),
  );
}

// ------------------------------------------------------------------------------ table

function notYourSeat(gid, seat) {
  return [
    h("h1", {}, "Not your seat"),
    h(
      "p",
      {},
      `This browser holds no token for seat ${seat} of game ${gid}. `,
      "Take a free seat from the lobby, open the invite link the host sent you, or watch the game. ",
      "Was it your seat on another device? Use its \u201cMove to another device\u201d there, or ask the host for a new invite.",
    ),
    h(
      "p",
      {},
      h("a", { class: "button", href: `#/watch/${gid}` }, "Watch this game"),
      " ",
      h("a", { class: "button secondary", href: "#/" }, "Back to the lobby"),
    ),
  ];
}

// 401 on a seat: its token was revoked (the seat moved to another device, or the host made a new
// invite for it)
function readFailed(exc, gid, seat) {
  if (!(exc instanceof ApiError && exc.status === 401 && seat !== null)) return problem(exc);
  return h(
    "div",
    { class: "error", role: "alert", "data-signed-out": seat },
    h(
      "p",
      {},
      `This browser is signed out of seat ${seat}: the seat moved to another device, or the host made a new invite for it. `,
      "To play here again, open a new invite link from the host or a move link from the device that holds the seat.",
    ),
    h("p", {}, h("a", { class: "button secondary", href: `#/watch/${gid}` }, "Watch this game")),
  );
}

function decidingNow(v, game) {
  return Object.entries(v.pending || {})
    .map(([s, k]) => `${seatName(game, Number(s))} (${k.replaceAll("_", " ")})`)
    .join(", ");
}

function waiting(v, game, me) {
  if (me && me.resigned)
    return h(
      "section",
      { class: "waiting resigned", role: "status" },
      h("p", {}, `You resigned in round ${me.resigned.round}: the others play on.`),
      h("p", { class: "muted" }, "Your tableau stays and is scored at the end, but a resigned seat cannot win."),
    );
  const now = decidingNow(v, game);
  return h(
    "section",
    { class: "waiting", role: "status" },
    h("p", {}, "Waiting for the other players…"),
    now ? h("p", { class: "muted" }, "Deciding now: ", now) : null,
  );
}

// The decision panel of a seat's table, drawn again only when the decision changed (the same
// decision keeps its panel, and the person's choices, while the others move).
function drawDecision(panelBox, v, game, seat, submit) {
  const d = v.decision;
  const me = (v.players || []).find((p) => p.seat === seat);
  panelBox.replaceChildren(
    d
      ? decisionPanel(d, (command) => submit(d, command), { where: whereDice(me), player: me, view: v })
      : waiting(v, game, me),
  );
  if (d) {
    const first = panelBox.querySelector("input, button, select");
    if (first && document.activeElement === document.body) first.focus({ preventScroll: true });
  }
}

async function table(gid, seat) {
  const show = shower();
  const token = seat === null ? null : tokenFor(gid, seat);
  if (seat !== null && !token) {
    show(notYourSeat(gid, seat));
    return;
  }
  await loadCatalogue();
  let game = await api(`/games/${gid}`);
  if (show.stale()) return; // the person went on meanwhile: no stream for a page not on screen
  const viewPath = seat === null ? `/games/${gid}/view` : `/games/${gid}/seats/${seat}/view`;
  const streamPath = seat === null ? `/games/${gid}/events/stream` : `/games/${gid}/seats/${seat}/events/stream`;
  let st = tableState();
  const logEl = h("ol", { class: "log", "aria-label": "What happened", reversed: true });
  const top = h("div", {});
  const panelBox = h("div", { class: "panel-box" });
  const clock = seat === null ? null : decisionClock(gid, seat, token, () => refresh());
  const stripBox = h("div", { class: "strip-box" });
  const ownBox = h("div", {});
  const board = h("div", {});
  const objectivesBox = h("div", {});
  const errBox = h("div", {});
  const friendsBox = h("div", { class: "friends" });
  let friendsKey = null;
  const madeLinks = new Map(); // the invite links made on this page, kept across redraws
  const drawFriends = () => {
    // redrawn only when a seat was taken, resigned or the game ended: a link on screen stays there
    const key = JSON.stringify([game.status, game.seats.map((x) => x.claimed), game.resigned || []]);
    if (key === friendsKey) return;
    friendsKey = key;
    const mine = seat !== null && game.seats[seat] && game.seats[seat].host;
    friendsBox.replaceChildren(
      ...[
        mine ? invitePanel(gid, game, token, madeLinks) : null,
        movePanel(gid, game, seat, token),
        leaveControls(gid, game, seat, token, async () => {
          await reloadGame();
          refresh();
        }),
      ].filter(Boolean),
    );
  };
  const reloadGame = async () => {
    try {
      game = await api(`/games/${gid}`);
    } catch {
      return;
    }
    drawFriends();
    if (st.shown) draw();
  };
  show(
    h("h1", { class: "sr" }, seat === null ? "Watching" : "Your table"),
    h(
      "div",
      { class: "game-title" },
      h("span", {}, seat === null ? "Spectating game " : "Game ", h("code", {}, gid)),
      h("a", { href: `#/watch/${gid}`, class: "small-link" }, seat === null ? "" : "spectator view"),
    ),
    top,
    errBox,
    clock ? clock.el : null,
    // a seated person's decision with the opponents at a glance beside it (under it on a phone),
    // then their own side, then the rest: on a phone the first two screens hold all they decide by
    h("div", { class: seat === null ? "" : "play-area" }, panelBox, stripBox),
    objectivesBox,
    ownBox,
    friendsBox,
    board,
    h("details", { class: "events", open: true }, h("summary", {}, "What happened"), logEl),
  );

  const draw = () => {
    const v = st.shown.view;
    top.replaceChildren(header(v, game, st.live));
    objectivesBox.replaceChildren(...[objectivesPanel(v, game)].filter(Boolean));
    const over = v.step === "over";
    if (clock) clock.update(v);
    const me = seat === null ? null : (v.players || []).find((p) => p.seat === seat);
    const key = over || seat === null ? null : (decisionKey(owed(v)) ?? (me && me.resigned ? "resigned" : null));
    if (over) panelBox.replaceChildren(...[scores(v, game)].filter(Boolean));
    else if (seat === null)
      panelBox.replaceChildren(
        h("p", { class: "muted", role: "status" }, "Deciding now: ", decidingNow(v, game) || "nobody"),
      );
    else if (key !== st.decisionKey) drawDecision(panelBox, v, game, seat, submit);
    st = { ...st, decisionKey: key };
    // a kept panel's bag count follows the bag as the others scout: the same number as the header's
    for (const el of panelBox.querySelectorAll("[data-bag]")) el.textContent = String(v.bag);
    if (seat === null) board.replaceChildren(renderBoard(v, game, null));
    else {
      stripBox.replaceChildren(...[opponentStrip(v, game, seat)].filter(Boolean));
      ownBox.replaceChildren(...[ownBoard(v, game, seat)].filter(Boolean));
      board.replaceChildren(opponentBoards(v, game, seat));
    }
    document.title = `${over ? "Game over" : seat !== null && owed(v) ? "Your move" : "Round " + v.round} — Roll for the Galaxy`;
  };
  // the table drawn again when ``next`` shows another view than the one on screen
  const shown = async (next) => {
    const before = st.shown;
    st = next;
    if (st.shown === before) return;
    if (st.shown.view.step === "over" && game.status !== "finished") {
      game = await api(`/games/${gid}`);
      drawFriends();
    }
    draw();
  };

  let inflight = null;
  let again = false;
  const refresh = async () => {
    if (inflight) {
      again = true;
      return inflight;
    }
    inflight = (async () => {
      do {
        again = false;
        try {
          const headers = st.shown ? { "If-None-Match": st.shown.etag } : {};
          const read = await api(viewPath, { token, headers });
          await shown(viewRead(st, read)); // (st as it is now: a turn signal may have come meanwhile)
          errBox.replaceChildren();
        } catch (exc) {
          errBox.replaceChildren(readFailed(exc, gid, seat));
        }
      } while (again);
      inflight = null;
    })();
    return inflight;
  };

  // Each answer to a decision is one command: it names the decision it answers (its decision_id,
  // so that other seats' moves meanwhile do not refuse it) and keeps one command id, so that a
  // resend of the same answer (after a 409, a lost connection, a second press) is applied at most
  // once. A 409 means this seat's decision changed before the command arrived, or (a command with
  // a version) the game moved: when the seat still owes the very decision answered, the answer
  // still stands and is sent again; otherwise the table shows the new decision and says why.
  const commandIds = new Map();
  async function submit(decision, command) {
    const body = commandFor(commandIds, decision, command, newId);
    for (let attempt = 0; ; attempt++) {
      try {
        await api(`/games/${gid}/seats/${seat}/commands`, { method: "POST", token, body });
        break;
      } catch (exc) {
        if (!(exc instanceof ApiError && exc.status === 409)) throw exc;
        // decision-changed names the decision owed now: the stream signals it, no read needed
        const owesNow = exc.problem.current_decision_id;
        if (owesNow !== undefined && owesNow !== decision.decision_id && st.live.state === "live") {
          toast(exc.words);
          return;
        }
        await refresh();
        const now = owed(st.shown.view);
        if (attempt < 5 && now && now.decision_id === decision.decision_id) continue;
        toast(exc.words);
        return;
      }
    }
    // a live stream brings the events the command made and the next turn signal
    if (polls(st)) await refresh();
  }

  let timer = null;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 120);
  };
  // The stream drives the table: the turn signal (a seat stream's `decision` event, right after
  // the events that made the decision pending) carries the seat's view at that version: it is
  // drawn as it came, and the read those events asked for is not needed. Other events (other
  // seats' moves, a spectator's whole feed) ask for one read of the view once they stop coming.
  // The page reads the view every second only while the stream is not live.
  drawFriends();
  await refresh();
  const stream = new Stream(streamPath, {
    token,
    onEvent: (item, kind) => {
      if (kind === "decision") {
        const next = turnSignalled(st, item);
        if (next === st) return;
        clearTimeout(timer);
        errBox.replaceChildren();
        shown(next);
        return;
      }
      if (!item || !item.event) return;
      st = eventSeen(st, item);
      logEl.prepend(h("li", { value: item.seq, title: `event ${item.seq}` }, describe(item.event, game)));
      while (logEl.childElementCount > LOG_KEPT) logEl.lastChild.remove();
      soon();
    },
    onEnd: () => {
      st = streamStatus(st, { state: "ended" });
      refresh();
    },
    onStatus: (s) => {
      st = streamStatus(st, s);
      if (st.shown) top.replaceChildren(header(st.shown.view, game, st.live));
      if (s.state === "live") soon();
    },
  });
  let ticks = 0;
  const poll = setInterval(() => {
    if (polls(st)) refresh();
    tickClocks(main);
    if (clock) clock.tick();
    // a friend sitting down is no event: while a human seat is open, look again every 3 s
    if (++ticks % 3 === 0 && game.status === "active" && game.seats.some((s) => s.kind === "human" && !s.claimed))
      reloadGame();
  }, 1000);
  onLeave(() => {
    stream.close();
    clearInterval(poll);
    clearTimeout(timer);
  });
}

// ------------------------------------------------------------------------------ router

async function route() {
  routeCount += 1;
  for (const fn of cleanup) {
    try {
      fn();
    } catch {
      /* */
    }
  }
  cleanup = [];
  hideToast();
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query] = raw.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "games" && parts[2] === "seats") await table(parts[1], Number(parts[3]));
    else if (parts[0] === "join" && parts[3]) await joinPage(main, parts[1], Number(parts[2]), parts[3]);
    else if (parts[0] === "move" && parts[3]) await movePage(main, parts[1], Number(parts[2]), parts[3]);
    else if (parts[0] === "challenges" && parts[1]) await challengePage(main, parts[1], saveToken, onLeave);
    else if (parts[0] === "watch" && parts[1]) await table(parts[1], null);
    else if (parts[0] === "replay") await replayPage(main, parts[1] || null, onLeave, params);
    else if (parts[0] === "ladders" && parts[1]) await ladderPage(main, parts[1]);
    else if (parts[0] === "ladders") await laddersPage(main);
    else await lobby(params);
  } catch (exc) {
    show(
      h("h1", {}, "Something went wrong"),
      problem(exc),
      h("p", {}, h("a", { href: "#/", class: "button" }, "Back to the lobby")),
    );
  }
  for (const a of document.querySelectorAll("header.top nav a")) {
    a.toggleAttribute("aria-current", a.getAttribute("href") === `#/${parts[0] || ""}`);
  }
}

window.addEventListener("hashchange", route);
route();
