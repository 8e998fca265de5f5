// One panel per decision kind, built from the decision's legal choices (engine.legal as the seat
// view carries it): the person picks among what the rules allow, and the panel builds the command.
import {
  h,
  die,
  dieName,
  dieText,
  cardName,
  cardLabel,
  cardRef,
  tileLabel,
  cat,
  PHASES,
  PHASE_NAMES,
  FACE_NAMES,
  DECISIONS,
} from "./ui.js";

let uid = 0;
const nextId = (p) => `${p}-${++uid}`;

/**
 * @param {string} name
 * @param {any} legend
 * @param {any[]} options
 * @param {{ value?: unknown, onchange?: (value: string) => void, cls?: string }} [opts]
 */
function radios(name, legend, options, { value, onchange, cls = "" } = {}) {
  const gname = nextId(name);
  return h(
    "fieldset",
    { class: `choices ${cls}` },
    h("legend", {}, legend),
    options.map((o) => {
      const id = nextId(name);
      return h(
        "label",
        { for: id, class: "choice" },
        h("input", {
          type: "radio",
          id,
          name: gname,
          value: String(o.value),
          checked: String(o.value) === String(value),
          "data-value": String(o.value),
          onchange: onchange ? () => onchange(o.value) : null,
        }),
        h("span", {}, o.label),
      );
    }),
  );
}
function picked(fs) {
  const el = fs.querySelector("input:checked");
  return el ? el.dataset.value : null;
}
function select(label, options, value, onchange) {
  const id = nextId("sel");
  const s = h(
    "select",
    { id, onchange: onchange ? (e) => onchange(e.target.value) : null },
    options.map((o) => h("option", { value: String(o.value), selected: String(o.value) === String(value) }, o.label)),
  );
  return h("label", { for: id, class: "field" }, h("span", {}, label), s);
}
/**
 * @param {any} legend
 * @param {any[]} options
 * @param {any} checked
 * @param {{ max?: number }} [opts]
 */
function checks(legend, options, checked, { max } = {}) {
  const fs = h(
    "fieldset",
    { class: "choices" },
    h("legend", {}, legend),
    options.map((o) => {
      const id = nextId("chk");
      return h(
        "label",
        { for: id, class: "choice" },
        h("input", { type: "checkbox", id, "data-value": String(o.value), checked: checked.includes(o.value) }),
        h("span", {}, o.label),
      );
    }),
  );
  if (max !== undefined) {
    fs.addEventListener("change", () => {
      const on = fs.querySelectorAll("input:checked").length;
      for (const i of fs.querySelectorAll("input")) i.disabled = !i.checked && on >= max;
    });
    fs.dispatchEvent(new Event("change"));
  }
  return fs;
}
const checkedValues = (fs) => [...fs.querySelectorAll("input:checked")].map((i) => Number(i.dataset.value));

// An ordered list the person rearranges with buttons (keyboard operable).
function orderList(legend, items, render, onchange) {
  const order = [...items];
  const box = h("fieldset", { class: "order" }, h("legend", {}, legend));
  const ol = h("ol", {});
  box.append(ol);
  const draw = () => {
    ol.replaceChildren(
      ...order.map((it, i) =>
        h(
          "li",
          {},
          render(it),
          h(
            "button",
            {
              type: "button",
              class: "small",
              disabled: i === 0,
              "aria-label": "move up",
              onclick: () => {
                [order[i - 1], order[i]] = [order[i], order[i - 1]];
                draw();
                onchange && onchange();
              },
            },
            "↑",
          ),
          h(
            "button",
            {
              type: "button",
              class: "small",
              disabled: i === order.length - 1,
              "aria-label": "move down",
              onclick: () => {
                [order[i + 1], order[i]] = [order[i], order[i + 1]];
                draw();
                onchange && onchange();
              },
            },
            "↓",
          ),
        ),
      ),
    );
  };
  draw();
  return { el: box, order };
}

class Invalid extends Error {}

// where a die lies, in words, from the panel's context (the seat's own side of the view)
const whereIn = (ctx) => (x) => (ctx.where && ctx.where.get(typeof x === "number" ? x : x.die)) || "";
// a tile's two sides, each opening its tile card
const tileRefs = (t) => {
  const tile = cat.tiles[t];
  return tile
    ? h(
        "span",
        { class: "refs" },
        "cards: ",
        cardRef(tile.development.card, tile.development.name),
        " ",
        cardRef(tile.world.card, tile.world.name),
      )
    : null;
};

// -------------------------------------------------------------------------------- per kind

