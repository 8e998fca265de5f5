// Playing with friends: the host's "Invite a friend" links, the page an invite link opens (a name,
// then the seat), and leaving a game (abort, resign, abandon). Invite codes travel only in the URL
// fragment (#/join/<game>/<seat>/<code>), which a browser never sends to a server.
import { api, ApiError, saveToken } from "./api.js";
import { h, toast } from "./ui.js";

const NAME_KEY = "rfg.name";

export function lastName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch {
    return "";
  }
}
export function rememberName(name) {
  try {
    if (name) localStorage.setItem(NAME_KEY, name);
  } catch {
    /* private mode */
  }
}

function words(exc) {
  return exc instanceof ApiError ? exc.words : String(exc.message || exc);
}

// A name field as the server checks it: 1-24 characters once trimmed.
export function nameField(id, required = false, value = lastName()) {
  return h(
    "label",
    { class: "field" },
    h("span", {}, required ? "Your name (the other players see it)" : "Your name (the other players see it; optional)"),
    h("input", {
      type: "text",
      id,
      name: "name",
      maxlength: 24,
      required,
      autocomplete: "nickname",
      value,
      placeholder: "e.g. Ada",
    }),
  );
}

// The host's panel: one row per human seat but the host's own, each with a link to send and a
// copy button. A claimed seat gets "New invite" (asked twice): its player is signed out and the
// new link brings them back, under the same name (a friend who lost their browser storage).
function linkOut(out, link, seat, label, note, focus = true) {
  const input = h("input", {
    type: "text",
    readonly: true,
    value: link,
    class: "invite-link",
    "aria-label": label,
    "data-seat": seat,
  });
  const copy = h(
    "button",
    {
      type: "button",
      class: "secondary",
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(link);
          toast("Link copied. It works once.");
        } catch {
          toast("Select the link and copy it (Ctrl+C); it works once.");
        }
      },
    },
    "Copy link",
  );
  out.replaceChildren(input, " ", copy, h("p", { class: "muted" }, note));
  if (focus) input.select();
}

// ``made`` (seat -> [link, note]) keeps the links made on this page across redraws of the panel,
// until their seat is claimed: a re-invited seat is open again, which redraws the panel.
export function invitePanel(gid, game, token, made = new Map()) {
  const seats = (game.seats || []).filter((s) => s.kind === "human" && !s.host);
  if (!seats.length || game.status !== "active") return null;
  const rows = seats.map((s) => {
    const who = s.name || "a friend";
    const out = h(
      "div",
      { class: "invite-out" },
      s.invited
        ? h("span", { class: "muted" }, "An invite link was made for this seat (making a new one replaces it).")
        : null,
    );
    if (s.claimed) made.delete(s.seat);
    else if (made.has(s.seat)) linkOut(out, ...made.get(s.seat), false);
    const make = async () => {
      try {
        const inv = await api(`/games/${gid}/seats/${s.seat}/invite`, {
          method: "POST",
          token,
          body: s.claimed ? { replace: true } : {},
        });
        const link = new URL(inv.link, location.origin).href;
        const shown = [
          link,
          s.seat,
          `Invite link for seat ${s.seat}`,
          s.claimed
            ? `${who} was signed out of this seat; only this link takes it back, once, under the same name.`
            : "Only this link takes the seat, once; the lobby cannot.",
        ];
        made.set(s.seat, shown);
        linkOut(out, ...shown);
        try {
          await navigator.clipboard.writeText(link);
          toast("Link copied: send it to your friend.");
        } catch {
          /* the person copies it */
        }
      } catch (exc) {
        out.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
      }
    };
    let button;
    if (s.claimed) {
      const question = `Sign ${who} out of seat ${s.seat} and make a new invite link for them?`;
      button = h(
        "button",
        {
          type: "button",
          class: "secondary",
          "data-invite": s.seat,
          onclick: () => {
            const sure = h(
              "span",
              { class: "confirm", role: "group", "aria-label": question },
              question,
              " ",
              h(
                "button",
                {
                  type: "button",
                  class: "primary",
                  "data-reinvite": s.seat,
                  onclick: () => {
                    sure.replaceWith(button);
                    make();
                  },
                },
                "Yes, new invite",
              ),
              " ",
              h("button", { type: "button", class: "secondary", onclick: () => sure.replaceWith(button) }, "No"),
            );
            button.replaceWith(sure);
          },
        },
        "New invite",
      );
    } else {
      button = h(
        "button",
        { type: "button", class: "primary", onclick: make, "data-invite": s.seat },
        s.invited ? "New invite link" : "Invite a friend",
      );
    }
    return h(
      "li",
      { "data-seat": s.seat },
      h("span", {}, s.claimed ? `Seat ${s.seat}: ${who}` : `Seat ${s.seat}: open`),
      " ",
      button,
      out,
    );
  });
  const local = /^(localhost|127\.|\[::1\])/.test(location.hostname);
  return h(
    "section",
    { class: "invites", "aria-labelledby": "invite-title" },
    h("h2", { id: "invite-title" }, "Invite a friend"),
    h(
      "p",
      { class: "muted" },
      "Make a link for an open seat and send it; your friend opens it, types a name and sits down. A friend who lost their seat (a new browser, cleared storage) gets back in with a new invite.",
    ),
    local
      ? h(
          "p",
          { class: "note", role: "note" },
          `This page is open at ${location.host}, this machine's own address: a link made here works only on this machine. `,
          "For a friend on another machine, open this page by the address they can reach (README: Hosting: letting friends in), then make the link.",
        )
      : null,
    h("ul", { class: "invite-list" }, rows),
  );
}

