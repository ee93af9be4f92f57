// Resource lists in integer units, and the arithmetic the scheduler needs.
//
// Units: `cpu` in millicores; `memory`, `ephemeral-storage` and `hugepages-*` in bytes; `pods` and every
// other resource (nvidia.com/gpu, vpc.amazonaws.com/pod-eni, ...) in whole units. Kubernetes rounds up
// when it converts a quantity to these units (MilliValue / Value), and so do we.
import { isNegative, milliValue, parseQuantity, QuantityError, unitValue, type Quantity } from './quantity.ts';

export type Resources = Readonly<Record<string, number>>;

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const PODS = 'pods';
export const EPHEMERAL_STORAGE = 'ephemeral-storage';
/** The pseudo-resource NodePool limits and cluster state use for node counts. */
export const NODES = 'nodes';

/**
 * Converts one quantity of the named resource into its integer unit. A request, limit, capacity or
 * reservation is never negative, and must fit an exact integer (2^53 - 1 millicores, bytes or units):
 * anything else is a QuantityError saying which.
 */
export function resourceValue(name: string, q: Quantity | string | number): number {
  const quantity = typeof q === 'object' ? q : parseQuantity(q);
  const shown = typeof q === 'object' ? 'the quantity' : JSON.stringify(q);
  if (isNegative(quantity)) throw new QuantityError(`${shown} is negative: ${name} must be 0 or more`);
  const v = name === CPU ? milliValue(quantity) : unitValue(quantity);
  if (!Number.isSafeInteger(v))
    throw new QuantityError(
      `${shown} is too large: ${name} must be at most ${Number.MAX_SAFE_INTEGER} ${name === CPU ? 'millicores' : 'units'}`,
    );
  return v;
}

/** Parses a Kubernetes ResourceList ({cpu: "500m", memory: "1Gi"}). Throws QuantityError naming the key. */
export function parseResources(list: Readonly<Record<string, string | number>> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (!list) return out;
  for (const [k, v] of Object.entries(list)) {
    try {
      out[k] = resourceValue(k, v);
    } catch (e) {
      throw new Error(`${k}: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

export function add(a: Resources, b: Resources): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

export function subtract(a: Resources, b: Resources): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) - v;
  return out;
}

/** Per-resource maximum; a resource missing on one side counts as 0. */
export function max(a: Resources, b: Resources): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
}

/** Sum of many lists. */
export function sum(lists: Iterable<Resources>): Record<string, number> {
  let out: Record<string, number> = {};
  for (const l of lists) out = add(out, l);
  return out;
}

/**
 * Karpenter's Fits(candidate, total): false if any quantity in `available` is negative, else every
 * resource in `requests` must be <= the same resource in `available` (missing = 0).
 */
export function fits(requests: Resources, available: Resources): boolean {
  // for-in, not Object.values/entries: no array per call (the launch filter asks this of every type, per claim).
  for (const k in available) if (available[k]! < 0) return false;
  for (const k in requests) if (requests[k]! > (available[k] ?? 0)) return false;
  return true;
}

/** The first resource of `requests` that exceeds `available`, for messages. */
export function firstExceeded(requests: Resources, available: Resources): string | undefined {
  for (const [k, v] of Object.entries(requests)) if (v > (available[k] ?? 0)) return k;
  return undefined;
}

/** Drops zero entries (Karpenter drops zero-valued resources when it writes a NodeClaim). */
export function nonZero(r: Resources): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(r)) if (v !== 0) out[k] = v;
  return out;
}

/** Formats a resource list for people: {"cpu":"1500m","memory":"2Gi","pods":"3"}. */
export function formatResources(r: Resources): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(r)) parts.push(`"${k}":"${formatResourceValue(k, v)}"`);
  return `{${parts.join(',')}}`;
}

export function formatResourceValue(name: string, v: number): string {
  if (name === CPU) return v % 1000 === 0 ? String(v / 1000) : `${v}m`;
  if (name === MEMORY || name === EPHEMERAL_STORAGE || name.startsWith('hugepages-')) {
    for (const [u, s] of [
      ['Ti', 2 ** 40],
      ['Gi', 2 ** 30],
      ['Mi', 2 ** 20],
      ['Ki', 2 ** 10],
    ] as const) {
      if (v !== 0 && v % s === 0) return `${v / s}${u}`;
    }
  }
  return String(v);
}
