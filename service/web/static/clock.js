// The seat's decision clock by the decision panel: the countdown of the decision it owes, a warning
// when a quarter of the per-decision time is left (shown, and announced through an aria-live
// region), and, while the seat is away (it timed out the table's number of times in a row, so a bot
// plays it), the "I'm back" button (POST /games/{id}/seats/{n}/back). Also the New game form's
// choice of what those timeouts do (`hand_over`).
import { api } from "./api.js";
import { h, fmtClock } from "./ui.js";

// The decision clock of `seat` in game `gid`: `el` goes by the decision panel, `update(view)` after
// every view, `tick()` every second or so. `onBack()` runs after the seat came back.
export function decisionClock(gid, seat, token, onBack) {
  const count = h("span", { "data-deadline": "" });
  const countdown = h("p", { class: "decision-clock", "data-decision-clock": "", hidden: true }, "Your clock: ", count);
  // the live region stays on the page; the warning is put into it (and announced) when it starts
  const region = h("div", { class: "clock-warning-region", "aria-live": "assertive" });
  const err = h("div", {});
  const awayBox = h("div", {});
  const el = h("div", { class: "decision-clock-box" }, countdown, region, awayBox);
  let mine = null; // the seat's clock in the last view
  let per = 0; // the table's per-decision time, ms
  let awayKey = null;

  const back = async (button) => {
    button.disabled = true;
    err.replaceChildren();
    try {
      await api(`/games/${gid}/seats/${seat}/back`, { method: "POST", token, body: {} });
      await onBack();
    } catch (exc) {
      err.replaceChildren(h("p", { class: "error", role: "alert" }, exc.words || exc.message));
    } finally {
      button.disabled = false;
    }
  };

  const tick = () => {
    const dl = mine && !mine.away ? mine.deadline : null;
    countdown.hidden = !dl;
    count.dataset.deadline = dl || "";
    count.textContent = dl ? fmtClock(dl) : "";
    const left = dl ? new Date(dl).getTime() - Date.now() : Infinity;
    const warn = per > 0 && left > 0 && left <= per / 4;
    countdown.classList.toggle("hurry", warn);
    if (warn && !region.firstChild)
      region.replaceChildren(
        h(
          "p",
          { class: "clock-warning", role: "alert", "data-clock-warning": "" },
          "Hurry: a quarter of your time is left. When it runs out, the table plays this decision for you.",
        ),
      );
    else if (!warn && region.firstChild) region.replaceChildren();
  };

  const update = (view) => {
    const clock = view.clock || {};
    per = Math.round(((clock.time_control || {}).per_decision || 0) * 1000);
    mine = view.step === "over" ? null : (clock.seats || []).find((c) => c.seat === seat) || null;
    const away = Boolean(mine && mine.away);
    const key = away ? String(mine.away_at) : null;
    if (key !== awayKey) {
      awayKey = key;
      err.replaceChildren();
      if (away) {
        const button = h("button", { type: "button", class: "primary", "data-action": "back" }, "I'm back");
        button.addEventListener("click", () => back(button));
        awayBox.replaceChildren(
          h(
            "section",
            { class: "away", role: "status", "aria-label": "You are away" },
            h("h2", {}, "You are away"),
            h(
              "p",
              {},
              `Your time ran out ${clock.abandon_after || "several"} times in a row, so a bot plays your seat now. `,
              "Press \u201cI'm back\u201d to play on yourself.",
            ),
            button,
            err,
          ),
        );
      } else awayBox.replaceChildren();
    }
    tick();
  };

  return { el, update, tick };
}

// The New game form's choice, shown while a clock is set: what the table does with a seat whose time
// ran out 3 times in a row. Read it with `handOver(form)`.
export function handOverField(form) {
  const field = h(
    "fieldset",
    { class: "hand-over", hidden: true },
    h("legend", {}, "When a player's time runs out 3 times in a row"),
    h(
      "label",
      { class: "choice" },
      h("input", { type: "radio", name: "hand_over", value: "away", checked: true }),
      " a bot plays for them until they press \u201cI'm back\u201d",
    ),
    h(
      "label",
      { class: "choice" },
      h("input", { type: "radio", name: "hand_over", value: "hand_over" }),
      " a bot takes their seat for good",
    ),
  );
  form.addEventListener("input", () => {
    field.hidden = !(Number(form.querySelector("[name=per_decision]").value) > 0);
  });
  return field;
}

export function handOver(form) {
  const picked = form.querySelector("[name=hand_over]:checked");
  return Boolean(picked && picked.value === "hand_over");
}
