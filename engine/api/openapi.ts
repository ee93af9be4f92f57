// Evaluates our schema data (schemas/types.ts) the way the Kubernetes API server evaluates a CRD's
// structural schema: prune nulls, apply defaults, check types/required/enums/patterns/bounds, report
// unknown fields (kubectl's strict field validation), then run the CEL rules (as their TS twins).
import { fieldError, isRecord, show, typeName, type FieldError, type PathSeg } from './errors.ts';
import { isTransitionRule, type Schema } from './schemas/types.ts';

/** The schema of a declared property (own keys only: "__proto__" in data is just an unknown field). */
function prop(s: Schema, k: string): Schema | undefined {
  return s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
}

// Parsing runs for every watch event and write answer of the objects parsed (a NodeClaim's is validated whole), so
// what follows avoids garbage on the path where nothing is wrong: object keys rather than entry pairs, one path
// array pushed and popped (copied only into an error), one error callback per validation, defaults looked up
// once per schema. A heap profile of the controller benchmark's steady churn at 1,000 nodes had this validation
// at a tenth of the main thread's allocations (docs/controller-benchmark.md, "Where the steady state allocates").

/** A schema's properties that have a default, worked out once per schema (the schemas are static data). */
const defaulted = new WeakMap<Schema, ReadonlyArray<readonly [string, Schema]>>();

function withDefaults(schema: Schema): ReadonlyArray<readonly [string, Schema]> {
  let list = defaulted.get(schema);
  if (!list) {
    list = Object.entries(schema.properties ?? {}).filter(([, sub]) => sub.default !== undefined);
    defaulted.set(schema, list);
  }
  return list;
}

/** Returns a copy of `value` with nulls pruned and schema defaults filled in, recursively. */
export function applyDefaults(schema: Schema, value: unknown): unknown {
  if (value === null) return schema.nullable ? null : undefined;
  if (schema.type === 'object' && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) {
      const v = value[k];
      const sub = prop(schema, k) ?? schema.additionalProperties;
      const d = sub ? applyDefaults(sub, v) : v;
      if (d === undefined) continue;
      // A "__proto__" key is defined, so that it stays a plain key instead of replacing the prototype; any other
      // key is assigned (defining every key cost a fifth of parsing a NodeClaim).
      if (k === '__proto__')
        Object.defineProperty(out, k, { value: d, enumerable: true, writable: true, configurable: true });
      else out[k] = d;
    }
    for (const [k, sub] of withDefaults(schema)) {
      if (out[k] === undefined) out[k] = applyDefaults(sub, structuredClone(sub.default));
    }
    return out;
  }
  if (schema.type === 'array' && Array.isArray(value) && schema.items) {
    const items = schema.items;
    return value.map((v) => applyDefaults(items, v));
  }
  return value;
}

interface SchemaContext {
  /** "NodePool/default": every error names its object. */
  readonly object: string;
}

/** Validates an already-defaulted value against a schema. */
export function validateSchema(
  schema: Schema,
  value: unknown,
  path: readonly PathSeg[],
  ctx: SchemaContext,
): FieldError[] {
  const out: FieldError[] = [];
  // The path is one array that the walk pushes to and pops from: an error takes a copy of it.
  const err: Report = (p, msg) => {
    out.push(fieldError(ctx.object, [...p], msg));
  };
  walk(schema, value, [...path], err);
  return out;
}

/** Records an error at a path (the callee copies the path). */
type Report = (p: readonly PathSeg[], m: string) => void;

/**
 * The transition rules (oldSelf) of an update, evaluated where both the new and the stored value exist.
 * Values are correlated through object fields and map keys (not list items, as Kubernetes does for
 * lists that are not x-kubernetes-list-type map).
 */
