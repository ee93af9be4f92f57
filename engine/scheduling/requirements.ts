// The requirement algebra of docs/karpenter/scheduling.md §1: a requirement is a value set (possibly a complement)
// with optional integer bounds and a minValues demand; a Requirements map holds one per key and only ever
// narrows. This is the engine's readable, string-based implementation; the solver works on an interned,
// bitset form of the same algebra (engine/abi), and tests check the two agree.
import type { Labels, NodeSelectorRequirement, Operator, Requirement, Requirements } from '../domain/types.ts';
import { normalizeKey } from './labels.ts';

const EMPTY: ReadonlySet<string> = new Set();
const MAX_INT = Number.MAX_SAFE_INTEGER;

export function req(
  key: string,
  complement: boolean,
  values: Iterable<string>,
  gte?: number,
  lte?: number,
  minValues?: number,
): Requirement {
  const r: {
    key: string;
    complement: boolean;
    values: ReadonlySet<string>;
    gte?: number;
    lte?: number;
    minValues?: number;
  } = {
    key: normalizeKey(key),
    complement,
    values: new Set(values),
  };
  if (gte !== undefined) r.gte = gte;
  if (lte !== undefined) r.lte = lte;
  if (minValues !== undefined) r.minValues = minValues;
  return r;
}

/** A requirement's content as a string, the same for requirements that say the same (their values in the same order). */
export function requirementKey(r: Requirement): string {
  return JSON.stringify([r.key, r.complement, [...r.values], r.gte, r.lte, r.minValues]);
}

/** Builds a requirement from an operator (§1.2). Values of the numeric operators must be validated first. */
export function fromOperator(key: string, op: Operator, values: readonly string[], minValues?: number): Requirement {
  switch (op) {
    case 'In':
      return req(key, false, values, undefined, undefined, minValues);
    case 'NotIn':
      return req(key, true, values, undefined, undefined, minValues);
    case 'Exists':
      return req(key, true, EMPTY, undefined, undefined, minValues);
    case 'DoesNotExist':
      return req(key, false, EMPTY, undefined, undefined, minValues);
    case 'Gt': {
      const n = Number(values[0]);
      return n >= MAX_INT
        ? req(key, false, EMPTY, undefined, undefined, minValues)
        : req(key, true, EMPTY, n + 1, undefined, minValues);
    }
    case 'Lt':
      return req(key, true, EMPTY, undefined, Number(values[0]) - 1, minValues);
    case 'Gte':
      return req(key, true, EMPTY, Number(values[0]), undefined, minValues);
    case 'Lte':
      return req(key, true, EMPTY, undefined, Number(values[0]), minValues);
  }
}

export function fromSelector(r: NodeSelectorRequirement): Requirement {
  return fromOperator(r.key, r.operator, r.values, r.minValues);
}

function withinBounds(r: Requirement, v: string): boolean {
  return inRange(r.gte, r.lte, v);
}

/** Whether v lies within the bounds gte..lte (either may be absent; bounded values are integers). */
function inRange(gte: number | undefined, lte: number | undefined, v: string): boolean {
  if (gte === undefined && lte === undefined) return true;
  if (!/^-?\d+$/.test(v)) return false;
  const n = Number(v);
  return (gte === undefined || n >= gte) && (lte === undefined || n <= lte);
}

/** Whether the value is allowed (§1.1). */
export function has(r: Requirement, v: string): boolean {
  return (r.complement ? !r.values.has(v) : r.values.has(v)) && withinBounds(r, v);
}

/** The operator the requirement reports (§1.4). */
export function operatorOf(r: Requirement): 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' {
  if (r.complement) return r.values.size > 0 ? 'NotIn' : 'Exists';
  return r.values.size > 0 ? 'In' : 'DoesNotExist';
}

/** Number of allowed values; complements are "infinite". */
export function len(r: Requirement): number {
  return r.complement ? MAX_INT - r.values.size : r.values.size;
}

function boundsConflict(gte: number | undefined, lte: number | undefined): boolean {
  return gte !== undefined && lte !== undefined && gte > lte;
}

