// The table: every seat's side of the board (own seat in full), the round's phases, clocks, the
// running and the final scores. Used by the seated player and the spectator alike; `drawTable`
// draws the whole table from one view JSON (GET .../view), for any page that has one.
import {
  h,
  die,
  cardRef,
  cat,
  PHASES,
  PHASE_NAMES,
  FACE_NAMES,
  FACES,
  GOOD_NAMES,
  seatName,
  fmtClock,
  whereDice,
} from "./ui.js";

function dice(list, empty = "none", where = null) {
  return list && list.length
    ? h(
        "span",
        { class: "dice" },
        list.map((d) => die(d, { where: where ? where.get(d.die) : "" })),
      )
    : h("span", { class: "muted" }, empty);
}

// A card at a glance (the catalogue's phases and summary): the phases its powers act in, marked
// with the die faces' abbreviations, a Reassign power and an end-game bonus, then one line of
// what it does. The card itself (tap the name) keeps the full wording.
function icon(cls, letters, words) {
  return h(
    "span",
    { class: `phase-icon ${cls}`, role: "img", "aria-label": words, title: words },
    h("span", { "aria-hidden": "true" }, letters),
  );
}

function phaseIcons(key) {
  const c = cat.cards[key];
  if (!c) return null;
  const icons = (c.phases || []).map((ph) => icon(`phase-${ph}`, FACES[ph], `${PHASE_NAMES[ph]} phase`));
  if (c.development_kind === "reassign") icons.push(icon("reassign", "⇄", "Reassign power, used while assigning"));
  if (c.endgame_bonus) icons.push(icon("endgame", "VP", "End-game bonus"));
  return icons.length ? h("span", { class: "phase-icons" }, icons) : null;
}

function powerLine(key) {
  const c = cat.cards[key];
  return c && c.summary ? h("span", { class: "power-line" }, c.summary) : null;
}

function card(c, goods) {
  return h(
    "li",
    { class: `card card-${c.kind} ${c.color ? "world-" + c.color : ""}` },
    cardRef(
      c.card,
      h("span", { class: "cost", "aria-label": `cost ${c.cost}` }, c.cost),
      h("span", { class: "name" }, c.name),
      c.color && c.kind === "world" ? h("span", { class: "tag" }, GOOD_NAMES[c.color] || c.color) : null,
    ),
    phaseIcons(c.card),
    goods && goods.length ? h("span", { class: "goods" }, "good: ", dice(goods)) : null,
    powerLine(c.card),
  );
}

function stack(kind, st) {
  if (!st) return null;
  const label = kind === "development" ? "Development stack" : "World stack";
  const rest = Math.max(0, st.count - (st.top ? 1 : 0));
  return h(
    "div",
    { class: "stack" },
    h("h4", {}, `${label} (${st.count})`),
    st.top
      ? h(
          "div",
          { class: "top" },
          cardRef(st.top.card, h("span", { class: "cost" }, st.top.cost), " ", st.top.name),
          phaseIcons(st.top.card),
          powerLine(st.top.card),
        )
      : h("div", { class: "muted" }, "empty"),
    st.tiles && st.tiles.length > 1
      ? h(
          "ol",
          { class: "below", start: 2 },
          st.tiles.slice(1).map((t) => h("li", {}, cardRef(t.card, `${t.name} (${t.cost})`))),
        )
      : rest
        ? h("div", { class: "muted" }, `+ ${rest} face down`)
        : null,
    st.dice && st.dice.length ? h("div", {}, "Workers on it: ", dice(st.dice)) : null,
  );
}

function phaseStrip(p, phases, name) {
  const cols = p.columns || {};
  return h(
    "div",
    { class: "strip", role: "group", "aria-label": `${name}: phase strip` },
    PHASES.map((ph) =>
      h(
        "div",
        { class: `col ${phases.includes(ph) ? "on" : ""} ${p.selected === ph ? "sel" : ""}` },
        h("div", { class: "ph" }, PHASE_NAMES[ph], p.selected === ph ? " ★" : ""),
        dice(cols[ph], "·"),
      ),
    ),
    p.dictate && p.dictate.length
      ? h("div", { class: "col dictate" }, h("div", { class: "ph" }, "Dictate"), dice(p.dictate))
      : null,
  );
}

