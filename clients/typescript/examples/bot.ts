/**
 * A bot that runs forever from its token: it follows its account's events
 * (`GET /bots/me/events`), accepts the challenges `acceptChallenge` likes (declining the others
 * with a reason), plays every game it is in, joins an open ladder and challenges another account.
 *
 *     npm ci && npm run build
 *     node dist/examples/bot.js --token rfgb_... [--url URL] [--join LADDER]
 *          [--challenge ACCOUNT [--challenges N] [--rated LADDER]]
 *
 * The token may come as RFG_BOT_TOKEN, the URL as RFG_URL (default http://127.0.0.1:8000). It
 * follows two streams, whatever the number of its games (a token may hold 4 streams at once):
 * - the account's events (`GET /bots/me/events`): a `challenge` is accepted
 *   (`POST /challenges/{id}/accept`) or declined with a reason; `game-started` is logged,
 *   `game-finished` printed (one JSON line on stdout);
 * - its decisions in all its games (`GET /bots/me/decisions/stream`): each pending decision's
 *   seat view is read and the decision answered with `legalChoice`, by its `decision_id`, with one
 *   command id however often it is resent (after a 429 or 503, or a lost connection).
 * At start-up it lists its active games (`GET /bots/me/games?status=active`): the decisions stream
 * sends what each still owes, so a restarted bot resumes its games. Both streams are resumed with
 * `Last-Event-ID` after a dropped connection, after 1, 2, 4 ... seconds (30 at most); a connection
 * silent for 45 s (the server sends a keep-alive every 15 s) counts as dropped. One request at a
 * time, each answer's `RateLimit` header pacing the next, keeps it clear of 429s. `--join` enters
 * an open ladder (`POST /bots/me/ladders`; the scheduler pairs it, rated); `--challenge`
 * challenges a bot account `--challenges` times, one game after the other (`--rated LADDER`: rated
 * on a ladder both have joined). SIGINT or SIGTERM stops it: the streams close, the command under
 * way is answered, exit status 0.
 */

import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";

import createClient from "openapi-fetch";

import type { components, paths } from "../src/generated/api.js";
import { legalChoice } from "./policy.js";

type S = components["schemas"];
type Challenge = S["Challenge"];
type AccountEvent = S["AccountEvent"];

const { values: opts } = parseArgs({
  options: {
    url: { type: "string", default: process.env["RFG_URL"] ?? "http://127.0.0.1:8000" },
    token: { type: "string", default: process.env["RFG_BOT_TOKEN"] ?? "" },
    join: { type: "string" },
    challenge: { type: "string" },
    challenges: { type: "string", default: "1" },
    rated: { type: "string" },
  },
});
const base = opts.url.replace(/\/+$/, "");
if (opts.token === "") throw new Error("a bot token is needed: --token or RFG_BOT_TOKEN");
const auth = { Authorization: `Bearer ${opts.token}` };
/** Reading an events stream longer than this without a byte (keep-alives included): dropped. */
const READ_TIMEOUT_MS = 45_000;

/** Aborted on SIGINT or SIGTERM: the streams close, no new command is sent. */
const stopping = new AbortController();
/** The command under way (awaited before exiting). */
let underWay: Promise<void> = Promise.resolve();

/** When a limit the server reported spent (`RateLimit: ...;r=0;t=<s>`) has room again. */
let resumeAt = 0;
/** The request before this one (until its answer's head): requests go one at a time, so each
 * answer's RateLimit paces the next (requests at once would race past r=0 into a 429). */