/** a ∩ b for the same key (§1.5). */
export function intersect(a: Requirement, b: Requirement): Requirement {
  const complement = a.complement && b.complement;
  const gte = a.gte === undefined ? b.gte : b.gte === undefined ? a.gte : Math.max(a.gte, b.gte);
  const lte = a.lte === undefined ? b.lte : b.lte === undefined ? a.lte : Math.min(a.lte, b.lte);
  const minValues =
    a.minValues === undefined
      ? b.minValues
      : b.minValues === undefined
        ? a.minValues
        : Math.max(a.minValues, b.minValues);
  if (boundsConflict(gte, lte)) return req(a.key, false, EMPTY, undefined, undefined, minValues);
  let values: Set<string>;
  if (a.complement && b.complement) values = new Set([...a.values, ...b.values]);
  else if (a.complement) values = new Set([...b.values].filter((v) => !a.values.has(v)));
  else if (b.complement) values = new Set([...a.values].filter((v) => !b.values.has(v)));
  else values = new Set([...a.values].filter((v) => b.values.has(v)));
  if (complement) return req(a.key, true, values, gte, lte, minValues);
  const bounded = { key: a.key, complement: false, values: EMPTY, gte, lte } as Requirement;
  const kept = [...values].filter((v) => withinBounds(bounded, v));
  return req(a.key, false, kept, undefined, undefined, minValues);
}

/**
 * Whether a ∩ b is non-empty, without building it (§1.6). DoesNotExist never intersects anything. It makes no
 * object of its own: the scheduler and the bound's model call it for every pair of requirements they compare, and
 * the bounds object each call made was a large part of a what-if job's garbage (docs/benchmarks.md, "Worker pool").
 */
export function hasIntersection(a: Requirement, b: Requirement): boolean {
  const gte = a.gte === undefined ? b.gte : b.gte === undefined ? a.gte : Math.max(a.gte, b.gte);
  const lte = a.lte === undefined ? b.lte : b.lte === undefined ? a.lte : Math.min(a.lte, b.lte);
  if (boundsConflict(gte, lte)) return false;
  if (a.complement && b.complement) return true;
  if (a.complement) {
    for (const v of b.values) if (!a.values.has(v) && inRange(gte, lte, v)) return true;
    return false;
  }
  if (b.complement) {
    for (const v of a.values) if (!b.values.has(v) && inRange(gte, lte, v)) return true;
    return false;
  }
  for (const v of a.values) if (b.values.has(v) && inRange(gte, lte, v)) return true;
  return false;
}

/**
 * A concrete value, deterministically: the smallest member of an In set; for a complement, the lower bound
 * (or 0) unless excluded, then counting up. Karpenter picks at random; any deterministic rule is valid.
 */
export function anyValue(r: Requirement): string | undefined {
  if (!r.complement) {
    // The first value in sort() order, without copying and sorting the set.
    let min: string | undefined;
    for (const v of r.values) if (min === undefined || v < min) min = v;
    return min;
  }
  for (let n = r.gte ?? 0; r.lte === undefined || n <= r.lte; n++) {
    if (!r.values.has(String(n))) return String(n);
    if (n > (r.gte ?? 0) + r.values.size + 1) break;
  }
  return undefined;
}

