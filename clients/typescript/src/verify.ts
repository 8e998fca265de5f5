/**
 * A verifier of the server's exported game logs (docs/log-format.md), independent of the
 * server's code: the hash chain of the envelopes, the commitment to the seed once the log
 * reveals it, and the Ed25519 signature of the last line with the key `GET /signing-key`
 * publishes. It does not replay the rules (`POST /replays/verify` does): it proves that the log
 * is the one the server signed and that the seed is the one it committed to at the start.
 */

import { createHash, createPublicKey, verify as verifySignature, type KeyObject } from "node:crypto";

import { canonicalJson, keyProblem, NotCanonicalizable, type Json } from "./canonical.js";

export const GENESIS_HASH = "0".repeat(64);
export const ENVELOPE_FIELDS = [
  "actor",
  "command_id",
  "game_id",
  "hash",
  "payload",
  "prev_hash",
  "schema_version",
  "seq",
  "ts",
  "type",
  "visibility",
] as const;
export const SIGNED_FIELDS = ["alg", "chain_head", "events", "game_id", "key_id", "over", "result"] as const;

/** What `GET /signing-key` serves. */
export interface SigningKeyInfo {
  alg: string;
  key_id: string;
  public_key: string;
  pem?: string;
}

export interface PublicKey {
  key: KeyObject;
  /** The first 16 hex digits of sha256 of the 32 raw key bytes. */
  keyId: string;
}

export interface Verdict {
  ok: boolean;
  /** envelopes: a service export; events: a bare engine log; withheld: a seed held back. */
  kind: "envelopes" | "events" | "withheld" | "unknown";
  gameId: string | null;
  events: number;
  over: boolean;
  /** checked: the revealed seed gives the commitment; absent: the log shows no seed. */
  commitment: "checked" | "absent";
  /** signed: the signature line verifies with the key given; unsigned: there is none. */
  signature: "signed" | "unsigned";
  chainHead: string | null;
  /** The 1-based line where verification failed, or null. */
  line: number | null;
  reason: string;
}

