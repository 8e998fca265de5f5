// Playing with friends: the host's "Invite a friend" links, the page an invite link opens (a name,
// then the seat), and leaving a game (abort, resign, abandon). Invite codes travel only in the URL
// fragment (#/join/<game>/<seat>/<code>), which a browser never sends to a server.
import { api, ApiError, saveToken } from "./api.js";
import { h, toast } from "./ui.js";

const NAME_KEY = "rfg.name";

export function lastName() {
  try { return localStorage.getItem(NAME_KEY) || ""; } catch { return ""; }
}
export function rememberName(name) {
  try { if (name) localStorage.setItem(NAME_KEY, name); } catch { /* private mode */ }
}

function words(exc) {
  return exc instanceof ApiError ? exc.words : String(exc.message || exc);
}

// A name field as the server checks it: 1-24 characters once trimmed.
export function nameField(id, required = false, value = lastName()) {
  return h("label", { class: "field" }, h("span", {}, required ? "Your name (the other players see it)" : "Your name (the other players see it; optional)"),
    h("input", { type: "text", id, name: "name", maxlength: 24, required, autocomplete: "nickname", value, placeholder: "e.g. Ada" }));
}

// The host's panel: one row per open human seat, each with a link to send and a copy button.
export function invitePanel(gid, game, token) {
  const open = (game.seats || []).filter((s) => s.kind === "human" && !s.claimed);
  if (!open.length || game.status !== "active") return null;
  const rows = open.map((s) => {
    const out = h("div", { class: "invite-out" },
      s.invited ? h("span", { class: "muted" }, "An invite link was made for this seat (making a new one replaces it).") : null);
    const make = async () => {
      try {
        const inv = await api(`/games/${gid}/seats/${s.seat}/invite`, { method: "POST", token, body: {} });
        const link = new URL(inv.link, location.origin).href;
        const input = h("input", { type: "text", readonly: true, value: link, class: "invite-link", "aria-label": `Invite link for seat ${s.seat}`, "data-seat": s.seat });
        const copy = h("button", { type: "button", class: "secondary", onclick: async () => {
          input.select();
          try { await navigator.clipboard.writeText(link); toast("Link copied: send it to your friend. It works once."); }
          catch { toast("Select the link and copy it (Ctrl+C); it works once."); }
        } }, "Copy link");
        out.replaceChildren(input, " ", copy, h("p", { class: "muted" }, "Only this link takes the seat, once; the lobby cannot."));
        input.select();
        try { await navigator.clipboard.writeText(link); toast("Link copied: send it to your friend."); } catch { /* the person copies it */ }
      } catch (exc) { out.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc))); }
    };
    return h("li", { "data-seat": s.seat }, h("span", {}, `Seat ${s.seat}: open`), " ",
      h("button", { type: "button", class: "primary", onclick: make, "data-invite": s.seat }, s.invited ? "New invite link" : "Invite a friend"), out);
  });
  const local = /^(localhost|127\.|\[::1\])/.test(location.hostname);
  return h("section", { class: "invites", "aria-labelledby": "invite-title" },
    h("h2", { id: "invite-title" }, "Invite a friend"),
    h("p", { class: "muted" }, "Make a link for an open seat and send it; your friend opens it, types a name and sits down."),
    local ? h("p", { class: "note", role: "note" }, `This page is open at ${location.host}, this machine's own address: a link made here works only on this machine. `,
      "For a friend on another machine, open this page by the address they can reach (README: Hosting: letting friends in), then make the link.") : null,
    h("ul", { class: "invite-list" }, rows));
}

// What an invite link opens: the game's seats, a name, and the seat taken with the code.
export async function joinPage(main, gid, seat, code) {
  const err = h("div", {});
  let game = null;
  try { game = await api(`/games/${gid}`); } catch (exc) { err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc))); }
  const host = game && game.seats.find((s) => s.host);
  const form = h("form", { class: "join", "aria-labelledby": "join-title",
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
      } catch (exc) { err.replaceChildren(h("p", { class: "error", role: "alert" }, words(exc))); }
    } },
  h("h1", { id: "join-title" }, "You are invited"),
  h("p", {}, host && host.name ? `${host.name} invites you to seat ${seat} of game ` : `You are invited to seat ${seat} of game `, h("code", {}, gid), "."),
  game ? h("p", { class: "muted" }, `${game.players} players: `, game.seats.map((s) => s.name || (s.kind === "bot" ? `${s.bot} bot` : s.kind === "external" ? (s.entrant || "bot") : s.seat === seat ? "you" : "a friend")).join(", "), ".") : null,
  nameField("join-name", true),
  h("button", { type: "submit", class: "primary" }, "Take my seat"), err);
  main.replaceChildren(form);
  form.querySelector("[name=name]").focus();
}

// Abort (a seat of a challenge's game in its first round), resign (the seat holder) and abandon
// (the host), each asked twice: they end the game for all.
export function leaveControls(gid, game, seat, token, after) {
  if (game.status !== "active" || seat === null || !token) return null;
  const me = game.seats[seat] || {};
  const box = h("div", { class: "leave" });
  const confirmThen = (label, question, run) => h("button", { type: "button", class: "danger", onclick: (e) => {
    const btn = e.currentTarget;
    const sure = h("span", { class: "confirm", role: "group", "aria-label": question }, question, " ",
      h("button", { type: "button", class: "danger", onclick: async () => {
        try { await run(); toast("The game is over."); if (after) after(); } catch (exc) { toast(words(exc)); }
      } }, `Yes, ${label.toLowerCase()}`), " ",
      h("button", { type: "button", class: "secondary", onclick: () => sure.replaceWith(btn) }, "No"));
    btn.replaceWith(sure);
  } }, label);
  if (game.challenge && game.round <= 1) { // a challenge's game, its first round: called off without a result
    box.append(confirmThen("Abort", "Abort the game? It ends now with no result and nobody wins.",
      () => api(`/games/${gid}/seats/${seat}/abort`, { method: "POST", token, body: {} })), " ");
  }
  box.append(confirmThen("Resign", "Resign? The game ends now and the best of the others wins.",
    () => api(`/games/${gid}/seats/${seat}/resign`, { method: "POST", token, body: {} })));
  if (me.host) {
    box.append(" ", confirmThen("Abandon game", "Abandon the game for everyone? It ends with no winner.",
      () => api(`/games/${gid}/abandon`, { method: "POST", token, body: {} })));
  }
  return box;
}
