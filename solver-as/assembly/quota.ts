// NodePool limits and the launch in the improvement phase (docs/solver.md). Karpenter counts a new NodeClaim
// against its NodePool's limits by the largest capacity among its instance-type options (and, here, one node), so
// a NodeClaim that may launch as anything from a small to the largest type takes the largest type's share. The
// phase's NodeClaims therefore keep only the options the limits leave room for:
//
// - each re-packed node launches as the type its launch would pick (Types.pick); if those types fit the room the
//   limits leave, the room left over is shared out equally, and each NodeClaim keeps the options that hold its
//   pods and are no larger than its own type plus its share (so when limits do not bind, the nodes, their pods and
//   their prices are those of the plan without limits);
// - if they do not fit, the template is packed again with a price on the room each type takes (a Lagrangian
//   penalty, raised step by step until the nodes fit); if no step fits, the phase keeps Karpenter's plan.
//
// Then each NodeClaim keeps only what its launch would use (generic before exotic, the spot price rule), so the
// type a plan names is one the launch would get.
import { IT_CAP } from '../abi';
import { LIMIT_DIMS, f64At, it } from './layout';
import { Types, holds } from './bins';
import { templateStart } from './state';

/** One node the phase plans: its group's types, its take, and the type it launches as. */
export class Fresh {
  /** Template-local options kept (after narrowing), and what they take of the limits ([nodes, dims...]). */
  live: Int32Array = new Int32Array(0);
  reserved: Float64Array = new Float64Array(0);
  constructor(
    readonly set: i32,
    readonly ts: Types,
    readonly total: Float64Array,
    readonly pods: Array<i32>,
    /** Local index (in ts) of the type the launch picks, and its price. */
    readonly pick: i32,
    readonly price: f64,
  ) {}
}

/** Capacity of group-local type x of `ts` in limited dimension d. */
@inline export function capOf(ts: Types, x: i32, d: i32): f64 {
  return f64At(it(templateStart(ts.t) + unchecked(ts.local[x]), IT_CAP) + d);
}

/** What the nodes take of the limits when each launches as its picked type ([nodes, dims...]). */
export function namedUse(fresh: Array<Fresh>): Float64Array {
  const use = new Float64Array(LIMIT_DIMS + 1);
  for (let i = 0; i < fresh.length; i++) {
    const f = unchecked(fresh[i]);
    use[0] += 1;
    for (let d = 0; d < LIMIT_DIMS; d++) unchecked((use[d + 1] += capOf(f.ts, f.pick, d)));
  }
  return use;
}

export function within(use: Float64Array, room: Float64Array): bool {
  for (let d = 0; d <= LIMIT_DIMS; d++) if (unchecked(use[d]) > unchecked(room[d]) + 1e-6) return false;
  return true;
}

/**
 * Sets each node's options: the types that hold its pods, no larger in any limited dimension than its picked type
 * plus an equal share of the room the picked types leave, then the launch's own filters. `room` must hold the
 * picked types (within(namedUse(fresh), room)).
 */
export function narrow(fresh: Array<Fresh>, room: Float64Array): void {
  const use = namedUse(fresh);
  const n = <f64>max(1, fresh.length);
  const allow = new Float64Array(LIMIT_DIMS);
  for (let i = 0; i < fresh.length; i++) {
    const f = unchecked(fresh[i]);
    // A node like the one before (same types, type and pods' total: a pattern's copies) keeps the same options.
    if (i > 0 && sameNode(unchecked(fresh[i - 1]), f)) {
      const prev = unchecked(fresh[i - 1]);
      f.live = prev.live.slice();
      f.reserved = prev.reserved.slice();
      continue;
    }
    for (let d = 0; d < LIMIT_DIMS; d++) unchecked((allow[d] = capOf(f.ts, f.pick, d) + (unchecked(room[d + 1]) - unchecked(use[d + 1])) / n));
    const keep = new Array<i32>();
    for (let x = 0; x < f.ts.n; x++) {
      if (x != f.pick && !fitsAllowance(f.ts, x, allow)) continue;
      if (holds(f.ts, x, f.total)) keep.push(x);
    }
    launchFilter(f.ts, keep);
    f.live = new Int32Array(keep.length);
    f.reserved = new Float64Array(LIMIT_DIMS + 1);
    f.reserved[0] = 1;
    for (let k = 0; k < keep.length; k++) {
      const x = unchecked(keep[k]);
      unchecked((f.live[k] = unchecked(f.ts.local[x])));
      for (let d = 0; d < LIMIT_DIMS; d++) unchecked((f.reserved[d + 1] = max(unchecked(f.reserved[d + 1]), capOf(f.ts, x, d))));
    }
  }
}

