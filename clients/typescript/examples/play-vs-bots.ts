/**
 * An example bot: registers a bot account, challenges the built-in bots, follows the turn signal
 * on its seat's stream and answers every decision with a legal choice until the game ends, then
 * downloads the game's log and verifies it (hash chain, seed commitment, the server's signature).
 *
 *     npm ci && npm run build
 *     node dist/examples/play-vs-bots.js [SERVER_URL] [BOT...]     (or RFG_URL=...)
 *
 * SERVER_URL defaults to http://127.0.0.1:8000 (`make run`), the opponents to one `heuristic`.
 * RFG_GAMES=N plays N games in a row, each from its own challenge (default 1); RFG_BOT_TOKEN
 * reuses a registered account (a bot registers once and keeps its token). It prints one JSON
 * line per game: the game, its result, the answers counted by status and the log's verdict; the
 * exit status is 0 when every game ended and its log verified.
 */

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";

import createClient from "openapi-fetch";

import type { components, paths } from "../src/generated/api.js";
import { loadPublicKey, verifyLog, type Verdict } from "../src/verify.js";
import { legalChoice } from "./policy.js";

type S = components["schemas"];

const args = process.argv.slice(2);
const base = (args[0] ?? process.env["RFG_URL"] ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
const opponents = (args.length > 1 ? args.slice(1) : ["heuristic"]) as S["BotName"][];

const games = Number(process.env["RFG_GAMES"] ?? "1");

/** Every answer's status, counted (the bot's report, one game's; the registration's in the
 * first). */
let statuses: Record<string, number> = {};
/** With RFG_RECORD=<file>: every exchange, written there as JSON Lines at the end (a test checks
 * each against openapi.yaml). */
const recordTo = process.env["RFG_RECORD"];
const recorded: Promise<object>[] = [];
/** When a limit the server reported spent (`RateLimit: "<name>";r=0;t=<s>`) has room again: the
 * next request waits until then, so the bot slows down before it would get a 429. */
let resumeAt = 0;
const counting: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const body = recordTo === undefined ? "" : await request.clone().text();
  const wait = resumeAt - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const resp = await fetch(request);
  const spent = /;r=0;t=(\d+)/.exec(resp.headers.get("RateLimit") ?? "");
  if (spent !== null) resumeAt = Date.now() + 1000 * Number(spent[1]);
  statuses[resp.status] = (statuses[resp.status] ?? 0) + 1;
  if (recordTo !== undefined) {
    const copy = resp.clone();
    recorded.push(
      copy.text().then((text) => ({
        method: request.method,
        url: request.url,
        request_headers: Object.fromEntries(request.headers),
        request_body: body,
        status: copy.status,
        headers: Object.fromEntries(copy.headers),
        body: text,
      })),
    );
  }
  return resp;
};

function fail(message: string): never {
  throw new Error(message);
}

interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

/** Server-Sent Events of one response body, as an EventSource would deliver them. */
async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  let id: string | null = null;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length > 0) yield { event, data: data.join("\n"), id };
        event = "message";
        data = [];
        id = null;
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id") id = value;
      }
    }
  }
}

type Api = ReturnType<typeof createClient<paths>>;

async function main(): Promise<number> {
  const anonymous = createClient<paths>({ baseUrl: base, fetch: counting });

  // 1. a bot account (its token is shown once: keep it, and pass it as RFG_BOT_TOKEN next time)
  let token = process.env["RFG_BOT_TOKEN"];
  if (token === undefined) {
    const registered = await anonymous.POST("/bots/accounts", {
      body: { name: `ts-example-${randomUUID().slice(0, 8)}`, description: "legal random moves", contact: "nobody@example.org" },
    });
    token = (registered.data ?? fail(`registering failed: ${JSON.stringify(registered.error)}`)).token;
  }
  const auth = { Authorization: `Bearer ${token}` };
  const api = createClient<paths>({ baseUrl: base, fetch: counting, headers: auth });
  const me = await api.GET("/bots/me");
  const account = me.data ?? fail(`the bot token is not accepted: ${JSON.stringify(me.error)}`);
  let failed = 0;
  try {
    for (let i = 0; i < games; i++) {
      if (!(await playOne(api, anonymous, auth, account.account_id))) failed++;
      statuses = {};
    }
  } finally {
    if (recordTo !== undefined) {
      const exchanges = await Promise.all(recorded);
      writeFileSync(recordTo, exchanges.map((x) => JSON.stringify(x) + "\n").join(""));
    }
  }
  return failed === 0 ? 0 : 1;
}