class Failure extends Error {
  constructor(
    readonly line: number | null,
    message: string,
  ) {
    super(message);
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const VISIBILITY = /^(public|server|seat:\d+)$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A public key as the server publishes it: the JSON of `GET /signing-key`, PEM, or the
 * base64 of the 32 raw bytes. */
export function loadPublicKey(text: string): PublicKey {
  const trimmed = text.trim();
  let raw: Buffer;
  if (trimmed.startsWith("{")) {
    const info = JSON.parse(trimmed) as Partial<SigningKeyInfo>;
    if (info.alg !== "Ed25519" || typeof info.public_key !== "string") {
      throw new Error("the key document is not GET /signing-key's answer (alg Ed25519, public_key)");
    }
    const key = loadPublicKey(info.public_key);
    if (info.key_id !== undefined && info.key_id !== key.keyId) {
      throw new Error(`the key document names key ${info.key_id}, but its key is ${key.keyId}`);
    }
    return key;
  }
  if (trimmed.startsWith("-----BEGIN")) {
    const key = createPublicKey(trimmed);
    if (key.asymmetricKeyType !== "ed25519") throw new Error("the PEM key is not an Ed25519 key");
    const jwk = key.export({ format: "jwk" });
    raw = Buffer.from(String(jwk.x), "base64url");
  } else {
    raw = Buffer.from(trimmed, "base64");
    if (raw.length !== 32 || raw.toString("base64") !== trimmed) {
      throw new Error("give the key as GET /signing-key serves it, PEM, or base64 of 32 bytes");
    }
  }
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
  return { key, keyId: sha256Hex(raw).slice(0, 16) };
}

/** The rules version from which `GameCreated` names its game (`game`) and the commitment binds it. */
export const BOUND_SINCE_RULES = 4;

/** The seed commitment of a rules version (docs/log-format.md, "The commitment"). */
export function commitment(seed: string, rules: number, game: string): string {
  if (rules >= BOUND_SINCE_RULES) return sha256Hex(`rfg/commit\u0000${seed}\u0000${game}`);
  if (rules >= 3) return sha256Hex(`rfg/commit\u0000${seed}`);
  return sha256Hex(seed);
}

/** The bytes an envelope's hash covers: its line with the `,"hash":"<64 hex>"` member removed
 * (the canonical JSON of the envelope without `hash`). */
export function envelopeHashInput(line: Uint8Array, hash: string): Uint8Array {
  const member = encoder.encode(`,"hash":"${hash}"`);
  const at = Buffer.from(line.buffer, line.byteOffset, line.byteLength).indexOf(member);
  if (at < 0) throw new Error("the line has no hash member");
  const out = new Uint8Array(line.length - member.length);
  out.set(line.subarray(0, at), 0);
  out.set(line.subarray(at + member.length), at);
  return out;
}

/** The bytes the signature covers: the canonical JSON of the record without `sig`. */
export function signedBytes(record: Record<string, Json>): Uint8Array {
  const body: Record<string, Json> = {};
  for (const f of SIGNED_FIELDS) body[f] = record[f] ?? null;
  return encoder.encode(canonicalJson(body));
}

function isObject(x: unknown): x is Record<string, Json> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Whether a line is written as canonical JSON. A line holding a non-integer number (the server
 * writes them as Python's repr does) is taken as written: its hash covers its bytes. */
function checkCanonical(text: string, value: Json, line: number): void {
  let again: string;
  try {
    again = canonicalJson(value);
  } catch (e) {
    if (e instanceof NotCanonicalizable && /[0-9][.eE]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) {
      return;
    }
    throw new Failure(line, `the line is not canonical JSON: ${(e as Error).message}`);
  }
  if (again !== text && !/[0-9][.eE]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) {
    throw new Failure(line, "the line is not canonical JSON (key order, spacing or escaping)");
  }
}

function splitLines(data: Uint8Array): Uint8Array[] {
  const lines: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0x0a) {
      lines.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < data.length) lines.push(data.subarray(start));
  return lines;
}

interface Parsed {
  bytes: Uint8Array;
  text: string;
  value: Record<string, Json>;
}

function parse(bytes: Uint8Array, n: number): Parsed {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new Failure(n, "the line is not UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Failure(n, `the line is not JSON: ${(e as Error).message}`);
  }
  if (!isObject(value)) throw new Failure(n, "the line is not a JSON object");
  // JSON.parse kept the last value of a key given twice: only the text shows it
  const keys = keyProblem(text);
  if (keys !== null) throw new Failure(n, `the line is malformed: ${keys}`);
  checkCanonical(text, value, n);
  return { bytes, text, value };
}

function checkCommitment(created: Record<string, Json>, ended: Record<string, Json> | null, n: number): "checked" | "absent" {
  const rules = created["rules"] ?? 1;
  const committed = created["seed_commitment"] ?? created["seed_sha256"];
  if (typeof rules !== "number" || typeof committed !== "string" || !HEX64.test(committed)) {
    throw new Failure(n, "GameCreated carries no rules version and seed commitment");
  }
  const seed = created["seed"];
  if (ended !== null && "seed" in ended && ended["seed"] !== seed) {
    throw new Failure(null, "GameEnded reveals another seed than GameCreated holds");
  }
  const game = created["game"];
  if (rules >= BOUND_SINCE_RULES && typeof game !== "string") {
    throw new Failure(n, `GameCreated of rules ${rules} names no game (its field game), which the commitment binds`);
  }
  if (typeof seed !== "string") return "absent";
  const want = commitment(seed, rules, typeof game === "string" ? game : "");
  if (want !== committed) {
    throw new Failure(n, `the seed does not give the commitment ${committed} (rules ${rules})`);
  }
  return "checked";
}

function verifyEnvelopes(lines: Parsed[], key: PublicKey | null, requireSignature: boolean): Verdict {
  let signatureLine: Parsed | null = null;
  const last = lines[lines.length - 1]!;
  if ("signature" in last.value) {
    signatureLine = last;
    lines = lines.slice(0, -1);
  }
  let prev = GENESIS_HASH;
  let gameId: string | null = null;
  let created: Record<string, Json> | null = null;
  let ended: Record<string, Json> | null = null;
  lines.forEach((p, i) => {
    const n = i + 1;
    const e = p.value;
    const keys = Object.keys(e).sort();
    if (keys.join() !== ENVELOPE_FIELDS.join()) {
      throw new Failure(n, `an envelope has exactly the fields ${ENVELOPE_FIELDS.join(", ")}`);
    }
    const { seq, hash, game_id, payload, type } = e;
    if (seq !== n) throw new Failure(n, `seq is ${String(seq)}, not ${n} (an event missing or moved)`);
    if (typeof game_id !== "string" || (gameId !== null && game_id !== gameId)) {
      throw new Failure(n, "game_id differs from the first envelope's");
    }
    gameId = game_id;
    if (typeof type !== "string" || !isObject(payload) || typeof e["schema_version"] !== "number") {
      throw new Failure(n, "type, payload or schema_version has the wrong JSON type");
    }
    if (typeof e["visibility"] !== "string" || !VISIBILITY.test(e["visibility"])) {
      throw new Failure(n, "visibility is not public, server or seat:N");
    }
    if (e["prev_hash"] !== prev) throw new Failure(n, "prev_hash is not the previous envelope's hash");
    if (typeof hash !== "string" || !HEX64.test(hash)) throw new Failure(n, "hash is not 64 hex digits");
    if (sha256Hex(envelopeHashInput(p.bytes, hash)) !== hash) {
      throw new Failure(n, "the hash does not match the envelope's content (altered event)");
    }
    if (n === 1) {
      if (type !== "GameCreated") throw new Failure(n, "the first event is not GameCreated");
      created = payload;
    } else if (type === "GameCreated") {
      throw new Failure(n, "a second GameCreated");
    }
    if (ended !== null) throw new Failure(n, "an event after GameEnded");
    if (type === "GameEnded") ended = payload;
    prev = hash;
  });
  if (created === null) throw new Failure(null, "the log holds no event");
  const commitmentState = checkCommitment(created, ended, 1);
  const rules = created["rules"] ?? 1;
  if (typeof rules === "number" && rules >= BOUND_SINCE_RULES && created["game"] !== gameId) {
    // the commitment binds the seed to the game GameCreated names: it must be the log's game
    throw new Failure(
      1,
      `GameCreated names game ${JSON.stringify(created["game"])} but the log is of game ${JSON.stringify(gameId)} (the seed's commitment binds the game id)`,
    );
  }
  const over = ended !== null;
  let signature: "signed" | "unsigned" = "unsigned";
  if (signatureLine !== null) {
    const n = lines.length + 1;
    const record = signatureLine.value["signature"];
    if (!isObject(record) || Object.keys(signatureLine.value).length !== 1) {
      throw new Failure(n, 'the signature line is not {"signature": {...}}');
    }
    const fields = Object.keys(record).sort().join();
    if (fields !== [...SIGNED_FIELDS, "sig"].sort().join()) {
      throw new Failure(n, `the signature record has the fields ${SIGNED_FIELDS.join(", ")}, sig`);
    }
    if (record["alg"] !== "Ed25519") throw new Failure(n, "the signature's algorithm is not Ed25519");
    if (record["game_id"] !== gameId || record["events"] !== lines.length || record["chain_head"] !== prev) {
      throw new Failure(n, "the signature names another log (game id, event count or chain head)");
    }
    if (record["over"] !== over) throw new Failure(n, "the signature says otherwise whether the game is over");
    const result = record["result"] ?? null;
    const stated = ended === null ? null : { scores: ended["scores"] ?? null, winners: ended["winners"] ?? null };
    if (canonicalJson(result) !== canonicalJson(stated)) {
      throw new Failure(n, "the signed result is not the scores and winners of GameEnded");
    }
    if (key === null) throw new Failure(n, "the log is signed: give the server's public key (GET /signing-key)");
    if (record["key_id"] !== key.keyId) {
      throw new Failure(n, `signed by key ${String(record["key_id"])}, not by the key given (${key.keyId})`);
    }
    const sig = Buffer.from(String(record["sig"]), "base64");
    if (sig.length !== 64 || !verifySignature(null, signedBytes(record), key.key, sig)) {
      throw new Failure(n, "the signature does not match the signed fields (altered log or forged signature)");
    }
    signature = "signed";
  } else if (requireSignature) {
    throw new Failure(null, "the log carries no signature line");
  }
  return {
    ok: true,
    kind: "envelopes",
    gameId,
    events: lines.length,
    over,
    commitment: commitmentState,
    signature,
    chainHead: prev,
    line: null,
    reason: "",
  };
}

function verifyEvents(lines: Parsed[], requireSignature: boolean): Verdict {
  if (requireSignature) throw new Failure(null, "a bare engine log carries no signature");
  let ended: Record<string, Json> | null = null;
  lines.forEach((p, i) => {
    const e = p.value;
    if (typeof e["type"] !== "string" || typeof e["v"] !== "number") {
      throw new Failure(i + 1, "an engine event has a string type and an integer v");
    }
    if ((i === 0) !== (e["type"] === "GameCreated")) {
      throw new Failure(i + 1, "GameCreated is the first event and only the first");
    }
    if (ended !== null) throw new Failure(i + 1, "an event after GameEnded");
    if (e["type"] === "GameEnded") ended = e;
  });
  const state = checkCommitment(lines[0]!.value, ended, 1);
  return {
    ok: true,
    kind: "events",
    gameId: null,
    events: lines.length,
    over: ended !== null,
    commitment: state,
    signature: "unsigned",
    chainHead: null,
    line: null,
    reason: "",
  };
}

export interface VerifyOptions {
  /** The server's public key; a signed log verifies only with it. */
  key?: PublicKey | null;
  /** Refuse a log without a signature line (what a client trusting one server wants). */
  requireSignature?: boolean;
}

/** Verify an exported log (JSON Lines, as `GET /games/{id}/log` serves it). */
export function verifyLog(data: Uint8Array | string, options: VerifyOptions = {}): Verdict {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const key = options.key ?? null;
  let kind: Verdict["kind"] = "unknown";
  try {
    const raw = splitLines(bytes);
    if (raw.length === 0) throw new Failure(null, "the log is empty");
    const lines = raw.map((b, i) => {
      if (b.length === 0) throw new Failure(i + 1, "an empty line");
      return parse(b, i + 1);
    });
    const first = lines[0]!.value;
    if ("seed_withheld" in first) {
      kind = "withheld";
      throw new Failure(1, "the seed is held back (a duplicate set still runs): export the log again later");
    }
    if ("seq" in first && "event" in first) {
      throw new Failure(1, "a redacted log (a viewer's feed while the game is live): export it again after the end");
    }
    if ("hash" in first && "payload" in first) {
      kind = "envelopes";
      return verifyEnvelopes(lines, key, options.requireSignature ?? false);
    }
    if ("type" in first && "v" in first) {
      kind = "events";
      return verifyEvents(lines, options.requireSignature ?? false);
    }
    throw new Failure(1, "not a log: the first line is neither an envelope nor an engine event");
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    return {
      ok: false,
      kind,
      gameId: null,
      events: 0,
      over: false,
      commitment: "absent",
      signature: "unsigned",
      chainHead: null,
      line: e.line,
      reason: e.message,
    };
  }
}