export function transitionErrors(
  s: Schema,
  value: unknown,
  old: unknown,
  path: readonly PathSeg[],
  ctx: SchemaContext,
): FieldError[] {
  if (value === undefined || old === undefined) return [];
  const out: FieldError[] = [];
  for (const r of s.rules ?? []) {
    if (isTransitionRule(r) && !(r.check as (self: unknown, oldSelf: unknown) => boolean)(value, old))
      out.push(fieldError(ctx.object, path, r.message));
  }
  if (isRecord(value) && isRecord(old)) {
    for (const [k, v] of Object.entries(value)) {
      const sub = prop(s, k);
      if (sub) out.push(...transitionErrors(sub, v, old[k], [...path, k], ctx));
      else if (s.additionalProperties)
        out.push(...transitionErrors(s.additionalProperties, v, old[k], [...path, { key: k }], ctx));
    }
  }
  return out;
}

const regexCache = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let r = regexCache.get(pattern);
  if (!r) {
    r = new RegExp(pattern, 'u');
    regexCache.set(pattern, r);
  }
  return r;
}

/**
 * Checks one node; returns false when the value (or something below it) has the wrong JSON type. CEL rules
 * run only over well-typed values, as the API server skips CEL when a type error blocks it; other
 * problems (patterns, bounds, required fields) do not stop them, so one pass reports everything.
 */
function walk(s: Schema, v: unknown, path: PathSeg[], err: Report): boolean {
  if (v === null && s.nullable) return true;
  let typed = true;
  if (s.intOrString) {
    if (typeof v === 'string') checkString(s, v, path, err);
    else if (!(typeof v === 'number' && Number.isInteger(v))) {
      err(
        path,
        `must be an integer or a string, not ${typeName(v)} (${show(v)})${typeof v === 'number' ? `; quote it: "${v}"` : ''}`,
      );
      typed = false;
    }
  } else {
    typed = walkTyped(s, v, path, err);
  }
  if (typed && s.rules) {
    for (const r of s.rules) {
      if (isTransitionRule(r)) continue;
      const res = (r.check as (self: unknown) => boolean | readonly { path: readonly PathSeg[]; message?: string }[])(
        v,
      );
      if (res === true) continue;
      if (res === false) err(path, r.message);
      else for (const vio of res) err([...path, ...vio.path], vio.message ?? r.message);
    }
  }
  return typed;
}

function walkTyped(s: Schema, v: unknown, path: PathSeg[], err: Report): boolean {
  switch (s.type) {
    case 'object':
      if (!isRecord(v)) break;
      return walkObject(s, v, path, err);
    case 'array':
      if (!Array.isArray(v)) {
        err(path, `must be a list, not ${typeName(v)} (${show(v)})${s.hint ? `; ${s.hint}` : ''}`);
        return false;
      }
      return walkArray(s, v, path, err);
    case 'string':
      if (typeof v !== 'string') {
        const quote = typeof v === 'number' || typeof v === 'boolean' ? `; quote it: "${String(v)}"` : '';
        err(path, `must be a string, not ${typeName(v)} (${show(v)})${quote}`);
        return false;
      }
      checkString(s, v, path, err);
      return true;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) {
        const q = typeof v === 'string' && /^-?\d+$/.test(v) ? `; write it without quotes: ${v}` : '';
        err(path, `must be an integer, not ${typeName(v)} (${show(v)})${q}`);
        return false;
      }
      checkNumber(s, v, path, err);
      return true;
    case 'number':
      if (typeof v !== 'number') {
        err(path, `must be a number, not ${typeName(v)} (${show(v)})`);
        return false;
      }
      checkNumber(s, v, path, err);
      return true;
    case 'boolean':
      if (typeof v !== 'boolean') {
        err(path, `must be true or false, not ${typeName(v)} (${show(v)})`);
        return false;
      }
      return true;
    default:
      return true;
  }
  err(path, `must be an object (a map of fields), not ${typeName(v)} (${show(v)})${s.hint ? `; ${s.hint}` : ''}`);
  return false;
}

