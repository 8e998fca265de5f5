#!/usr/bin/env node
// The smallest request a client can send to each operation of openapi.yaml that takes a request
// body: the required properties only (recursively), each from the schema's const, examples or
// enum, and the required parameters. Written as TypeScript against the types openapi-typescript
// generates with its default options (src/generated/api.ts), so that `tsc --strict` fails when
// the generated types demand more than the spec requires (a property with a `default` made
// required by `defaultNonNullable`, for example). Every operation with a body is covered: nothing
// is listed by hand.
//
//   node scripts/minimal-requests.mjs SPEC OUT.ts   the TypeScript check (npm run generate)
//   node scripts/minimal-requests.mjs SPEC --json   the same requests as JSON, one per line
import { readFileSync, writeFileSync } from "node:fs";
import { resolve as absolute } from "node:path";
import { pathToFileURL } from "node:url";
import yaml from "js-yaml";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const DEPTH = 32;

function main(argv) {
  const [specPath, out] = argv;
  if (!specPath || !out) {
    process.stderr.write("usage: minimal-requests.mjs SPEC (OUT.ts | --json)\n");
    return 2;
  }
  const spec = yaml.load(readFileSync(specPath, "utf8"));
  const requests = minimalRequests(spec);
  if (out === "--json") {
    process.stdout.write(requests.map((r) => JSON.stringify(r)).join("\n") + "\n");
  } else {
    writeFileSync(out, typescript(requests));
  }
  return 0;
}

/** One request per (operation, request media type): {path, method, mediaType, params, body}. */
export function minimalRequests(spec) {
  const out = [];
  for (const [path, item0] of Object.entries(spec.paths ?? {})) {
    const item = resolve(spec, item0);
    for (const method of METHODS) {
      const op = item[method];
      if (!op || !op.requestBody) continue;
      const requestBody = resolve(spec, op.requestBody);
      const params = parameters(spec, [...(item.parameters ?? []), ...(op.parameters ?? [])]);
      for (const [mediaType, media] of Object.entries(requestBody.content ?? {})) {
        const where = `${method.toUpperCase()} ${path} (${mediaType})`;
        const body = value(spec, media.schema ?? {}, exampleOf(media), where, 0);
        out.push({ path, method, mediaType, params, body });
      }
    }
  }
  return out;
}

/** The required parameters, by location: {path: {...}, query: {...}, header: {...}}. */
function parameters(spec, list) {
  const byKey = new Map();
  for (const p0 of list) {
    const p = resolve(spec, p0);
    byKey.set(`${p.in}:${p.name}`, p); // an operation's parameter overrides the path item's
  }
  const out = {};
  for (const p of byKey.values()) {
    if (!p.required && p.in !== "path") continue;
    if (p.in === "cookie") continue;
    const where = `parameter ${p.name}`;
    (out[p.in] ??= {})[p.name] = value(spec, p.schema ?? {}, exampleOf(p), where, 0);
  }
  return out;
}

function exampleOf(node) {
  if (node === undefined || node === null || typeof node !== "object") return undefined;
  if ("example" in node) return node.example;
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0];
  if (node.examples && typeof node.examples === "object") {
    const first = Object.values(node.examples)[0];
    if (first && typeof first === "object" && "value" in first) return first.value;
  }
  return undefined;
}

function resolve(spec, node) {
  let seen = 0;
  while (node && typeof node === "object" && typeof node.$ref === "string") {
    if (!node.$ref.startsWith("#/")) throw new Error(`only local $refs are followed: ${node.$ref}`);
    if (++seen > DEPTH) throw new Error(`$ref loop at ${node.$ref}`);
    let target = spec;
    for (const part of node.$ref.slice(2).split("/")) {
      target = target?.[part.replaceAll("~1", "/").replaceAll("~0", "~")];
    }
    if (target === undefined) throw new Error(`unresolved $ref ${node.$ref}`);
    node = target;
  }
  return node;
}

function typeOf(schema) {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") ?? "null";
  if (t) return t;
  if (schema.properties || schema.required) return "object";
  if (schema.items || schema.prefixItems) return "array";
  return undefined;
}