function startTiles(d, ctx) {
  const fs = radios(
    "start",
    "Choose your two start tiles: one goes in as a development, the other as a world",
    d.options.map((o) => ({
      value: o.development,
      label: [
        "Development: ",
        cardRef(o.development_card, cardLabel(o.development_card)),
        " + World: ",
        cardRef(o.world_card, cardLabel(o.world_card)),
      ],
    })),
    { value: d.options[0].development },
  );
  // Ambition, Die Removal: a start tile that removes a die lets the player choose which
  const removals = (d.removals || []).map((r, i) => {
    const at = whereIn(ctx);
    return radios(
      "remove",
      [cardRef(r.card, cardName(r.card)), " removes one of your dice: which one leaves the game?"],
      r.choices.map((x) => ({ value: x, label: [die(x, { where: at(x) }), ` ${dieName(x, at(x))}`] })),
      { value: (d.default_remove || [])[i] ?? r.choices[0], cls: "removal" },
    );
  });
  return {
    body: [fs, removals],
    build: () => {
      const cmd = { kind: "start_tiles", development: Number(picked(fs)) };
      if (removals.length) {
        cmd.remove = removals.map((r) => Number(picked(r)));
        if (new Set(cmd.remove).size !== cmd.remove.length)
          throw new Invalid("Each start tile removes a different die: choose another one.");
      }
      return cmd;
    },
  };
}