// The seat holder's "Move to another device": a one-time link (10 minutes); the device that
// opens it takes the seat and this one is signed out then.
export function movePanel(gid, game, seat, token) {
  if (game.status !== "active" || seat === null || !token) return null;
  const me = game.seats[seat] || {};
  if (me.kind !== "human") return null;
  const out = h("div", { class: "move-out" });
  const make = async () => {
    try {
      const mv = await api(`/games/${gid}/seats/${seat}/move`, { method: "POST", token, body: {} });
      linkOut(
        out,
        new URL(mv.link, location.origin).href,
        seat,
        "Move link for your seat",
        "Open this link on your other device within 10 minutes; it works once, and this browser is signed out of the seat when it is used.",
      );
    } catch (exc) {
      out.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
    }
  };
  return h(
    "details",
    { class: "move" },
    h("summary", {}, "Move to another device"),
    h("p", { class: "muted" }, "Play this seat on your phone or another browser: make a link and open it there."),
    h("button", { type: "button", class: "secondary", onclick: make, "data-move": seat }, "Make a move link"),
    out,
  );
}

// What a move link opens: the seat moves to this browser with one press.
export async function movePage(main, gid, seat, code) {
  const err = h("div", {});
  const form = h(
    "form",
    {
      class: "join",
      "aria-labelledby": "move-title",
      onsubmit: async (e) => {
        e.preventDefault();
        err.replaceChildren();
        try {
          const c = await api(`/games/${gid}/seats/${seat}/claim`, { method: "POST", body: { move: code } });
          saveToken(gid, seat, c.token);
          history.replaceState(null, "", `#/games/${gid}/seats/${seat}`); // the used code leaves the address bar
          window.dispatchEvent(new HashChangeEvent("hashchange"));
        } catch (exc) {
          err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
        }
      },
    },
    h("h1", { id: "move-title" }, "Move your seat here"),
    h(
      "p",
      {},
      `Seat ${seat} of game `,
      h("code", {}, gid),
      " moves to this browser; the device that made the link is signed out of it.",
    ),
    h("button", { type: "submit", class: "primary" }, "Move my seat here"),
    err,
  );
  main.replaceChildren(form);
}