// The seats whose score breakdown the person opened: kept open when the same table is drawn again
// (every event redraws it), closed when the table shows another game or another seat's side.
const openScores = new Set();
let scoresTable = null;

// The running score (the view's players[].score): the total, and its breakdown on tap or click.
export function runningScore(p) {
  const sc = p.score;
  if (!sc) return null;
  const remember = (ev) => {
    if (ev.target.open) openScores.add(p.seat);
    else openScores.delete(p.seat);
  };
  // a click on the summary is remembered at once: the table may be drawn again before the
  // details element's toggle event comes, and would then draw it closed
  const clicked = (ev) => {
    if (ev.currentTarget.parentElement.open) openScores.delete(p.seat);
    else openScores.add(p.seat);
  };
  return h(
    "details",
    { class: "score", "data-score": sc.total, open: openScores.has(p.seat), ontoggle: remember },
    h(
      "summary",
      { title: "Score if the game ended now: show how it adds up", onclick: clicked },
      h("span", { class: "score-total" }, `Score ${sc.total}`),
    ),
    h(
      "ul",
      { class: "breakdown" },
      h("li", {}, `VP chips: ${sc.vp_chips}`),
      h("li", {}, `Tile VP (printed costs): ${sc.tiles}`),
      (sc.bonus_cards || []).map((b) => h("li", { "data-bonus": b.card }, `${b.name} +${b.vp}`)),
      sc.talents ? h("li", {}, `Talent counters: ${sc.talents}`) : null,
      h("li", { class: "muted" }, "(if the game ended now)"),
    ),
  );
}

export function seatPanel(p, view, game, mine) {
  const clock = ((view.clock || {}).seats || []).find((c) => c.seat === p.seat);
  const pending = (view.pending || {})[String(p.seat)];
  const goodsOn = p.goods || {};
  const name = p.name || seatName(game, p.seat);
  const where = mine ? whereDice(p) : null;
  return h(
    "section",
    { class: `seat ${mine ? "mine" : ""}`, "aria-label": name, "data-seat": p.seat },
    h(
      "header",
      {},
      h("h3", {}, mine ? `You — ${name}` : name),
      h("span", { class: "faction" }, p.faction ? p.faction.name : ""),
      h(
        "span",
        { class: "stats" },
        runningScore(p),
        h("span", { class: "stat", title: "Credits" }, `Credits $${p.credits}`),
        h("span", { class: "stat", title: "VP chips" }, `VP chips ${p.vp_chips}`),
        h(
          "span",
          { class: "stat", title: "Tile squares in the tableau: 12 ends the game" },
          `Tableau ${p.tile_squares ?? 0}/12 tiles`,
        ),
        p.talents !== undefined
          ? h(
              "span",
              {
                class: "stat talents",
                "data-talents": p.talents,
                title: "Unused talent counters (Ambition): workers for any phase, 1 VP each at the end",
              },
              `Talents ${p.talents}`,
            )
          : null,
      ),
      pending ? h("span", { class: "pending deciding" }, `deciding: ${pending.replaceAll("_", " ")}`) : null,
      clock && clock.deadline
        ? h("span", { class: "clock", "data-deadline": clock.deadline }, fmtClock(clock.deadline))
        : null,
      clock && clock.abandoned ? h("span", { class: "pending" }, "abandoned (bot plays)") : null,
      p.resigned ? h("span", { class: "pending resigned" }, `resigned in round ${p.resigned.round}`) : null,
      clock && clock.away ? h("span", { class: "pending" }, "away (a bot plays until they are back)") : null,
    ),
    phaseStrip(p, view.phases || [], name),
    p.behind_screen
      ? h("p", { class: "muted" }, `${p.behind_screen} ${p.behind_screen === 1 ? "die" : "dice"} behind the screen`)
      : null,
    mine && (p.talent_counters || []).length
      ? h(
          "p",
          { class: "talent-counters" },
          "Unused talent counters behind your screen: ",
          dice(p.talent_counters.map((t) => ({ die: t, color: "talent" }))),
        )
      : null,
    h(
      "div",
      { class: "zones" },
      h("div", {}, h("h4", {}, `Cup (${(p.cup || []).length})`), dice(p.cup, "empty", where)),
      h("div", {}, h("h4", {}, `Citizenry (${(p.citizenry || []).length})`), dice(p.citizenry, "empty", where)),
      stack("development", (p.construction || {}).development),
      stack("world", (p.construction || {}).world),
    ),
    h(
      "div",
      { class: "tableau" },
      h(
        "div",
        {},
        h("h4", {}, `Worlds (${(p.worlds || []).length})`),
        h(
          "ul",
          { class: "cards" },
          (p.worlds || []).map((c) => card(c, goodsOn[c.card])),
        ),
      ),
      h(
        "div",
        {},
        h("h4", {}, `Developments (${(p.developments || []).length})`),
        h(
          "ul",
          { class: "cards" },
          (p.developments || []).map((c) => card(c)),
        ),
      ),
    ),
  );
}

