// Watching games live: the lobby's list of games under way that anyone may watch, and the new-game
// form's bot pace (bot_pace_seconds: the least time between two bot decisions), so that a person
// can follow a game of bots move by move.
import { api, ApiError } from "./api.js";
import { h } from "./ui.js";

export const MAX_PACE = 5;

// The new-game form's field for the bots' pace.
export function paceField() {
  return h(
    "label",
    { class: "field" },
    h("span", {}, "Seconds between bot moves (0: as fast as they can; 1–2 to follow a game of bots)"),
    h("input", { type: "number", name: "bot_pace", min: 0, max: MAX_PACE, step: 0.5, value: 0, inputmode: "decimal" }),
  );
}

// The pace the form asks for, or null (none, or not a number of seconds within bounds).
export function paceOf(form) {
  const el = form.querySelector("[name=bot_pace]");
  const pace = el ? Number(el.value) : 0;
  return Number.isFinite(pace) && pace > 0 && pace <= MAX_PACE ? pace : null;
}

function who(g) {
  return g.seats
    .map(
      (s) =>
        s.name ||
        (s.kind === "bot"
          ? `${s.bot} bot`
          : s.kind === "external"
            ? s.entrant || "bot"
            : s.claimed
              ? "player"
              : "open seat"),
    )
    .join(", ");
}

// The games under way, newest first, each with a link to watch it.
export async function liveGames(limit = 8) {
  const box = h(
    "section",
    { class: "live-games", "aria-labelledby": "live-title" },
    h("h2", { id: "live-title" }, "Live now: watch a game"),
  );
  try {
    const page = await api(`/games?status=active&limit=${limit}`);
    box.append(
      page.items.length
        ? h(
            "ul",
            { class: "live-list" },
            page.items.map((g) =>
              h(
                "li",
                { "data-game": g.game_id },
                h("a", { class: "button secondary", href: `#/watch/${g.game_id}` }, "Watch"),
                " ",
                h("span", {}, `${g.round ? `Round ${g.round}` : "Setting up"} · ${who(g)}`),
                " ",
                g.bot_pace_seconds
                  ? h("span", { class: "tag" }, `bots move every ${g.bot_pace_seconds} s or more`)
                  : null,
              ),
            ),
          )
        : h(
            "p",
            { class: "muted" },
            "No game is under way. Create one below with bots only and a pace of 1–2 s between their moves to watch them play.",
          ),
    );
  } catch (exc) {
    box.append(h("p", { class: "error", role: "alert" }, exc instanceof ApiError ? exc.words : exc.message));
  }
  return box;
}