function walkObject(s: Schema, v: Record<string, unknown>, path: PathSeg[], err: Report): boolean {
  for (const r of s.required ?? []) {
    if (v[r] === undefined) {
      const sub = s.properties?.[r];
      err([...path, r], `is required but missing${sub?.hint ? ` (${sub.hint})` : ''}`);
    }
  }
  if (s.maxProperties !== undefined && Object.keys(v).length > s.maxProperties) {
    err(path, `has ${Object.keys(v).length} entries; at most ${s.maxProperties} are allowed`);
  }
  let typed = true;
  for (const k of Object.keys(v)) {
    const sub = prop(s, k);
    if (sub) typed = walkAt(sub, v[k], path, k, err) && typed;
    else if (s.additionalProperties) typed = walkAt(s.additionalProperties, v[k], path, { key: k }, err) && typed;
    else if (!s.preserveUnknownFields) {
      const guess = closest(k, Object.keys(s.properties ?? {}));
      err([...path, k], `unknown field "${k}"${guess ? ` (did you mean "${guess}"?)` : ''}`);
    }
  }
  return typed;
}

/** Walks `v` at `path` + `seg`, with `seg` pushed onto the path for the walk and popped after. */
function walkAt(s: Schema, v: unknown, path: PathSeg[], seg: PathSeg, err: Report): boolean {
  path.push(seg);
  try {
    return walk(s, v, path, err);
  } finally {
    path.pop();
  }
}

function walkArray(s: Schema, v: unknown[], path: PathSeg[], err: Report): boolean {
  if (s.minItems !== undefined && v.length < s.minItems) {
    err(
      path,
      s.minItems === 1 ? 'must have at least one item' : `has ${v.length} items; at least ${s.minItems} are required`,
    );
  }
  if (s.maxItems !== undefined && v.length > s.maxItems)
    err(path, `has ${v.length} items; at most ${s.maxItems} are allowed`);
  let typed = true;
  if (s.items) {
    for (let i = 0; i < v.length; i++) typed = walkAt(s.items, v[i], path, i, err) && typed;
  }
  if (s.listType === 'set') {
    const seen = new Set<string>();
    v.forEach((item, i) => {
      const k = JSON.stringify(item);
      if (seen.has(k)) err([...path, i], `duplicate value ${show(item)}`);
      seen.add(k);
    });
  }
  return typed;
}

/** The string's length in code points, as `[...v].length` counts it (a lone surrogate is one), without the array. */
function codePoints(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++, n++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length) {
      const d = v.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

function checkString(s: Schema, v: string, path: PathSeg[], err: Report): void {
  const len = s.minLength !== undefined || s.maxLength !== undefined ? codePoints(v) : 0;
  if (s.enum && !s.enum.includes(v)) {
    err(path, `${show(v)} is not allowed; use one of: ${s.enum.join(', ')}`);
    return;
  }
  if (s.minLength !== undefined && len < s.minLength)
    err(path, s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters long`);
  if (s.maxLength !== undefined && len > s.maxLength)
    err(path, `${show(v)} is ${len} characters long; at most ${s.maxLength} are allowed`);
  if (s.pattern !== undefined && !regex(s.pattern).test(v)) {
    err(path, s.patternHint ? `${show(v)} ${s.patternHint}` : `${show(v)} does not match the pattern ${s.pattern}`);
  }
  if (s.format === 'date-time' && Number.isNaN(Date.parse(v)))
    err(path, `${show(v)} is not an RFC 3339 date-time such as 2026-01-02T15:04:05Z`);
}

function checkNumber(s: Schema, v: number, path: PathSeg[], err: Report): void {
  if (s.enum && !s.enum.includes(v)) err(path, `${v} is not allowed; use one of: ${s.enum.join(', ')}`);
  if (s.minimum !== undefined && v < s.minimum) err(path, `must be at least ${s.minimum} (got ${v})`);
  if (s.maximum !== undefined && v > s.maximum) err(path, `must be at most ${s.maximum} (got ${v})`);
  if (s.format === 'int32' && (v < -(2 ** 31) || v > 2 ** 31 - 1)) err(path, `${v} does not fit in a 32-bit integer`);
  if (s.format === 'int64' && !Number.isSafeInteger(v)) err(path, `${v} is too large`);
}

/** The known name closest to a misspelt one (case-insensitive equality or edit distance <= 2). */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    if (k.toLowerCase() === name.toLowerCase()) return k;
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
