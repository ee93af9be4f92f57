// Mutable solve state: existing nodes (fixed size, remaining resources shrink) and new NodeClaims (which
// keep every instance type that can still hold their pods), with the fit and port checks both share.
import {
  DG_OVERHEAD, DG_PORTS, IT_ALLOC, IT_DG, N_FLAGS, N_PORTS, N_REMAINING, N_SET, N_TAINTSET, T_ITS, T_NITS, V_DG_CONFLICT,
  V_PORTS, V_REQUESTS,
} from '../abi';
import { INSTANCE_TYPES, EXISTING_NODES, RESOURCES, dg, f64At, it, listAt, listLen, node, tmpl, ver } from './layout';
import { canonicalInput } from './sets';

class NodeState {
  set: i32;
  remaining: Float64Array;
  ports: Array<i32> = new Array<i32>();
  constructor(readonly index: i32, readonly taintSet: i32, readonly flags: i32) {
    this.set = canonicalInput(node(index, N_SET));
    this.remaining = new Float64Array(RESOURCES);
    const r = node(index, N_REMAINING);
    for (let i = 0; i < RESOURCES; i++) unchecked((this.remaining[i] = f64At(r + i)));
    const pl = node(index, N_PORTS);
    const n = listLen(pl);
    for (let i = 0; i < n; i++) this.ports.push(listAt(pl, i));
  }
}

/** A hole in a claim's `live` list: the instance type there was removed. */
export const REMOVED_TYPE: i32 = -1;
/** itFits without a pod: does the claim's total alone fit? */
export const NO_VERSION: i32 = -1;

export class Claim {
  set: i32;
  /** Template-local instance-type indices in catalog order; REMOVED_TYPE = removed. */
  live: Int32Array;
  liveLen: i32;
  total: Float64Array;
  /**
   * Per resource, an upper bound on what any live instance type can hold (allocatable minus its daemon
   * overhead), refreshed by every full scan of `live`. Types only leave `live`, so a stale bound stays an
   * upper bound: a pod that exceeds it fits no type, and the scan is skipped (see anyFits).
   */
  room: Float64Array;
  pods: i32 = 0;
  ports: Array<i32> = new Array<i32>();
  /** What the claim took from its pool's limits when it was committed ([nodes, dims...]). */
  reserved: Float64Array = new Float64Array(0);
  /** Reservation ids the claim holds (see reservations.ts). */
  held: Int32Array = new Int32Array(0);
  /**
   * The claim lost instance types only because its total outgrew them: opened with every type of its template
   * allowed by its set and within the limits, and no pod's daemonset port conflict removed any. Then what it keeps at
   * the end is every type its final set allows and its total fits (kept.ts).
   */
  clean: bool = false;
  constructor(readonly tmpl: i32, set: i32, live: Int32Array, liveLen: i32, readonly seq: i32, readonly host: i32) {
    this.set = set;
    this.live = live;
    this.liveLen = liveLen;
    this.total = new Float64Array(RESOURCES);
    this.room = new Float64Array(RESOURCES);
    for (let i = 0; i < RESOURCES; i++) unchecked((this.room[i] = Infinity));
  }
}

let nodes: Array<NodeState> = new Array<NodeState>();
let claims: Array<Claim> = new Array<Claim>();
/**
 * Per instance type and resource, its allocatable and its daemon overhead side by side ([gi][r][a, o]):
 * itFits reads one contiguous row instead of the type record, its daemon group and two f64 vectors. It
 * runs for every live type of every claim (the final filter alone: 4,000 claims x 400 types).
 */
let fitTab: Float64Array = new Float64Array(0);

export function resetState(): void {
  nodes = new Array<NodeState>();
  claims = new Array<Claim>();
  for (let n = 0; n < EXISTING_NODES; n++) nodes.push(new NodeState(n, node(n, N_TAINTSET), node(n, N_FLAGS)));
  fitTab = new Float64Array(INSTANCE_TYPES * RESOURCES * 2);
  for (let gi = 0; gi < INSTANCE_TYPES; gi++) {
    const a = it(gi, IT_ALLOC);
    const o = dg(it(gi, IT_DG), DG_OVERHEAD);
    for (let i = 0; i < RESOURCES; i++) {
      unchecked((fitTab[(gi * RESOURCES + i) * 2] = f64At(a + i)));
      unchecked((fitTab[(gi * RESOURCES + i) * 2 + 1] = f64At(o + i)));
    }
  }
}

@inline export function nodeAt(n: i32): NodeState {
  return unchecked(nodes[n]);
}
@inline export function claimAt(c: i32): Claim {
  return unchecked(claims[c]);
}
export function claimCount(): i32 {
  return claims.length;
}
export function pushClaim(c: Claim): i32 {
  claims.push(c);
  return claims.length - 1;
}

/** Two encoded host ports conflict: same port and protocol, and equal or unspecified IPs (§2.11). */
@inline function portConflict(a: i32, b: i32): bool {
  if ((a & 0x3ffff) != (b & 0x3ffff)) return false;
  const ia = a >>> 18;
  const ib = b >>> 18;
  return ia == ib || ia == 0 || ib == 0;
}