// What an invite link opens: the game's seats, a name, and the seat taken with the code.
export async function joinPage(main, gid, seat, code) {
  const err = h("div", {});
  let game = null;
  try {
    game = await api(`/games/${gid}`);
  } catch (exc) {
    err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
  }
  const host = game && game.seats.find((s) => s.host);
  const mine = game && game.seats[seat];
  // The game's public resource says whether the seat is still open (never a code or a token):
  // a used link or a finished game says so before anyone types a name.
  const closed = !game
    ? null
    : game.status !== "active"
      ? [
          "This game is over",
          "The game this link invited you to has ended, so its seats can no longer be taken. You can watch how it went.",
          h("a", { class: "button", href: `#/replay/${gid}` }, "Watch the replay"),
        ]
      : mine && mine.claimed && !mine.invited
        ? [
            "This invite link was used", // (a re-invited seat is claimed and invited: its new link works)
            `Seat ${seat} of this game was taken already (an invite link works once). If it was yours and you lost it, ask the host for a new link.`,
            h("a", { class: "button", href: `#/watch/${gid}` }, "Watch this game"),
          ]
        : mine && mine.kind !== "human"
          ? [
              "This seat is not open",
              `Seat ${seat} of this game is played by a bot. Ask the host for the right link.`,
              h("a", { class: "button", href: `#/watch/${gid}` }, "Watch this game"),
            ]
          : null;
  if (closed) {
    main.replaceChildren(
      h(
        "section",
        { class: "join join-closed", "aria-labelledby": "join-title" },
        h("h1", { id: "join-title" }, closed[0]),
        h("p", {}, closed[1]),
        h("p", {}, closed[2], " ", h("a", { class: "button secondary", href: "#/" }, "Back to the lobby")),
      ),
    );
    return;
  }
  const form = h(
    "form",
    {
      class: "join",
      "aria-labelledby": "join-title",
      onsubmit: async (e) => {
        e.preventDefault();
        err.replaceChildren();
        const name = form.querySelector("[name=name]").value.trim();
        try {
          const c = await api(`/games/${gid}/seats/${seat}/claim`, { method: "POST", body: { name, invite: code } });
          saveToken(gid, seat, c.token);
          rememberName(name);
          history.replaceState(null, "", `#/games/${gid}/seats/${seat}`); // the used code leaves the address bar
          window.dispatchEvent(new HashChangeEvent("hashchange"));
        } catch (exc) {
          err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc)));
        }
      },
    },
    h("h1", { id: "join-title" }, "You are invited"),
    h(
      "p",
      {},
      host && host.name
        ? `${host.name} invites you to seat ${seat} of game `
        : `You are invited to seat ${seat} of game `,
      h("code", {}, gid),
      ".",
    ),
    game
      ? h(
          "p",
          { class: "muted" },
          `${game.players} players: `,
          game.seats
            .map(
              (s) =>
                s.name ||
                (s.kind === "bot"
                  ? `${s.bot} bot`
                  : s.kind === "external"
                    ? s.entrant || "bot"
                    : s.seat === seat
                      ? "you"
                      : "a friend"),
            )
            .join(", "),
          ".",
        )
      : null,
    nameField("join-name", true),
    h("button", { type: "submit", class: "primary" }, "Take my seat"),
    err,
  );
  main.replaceChildren(form);
  form.querySelector("[name=name]").focus();
}

// Abort (a seat of a challenge's game in its first round), resign (the seat holder) and abandon
// (the host), each asked twice. Abort and abandon end the game for all; a resignation ends it only
// when one seat would be left (engine/leaving.py: with three or more the others play on).
export function leaveControls(gid, game, seat, token, after) {
  if (game.status !== "active" || seat === null || !token) return null;
  const me = game.seats[seat] || {};
  const resigned = game.resigned || [];
  const playOn = game.players - resigned.length >= 3;
  const box = h("div", { class: "leave" });
  const confirmThen = (label, question, run) =>
    h(
      "button",
      {
        type: "button",
        class: "danger",
        onclick: (e) => {
          const btn = e.currentTarget;
          const sure = h(
            "span",
            { class: "confirm", role: "group", "aria-label": question },
            question,
            " ",
            h(
              "button",
              {
                type: "button",
                class: "danger",
                onclick: async () => {
                  try {
                    const now = await run();
                    toast(now && now.status === "active" ? "You resigned: the others play on." : "The game is over.");
                    if (after) after();
                  } catch (exc) {
                    toast(words(exc));
                  }
                },
              },
              `Yes, ${label.toLowerCase()}`,
            ),
            " ",
            h("button", { type: "button", class: "secondary", onclick: () => sure.replaceWith(btn) }, "No"),
          );
          btn.replaceWith(sure);
        },
      },
      label,
    );
  if (game.challenge && game.round <= 1 && !resigned.includes(seat)) {
    // a challenge's game, its first round: called off without a result
    box.append(
      confirmThen("Abort", "Abort the game? It ends now with no result and nobody wins.", () =>
        api(`/games/${gid}/seats/${seat}/abort`, { method: "POST", token, body: {} }),
      ),
      " ",
    );
  }
  if (!resigned.includes(seat)) {
    const question = playOn
      ? "Resign? You leave the game and the others play on; your tableau is scored, but you cannot win."
      : "Resign? The game ends now and the best of the others wins.";
    box.append(
      confirmThen("Resign", question, () =>
        api(`/games/${gid}/seats/${seat}/resign`, { method: "POST", token, body: {} }),
      ),
    );
  }
  if (me.host) {
    box.append(
      " ",
      confirmThen("Abandon game", "Abandon the game for everyone? It ends with no winner.", () =>
        api(`/games/${gid}/abandon`, { method: "POST", token, body: {} }),
      ),
    );
  }
  return box;
}