export function header(view, game, live) {
  const phases = view.phases || [];
  const tpd = view.two_player_die;
  return h(
    "section",
    { class: "round", "aria-label": "Round" },
    h(
      "span",
      {},
      h("b", {}, `Round ${view.round}`),
      " · ",
      view.step === "over" ? "game over" : `now: ${view.step.replaceAll("_", " ")}`,
    ),
    phases.length === 0
      ? h("span", { class: "muted" }, view.step === "over" ? "" : "phases: revealed after every seat has assigned")
      : h(
          "span",
          { class: "phases", "aria-label": "Phases this round" },
          PHASES.map((ph) =>
            h(
              "span",
              { class: `chip ${phases.includes(ph) ? "on" : "off"}` },
              phases.includes(ph) ? "✓ " : "✗ ",
              PHASE_NAMES[ph],
            ),
          ),
        ),
    h(
      "span",
      {},
      `VP chips left ${view.vp_pool} · tiles in the bag `,
      h("span", { class: "bag-count" }, String(view.bag)),
    ),
    tpd ? h("span", {}, `Extra Home die: ${FACE_NAMES[tpd] || tpd}`) : null,
    live ? h("span", { class: `live ${live.state}`, role: "status" }, live.text) : null,
  );
}

// Ambition's objectives in play (the view's public `objectives`): each tile's name, condition (the
// catalogue's words), when it is checked, its reward and who claimed it.
export function objectivesPanel(view, game) {
  const list = view.objectives;
  if (!list || !list.length) return null;
  const words = Object.fromEntries(((cat.ambition && cat.ambition.objectives) || []).map((o) => [o.id, o]));
  const nameOf = (seat) => ((view.players || []).find((p) => p.seat === seat) || {}).name || seatName(game, seat);
  return h(
    "section",
    { class: "objectives", "aria-label": "Objectives" },
    h("h3", {}, "Objectives"),
    h(
      "ul",
      {},
      list.map((o) => {
        const w = words[o.id] || {};
        return h(
          "li",
          { class: `objective ${o.claimed ? "claimed" : "open"}`, "data-objective": o.id },
          h("b", { class: "name" }, o.name),
          w.text ? h("span", { class: "condition" }, w.text) : null,
          h("span", { class: "when" }, w.when || o.check),
          h(
            "span",
            { class: "reward", "data-talents": o.talents },
            `${o.talents} talent ${o.talents === 1 ? "counter" : "counters"}`,
          ),
          o.claimed
            ? h(
                "span",
                { class: "claimed-by", "data-claimed": o.claimed.seats.join(",") },
                `claimed by ${o.claimed.seats.map(nameOf).join(" and ")} in round ${o.claimed.round}`,
              )
            : h("span", { class: "muted" }, "not claimed yet"),
        );
      }),
    ),
  );
}

function bonusWords(s) {
  const named = s.bonus_cards || Object.entries(s.bonuses || {}).map(([card, vp]) => ({ card, name: card, vp }));
  return named.length
    ? named.map((b) => h("span", { class: "bonus", "data-bonus": b.card }, `${b.name} +${b.vp}`))
    : h("span", { class: "muted" }, "none");
}

// When a seat resigned ({round, step}), or null (engine/leaving.py: it is scored, never wins).
const resignedIn = (view, seat) => ((view.players || []).find((p) => p.seat === seat) || {}).resigned || null;

