/**
 * The server's canonical JSON (docs/log-format.md, "Canonical JSON"): object keys sorted by
 * Unicode code point, no whitespace, strings with only `"`, `\` and the C0 control characters
 * escaped (everything else written as UTF-8), integers in decimal.
 *
 * This writer covers the values a signature record and the envelopes hold in practice: null,
 * booleans, strings, safe integers, arrays and objects. It refuses other numbers (the server
 * writes a non-integer the way Python's `repr` does, which a parsed JavaScript number cannot
 * always reproduce: `30.0` parses as `30`), so a verifier hashes an envelope's own bytes
 * instead (see `envelopeHashInput` in verify.ts).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class NotCanonicalizable extends Error {}

/** Compare two strings by Unicode code point (not UTF-16 code unit). */
export function byCodePoint(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i]!.codePointAt(0) ?? 0) - (y[i]!.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

export function canonicalString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const short = SHORT[ch];
    if (short !== undefined) {
      out += short;
    } else if (code < 0x20) {
      out += "\\u" + code.toString(16).padStart(4, "0");
    } else if (code >= 0xd800 && code <= 0xdfff) {
      const next = s.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += ch + s[i + 1]!;
        i++;
      } else {
        throw new NotCanonicalizable("a lone surrogate has no UTF-8 form");
      }
    } else {
      out += ch;
    }
  }
  return out + '"';
}

/** The canonical JSON text of `value`; throws NotCanonicalizable outside the subset above. */
export function canonicalJson(value: Json): string {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) {
      throw new NotCanonicalizable(`${value} is not a safe integer`);
    }
    return Object.is(value, -0) ? "0" : String(value);
  }
  if (typeof value === "string") return canonicalString(value);
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  const keys = Object.keys(value).sort(byCodePoint);
  return "{" + keys.map((k) => canonicalString(k) + ":" + canonicalJson(value[k]!)).join(",") + "}";
}
