// The REST API as any third-party client uses it: fetch + problem+json errors, seat tokens kept in
// the browser, and a Server-Sent Events reader that can send a bearer token and reconnects.

export class ApiError extends Error {
  constructor(status, problem, fallback) {
    const p = problem || {};
    super(p.detail || p.title || fallback || `the server answered ${status}`);
    this.status = status;
    this.problem = p;
  }
  // What to tell a person: the server's words plus what to do next.
  get words() {
    const p = this.problem;
    if (this.status === 0) return `${this.message}. Check that the server is running, then try again.`;
    if (this.status === 429) {
      const wait = p.retry_after ?? "a few";
      return `Too many requests: wait ${wait} s and try again. (${p.detail || ""})`;
    }
    if (this.status === 409 && p.current_decision_id !== undefined) {
      return (
        "This decision was answered already or the game moved on before your answer arrived. " +
        "Nothing was stored: the table now shows what you owe now."
      );
    }
    if (this.status === 409 && p.current_version !== undefined) {
      return (
        "The game moved on before your decision arrived (the bots play at the same time). " +
        "Nothing was stored: the table now shows the current state, decide again."
      );
    }
    let text = p.detail || this.message;
    if (p.errors) {
      text +=
        " — " +
        Object.entries(p.errors)
          .map(([f, m]) => `${f}: ${[].concat(m).join(", ")}`)
          .join("; ");
    }
    return text;
  }
}

const TOKENS = "rfg.tokens";

export function tokens() {
  try {
    return JSON.parse(localStorage.getItem(TOKENS) || "{}");
  } catch {
    return {};
  }
}
export function tokenFor(gid, seat) {
  return tokens()[`${gid}/${seat}`] || null;
}
export function saveToken(gid, seat, token) {
  const all = tokens();
  all[`${gid}/${seat}`] = token;
  localStorage.setItem(TOKENS, JSON.stringify(all));
}
export function mySeats() {
  return Object.keys(tokens()).map((k) => {
    const [g, s] = k.split("/");
    return { gid: g, seat: Number(s) };
  });
}

export function newId() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return "web-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export async function api(path, { method = "GET", body, token, headers = {}, raw = false, contentType } = {}) {
  const h = { Accept: "application/json, application/problem+json", ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  let payload;
  if (body !== undefined) {
    if (typeof body === "string" || body instanceof Blob) {
      payload = body;
      h["Content-Type"] = contentType || "application/x-ndjson";
    } else {
      payload = JSON.stringify(body);
      h["Content-Type"] = "application/json";
    }
  }
  let resp;
  try {
    resp = await fetch(path, { method, headers: h, body: payload, cache: "no-cache" });
  } catch (exc) {
    throw new ApiError(0, null, `could not reach the server (${exc.message})`);
  }
  if (resp.status === 304) return { notModified: true, headers: resp.headers };
  if (!resp.ok) {
    let problem = null;
    try {
      problem = await resp.json();
    } catch {
      /* not JSON */
    }
    if (problem && resp.headers.get("Retry-After") && problem.retry_after === undefined) {
      problem.retry_after = Number(resp.headers.get("Retry-After"));
    }
    throw new ApiError(resp.status, problem);
  }
  if (raw) return resp;
  if (resp.status === 204) return null;
  const data = await resp.json();
  Object.defineProperty(data, "_etag", { value: resp.headers.get("ETag"), enumerable: false });
  return data;
}

// Server-Sent Events over fetch (EventSource cannot send Authorization). Resumes after the last
// event id it saw; reconnects by itself after the server closes the stream or the network fails.
export class Stream {
  constructor(path, { token, onEvent, onEnd, onStatus } = {}) {
    Object.assign(this, { path, token, onEvent, onEnd, onStatus });
    this.lastId = null;
    this.closed = false;
    this.retry = 2000;
    this.failures = 0;
    this.run();
  }
  close() {
    this.closed = true;
    if (this.ctrl) this.ctrl.abort();
  }
  status(s) {
    if (this.onStatus) this.onStatus(s);
  }
  async run() {
    while (!this.closed) {
      this.ctrl = new AbortController();
      const headers = { Accept: "text/event-stream" };
      if (this.token) headers.Authorization = `Bearer ${this.token}`;
      if (this.lastId !== null) headers["Last-Event-ID"] = this.lastId;
      try {
        const resp = await fetch(this.path, { headers, signal: this.ctrl.signal, cache: "no-store" });
        if (!resp.ok) {
          let problem = null;
          try {
            problem = await resp.json();
          } catch {
            /* */
          }
          const err = new ApiError(resp.status, problem);
          if ([401, 403, 404].includes(resp.status)) {
            this.status({ state: "failed", error: err });
            return;
          }
          throw err;
        }
        this.status({ state: "live" });
        this.failures = 0;
        if (await this.read(resp)) {
          this.closed = true;
          this.status({ state: "ended" });
          if (this.onEnd) this.onEnd();
          return;
        }
      } catch (exc) {
        if (this.closed) return;
        this.failures += 1;
        this.status({ state: "reconnecting", error: exc });
      }
      if (this.closed) return;
      this.status({ state: "reconnecting" });
      const wait = Math.min(this.retry * Math.max(1, this.failures), 15000);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  // true when the stream said the game is over (an `end` event)
  async read(resp) {
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    let ev = { event: "message", data: [], id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.search(/\r\n|\n|\r/)) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + (buf.startsWith("\r\n", i) ? 2 : 1));
        if (line === "") {
          if (ev.data.length) {
            if (ev.id !== null) this.lastId = ev.id;
            const data = ev.data.join("\n");
            let parsed = data;
            try {
              parsed = JSON.parse(data);
            } catch {
              /* keep text */
            }
            if (ev.event === "end") return true;
            if (this.onEvent) this.onEvent(parsed, ev.event);
          }
          ev = { event: "message", data: [], id: null };
          continue;
        }
        if (line.startsWith(":")) continue;
        const c = line.indexOf(":");
        const field = c < 0 ? line : line.slice(0, c);
        let val = c < 0 ? "" : line.slice(c + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "data") ev.data.push(val);
        else if (field === "event") ev.event = val;
        else if (field === "id") ev.id = val;
        else if (field === "retry" && /^\d+$/.test(val)) this.retry = Number(val);
      }
    }
  }
}
