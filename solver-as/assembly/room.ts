// Running out of room, shared by request class (schedule.ts reads it in its node and claim scans).
import { V_REQUESTS } from '../abi';
import { RESOURCES, POD_VERSIONS, f64At, ver } from './layout';

/**
 * Versions with equal requests share a request class (reqClass[v]). Whether requests fit is a property of the
 * requests alone and only gets worse (a node's remaining resources only shrink, a claim's total only grows and
 * its room bound only tightens), and a node or claim they do not fit fails every version for good (nodeCanAdd
 * and claimCanAdd return -2 whatever else holds). So roomDeadNodes[k] / roomDead[k] mark the nodes and claims
 * request class k is out of room on, for every version of the class. In the 5,000-node consolidation benchmark
 * (Deployments of 8 request shapes, each its own pod class) every class otherwise re-checked the ~2,400 full
 * NodeClaims: 3.7 million claim checks per solve, now 32,000 (one per pod) and 15,000 room checks.
 */
export let reqClass: Int32Array = new Int32Array(0);
export let roomDead: Array<Uint32Array> = new Array<Uint32Array>();
export let roomDeadNodes: Array<Uint32Array> = new Array<Uint32Array>();
/**
 * roomFrom[k] / roomFromNodes[k]: the first word of roomDead[k] / roomDeadNodes[k] that is not all ones. The
 * claims (nodes) below it are out of room for class k for good, so scans start there: once the existing nodes
 * of a consolidation simulation are full, its pods read none of their words.
 */
let roomFrom: Int32Array = new Int32Array(0);
let roomFromNodes: Int32Array = new Int32Array(0);

/** New per-solve state: request classes of the versions and empty out-of-room sets (`nodeWords` words for nodes). */
export function resetRoom(nodeWords: i32): void {
  const classes = requestClasses();
  roomDead = new Array<Uint32Array>(classes);
  roomDeadNodes = new Array<Uint32Array>(classes);
  roomFrom = new Int32Array(classes);
  roomFromNodes = new Int32Array(classes);
  for (let k = 0; k < classes; k++) {
    unchecked((roomDead[k] = new Uint32Array(8)));
    unchecked((roomDeadNodes[k] = new Uint32Array(nodeWords)));
  }
}

/** The first word of existing nodes class k is not wholly out of room on (moving its cursor past full words). */
export function firstNodeWordWithRoom(k: i32, nodeWords: i32, lastWord: u32): i32 {
  const rn = unchecked(roomDeadNodes[k]);
  let w = unchecked(roomFromNodes[k]);
  while (w < nodeWords && unchecked(rn[w]) == (w == nodeWords - 1 ? lastWord : 0xffffffff)) w++;
  unchecked((roomFromNodes[k] = w));
  return w;
}

/** The first word of in-flight NodeClaims class k is not wholly out of room on (moving its cursor). */
export function firstClaimWordWithRoom(k: i32): i32 {
  const rd = unchecked(roomDead[k]);
  let w = unchecked(roomFrom[k]);
  while (w < rd.length && unchecked(rd[w]) == 0xffffffff) w++;
  unchecked((roomFrom[k] = w));
  return w;
}

/** Fills reqClass (versions with equal request vectors share a class) and returns the number of classes. */
function requestClasses(): i32 {
  reqClass = new Int32Array(POD_VERSIONS);
  const rep = new Int32Array(POD_VERSIONS); // a version of each class
  const next = new Int32Array(POD_VERSIONS); // the next class with the same hash, -1 at the end
  const byHash = new Map<u64, i32>();
  let classes = 0;
  for (let v = 0; v < POD_VERSIONS; v++) {
    const r = ver(v, V_REQUESTS);
    let h: u64 = 14695981039346656037;
    for (let i = 0; i < RESOURCES; i++) h = (h ^ reinterpret<u64>(f64At(r + i))) * 1099511628211;
    let k = byHash.has(h) ? byHash.get(h) : -1;
    let last = -1;
    while (k >= 0 && !sameRequests(unchecked(rep[k]), v)) {
      last = k;
      k = unchecked(next[k]);
    }
    if (k < 0) {
      k = classes++;
      unchecked((rep[k] = v));
      unchecked((next[k] = -1));
      if (last >= 0) unchecked((next[last] = k));
      else byHash.set(h, k);
    }
    unchecked((reqClass[v] = k));
  }
  return classes;
}

function sameRequests(a: i32, b: i32): bool {
  const ra = ver(a, V_REQUESTS);
  const rb = ver(b, V_REQUESTS);
  for (let i = 0; i < RESOURCES; i++) if (f64At(ra + i) != f64At(rb + i)) return false;
  return true;
}

/** Marks in-flight NodeClaim i out of room for class k. */
export function markRoomDead(k: i32, i: i32): void {
  setGrowing(roomDead, k, i);
}

/** Sets bit i of sets[k], growing that set when i is beyond it; true when the bit was not set before. */
export function setGrowing(sets: Array<Uint32Array>, k: i32, i: i32): bool {
  let b = unchecked(sets[k]);
  const w = i >>> 5;
  if (w >= b.length) {
    const n = new Uint32Array(max(b.length * 2, w + 1));
    n.set(b);
    unchecked((sets[k] = n));
    b = n;
  }
  const bit: u32 = 1 << (i & 31);
  const was = (unchecked(b[w]) & bit) != 0;
  unchecked((b[w] |= bit));
  return !was;
}