// Who resigned and in which round, in the order they left ("Resigned: Bob in round 4.").
function resignedNote(view, nameOf) {
  const gone = (view.players || []).filter((p) => p.resigned);
  if (!gone.length) return null;
  gone.sort((a, b) => a.resigned.round - b.resigned.round);
  return h(
    "p",
    { class: "resigned-note" },
    "Resigned: ",
    gone.map((p) => `${nameOf(p.seat)} in round ${p.resigned.round}`).join(", "),
    ".",
  );
}

export function scores(view, game) {
  const r = view.result;
  if (!r) return null;
  const rows = [...r.scores].sort((a, b) => b.total - a.total || b.tiebreak - a.tiebreak);
  const nameOf = (seat) => ((view.players || []).find((p) => p.seat === seat) || {}).name || seatName(game, seat);
  // decisions the clock's policy or a bot made for a person (a timeout, or a seat away or handed over)
  const byBot = Object.fromEntries(((view.clock || {}).seats || []).map((c) => [c.seat, c.bot_decisions || 0]));
  const botColumn = Object.values(byBot).some((n) => n > 0);
  // Ambition's unused talent counters, 1 VP each (a column only when the scores count them)
  const talentColumn = rows.some((s) => s.talents !== undefined) || (view.objectives || []).length > 0;
  return h(
    "section",
    { class: "scores", "aria-label": "Final scores" },
    h("h2", {}, "Final scores"),
    r.reason === "abandoned"
      ? h("p", {}, "The game was abandoned: nobody wins. The scores as they stood:")
      : r.reason === "aborted"
        ? h(
            "p",
            {},
            "The game was aborted before its first round ended: no result, nobody wins. The scores as they stood:",
          )
        : h(
            "p",
            {},
            r.reason === "resigned"
              ? "The game ended by resignation. Winner: "
              : `The game ended (${r.reason.replaceAll("_", " ")}). Winner: `,
            r.winners.map(nameOf).join(" and "),
            ".",
          ),
    resignedNote(view, nameOf),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        {},
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Player", "Total", "VP chips", "Tile VP", "Development bonuses", "Tie-break (cup dice + credits)"].map(
              (t) => h("th", { scope: "col" }, t),
            ),
            talentColumn ? h("th", { scope: "col" }, "Talent counters") : null,
            botColumn ? h("th", { scope: "col" }, "Decisions a bot made for them") : null,
          ),
        ),
        h(
          "tbody",
          {},
          rows.map((s) =>
            h(
              "tr",
              { class: r.winners.includes(s.seat) ? "win" : "", "data-seat": s.seat },
              h(
                "th",
                { scope: "row" },
                nameOf(s.seat),
                r.winners.includes(s.seat) ? " — winner" : "",
                resignedIn(view, s.seat) ? ` — resigned in round ${resignedIn(view, s.seat).round}` : "",
              ),
              h("td", { class: "total", "data-label": "Total" }, s.total),
              h("td", { "data-label": "VP chips" }, s.vp_chips),
              h("td", { "data-label": "Tile VP" }, s.tiles),
              h("td", { class: "bonuses", "data-label": "Development bonuses" }, bonusWords(s)),
              h("td", { "data-label": "Tie-break (cup dice + credits)" }, s.tiebreak),
              talentColumn
                ? h("td", { "data-label": "Talent counters", "data-talents": s.talents || 0 }, s.talents || 0)
                : null,
              botColumn
                ? h(
                    "td",
                    { "data-label": "Decisions a bot made for them", "data-bot-decisions": byBot[s.seat] || 0 },
                    byBot[s.seat] || 0,
                  )
                : null,
            ),
          ),
        ),
      ),
    ),
    game && game.game_id
      ? h("p", {}, h("a", { href: `#/replay/${game.game_id}`, class: "button" }, "Watch the replay and verify the log"))
      : null,
  );
}

// A new table (another game, or another seat's side of it) starts with every breakdown closed and
// every opponent's board as the screen's width has it.
function sameTable(view, game, mySeat) {
  const tableKey = `${(game && game.game_id) || view.game_id || ""}/${mySeat ?? "-"}`;
  if (tableKey !== scoresTable) {
    scoresTable = tableKey;
    openScores.clear();
    openBoards.clear();
  }
}

export function renderBoard(view, game, mySeat) {
  sameTable(view, game, mySeat);
  const players = [...view.players];
  if (mySeat !== null && mySeat !== undefined)
    players.sort((a, b) => (a.seat === mySeat ? -1 : b.seat === mySeat ? 1 : a.seat - b.seat));
  return h(
    "div",
    { class: "board" },
    players.map((p) => seatPanel(p, view, game, p.seat === mySeat)),
  );
}