function assign(d) {
  const byId = Object.fromEntries(d.dice.map((x) => [x.die, x]));
  // Ambition: a die showing two phases goes to either column (two_phase); unused talent counters
  // stay behind the screen or become workers in any phase (talents)
  const twoPhase = d.two_phase_dice || [];
  const talents = d.talents || [];
  for (const t of talents) byId[t] = { die: t, color: "talent" };
  const state = { selector: null, phase: null, wild: {}, two: {}, talents: {}, uses: [] };
  for (const w of d.wild_dice) state.wild[w] = "explore";
  for (const x of twoPhase) state.two[x.die] = byId[x.die] ? byId[x.die].column : x.phases[0];
  for (const t of talents) state.talents[t] = "";
  const preview = h("div", { class: "preview", "aria-live": "polite" });
  const usesBox = h("div", { class: "uses" });
  const means = d.means.filter((m) => (m.uses ?? 1) > 0);

  const colsNow = () => {
    const col = Object.fromEntries(d.dice.map((x) => [x.die, x.column]));
    for (const [w, to] of Object.entries(state.wild)) col[w] = to;
    for (const [x, to] of Object.entries(state.two)) col[x] = to;
    for (const [t, to] of Object.entries(state.talents)) if (to) col[t] = to;
    if (state.selector !== null && state.phase) col[state.selector] = state.phase;
    const parked = [];
    for (const u of state.uses) {
      if (u.via === "dictate" && u.park !== null) {
        parked.push(u.park);
        delete col[u.park];
      }
      for (const m of u.moves)
        if (m.die !== null && col[m.die] !== undefined) col[m.die] = m.to === "selected" ? state.phase : m.to;
    }
    return { col, parked };
  };
  const redraw = () => {
    const { col, parked } = colsNow();
    preview.replaceChildren(
      h("h4", {}, "Your workers after this assignment"),
      h(
        "div",
        { class: "strip" },
        PHASES.map((ph) =>
          h(
            "div",
            { class: `col ${state.phase === ph ? "sel" : ""}` },
            h("div", { class: "ph" }, PHASE_NAMES[ph], state.phase === ph ? " ★" : ""),
            h(
              "span",
              { class: "dice" },
              Object.entries(col)
                .filter(([, c]) => c === ph)
                .map(([x]) => die(byId[x])),
            ),
          ),
        ),
        parked.length
          ? h(
              "div",
              { class: "col dictate" },
              h("div", { class: "ph" }, "Dictate"),
              parked.map((x) => die(byId[x])),
            )
          : null,
      ),
    );
  };

  const colWords = (x) => `in the ${PHASE_NAMES[x.column] || x.column} column`;
  // workers alike (colour, face, column) are one choice: any of them selects the same way; a wild
  // one stays apart (each is placed on its own)
  const workers = new Map();
  for (const x of d.dice) {
    const key = x.face === "wild" ? `die ${x.die}` : `${x.color}|${x.face}|${x.column}`;
    if (workers.has(key)) workers.get(key).count += 1;
    else workers.set(key, { x, count: 1 });
  }
  const dieLabel = ({ x, count }) => [
    die(x, { where: colWords(x) }),
    count > 1 ? h("span", { class: "count", "aria-hidden": "true" }, ` ×${count}`) : null,
    h("span", { class: "words" }, ` ${dieName(x, colWords(x))}${count > 1 ? ` (${count} alike)` : ""}`),
  ];
  const selFs = radios(
    "selector",
    "1. Pick the worker that selects a phase (its face is ignored)",
    [...workers.values()].map((w) => ({ value: w.x.die, label: dieLabel(w) })),
    {
      cls: "workers",
      onchange: (v) => {
        state.selector = Number(v);
        if (!state.phase) {
          const ph = byId[v].face === "wild" ? state.wild[v] : (state.two[v] ?? byId[v].column);
          setPhase(ph);
        }
        redraw();
      },
    },
  );
  const phaseFs = radios(
    "phase",
    "2. The phase it selects",
    d.phases.map((p) => ({ value: p, label: PHASE_NAMES[p] })),
    {
      onchange: (v) => {
        state.phase = v;
        redraw();
      },
    },
  );
  const setPhase = (ph) => {
    state.phase = ph;
    const inp = phaseFs.querySelector(`input[data-value="${ph}"]`);
    if (inp) inp.checked = true;
  };
  const wildFs = d.wild_dice.map((w, i) =>
    radios(
      "wild",
      [
        byId[w] ? die(byId[w]) : null,
        ` Wild face ${i + 1}`,
        h("span", { class: "words" }, `, the ${dieName(byId[w] || w)}`),
        ": put it in",
      ],
      PHASES.map((p) => ({ value: p, label: PHASE_NAMES[p] })),
      {
        value: "explore",
        cls: "inline",
        onchange: (v) => {
          state.wild[w] = v;
          redraw();
        },
      },
    ),
  );
  const twoFs = twoPhase.map((x) =>
    radios(
      "two",
      [
        byId[x.die] ? die(byId[x.die]) : null,
        h("span", { class: "words" }, ` The ${dieName(byId[x.die] || x.die)}`),
        ": put it in",
      ],
      x.phases.map((p) => ({ value: p, label: PHASE_NAMES[p] })),
      {
        value: state.two[x.die],
        cls: "inline two-phase-choice",
        onchange: (v) => {
          state.two[x.die] = v;
          redraw();
        },
      },
    ),
  );
  const talentFs = talents.map((t, i) =>
    radios(
      "talent",
      [die(byId[t]), ` Talent counter ${i + 1}:`],
      [
        { value: "", label: "keep it behind the screen" },
        ...PHASES.map((p) => ({ value: p, label: `a worker in ${PHASE_NAMES[p]}` })),
      ],
      {
        value: "",
        cls: "inline talent-choice",
        onchange: (v) => {
          state.talents[t] = v;
          redraw();
        },
      },
    ),
  );

  const drawUses = () => {
    usesBox.replaceChildren(
      ...state.uses.map((u, ui) => {
        const others = d.dice.filter((x) => x.die !== state.selector);
        const dieOpts = [
          { value: "", label: "— no move —" },
          ...others.map((x) => ({ value: x.die, label: dieText(x, colWords(x)) })),
        ];
        const rows = u.moves.map((m) =>
          h(
            "div",
            { class: "row" },
            select(
              `Move`,
              dieOpts.filter((o) => o.value === "" || !u.allowed || u.allowed.includes(o.value)),
              m.die ?? "",
              (v) => {
                m.die = v === "" ? null : Number(v);
                redraw();
              },
            ),
            select(
              "to",
              u.targets.map((t) => ({ value: t, label: t === "selected" ? "the phase you select" : PHASE_NAMES[t] })),
              m.to,
              (v) => {
                m.to = v;
                redraw();
              },
            ),
          ),
        );
        return h(
          "fieldset",
          { class: "use" },
          h("legend", {}, u.title),
          u.via === "dictate"
            ? select(
                "Park this worker in the Dictate area",
                [
                  { value: "", label: "— choose —" },
                  ...others.map((x) => ({ value: x.die, label: dieText(x, colWords(x)) })),
                ],
                u.park ?? "",
                (v) => {
                  u.park = v === "" ? null : Number(v);
                  redraw();
                },
              )
            : null,
          rows,
          h(
            "button",
            {
              type: "button",
              class: "small",
              onclick: () => {
                state.uses.splice(ui, 1);
                drawUses();
                redraw();
              },
            },
            "Remove this use",
          ),
        );
      }),
    );
  };
  const addButtons = means.map((m) =>
    h(
      "button",
      {
        type: "button",
        class: "secondary",
        onclick: () => {
          const used = state.uses.filter((u) => u.via === m.via).length;
          if (used >= (m.uses ?? 1)) return;
          if (m.via === "dictate") {
            state.uses.push({
              via: "dictate",
              title: `Dictate (park one worker, then reassign up to ${m.moves_per_use})`,
              park: null,
              targets: [...PHASES],
              moves: Array.from({ length: m.moves_per_use }, () => ({ die: null, to: "explore" })),
            });
          } else {
            const from = m.from || {};
            const allowed = d.dice
              .filter(
                (x) =>
                  (!from.die_colors || from.die_colors.includes(x.color)) &&
                  !(from.exclude_die_colors || []).includes(x.color),
              )
              .map((x) => x.die);
            const targets = m.to === "selected" ? ["selected"] : m.to;
            state.uses.push({
              via: m.via,
              title: `${m.name || m.via}: reassign ${m.count_min === m.count_max ? m.count_min : `${m.count_min} to ${m.count_max}`} worker(s)${m.condition ? ` (${m.condition})` : ""}`,
              allowed,
              targets,
              moves: Array.from({ length: m.count_max }, () => ({ die: null, to: targets[0] })),
            });
          }
          drawUses();
          redraw();
        },
      },
      m.via === "dictate" ? "Use Dictate" : `Use ${m.name || m.via}`,
    ),
  );
  redraw();
  const body = [
    wildFs.length ? h("div", { class: "wilds" }, h("p", {}, "Wild faces: place each die in a column."), wildFs) : null,
    twoFs.length
      ? h(
          "div",
          { class: "two-phases" },
          h("p", {}, "Dice showing two phases: place each in either of its columns."),
          twoFs,
        )
      : null,
    talentFs.length
      ? h(
          "div",
          { class: "talents" },
          h(
            "p",
            {},
            "Talent counters: keep them behind your screen, or make them workers (a worker finishing its task goes back to the supply; one in a phase that does not happen comes back to you).",
          ),
          talentFs,
        )
      : null,
    selFs,
    phaseFs,
    addButtons.length
      ? h(
          "details",
          { class: "powers" },
          h("summary", {}, "Optional: Dictate and Reassign powers"),
          h("p", { class: "muted" }, "Uses apply in order, after your selection."),
          addButtons,
          usesBox,
        )
      : null,
    preview,
  ];
  return {
    body,
    build: () => {
      if (state.selector === null) throw new Invalid("Pick the worker that selects a phase (step 1).");
      if (!state.phase) throw new Invalid("Pick the phase it selects (step 2).");
      const cmd = {
        kind: "assign",
        select: { die: state.selector, phase: state.phase },
        wild: d.wild_dice.map((w) => ({ die: w, to: state.wild[w] })),
      };
      if (twoPhase.length) cmd.two_phase = twoPhase.map((x) => ({ die: x.die, to: state.two[x.die] }));
      const working = talents.filter((t) => state.talents[t]).map((t) => ({ die: t, to: state.talents[t] }));
      if (working.length) cmd.talents = working;
      const uses = [];
      for (const u of state.uses) {
        const moves = u.moves
          .filter((m) => m.die !== null)
          .map((m) => ({ die: m.die, to: m.to === "selected" ? state.phase : m.to }));
        if (u.via === "dictate") {
          if (u.park === null) throw new Invalid("Dictate: choose the worker to park, or remove the Dictate use.");
          uses.push({ via: "dictate", park: u.park, moves });
        } else uses.push({ via: u.via, moves });
      }
      if (uses.length) cmd.reassign = uses;
      return cmd;
    },
  };
}