let previous: Promise<unknown> = Promise.resolve();
const paced: typeof fetch = (input, init) => {
  const sending = previous.then(async () => {
    const wait = resumeAt - Date.now();
    if (wait > 0) await sleep(wait);
    // a request's answer within 30 s (a stream's head too; its body has its own read timeout)
    const resp = await fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(30_000) });
    const spent = /;r=0;t=(\d+)/.exec(resp.headers.get("RateLimit") ?? "");
    if (spent !== null) resumeAt = Date.now() + 1000 * Number(spent[1]);
    return resp;
  });
  previous = sending.catch(() => undefined);
  return sending;
};
const api = createClient<paths>({ baseUrl: base, fetch: paced, headers: auth });

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString()} ${message}\n`);
}

/** 1, 2, 4 ... seconds (30 at most), jittered; or the answer's Retry-After. */
function backoff(failures: number, resp?: Response): number {
  const told = resp?.headers.get("Retry-After");
  if (told) return 1000 * Number(told);
  return Math.min(30_000, 1000 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
}

interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

/** The Server-Sent Events of one stream until it ends; `alive()` is called on every chunk read
 * (keep-alive comments included), and the connection is aborted after `READ_TIMEOUT_MS` without
 * one (not counting the time the caller takes over an event: the clock stops while it has one).
 * 429 and 503 answers are returned as the stream's `Response`, unread. */
async function* openStream(path: string, lastEventId: string | null): AsyncGenerator<SseEvent, Response | null> {
  const conn = new AbortController();
  const stop = () => conn.abort();
  stopping.signal.addEventListener("abort", stop, { once: true });
  let timer = setTimeout(stop, READ_TIMEOUT_MS);
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(stop, READ_TIMEOUT_MS);
  };
  try {
    const headers: Record<string, string> = { ...auth, Accept: "text/event-stream" };
    if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
    const resp = await paced(`${base}${path}`, { headers, signal: conn.signal });
    if (resp.status === 429 || resp.status === 503) return resp;
    if (!resp.ok || resp.body === null) throw new Fatal(`${path} answered ${resp.status}: ${await resp.text()}`);
    const decoder = new TextDecoder();
    let buffer = "";
    let e: SseEvent = { event: "message", data: "", id: null };
    let data: string[] = [];
    for await (const chunk of resp.body) {
      alive();
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) {
            clearTimeout(timer);
            yield { ...e, data: data.join("\n") };
            alive();
          }
          e = { event: "message", data: "", id: null };
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") e.event = value;
          else if (field === "data") data.push(value);
          else if (field === "id") e.id = value;
        }
      }
    }
    return null;
  } finally {
    clearTimeout(timer);
    stopping.signal.removeEventListener("abort", stop);
  }
}

/** An answer that retrying will not change (a 401: the token was revoked or rotated). */
class Fatal extends Error {}

// --- the account's events -------------------------------------------------------------------

/** Follow a stream of the account forever, handing each event to `onEvent`: resumed at once with
 * `Last-Event-ID` when the server closes it, after 1, 2, 4 ... s (or Retry-After) when the
 * connection drops or the answer is a 429 or 503; another error answer (a 401: the token was
 * revoked or rotated) ends it. Returns when the bot stops. */
async function follow(path: string, onEvent: (e: SseEvent) => Promise<void>): Promise<void> {
  let lastEventId: string | null = null;
  let failures = 0;
  while (!stopping.signal.aborted) {
    let wait: Response | null = null;
    try {
      const events = openStream(path, lastEventId);
      for (;;) {
        const next = await events.next();
        if (next.done) {
          wait = next.value;
          break;
        }
        failures = 0;
        if (next.value.id !== null) lastEventId = next.value.id;
        await onEvent(next.value);
      }
      if (wait === null) continue; // the server closed the stream: resume at once
    } catch (err) {
      if (stopping.signal.aborted) return;
      if (err instanceof Fatal) throw err;
      log(`${path}: ${String(err)}; resuming`);
    }
    failures++;
    await sleep(backoff(failures, wait ?? undefined));
  }
}

/** `undefined` to accept a challenge, else the reason to decline it with: two to four seats and
 * at least 5 s a decision (or no time control). Replace with your own. */
function acceptChallenge(challenge: Challenge): S["DeclineReason"] | undefined {
  if (challenge.seats.length < 2 || challenge.seats.length > 4) return "not-now";
  const perDecision = (challenge.time_control as { per_decision?: number } | undefined)?.per_decision;
  if (perDecision !== undefined && perDecision < 5) return "too-fast";
  return undefined;
}

// --- decisions ----------------------------------------------------------------------------

/** Decisions answered, `game:seat:decision_id` (a reconnect sends those still pending again). */
const answered = new Set<string>();

async function followDecisions(): Promise<void> {
  await follow("/bots/me/decisions/stream", async (e) => {
    if (e.event !== "decision") return; // challenges come on the events stream too
    const pending = JSON.parse(e.data) as S["PendingDecision"];
    try {
      await answer(pending);
    } catch (err) {
      if (err instanceof Fatal) log(`game ${pending.game_id}, decision ${pending.kind}: ${err.message}`);
      else throw err;
    }
  });
}

/** Read the seat view of a pending decision and answer it (unless answered already, or no longer
 * owed), resending the same command id after a 429, a 503 or a lost connection (the server
 * applies a command id once); a 409 needs nothing (the decision changed meanwhile). */
async function answer(pending: S["PendingDecision"]): Promise<void> {
  const key = `${pending.game_id}:${pending.seat}:${pending.decision_id}`;
  if (answered.has(key)) return;
  const params = { path: { game_id: pending.game_id, seat: pending.seat } };
  const got = await api.GET("/games/{game_id}/seats/{seat}/view", { params });
  if (got.data === undefined) throw new Fatal(`the seat view: ${JSON.stringify(got.error)}`);
  const view = got.data.view;
  if (view.decision?.decision_id !== pending.decision_id) return; // played meanwhile (the clock)
  if (stopping.signal.aborted) return;
  const body = { command_id: randomUUID(), decision_id: pending.decision_id, command: legalChoice(view.decision) };
  const send = async (): Promise<void> => {
    for (let failures = 1; ; failures++) {
      let resp: Response | undefined;
      try {
        const sent = await api.POST("/games/{game_id}/seats/{seat}/commands", { params, body });
        resp = sent.response;
        if (sent.error === undefined || resp.status === 409) return;
        if (resp.status !== 429 && resp.status !== 503) throw new Fatal(`the command was refused: ${JSON.stringify(sent.error)}`);
      } catch (err) {
        if (err instanceof Fatal || failures >= 10) throw err;
      }
      await sleep(backoff(failures, resp));
    }
  };
  underWay = send();
  await underWay;
  if (answered.size > 10_000) answered.clear();
  answered.add(key);
}

// --- challenges -----------------------------------------------------------------------------

/** Challenges this bot sent: resolved when answered without a game, or when its game is over. */
const sent = new Map<string, { gameId: string | null; done: () => void }>();

async function challengeRepeatedly(me: string, opponent: string, times: number, ladder: string | undefined): Promise<void> {
  const seats: S["ChallengeSeat"][] = [
    { kind: "external", account: me },
    { kind: "external", account: opponent },
  ];
  let refused = 0;
  while (times > 0 && !stopping.signal.aborted) {
    const made = await api.POST("/challenges", { body: ladder === undefined ? { seats } : { seats, ladder } });
    if (made.data === undefined) {
      // e.g. 422: the other account is not on the ladder yet; again 10 s later, 6 times at most
      log(`challenging ${opponent}: ${JSON.stringify(made.error)}`);
      if (++refused >= 6) return;
      await sleep(10_000);
      continue;
    }
    times--;
    refused = 0;
    const id = made.data.challenge_id;
    log(`challenged ${opponent}: ${id}`);
    await new Promise<void>((done) => {
      sent.set(id, { gameId: null, done });
      // unanswered (expired) after a while: go on with the next one
      setTimeout(() => {
        if (sent.get(id)?.gameId === null) done();
      }, 150_000).unref();
    });
    sent.delete(id);
  }
}

async function onEvent(e: SseEvent): Promise<void> {
  const event = JSON.parse(e.data) as AccountEvent;
  switch (event.type) {
    case "challenge": {
      const reason = acceptChallenge(event);
      const path = { params: { path: { challenge_id: event.challenge_id } } };
      const got =
        reason === undefined
          ? await api.POST("/challenges/{challenge_id}/accept", path)
          : await api.POST("/challenges/{challenge_id}/decline", { ...path, body: { reason } });
      // a 404: no longer open (canceled, expired, or answered before a restart)
      log(`challenge ${event.challenge_id}: ${got.error === undefined ? (reason ?? "accepted") : JSON.stringify(got.error)}`);
      break;
    }
    case "challenge-accepted":
    case "challenge-declined":
    case "challenge-canceled": {
      log(`challenge ${event.challenge_id} ${event.status}`);
      const mine = sent.get(event.challenge_id);
      if (mine !== undefined) {
        mine.gameId = event.game_id ?? null;
        if (mine.gameId === null) mine.done();
      }
      break;
    }
    case "game-started": {
      const players = event.players.map((p) => `${p.name ?? "?"} (${p.rating ?? "unrated"})`).join(", ");
      log(`game ${event.game_id} started, seat ${event.seat}: ${players}`);
      break;
    }
    case "game-finished": {
      process.stdout.write(JSON.stringify({ game_id: event.game_id, seat: event.seat, result: event.result }) + "\n");
      for (const mine of sent.values()) if (mine.gameId === event.game_id) mine.done();
      break;
    }
  }
}

async function main(): Promise<number> {
  const stop = (name: string) => () => {
    log(`stopping (${name})`);
    stopping.abort();
  };
  process.once("SIGINT", stop("SIGINT"));
  process.once("SIGTERM", stop("SIGTERM"));

  const me = await api.GET("/bots/me");
  const account = me.data ?? fail(`the bot token is not accepted: ${JSON.stringify(me.error)}`);
  log(`${account.name} (${account.account_id}) at ${base}`);
  if (opts.join !== undefined) {
    // 201 joined, 200 an entrant already (a restarted bot)
    const joined = await api.POST("/bots/me/ladders", { body: { ladder: opts.join } });
    const entrant = joined.data ?? fail(`joining ${opts.join}: ${JSON.stringify(joined.error)}`);
    log(`ladder ${opts.join}: entrant ${entrant.entrant}`);
  }
  // a restarted bot resumes its games: the decisions stream sends what each still owes
  const active: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.GET("/bots/me/games", { params: { query: { status: "active", cursor } } });
    const games = page.data ?? fail(`listing the games: ${JSON.stringify(page.error)}`);
    active.push(...games.games.map((g) => g.game_id));
    cursor = games.next_cursor ?? undefined;
  } while (cursor !== undefined);
  log(`${active.length} active games: ${active.join(" ")}`);
  if (opts.challenge !== undefined) {
    challengeRepeatedly(account.account_id, opts.challenge, Number(opts.challenges), opts.rated).catch((err: unknown) =>
      log(`challenges: ${String(err)}`),
    );
  }
  await Promise.all([follow("/bots/me/events", onEvent), followDecisions()]);
  await underWay.catch(() => undefined);
  return 0;
}

function fail(message: string): never {
  throw new Fatal(message);
}

main().then(
  (code) => {
    process.exit(code);
  },
  (err: unknown) => {
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
    log(`bot: ${err instanceof Error ? err.message : String(err)}${cause}`);
    process.exit(1);
  },
);
