// Karpenter's order of NodePools in the improvement phase (docs/solver.md): a pod goes to a new node of the
// highest-weight NodePool that can take it. Karpenter's algorithm opens a NodeClaim for a pod only after every
// higher-weight template refused it, though other pods then ride on that NodeClaim while it has room (a CPU pod on
// a GPU node opened for a GPU pod). The phase re-packs each pod in its *home*: the first template (weight order)
// that could take it, within that template's limits; so no new NodeClaim of a lower-weight NodePool holds only
// pods a higher-weight one could take. The verifier (engine/verify) checks the same rule independently.
import { IT_CAP, T_SET, T_TAINTSET, V_REQS } from '../abi';
import { LIMIT_DIMS, RESOURCES, TEMPLATES, f64At, it, tmpl, tolerates, ver } from './layout';
import { compatFor } from './its';
import { MODE_WELL_KNOWN, canonicalInput, mergeCompatible } from './sets';
import { dgConflict, itFits, templateLen, templateStart } from './state';
import { spend } from './budget';

/** A zero request total (allocated per solve: the heap is reset between solves). */
let zero: Float64Array = new Float64Array(0);

export function resetOrder(): void {
  zero = new Float64Array(RESOURCES);
}

/** Type gi's capacity is within `room` ([nodes, limited dims...]) in every limited dimension. */
export function capWithin(gi: i32, room: Float64Array): bool {
  const cap = it(gi, IT_CAP);
  for (let d = 0; d < LIMIT_DIMS; d++) if (f64At(cap + d) > unchecked(room[d + 1]) + 1e-6) return false;
  return true;
}

/**
 * A fresh NodeClaim of template t could take a pod of version v while the template has `room` left ([nodes,
 * dims...]): a node to spare, the template's taints tolerated, its requirements compatible with the pod's, and an
 * allowed instance type within the room that holds the pod next to its daemonsets. (The free pods the phase moves
 * have no topology, host ports or volume alternatives, so nothing else could refuse them.)
 */
export function canTake(t: i32, v: i32, room: Float64Array): bool {
  if (unchecked(room[0]) < 1) return false;
  if (!tolerates(v, tmpl(t, T_TAINTSET))) return false;
  const s = mergeCompatible(canonicalInput(tmpl(t, T_SET)), ver(v, V_REQS), MODE_WELL_KNOWN);
  if (s < 0) return false;
  const compat = compatFor(s, t);
  const start = templateStart(t);
  const n = templateLen(t);
  spend(<f64>(n * RESOURCES));
  for (let j = 0; j < n; j++) {
    if (unchecked(compat.ok[j]) == 0) continue;
    const gi = start + j;
    if (itFits(gi, zero, v) && capWithin(gi, room) && !dgConflict(v, gi)) return true;
  }
  return false;
}

/** The first template (weight order) whose fresh NodeClaim could take a pod of version v within `rooms`, or -1. */
export function homeOf(v: i32, rooms: Array<Float64Array>): i32 {
  for (let t = 0; t < TEMPLATES; t++) if (canTake(t, v, unchecked(rooms[t]))) return t;
  return -1;
}

/** No template before t could take a pod of version v within `rooms`: it may hold a NodeClaim of t open. */
export function anchors(v: i32, t: i32, rooms: Array<Float64Array>): bool {
  for (let h = 0; h < t; h++) if (canTake(h, v, unchecked(rooms[h]))) return false;
  return true;
}