function explore(d, ctx) {
  const at = whereIn(ctx);
  const abandon = d.abandonable.length
    ? checks(
        "Before scouting, abandon these construction-zone tiles (optional)",
        d.abandonable.map((t) => ({ value: t, label: [tileLabel(t), " ", tileRefs(t)] })),
        [],
      )
    : null;
  const options = [];
  const seen = new Set(); // explorers alike (colour, face, place, stock) are one choice
  d.explorers.forEach((x, i) => {
    const who = dieName(x, at(x));
    const alike = `${who}|${x.stock}`;
    if (seen.has(alike)) return;
    seen.add(alike);
    if (d.tasks.includes("stock"))
      options.push({ value: `stock:${i}`, label: [die(x), ` Stock with a ${who}: +$${x.stock}`] });
    if (d.tasks.includes("scout"))
      options.push({ value: `scout:${i}`, label: [die(x), ` Scout with a ${who}: draw a tile`] });
  });
  let rearrange = null;
  let ol = null;
  if (d.tasks.includes("rearrange") && d.stacks) {
    options.push({ value: "rearrange", label: "Rearrange my construction zone (Advanced Logistics), as set below" });
    const tiles = [
      ...d.stacks.development.map((t) => ({ t, as: "development" })),
      ...d.stacks.world.map((t) => ({ t, as: "world" })),
    ];
    ol = orderList(
      "Advanced Logistics: order (top first) and side of every tile in your construction zone",
      tiles,
      (it) =>
        select(
          tileLabel(it.t),
          [
            { value: "development", label: "development" },
            { value: "world", label: "world" },
          ],
          it.as,
          (v) => {
            it.as = v;
          },
        ),
    );
    rearrange = ol.el;
  }
  if (d.tasks.includes("finish")) options.push({ value: "finish", label: "Done exploring (unused explorers return)" });
  // the first explorer's task is offered first; a rearrangement only on purpose (the present order
  // again is refused)
  const first = options.find((o) => o.value !== "rearrange") || options[0];
  const fs = radios("explore", "What your next explorer does", options, {
    value: first ? first.value : null,
  });
  return {
    body: [
      h(
        "p",
        {},
        "Tiles in the bag: ",
        h("span", { "data-bag": "" }, String(d.bag)),
        `. Each explorer either stocks (gains credits) or scouts (draws a tile); you use them one at a time.`,
      ),
      fs,
      abandon,
      rearrange,
    ],
    build: () => {
      const v = picked(fs);
      if (!v) throw new Invalid("Choose what your explorer does.");
      if (v === "finish") return { kind: "explore", task: "finish" };
      if (v === "rearrange") {
        return {
          kind: "explore",
          task: "rearrange",
          development: ol.order.filter((i) => i.as === "development").map((i) => i.t),
          world: ol.order.filter((i) => i.as === "world").map((i) => i.t),
        };
      }
      const [task, i] = v.split(":");
      const x = d.explorers[Number(i)];
      return task === "stock"
        ? { kind: "explore", task: "stock", explorer: x.die }
        : { kind: "explore", task: "scout", explorer: x.die, abandon: abandon ? checkedValues(abandon) : [] };
    },
  };
}