/** One game from its own challenge, to the end; its log verified. True when it verified. */
async function playOne(api: Api, anonymous: Api, auth: Record<string, string>, accountId: string): Promise<boolean> {
  // 2. challenge the built-in bots: the game starts at once
  const seats: S["ChallengeSeat"][] = [
    { kind: "external", account: accountId },
    ...opponents.map((bot): S["ChallengeSeat"] => ({ kind: "bot", bot })),
  ];
  const made = await api.POST("/challenges", { body: { seats } });
  const challenge = made.data ?? fail(`the challenge failed: ${JSON.stringify(made.error)}`);
  const gameId = challenge.game_id ?? fail(`the challenge is ${challenge.status}, without a game`);
  const game = await api.GET("/games/{game_id}", { params: { path: { game_id: gameId } } });
  const seat = (game.data ?? fail("the game cannot be read")).seats.find((s) => s.account === accountId)?.seat;
  if (seat === undefined) fail("the game has no seat for this account");
  const path = { game_id: gameId, seat };

  // 3. the seat's stream: answer each turn signal until the end event
  let lastEventId: string | null = null;
  let decisions = 0;
  let conflicts = 0;
  let ended = false;
  while (!ended) {
    const headers: Record<string, string> = { ...auth, Accept: "text/event-stream" };
    if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
    const resp = await counting(`${base}/games/${gameId}/seats/${seat}/events/stream`, { headers });
    if (resp.status === 429 || resp.status === 503) {
      await new Promise((r) => setTimeout(r, 1000 * Number(resp.headers.get("Retry-After") ?? "1")));
      continue;
    }
    if (!resp.ok || resp.body === null) fail(`the stream answered ${resp.status}: ${await resp.text()}`);
    for await (const e of readEvents(resp.body)) {
      if (e.id !== null) lastEventId = e.id;
      const frame = { ...e, data: JSON.parse(e.data) } as S["StreamFrame"];
      if (frame.event === "end") {
        ended = true;
        break;
      }
      if (frame.event !== "decision") continue; // a game event (frame.data: FeedItem)
      const signal = frame.data; // TurnSignal: the decision owed, its decision_id, the seat's view
      decisions++;
      const body = { command_id: randomUUID(), decision_id: signal.decision_id, command: legalChoice(signal.decision) };
      let sent = await api.POST("/games/{game_id}/seats/{seat}/commands", { params: { path }, body });
      for (let retry = 0; retry < 5 && [429, 503].includes(sent.response.status); retry++) {
        // the same command id again after Retry-After: the server applies a command id once
        await new Promise((r) => setTimeout(r, 1000 * Number(sent.response.headers.get("Retry-After") ?? "1")));
        sent = await api.POST("/games/{game_id}/seats/{seat}/commands", { params: { path }, body });
      }
      if (sent.response.status === 409) {
        conflicts++; // decision-changed: the stream signals the decision owed now
      } else if (sent.error !== undefined) {
        fail(`the command for ${signal.kind} was refused: ${JSON.stringify(sent.error)}`);
      }
    }
  }

  // 4. the log, verified with the key the server publishes
  const log = await api.GET("/games/{game_id}/seats/{seat}/log", { params: { path }, parseAs: "text" });
  const published = await anonymous.GET("/signing-key");
  const key = loadPublicKey(JSON.stringify(published.data ?? fail("no signing key")));
  const verdict: Verdict = verifyLog(log.data ?? fail("no log"), { key, requireSignature: true });
  const view = await api.GET("/games/{game_id}/view", { params: { path: { game_id: gameId } } });
  process.stdout.write(
    JSON.stringify({
      game_id: gameId,
      seat,
      account: accountId,
      decisions,
      conflicts,
      statuses,
      result: view.data?.view.result ?? null,
      log_kind: log.response.headers.get("Log-Kind"),
      verdict,
    }) + "\n",
  );
  return verdict.ok;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
    process.stderr.write(`play-vs-bots: ${err instanceof Error ? err.message : String(err)}${cause}\n`);
    if (err instanceof TypeError && /fetch failed/.test(err.message)) {
      process.stderr.write(`nothing listens at ${base}: start the server (make run) or give its URL\n`);
    }
    process.exitCode = 1;
  },
);
