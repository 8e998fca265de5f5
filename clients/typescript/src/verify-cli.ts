/**
 * `node dist/src/verify-cli.js [--key KEY] [--require-signature] LOG...`: verify exported logs
 * (src/verify.ts) and print one JSON verdict a line; exit status 1 when any log fails. KEY is
 * the server's public key as `GET /signing-key` serves it (a file holding that JSON, PEM or the
 * base64 of the raw key), or the text itself.
 */

import { existsSync, readFileSync } from "node:fs";

import { loadPublicKey, verifyLog, type PublicKey } from "./verify.js";

function main(argv: string[]): number {
  let key: PublicKey | null = null;
  let requireSignature = false;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--key") {
      const given = argv[++i];
      if (given === undefined) throw new Error("--key needs a value");
      key = loadPublicKey(existsSync(given) ? readFileSync(given, "utf8") : given);
    } else if (arg === "--require-signature") {
      requireSignature = true;
    } else {
      files.push(arg);
    }
  }
  if (files.length === 0) {
    process.stderr.write("usage: verify-cli [--key KEY] [--require-signature] LOG...\n");
    return 2;
  }
  let failed = 0;
  for (const file of files) {
    const verdict = verifyLog(readFileSync(file), { key, requireSignature });
    process.stdout.write(JSON.stringify({ file, ...verdict }) + "\n");
    if (!verdict.ok) failed++;
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