function placeTiles(d) {
  const items = d.tiles.map((t) => ({
    ...t,
    as: d.sides.includes("development") ? "development" : d.sides[0],
    on_top: false,
  }));
  const ol = orderList("Place every drawn tile (in this order) under its stack", items, (it) =>
    h(
      "span",
      { class: "tile" },
      radios(
        "side",
        `${cardName(it.development)} / ${cardName(it.world)}`,
        d.sides.map((s) => ({
          value: s,
          label:
            s === "development"
              ? ["as development: ", cardRef(it.development, cardLabel(it.development))]
              : ["as world: ", cardRef(it.world, cardLabel(it.world))],
        })),
        {
          value: it.as,
          cls: "inline",
          onchange: (v) => {
            it.as = v;
          },
        },
      ),
      d.on_top
        ? h(
            "label",
            { class: "choice" },
            h("input", {
              type: "checkbox",
              onchange: (e) => {
                it.on_top = e.target.checked;
              },
            }),
            "on top of the stack",
          )
        : null,
    ),
  );
  return {
    body: [ol.el],
    build: () => ({
      kind: "place_tiles",
      placements: ol.order.map((it) =>
        d.on_top && it.on_top ? { tile: it.tile, as: it.as, on_top: true } : { tile: it.tile, as: it.as },
      ),
    }),
  };
}

function abandonOne(d) {
  const fs = radios(
    "abandon",
    "The bag ran out: abandon one construction-zone tile into it",
    d.tiles.map((t) => ({ value: t, label: [tileLabel(t), " ", tileRefs(t)] })),
    { value: d.tiles[0] },
  );
  return { body: [fs], build: () => ({ kind: "abandon_one", tile: Number(picked(fs)) }) };
}