export function formatRequirement(r: Requirement): string {
  const op = operatorOf(r);
  const vals = [...r.values].sort();
  let s = `${r.key} ${op}`;
  if (op === 'In' || op === 'NotIn') s += ` [${vals.join(' ')}]`;
  if (r.gte !== undefined) s += ` >=${r.gte}`;
  if (r.lte !== undefined) s += ` <=${r.lte}`;
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Requirements: one per key

export function requirements(...rs: Requirement[]): Requirements {
  return add(new Map(), ...rs);
}

/** Intersects each requirement into the map (§1.7), returning a new map. */
export function add(base: Requirements, ...rs: Requirement[]): Requirements {
  const out = new Map(base);
  for (const r of rs) {
    const cur = out.get(r.key);
    out.set(r.key, cur ? intersect(cur, r) : r);
  }
  return out;
}

export function addAll(base: Requirements, other: Requirements): Requirements {
  return add(base, ...other.values());
}

/** The stored requirement, or Exists for an undefined key ("undefined keys allow anything"). */
export function get(reqs: Requirements, key: string): Requirement {
  return reqs.get(key) ?? req(key, true, EMPTY);
}

/** has(get(reqs, key), v) without building the Exists requirement of a missing key: a missing key allows any value. */
export function allows(reqs: Requirements, key: string, v: string): boolean {
  const r = reqs.get(key);
  return r === undefined || has(r, v);
}

export function fromLabels(labels: Labels): Requirements {
  return requirements(...Object.entries(labels).map(([k, v]) => req(k, false, [v])));
}

export function fromSelectorRequirements(list: readonly NodeSelectorRequirement[]): Requirements {
  return requirements(...list.map(fromSelector));
}

/**
 * A.Intersects(B): every key present in both must intersect, except that two sides both reporting
 * NotIn/DoesNotExist are accepted (§1.8). Returns the failing keys' messages, or undefined.
 */
export function intersects(a: Requirements, b: Requirements): string | undefined {
  if (intersectsAll(a, b)) return undefined;
  // Some key fails: its messages, in the order of the smaller map's keys.
  const swapped = a.size > b.size;
  const small = swapped ? b : a;
  const big = swapped ? a : b;
  const errs: string[] = [];
  for (const k of small.keys()) {
    const rb = big.get(k);
    if (!rb) continue;
    const rs = small.get(k)!;
    const ra = swapped ? rb : rs;
    const rB = swapped ? rs : rb;
    if (!keyIntersects(ra, rB)) errs.push(`key ${k}, ${formatRequirement(rB)} not in ${formatRequirement(ra)}`);
  }
  return errs.join('; ');
}

/**
 * A.Intersects(B) as yes or no, with no messages: the launch filter, the templates and the bound ask it of every
 * instance type, and most types fail (a message built per failing type was garbage two pool workers collect,
 * docs/benchmarks.md). The smaller map is walked by its keys (an entry would be a new array each).
 */
export function intersectsAll(a: Requirements, b: Requirements): boolean {
  const swapped = a.size > b.size;
  const small = swapped ? b : a;
  const big = swapped ? a : b;
  for (const k of small.keys()) {
    const rb = big.get(k);
    if (!rb) continue;
    const rs = small.get(k)!;
    if (!(swapped ? keyIntersects(rb, rs) : keyIntersects(rs, rb))) return false;
  }
  return true;
}

/** Both sides' requirements on a key intersect, or both are NotIn/DoesNotExist (§1.8). */
function keyIntersects(ra: Requirement, rb: Requirement): boolean {
  if (hasIntersection(ra, rb)) return true;
  const oa = operatorOf(ra);
  const ob = operatorOf(rb);
  return (oa === 'NotIn' || oa === 'DoesNotExist') && (ob === 'NotIn' || ob === 'DoesNotExist');
}

/**
 * A.Compatible(B) ("B can loosely be met by A", §1.8): every key of B must be defined by A, allowed
 * undefined, or be NotIn/DoesNotExist on B's side; then Intersects.
 */
export function compatible(
  a: Requirements,
  b: Requirements,
  allowUndefined: ReadonlySet<string> = EMPTY,
): string | undefined {
  for (const [k, rb] of b) {
    if (allowUndefined.has(k) || a.has(k)) continue;
    const ob = operatorOf(rb);
    if (ob === 'NotIn' || ob === 'DoesNotExist') continue;
    return `label "${k}" does not have known values`;
  }
  return intersects(a, b);
}

/** Single-valued In requirements as labels (how a NodeClaim's requirements become node labels). */
export function singleValueLabels(reqs: Requirements): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, r] of reqs) if (!r.complement && r.values.size === 1) out[k] = [...r.values][0]!;
  return out;
}

/** Serialises back to node selector requirements (a bounded complement becomes Gte/Lte expressions). */
export function toSelectorRequirements(reqs: Requirements): NodeSelectorRequirement[] {
  const out: NodeSelectorRequirement[] = [];
  for (const r of reqs.values()) {
    const mv = r.minValues !== undefined ? { minValues: r.minValues } : {};
    const op = operatorOf(r);
    if (r.complement && (r.gte !== undefined || r.lte !== undefined)) {
      if (r.gte !== undefined) out.push({ key: r.key, operator: 'Gte', values: [String(r.gte)], ...mv });
      if (r.lte !== undefined) out.push({ key: r.key, operator: 'Lte', values: [String(r.lte)], ...mv });
      if (r.values.size) out.push({ key: r.key, operator: 'NotIn', values: [...r.values].sort() });
      continue;
    }
    out.push({ key: r.key, operator: op, values: op === 'In' || op === 'NotIn' ? [...r.values].sort() : [], ...mv });
  }
  return out;
}
