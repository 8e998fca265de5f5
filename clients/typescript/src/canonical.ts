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

/**
 * What is wrong with the keys of the objects of a JSON text that `JSON.parse` accepts: a key
 * given twice in one object (first), else keys out of canonical order (strictly increasing by
 * code point); null when neither. `JSON.parse` keeps the last value of a key given twice and
 * other readers the first, so a line with one says different things to different readers; only
 * its text shows it. Strings are skipped whole (a `"` or `{` inside one is no structure).
 */
export function keyProblem(text: string): string | null {
  // one entry per open container: an object's keys so far and its last key, or null (an array)
  const open: ({ keys: Set<string>; last: string | null } | null)[] = [];
  let expectKey = false;
  let disorder: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const top = open[open.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return `the key ${JSON.stringify(key)} is given twice in one object`;
        if (disorder === null && top.last !== null && byCodePoint(top.last, key) > 0) {
          disorder = `the key ${JSON.stringify(key)} follows ${JSON.stringify(top.last)}: keys out of canonical order`;
        }
        top.keys.add(key);
        top.last = key;
        expectKey = false;
      }
      i = end;
    } else if (ch === "{") {
      open.push({ keys: new Set(), last: null });
      expectKey = true;
    } else if (ch === "[") {
      open.push(null);
      expectKey = false;
    } else if (ch === "}" || ch === "]") {
      open.pop();
      expectKey = false;
    } else if (ch === ",") {
      expectKey = Boolean(open[open.length - 1]);
    }
  }
  return disorder;
}
