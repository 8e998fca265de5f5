/**
 * `node dist/src/vectors-cli.js ../../docs/log-format.md`: check this client's canonical JSON,
 * envelope hashing, commitments and signature checking against the document's test vectors.
 * Prints how many vectors passed; exit status 1 on the first that does not.
 */

import { createPrivateKey, sign } from "node:crypto";
import { readFileSync } from "node:fs";

import { canonicalJson, keyProblem, type Json } from "./canonical.js";
import { commitment, envelopeHashInput, loadPublicKey, sha256Hex, signedBytes, verifyLog } from "./verify.js";

type Vector = Record<string, Json>;

function check(what: string, ok: boolean): void {
  if (!ok) throw new Error(`test vector failed: ${what}`);
}

function main(path: string): number {
  const text = readFileSync(path, "utf8");
  const vectors = [...text.matchAll(/```json vector\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!) as Vector);
  const lines: string[] = [];
  let checked = 0;
  for (const v of vectors) {
    const kind = v["kind"];
    if (kind === "canonical") {
      check("canonical JSON", canonicalJson(v["value"]!) === v["canonical"]);
      check("canonical sha256", sha256Hex(String(v["canonical"])) === v["sha256"]);
    } else if (kind === "canonical-float") {
      // non-integer numbers are hashed as written, never re-serialized here
      check("float sha256", sha256Hex(String(v["canonical"])) === v["sha256"]);
    } else if (kind === "envelope") {
      const line = String(v["line"]);
      const input = envelopeHashInput(Buffer.from(line, "utf8"), String(v["hash"]));
      check("hashed bytes", Buffer.from(input).toString("utf8") === v["hashed"]);
      check("envelope hash", sha256Hex(input) === v["hash"]);
      lines.push(line);
    } else if (kind === "commitment") {
      check(`commitment rules ${String(v["rules"])}`, commitment(String(v["seed"]), Number(v["rules"]), String(v["game"])) === v["commitment"]);
    } else if (kind === "signature") {
      const record = (JSON.parse(String(v["line"])) as { signature: Record<string, Json> }).signature;
      check("signed bytes", Buffer.from(signedBytes(record)).toString("utf8") === v["signed"]);
      const priv = createPrivateKey({
        key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(String(v["private_key"]), "hex")]),
        format: "der",
        type: "pkcs8",
      });
      check("signature", sign(null, signedBytes(record), priv).toString("base64") === v["sig"]);
      const key = loadPublicKey(String(v["public_key"]));
      check("key id", key.keyId === v["key_id"]);
      const verdict = verifyLog([...lines, String(v["line"])].join("\n") + "\n", { key, requireSignature: true });
      check(`the vectors' log verifies: ${verdict.reason}`, verdict.ok && verdict.signature === "signed");
    } else if (kind === "signed-result") {
      const key = loadPublicKey(String(v["public_key"]));
      const ended = String(v["ended"]);
      const log = (last: string) => verifyLog([...lines, ended, last].join("\n") + "\n", { key, requireSignature: true });
      const good = log(String(v["line"]));
      check(`the log signing GameEnded's result verifies: ${good.reason}`, good.ok && good.over);
      const bad = log(String(v["refused"]));
      check("the log signing another result is refused", !bad.ok && bad.reason.includes("GameEnded"));
    } else if (kind === "abandoned") {
      const key = loadPublicKey(String(v["public_key"]));
      const ending = v["lines"] as string[];
      const ended = JSON.parse(ending[ending.length - 1]!) as { type: string; payload: Record<string, Json> };
      check("an abandoned game ends with GameEnded, reason abandoned, no winners",
        ended.type === "GameEnded" && ended.payload["reason"] === "abandoned" && canonicalJson(ended.payload["winners"]!) === "[]");
      const verdict = verifyLog([...lines, ...ending, String(v["line"])].join("\n") + "\n", { key, requireSignature: true });
      check(`the abandoned game's log verifies: ${verdict.reason}`, verdict.ok && verdict.over && verdict.signature === "signed");
    } else if (kind === "foreign-game") {
      const verdict = verifyLog(String(v["line"]) + "\n");
      check("a GameCreated naming another game than its envelope's is refused", !verdict.ok && verdict.reason.includes("names game"));
    } else if (kind === "duplicate-key") {
      for (const line of v["lines"] as string[]) {
        check("a key twice is found in the text", keyProblem(line)?.includes("twice") ?? false);
        const verdict = verifyLog(line + "\n");
        check("a log with a key twice is refused", !verdict.ok && verdict.reason.includes("twice"));
      }
    } else {
      throw new Error(`unknown test vector kind ${String(kind)}`);
    }
    checked++;
  }
  check("the document has test vectors", checked >= 7);
  process.stdout.write(`${checked} test vectors passed\n`);
  return 0;
}

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write("usage: vectors-cli docs/log-format.md\n");
  process.exitCode = 2;
} else {
  process.exitCode = main(path);
}
