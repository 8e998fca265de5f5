// The REST API as any third-party client uses it: fetch + problem+json errors, seat tokens kept in
// the browser, and a Server-Sent Events reader that can send a bearer token and reconnects.

/**
 * @typedef {import("../../../clients/typescript/src/generated/api").components["schemas"]} Schemas
 * @typedef {Partial<Schemas["ConflictProblem"]> & { retry_after?: number, errors?: Record<string, string | string[]> }} Problem
 * @typedef {Schemas["FeedItem"] | Schemas["TurnSignal"] | string} StreamData
 */

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status (0: the server could not be reached)
   * @param {Problem | null} problem the problem+json body, if any
   * @param {string} [fallback] the message without one
   */
  constructor(status, problem, fallback) {
    /** @type {Problem} */
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
/**
 * @param {string} gid
 * @param {number} seat
 * @returns {string | null}
 */
export function tokenFor(gid, seat) {
  return tokens()[`${gid}/${seat}`] || null;
}
/**
 * @param {string} gid
 * @param {number} seat
 * @param {string} token
 */
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

/** A fresh command id. @returns {string} */
export function newId() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return "web-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * @typedef {object} RequestOptions
 * @property {string} [method]
 * @property {unknown} [body] an object sent as JSON, or text or a Blob sent as it is
 * @property {string | null} [token] a seat's (or bot's) token
 * @property {Record<string, string>} [headers]
 * @property {boolean} [raw] the Response itself
 * @property {string} [contentType] of a text or Blob body (application/x-ndjson)
 */

/**
 * One request; its JSON answer (with its ETag as ``_etag``), ``{notModified: true}`` for a 304,
 * null for a 204. Throws ApiError.
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<any>}
 */
export async function api(path, { method = "GET", body, token, headers = {}, raw = false, contentType } = {}) {
  /** @type {Record<string, string>} */
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
  /**
   * @param {string} path
   * @param {object} [handlers]
   * @param {string | null} [handlers.token]
   * @param {(data: any, kind: string) => void} [handlers.onEvent] each event's data (a FeedItem; a seat stream's ``decision`` event: a TurnSignal) and its kind
   * @param {() => void} [handlers.onEnd] the game ended (the stream's ``end`` event)
   * @param {(status: { state: string, error?: ApiError }) => void} [handlers.onStatus]
   */
  constructor(path, { token, onEvent, onEnd, onStatus } = {}) {
    this.path = path;
    this.token = token;
    this.onEvent = onEvent;
    this.onEnd = onEnd;
    this.onStatus = onStatus;
    /** @type {AbortController | null} */
    this.ctrl = null;
    /** @type {string | null} */
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
      /** @type {Record<string, string>} */
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