function construct(d, ctx) {
  const at = whereIn(ctx);
  const stackCards = Object.fromEntries(d.stack.map((t) => [t.tile, t]));
  const info = h("div", { class: "preview", "aria-live": "polite" });
  const extras = h("div", {});
  const removes = d.removals.map((r, i) => ({ r, value: d.removable[i % Math.max(1, d.removable.length)] }));
  let returns = [];
  const stackOrder = d.stack_choice
    ? orderList(
        "Dice already on the stack, in the order they are used (the first complete the top tile)",
        d.dice_on_stack,
        (x) => [die(x), ` ${dieName(x)}`],
        () => recompute(),
      )
    : null;
  const order = orderList(
    `Your ${d.kind === "develop" ? "developers" : "settlers"} in the order they go onto the stack`,
    d.workers,
    (w) => [die(w, { where: at(w) }), ` ${dieName(w, at(w))}`],
    () => recompute(),
  );
  const recompute = () => {
    let seq = [...(stackOrder ? stackOrder.order : d.dice_on_stack), ...order.order.map((w) => w.die)];
    const done = [];
    let r = 0;
    const plan = [];
    for (const c of d.completions) {
      if (seq.length < c.cost) break;
      const used = seq.slice(0, c.cost);
      seq = seq.slice(c.cost);
      const rm = c.removal ? removes[r++]?.value : null;
      if (rm !== null && rm !== undefined) seq = seq.filter((x) => x !== rm);
      done.push(c);
      plan.push({ c, used: used.filter((x) => x !== rm) });
    }
    info.replaceChildren(
      h("h4", {}, "What happens"),
      plan.length
        ? h(
            "ul",
            {},
            plan.map((p) => h("li", {}, `Completes ${cardName(p.c.card)} (cost ${p.c.cost})`)),
          )
        : h("p", {}, "No tile completes this time; the workers stay on the stack."),
    );
    returns = plan.map((p) => ({
      p,
      fs: p.c.returns_max
        ? checks(
            `${cardName(p.c.card)}: send up to ${p.c.returns_max} of its dice to the cup instead of the Citizenry`,
            p.used.map((x) => ({ value: x, label: dieText(x, at(x)) })),
            [],
            { max: p.c.returns_max },
          )
        : null,
    }));
    extras.replaceChildren(...returns.map((x) => x.fs).filter(Boolean));
  };
  const removeEls = removes.map((rm) =>
    select(
      `${cardName(rm.r.card)} removes one of your dice when it completes:`,
      d.removable.map((x) => ({
        value: x,
        label: dieText(x, at(x) || (order.order.some((w) => w.die === x) ? "this phase's worker" : "")),
      })),
      rm.value,
      (v) => {
        rm.value = Number(v);
        recompute();
      },
    ),
  );
  recompute();
  // Ambition: optional discounts (Terraforming Specialists, Contact Specialist) on a stack tile,
  // applied just before it completes; some cost credits, some return one of the listed dice
  const discounts = (d.discounts || []).map((x) => {
    const on = h("input", { type: "checkbox", "data-via": x.via, "data-tile": x.tile });
    const pick = x.dice
      ? select(
          "returning",
          x.dice.map((y) => ({ value: y, label: dieText(y, at(y)) })),
          x.dice[0],
          null,
        )
      : null;
    return {
      x,
      on,
      pick,
      el: h(
        "div",
        { class: "row discount" },
        h(
          "label",
          { class: "choice" },
          on,
          ` ${cardName(x.via)}: ${cardName(x.card)} costs ${x.discount} less${x.pay ? ` (pay $${x.pay})` : ""}`,
        ),
        pick,
      ),
    };
  });
  return {
    body: [
      h(
        "p",
        {},
        "Stack, top first: ",
        d.stack.length
          ? d.stack.map((t, i) => [i ? " → " : "", cardRef(t.card, `${cardName(t.card)} (${t.cost})`)])
          : "empty",
        d.dice_on_stack.length ? [" · already on it: ", d.dice_on_stack.map((x) => die(x))] : null,
      ),
      stackOrder ? stackOrder.el : null,
      order.el,
      removeEls,
      discounts.length
        ? h(
            "fieldset",
            { class: "choices discounts" },
            h("legend", {}, "Optional: make a tile cheaper"),
            discounts.map((x) => x.el),
          )
        : null,
      info,
      extras,
    ],
    build: () => {
      const cmd = { kind: d.kind, order: order.order.map((w) => w.die), remove: removes.map((r) => r.value) };
      if (new Set(cmd.remove).size !== cmd.remove.length) throw new Invalid("Choose a different die for each removal.");
      const ret = returns.map((x) => (x.fs ? checkedValues(x.fs) : []));
      if (ret.some((x) => x.length)) cmd.returns = ret;
      if (stackOrder) cmd.stack_order = [...stackOrder.order];
      const chosen = discounts
        .filter((x) => x.on.checked)
        .map((x) => {
          const one = { tile: x.x.tile, via: x.x.via };
          if (x.pick) one.die = Number(x.pick.querySelector("select").value);
          return one;
        });
      if (chosen.length) cmd.discounts = chosen;
      void stackCards;
      return cmd;
    },
  };
}

function produce(d, ctx) {
  const at = whereIn(ctx);
  const slots = d.worlds.flatMap((w) => Array.from({ length: w.room }, () => w.world));
  const rows = Array.from({ length: d.count }, (_, i) => ({ die: d.producers[i].die, world: slots[i] }));
  const worldOpts = d.worlds.map((w) => ({
    value: w.world,
    label: `${cardName(w.world)} (${w.color}, room ${w.room})`,
  }));
  const prodOpts = d.producers.map((x) => ({ value: x.die, label: dieText(x, at(x)) }));
  const body = [
    h("p", {}, `Put exactly ${d.count} good(s) on your worlds; unused producers return to the cup.`),
    rows.map((r, i) =>
      h(
        "div",
        { class: "row" },
        select(`Good ${i + 1}: producer`, prodOpts, r.die, (v) => {
          r.die = Number(v);
        }),
        select("on world", worldOpts, r.world, (v) => {
          r.world = v;
        }),
      ),
    ),
  ];
  return {
    body,
    build: () => {
      if (new Set(rows.map((r) => r.die)).size !== rows.length)
        throw new Invalid("Each producer makes one good: choose different dice.");
      for (const w of d.worlds)
        if (rows.filter((r) => r.world === w.world).length > w.room)
          throw new Invalid(`${cardName(w.world)} has room for ${w.room} good(s) only.`);
      return { kind: "produce", goods: rows.map((r) => ({ die: r.die, world: r.world })) };
    },
  };
}