export function portsConflict(v: i32, used: Array<i32>): bool {
  const l = ver(v, V_PORTS);
  const n = listLen(l);
  if (n == 0 || used.length == 0) return false;
  for (let i = 0; i < n; i++) {
    const a = listAt(l, i);
    for (let j = 0; j < used.length; j++) if (portConflict(a, unchecked(used[j]))) return true;
  }
  return false;
}

export function addPorts(v: i32, used: Array<i32>): void {
  const l = ver(v, V_PORTS);
  const n = listLen(l);
  for (let i = 0; i < n; i++) used.push(listAt(l, i));
}

/** Requests of version v fit the remaining resources. */
export function fitsRemaining(v: i32, rem: Float64Array): bool {
  const r = ver(v, V_REQUESTS);
  for (let i = 0; i < RESOURCES; i++) if (f64At(r + i) > unchecked(rem[i])) return false;
  return true;
}

export function subtractRequests(v: i32, rem: Float64Array): void {
  const r = ver(v, V_REQUESTS);
  for (let i = 0; i < RESOURCES; i++) unchecked((rem[i] -= f64At(r + i)));
}

export function addRequests(v: i32, total: Float64Array): void {
  const r = ver(v, V_REQUESTS);
  for (let i = 0; i < RESOURCES; i++) unchecked((total[i] += f64At(r + i)));
}

/** total (+ version v's requests unless v is NO_VERSION) + the daemon overhead of the IT fits its allocatable. */
export function itFits(gi: i32, total: Float64Array, v: i32): bool {
  if (v == NO_VERSION) return totalFits(gi, total.dataStart);
  // The same sums in the same order as (total + overhead [+ requests]) > allocatable: the same answers.
  const row = fitTab.dataStart + (<usize>(gi * RESOURCES) << 4);
  const t = total.dataStart;
  const r = ver(v, V_REQUESTS);
  for (let i = 0; i < RESOURCES; i++) {
    const p = row + (<usize>i << 4);
    const need = load<f64>(t + (<usize>i << 3)) + load<f64>(p + 8) + f64At(r + i);
    if (need > load<f64>(p)) return false;
  }
  return true;
}

/** itFits(gi, total, NO_VERSION) for the address of `total`'s data, inlined into the loops over every live type. */
@inline export function totalFits(gi: i32, t: usize): bool {
  const row = fitTab.dataStart + (<usize>(gi * RESOURCES) << 4);
  let fits = true;
  for (let i = 0; i < RESOURCES; i++) {
    const p = row + (<usize>i << 4);
    if (load<f64>(t + (<usize>i << 3)) + load<f64>(p + 8) > load<f64>(p)) {
      fits = false;
      break;
    }
  }
  return fits;
}

/**
 * totalFits and itFits of instance type gi for the total at `t` and the requests at `rq` in one pass over its
 * row (the same sums in the same order as theirs): 0 when the total does not fit, 1 when it fits but not with
 * the requests, 2 when both fit. anyFits reads every live type of a claim this way on each pod check.
 */
@inline export function fitLevel(gi: i32, t: usize, rq: usize): i32 {
  const row = fitTab.dataStart + (<usize>(gi * RESOURCES) << 4);
  let level = 2;
  for (let i = 0; i < RESOURCES; i++) {
    const p = row + (<usize>i << 4);
    const a = load<f64>(p);
    const withOverhead = load<f64>(t + (<usize>i << 3)) + load<f64>(p + 8);
    if (withOverhead > a) return 0;
    if (withOverhead + load<f64>(rq + (<usize>i << 3)) > a) level = 1;
  }
  return level;
}

/**
 * Raises room[i] to what instance type gi can hold of each resource (allocatable minus daemon overhead), from
 * its fitTab row (the two numbers the type record and its daemon group hold).
 */
export function widenRoom(gi: i32, room: Float64Array): void {
  const row = fitTab.dataStart + (<usize>(gi * RESOURCES) << 4);
  for (let i = 0; i < RESOURCES; i++) {
    const p = row + (<usize>i << 4);
    const r = load<f64>(p) - load<f64>(p + 8);
    if (r > unchecked(room[i])) unchecked((room[i] = r));
  }
}

/** total + version v's requests exceed `room` in some resource (so no type bounded by it fits). */
export function exceedsRoom(total: Float64Array, v: i32, room: Float64Array): bool {
  const r = ver(v, V_REQUESTS);
  // Resources are integer units, so sums are exact; the half unit only guards the comparison's direction.
  for (let i = 0; i < RESOURCES; i++) if (unchecked(total[i]) + f64At(r + i) > unchecked(room[i]) + 0.5) return true;
  return false;
}

/** The daemon group of instance type gi has host ports that conflict with version v's (§2.9). */
export function dgConflict(v: i32, gi: i32): bool {
  const l = ver(v, V_DG_CONFLICT);
  const n = listLen(l);
  if (n == 0) return false;
  const d = it(gi, IT_DG);
  for (let i = 0; i < n; i++) if (listAt(l, i) == d) return true;
  return false;
}

export function templateStart(t: i32): i32 {
  return tmpl(t, T_ITS);
}
export function templateLen(t: i32): i32 {
  return tmpl(t, T_NITS);
}

export { DG_PORTS };
