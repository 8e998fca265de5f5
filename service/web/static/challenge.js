// Playing a bot account in the browser: a seat of the new-game form set to "A bot account" makes
// the form a challenge (POST /challenges, no token: the person's one human seat against that
// account and built-in bots). The answer's challenge_secret stays in this browser; the waiting
// page reads the challenge with it every 2 s until the account accepts (then the secret is the
// seat's token and the table opens), declines, or it expires; the person may cancel it.
import { api } from "./api.js";
import { h } from "./ui.js";

const SECRETS = "rfg.challenges";
export const ACCOUNT_ID = /^[0-9a-f]{16}$/;
const POLL_MS = 2000;

function secrets() {
  try {
    return JSON.parse(localStorage.getItem(SECRETS) || "{}");
  } catch {
    return {};
  }
}
function saveSecret(cid, secret) {
  const all = secrets();
  all[cid] = secret;
  localStorage.setItem(SECRETS, JSON.stringify(all));
}
function forget(cid) {
  const all = secrets();
  delete all[cid];
  localStorage.setItem(SECRETS, JSON.stringify(all));
}
export function myChallenges() {
  return Object.keys(secrets());
}

// The new-game form's field for the account a "A bot account" seat challenges.
export function accountField(value = null) {
  return h(
    "label",
    { class: "field" },
    h("span", {}, 'Bot account id, for a seat set to "A bot account" (its author has it)'),
    h("input", {
      name: "account",
      placeholder: "16 hex digits",
      autocomplete: "off",
      spellcheck: "false",
      maxlength: 16,
      value,
    }),
  );
}

// Sends the challenge (the form's body with the account's seat) and opens its waiting page.
export async function challenge(body, saveToken) {
  const c = await api("/challenges", { method: "POST", body });
  if (c.status === "accepted" && c.game_id) {
    // (only built-in bots: started at once)
    const seat = c.seats.findIndex((s) => s.kind === "human");
    saveToken(c.game_id, seat, c.challenge_secret);
    location.hash = `#/games/${c.game_id}/seats/${seat}`;
    return;
  }
  saveSecret(c.challenge_id, c.challenge_secret);
  location.hash = `#/challenges/${c.challenge_id}`;
}

// a decline's reason in words (generic: none given)
const REASONS = {
  later: "later, please",
  "too-fast": "the time control is too fast",
  "too-slow": "the time control is too slow",
  "time-control": "another time control, please",
  rated: "rated games only",
  casual: "casual games only",
  "not-these-bots": "not against these bots",
  "not-now": "not now",
};

const ENDED = {
  declined: "declined your challenge",
  canceled: "— the challenge was canceled",
  expired: "did not answer in time: the challenge expired",
};

// The waiting page of one challenge of this browser's.
export async function challengePage(main, cid, saveToken, onLeave) {
  const secret = secrets()[cid];
  const back = h("p", {}, h("a", { href: "#/", class: "button" }, "Back to the lobby"));
  if (!secret) {
    main.replaceChildren(
      h("h1", {}, "Not your challenge"),
      h("p", {}, `This browser holds no secret for challenge ${cid}: only the browser that made it can follow it.`),
      back,
    );
    return;
  }
  const state = h("p", { class: "challenge-state", role: "status", "aria-live": "polite" }, "Asking…");
  const err = h("div", {});
  const cancel = h(
    "button",
    {
      type: "button",
      class: "secondary",
      onclick: async () => {
        try {
          show(await api(`/challenges/${cid}/cancel`, { method: "POST", token: secret, body: {} }));
        } catch (exc) {
          err.replaceChildren(h("p", { class: "error", role: "alert" }, exc.words || exc.message));
        }
      },
    },
    "Cancel the challenge",
  );
  main.replaceChildren(h("h1", {}, "Challenge"), state, cancel, err, back);
  let timer = null;
  const stop = () => {
    clearTimeout(timer);
    timer = null;
  };
  onLeave(stop);
  function show(c) {
    const who = c.challenged ? `bot account ${c.challenged}` : "the bots";
    const upper = who[0].toUpperCase() + who.slice(1);
    if (c.status === "accepted" && c.game_id) {
      stop();
      const seat = c.seats.findIndex((s) => s.kind === "human");
      saveToken(c.game_id, seat, secret); // the challenge's secret is the seat's token from now on
      forget(cid);
      location.hash = `#/games/${c.game_id}/seats/${seat}`;
      return true;
    }
    if (c.status !== "open") {
      stop();
      forget(cid);
      const why = REASONS[c.reason];
      state.replaceChildren(
        `${upper} ${ENDED[c.status] || `— the challenge is ${c.status}`}`,
        why ? ` (${why})` : "",
        c.text ? `: “${c.text}”.` : ".",
        " Start another game from the lobby.",
      );
      cancel.remove();
      return true;
    }
    const until = c.expires_at ? new Date(c.expires_at).toLocaleTimeString() : "";
    state.replaceChildren(`Waiting for ${who} to accept`, until ? ` (the challenge expires at ${until})` : "", "…");
    return false;
  }
  async function poll() {
    timer = null;
    try {
      if (show(await api(`/challenges/${cid}`, { token: secret }))) return;
      err.replaceChildren();
    } catch (exc) {
      if (exc.status === 401 || exc.status === 403 || exc.status === 404) {
        forget(cid);
        state.replaceChildren("This challenge is gone (decided or expired over an hour ago).");
        cancel.remove();
        return;
      }
      err.replaceChildren(h("p", { class: "error", role: "alert" }, exc.words || exc.message));
    }
    timer = setTimeout(poll, POLL_MS);
  }
  await poll();
}