/** The smallest value of ``schema``; ``hint``: an example of it from an enclosing schema. */
function value(spec, schema0, hint, where, depth) {
  if (depth > DEPTH) throw new Error(`${where}: the required properties nest too deep (a loop?)`);
  const schema = resolve(spec, schema0);
  if ("const" in schema) return schema.const;
  const own = exampleOf(schema);
  const example = own !== undefined ? own : hint;
  if (schema.allOf) {
    let merged;
    for (const part of schema.allOf) {
      merged = merge(merged, value(spec, part, example, where, depth + 1));
    }
    const rest = { ...schema, allOf: undefined };
    return merge(merged, typeOf(rest) === "object" ? value(spec, rest, example, where, depth + 1) : undefined);
  }
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) {
    const branch = value(spec, branches[0], example, where, depth + 1);
    const rest = { ...schema, oneOf: undefined, anyOf: undefined };
    return typeOf(rest) === "object" ? merge(value(spec, rest, example, where, depth + 1), branch) : branch;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.includes(example) ? example : schema.enum[0];
  }
  const type = typeOf(schema);
  switch (type) {
    case "object": {
      const out = {};
      for (const name of schema.required ?? []) {
        const prop = schema.properties?.[name] ?? {};
        const inner = example && typeof example === "object" ? example[name] : undefined;
        out[name] = value(spec, prop, inner, `${where}.${name}`, depth + 1);
      }
      return out;
    }
    case "array": {
      const prefix = schema.prefixItems ?? [];
      const least = Math.max(schema.minItems ?? 0, prefix.length, 1);
      const count = Math.min(least, schema.maxItems ?? least);
      const items = [];
      for (let i = 0; i < count; i++) {
        const inner = Array.isArray(example) ? example[i % Math.max(example.length, 1)] : undefined;
        items.push(value(spec, prefix[i] ?? schema.items ?? {}, inner, `${where}[${i}]`, depth + 1));
      }
      return items;
    }
    case "string":
      if (typeof example === "string") return example;
      if (schema.format === "date-time") return "2026-01-01T00:00:00Z";
      return "x".repeat(Math.max(schema.minLength ?? 1, 1));
    case "integer":
    case "number":
      if (typeof example === "number") return example;
      if (typeof schema.minimum === "number") return schema.minimum;
      if (typeof schema.exclusiveMinimum === "number") return schema.exclusiveMinimum + 1;
      return 0;
    case "boolean":
      return typeof example === "boolean" ? example : false;
    case "null":
      return null;
    default:
      return example !== undefined ? example : {};
  }
}

function merge(a, b) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (isPlain(a) && isPlain(b)) return { ...a, ...b };
  return b;
}

function isPlain(x) {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function typescript(requests) {
  const lines = [
    "// Written by scripts/minimal-requests.mjs from openapi.yaml (npm run generate): do not edit.",
    "// The smallest request to each operation that takes a body, type-checked against the types",
    "// openapi-typescript generated with its default options; compiled, never run.",
    'import type { Client } from "openapi-fetch";',
    'import type { paths } from "./api.js";',
    "",
  ];
  requests.forEach((r, i) => {
    const op = `paths[${JSON.stringify(r.path)}][${JSON.stringify(r.method)}]`;
    const media = JSON.stringify(r.mediaType);
    lines.push(
      `export const body${i}: NonNullable<${op}["requestBody"]>["content"][${media}] = ${JSON.stringify(r.body)};`,
    );
  });
  lines.push("", "export function minimalRequests(api: Client<paths>): Promise<unknown>[] {", "  return [");
  for (const r of requests) {
    const init = [];
    if (Object.keys(r.params).length > 0) init.push(`params: ${JSON.stringify(r.params)}`);
    init.push(`body: ${JSON.stringify(r.body)}`);
    lines.push(`    api.${r.method.toUpperCase()}(${JSON.stringify(r.path)}, { ${init.join(", ")} }),`);
  }
  lines.push("  ];", "}", "");
  return lines.join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(absolute(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