// The opponents at a glance, by the decision panel: each one's faction, running score, credits,
// the phase it chose this round (once revealed) and whether it is deciding now. A name opens that
// opponent's full board below.
export function opponentStrip(view, game, mySeat) {
  const pending = view.pending || {};
  const revealed = (view.phases || []).length > 0;
  const others = view.players.filter((p) => p.seat !== mySeat);
  if (!others.length) return null;
  return h(
    "section",
    { class: "opponents", "aria-label": "Opponents" },
    h(
      "ul",
      {},
      others.map((p) => {
        const name = p.name || seatName(game, p.seat);
        const deciding = pending[String(p.seat)];
        return h(
          "li",
          { class: "opponent", "data-seat": p.seat },
          h(
            "button",
            {
              type: "button",
              class: "opponent-name",
              title: `Show ${name}'s board`,
              onclick: () => showBoard(p.seat),
            },
            name,
          ),
          p.score ? h("span", { class: "stat", "data-score": p.score.total }, `Score ${p.score.total}`) : null,
          h("span", { class: "stat", "data-credits": p.credits, title: "Credits" }, `$${p.credits}`),
          revealed && p.selected
            ? h("span", { class: "chose", "data-phase": p.selected }, `chose ${PHASE_NAMES[p.selected]}`)
            : null,
          deciding ? h("span", { class: "pending" }, `deciding: ${deciding.replaceAll("_", " ")}`) : null,
          h("span", { class: "faction" }, p.faction ? p.faction.name : ""),
        );
      }),
    ),
  );
}

// Whether an opponent's board is open: as the person left it, else open on a wide screen and
// folded on a phone (the strip above tells the essentials).
const openBoards = new Map();
const WIDE = "(min-width: 821px)";

function showBoard(seat) {
  const box = document.querySelector(`details.opponent-board[data-seat='${seat}']`);
  if (!(box instanceof HTMLDetailsElement)) return;
  box.open = true;
  box.scrollIntoView({ block: "start" });
}

// Every opponent's full board, each folded under its name: the seated table's boards after the
// person's own seat.
export function opponentBoards(view, game, mySeat) {
  sameTable(view, game, mySeat);
  const wide = window.matchMedia(WIDE).matches;
  return h(
    "div",
    { class: "board opponent-boards" },
    view.players
      .filter((p) => p.seat !== mySeat)
      .map((p) => {
        const name = p.name || seatName(game, p.seat);
        return h(
          "details",
          {
            class: "opponent-board",
            "data-seat": p.seat,
            open: openBoards.has(p.seat) ? openBoards.get(p.seat) : wide,
            ontoggle: (ev) => {
              if (ev.target.open === wide) openBoards.delete(p.seat);
              else openBoards.set(p.seat, ev.target.open);
            },
          },
          h(
            "summary",
            {
              // remembered at once (see runningScore)
              onclick: (ev) => {
                const open = !ev.currentTarget.parentElement.open;
                if (open === wide) openBoards.delete(p.seat);
                else openBoards.set(p.seat, open);
              },
            },
            `${name}: board`,
          ),
          seatPanel(p, view, game, false),
        );
      }),
  );
}

// The seated person's own side, in full.
export function ownBoard(view, game, mySeat) {
  sameTable(view, game, mySeat);
  const me = view.players.find((p) => p.seat === mySeat);
  return me ? h("div", { class: "board own-board" }, seatPanel(me, view, game, true)) : null;
}

// The whole table from one view JSON: the round bar, the final scores once the game is over, every
// seat's side. `game`: the game resource (GET /games/{id}, for seat names), or null; `seat`: the
// seat whose side is drawn in full first (null for a spectator); `live`: the stream's state, or null.
export function drawTable(view, { game = null, seat = null, live = null } = {}) {
  return h(
    "div",
    { class: "table-view" },
    header(view, game, live),
    objectivesPanel(view, game),
    view.step === "over" ? scores(view, game) : null,
    renderBoard(view, game, seat),
  );
}

export function tickClocks(root) {
  for (const el of root.querySelectorAll("[data-deadline]")) el.textContent = fmtClock(el.dataset.deadline);
}