function ship(d, ctx) {
  const at = whereIn(ctx);
  const rows = Array.from({ length: d.count }, (_, i) => ({
    shipper: d.shippers[i].die,
    good: d.goods[i].die,
    action: d.actions[0],
    flags: {},
  }));
  const shipOpts = d.shippers.map((x) => ({ value: x.die, label: dieText(x, at(x)) }));
  const goodOpts = d.goods.map((g) => ({
    value: g.die,
    label: `${dieText(g)} on ${cardName(g.world)} — trade $${g.trade}, consume ${g.consume_vp.join("/")} VP`,
  }));
  const body = [
    h("p", {}, `Ship exactly ${d.count} good(s): trade for credits or consume for VP.`),
    rows.map((r, i) =>
      h(
        "fieldset",
        { class: "use" },
        h("legend", {}, `Shipment ${i + 1}`),
        select("Shipper", shipOpts, r.shipper, (v) => {
          r.shipper = Number(v);
        }),
        select("Good", goodOpts, r.good, (v) => {
          r.good = Number(v);
        }),
        radios(
          "action",
          "Action",
          d.actions.map((a) => ({ value: a, label: a === "trade" ? "Trade (credits)" : "Consume (VP)" })),
          {
            value: r.action,
            cls: "inline",
            onchange: (v) => {
              r.action = v;
            },
          },
        ),
        (d.options || []).map((o) =>
          h(
            "label",
            { class: "choice", title: o.help },
            h("input", {
              type: "checkbox",
              onchange: (e) => {
                r.flags[o.option] = e.target.checked;
              },
            }),
            ` ${o.option} (${o.actions.join("/")} only): ${o.help || ""}`,
          ),
        ),
      ),
    ),
  ];
  return {
    body,
    build: () => {
      if (new Set(rows.map((r) => r.shipper)).size !== rows.length)
        throw new Invalid("Each shipper ships one good: choose different shippers.");
      if (new Set(rows.map((r) => r.good)).size !== rows.length)
        throw new Invalid("Each good can be shipped once: choose different goods.");
      return {
        kind: "ship",
        tasks: rows.map((r) => {
          const t = { shipper: r.shipper, good: r.good, action: r.action };
          for (const o of d.options || []) if (r.flags[o.option] && o.actions.includes(r.action)) t[o.option] = true;
          return t;
        }),
      };
    },
  };
}

function manage(d, ctx) {
  const at = whereIn(ctx);
  const recruit = checks(
    `Recruit exactly ${d.recruit_count} dice from your Citizenry into your cup ($1 each; you have $${d.credits})`,
    d.citizenry.map((x) => ({ value: x.die, label: dieText(x) })),
    d.citizenry.slice(0, d.recruit_count).map((x) => x.die),
    { max: d.recruit_count },
  );
  const recall = checks(
    "Recall to your cup (optional): developers, settlers and goods",
    d.recallable.map((x) => ({ value: x.die, label: dieText(x, at(x)) })),
    d.must_recall && d.recallable.length ? [d.recallable[0].die] : [],
  );
  return {
    body: [
      d.recruit_count
        ? recruit
        : h("p", {}, d.citizenry.length ? "Nothing to recruit (no credits)." : "Your Citizenry is empty."),
      d.recallable.length ? recall : null,
      d.must_recall ? h("p", { class: "warn" }, "Your cup would be empty: recall at least one die.") : null,
      h("p", { class: "muted" }, `Dice in your cup: ${Array.isArray(d.cup) ? d.cup.length : d.cup}`),
    ],
    build: () => {
      const r = checkedValues(recruit);
      if (r.length !== d.recruit_count)
        throw new Invalid(`Recruit exactly ${d.recruit_count} dice (you must recruit as many as you can afford).`);
      return { kind: "manage", recruit: r, recall: checkedValues(recall) };
    },
  };
}

// Ambition, Psi-Crystal Forecasters: with the screens lifted, keep the selected phase or move the
// phase selection die to another one.
function forecast(d, ctx) {
  const nameOf = (seat) => {
    const p = ((ctx.view && ctx.view.players) || []).find((q) => q.seat === Number(seat));
    return (p && p.name) || `Seat ${seat}`;
  };
  const others = Object.entries(d.others || {});
  const fs = radios(
    "forecast",
    "Your phase selection die selects",
    d.phases.map((p) => ({
      value: p,
      label: p === d.selected ? `${PHASE_NAMES[p]} (keep your selection)` : `${PHASE_NAMES[p]} (move it here)`,
    })),
    { value: d.selected },
  );
  return {
    body: [
      h(
        "p",
        {},
        `You selected ${PHASE_NAMES[d.selected]}. `,
        others.length
          ? [
              "The others selected: ",
              others.map(([seat, p]) => `${nameOf(seat)} ${PHASE_NAMES[p] || p}`).join(", "),
              ".",
            ]
          : null,
        d.two_player_die ? ` The spare Home die shows ${FACE_NAMES[d.two_player_die] || d.two_player_die}.` : null,
      ),
      fs,
    ],
    build: () => ({ kind: "forecast", phase: picked(fs) || d.selected }),
  };
}