/** Same group types, picked type and total: narrow gives both the same options. */
function sameNode(a: Fresh, b: Fresh): bool {
  if (a.ts !== b.ts || a.pick != b.pick) return false;
  for (let r = 0; r < a.total.length; r++) if (unchecked(a.total[r]) != unchecked(b.total[r])) return false;
  return true;
}

function fitsAllowance(ts: Types, x: i32, allow: Float64Array): bool {
  for (let d = 0; d < LIMIT_DIMS; d++) if (capOf(ts, x, d) > unchecked(allow[d]) + 1e-6) return false;
  return true;
}

/**
 * The launch's filters over the options `keep` (group-local, all holding the node's pods): exotic types go while a
 * generic one remains; with spot and on-demand offered, types whose spot offerings are all dearer than the cheapest
 * on-demand offering are left out of a spot launch; then only types with an offering of the capacity type chosen.
 */
function launchFilter(ts: Types, keep: Array<i32>): void {
  let generic = false;
  for (let k = 0; k < keep.length; k++) if (unchecked(ts.exotic[unchecked(keep[k])]) == 0) generic = true;
  let floor = Infinity;
  let minSpot = Infinity;
  for (let k = 0; k < keep.length; k++) {
    const x = unchecked(keep[k]);
    if (generic && unchecked(ts.exotic[x]) != 0) continue;
    floor = min(floor, unchecked(ts.od[x]));
    minSpot = min(minSpot, unchecked(ts.spot[x]));
  }
  const spot = minSpot < Infinity && minSpot <= floor;
  let w = 0;
  for (let k = 0; k < keep.length; k++) {
    const x = unchecked(keep[k]);
    if (generic && unchecked(ts.exotic[x]) != 0) continue;
    if (spot ? unchecked(ts.spot[x]) > floor : unchecked(ts.od[x]) == Infinity) continue;
    unchecked((keep[w++] = x));
  }
  keep.length = w;
}

/** Penalty steps for packing within limits: a share of the template's cost per full room each type takes. */
export const PENALTY_STEPS: StaticArray<f64> = [0.03, 0.1, 0.3, 1, 3, 10, 30];

/**
 * Sets the types' penalties for step `lambda`: a node of type x costs `lambda * scale` times the share of the room
 * it takes (one node of the nodes limit plus its capacity in each limited dimension), so that packing prefers
 * plans that take less room.
 */
export function setPenalty(ts: Types, room: Float64Array, lambda: f64, scale: f64): void {
  ts.penalized = lambda > 0;
  for (let x = 0; x < ts.n; x++) {
    let share: f64 = unchecked(room[0]) < Infinity ? 1 / max(1, unchecked(room[0])) : 0;
    for (let d = 0; d < LIMIT_DIMS; d++) {
      const r = unchecked(room[d + 1]);
      if (r < Infinity) share += capOf(ts, x, d) / max(1, r);
    }
    unchecked((ts.penalty[x] = lambda * scale * share));
    unchecked((ts.prices[x] = unchecked(ts.base[x]) + unchecked(ts.penalty[x])));
  }
}