// A power that buys VP chips at the end of Ship: how much to spend, in one payment.
function buyVp(d) {
  const step = Math.max(1, Number((d.rate || {}).credits) || 1);
  const id = nextId("spend");
  const input = h("input", { type: "number", id, name: "spend", min: 0, max: d.spend_max, step, value: 0 });
  const first = (d.other_powers || []).length
    ? h(
        "label",
        { class: "choice" },
        h("input", { type: "checkbox", name: "first", checked: true }),
        " before my other powers of the end of Ship",
      )
    : null;
  return {
    body: [
      h(
        "p",
        {},
        `${d.power ? cardName(d.power) + ": " : ""}${(d.rate || {}).vp} VP chip(s) for every $${step}; you have $${d.credits}.`,
      ),
      h("label", { for: id, class: "field" }, h("span", {}, `Credits to spend ($0 to $${d.spend_max})`), input),
      first,
    ],
    build: () => {
      const spend = Number(input.value);
      if (!Number.isInteger(spend) || spend < 0 || spend > d.spend_max || spend % step)
        throw new Invalid(`Spend a multiple of $${step} from $0 to $${d.spend_max}.`);
      const cmd = { kind: "buy_vp", spend };
      if (first) cmd.first = first.querySelector("input").checked;
      return cmd;
    },
  };
}

function fallback(d) {
  const ta = h("textarea", { rows: 6, "aria-label": "command as JSON" }, JSON.stringify({ kind: d.kind }, null, 1));
  return { body: [h("pre", {}, JSON.stringify(d, null, 1)), ta], build: () => JSON.parse(ta.value) };
}

const CONFIRM = {
  start_tiles: "Confirm start tiles",
  assign: "Confirm assignment",
  explore: "Confirm this explorer",
  place_tiles: "Confirm placement",
  abandon_one: "Confirm abandoning",
  develop: "Confirm developers",
  settle: "Confirm settlers",
  produce: "Confirm production",
  ship: "Confirm shipping",
  manage: "Confirm recruiting",
  forecast: "Confirm my phase",
  buy_vp: "Confirm",
};
const BUILDERS = {
  start_tiles: startTiles,
  assign,
  explore,
  place_tiles: placeTiles,
  abandon_one: abandonOne,
  develop: construct,
  settle: construct,
  produce,
  ship,
  manage,
  forecast,
  buy_vp: buyVp,
};

// The panel for ``d``; ``submit(command)`` sends it and resolves when done (throws ApiError).
// ``ctx.where``: where each of the seat's dice lies, in words (ui.whereDice of its own side);
// ``ctx.view``: the seat's view (the other seats' names).
// Every panel works alike: the person chooses, then confirms with the one primary button.
export function decisionPanel(d, submit, ctx = {}) {
  const error = h("p", { class: "error", role: "alert", "aria-live": "assertive" });
  let busy = false;
  const send = async (cmd) => {
    if (busy) return;
    busy = true;
    error.textContent = "";
    panel.classList.add("busy");
    try {
      await submit(cmd);
    } catch (exc) {
      error.textContent = exc.words || exc.message;
    } finally {
      busy = false;
      panel.classList.remove("busy");
    }
  };
  const spec = (BUILDERS[d.kind] || fallback)(d, ctx);
  // help for a person who knows the board game (the decision's own help is written for programs)
  const help = DECISIONS[d.kind] && DECISIONS[d.kind].help;
  const go = h("button", { type: "submit", class: "primary" }, CONFIRM[d.kind] || "Confirm");
  const panel = h(
    "form",
    {
      class: "decision",
      "data-kind": d.kind,
      "aria-labelledby": "decision-title",
      onsubmit: (e) => {
        e.preventDefault();
        let cmd;
        try {
          cmd = spec.build();
        } catch (exc) {
          error.textContent = exc.message;
          return;
        }
        send(cmd);
      },
    },
    h("h2", { id: "decision-title" }, (DECISIONS[d.kind] && DECISIONS[d.kind].title) || "Your decision"),
    help ? h("details", { class: "help" }, h("summary", {}, "Rules help"), h("p", {}, help)) : null,
    spec.body,
    error,
    go,
  );
  return panel;
}
