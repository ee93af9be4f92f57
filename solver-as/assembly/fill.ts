// Packing by fullest nodes, one node at a time (in the manner of Gupta and Ho's minimum bin slack heuristic): each
// node takes the largest pod left and, with it, the set of pods left that fills the node most, found by the same
// bounded branch and bound that prices patterns (exact.ts), each search cut off after FILL_NODES nodes. Where pods
// come in sets that fill a node exactly (triplets that sum to the capacity in every resource), the search finds
// such a set whenever one is left, which rounding the pattern LP and the value packing (pack.ts) miss. It may use a
// tenth of the group's work allowance at full depth; past that, each node's search is cut short early, so that the
// pattern packer after it keeps nearly all of its share.
//
// It is for groups of one instance type (bin packing proper: every node costs the same, so the fullest node is the
// best one); with several types the fullest node is not the cheapest per pod, and the other two packings price that.
import { Bin } from './bins';
import { exactBest } from './exact';
import { Problem } from './problem';
import { late, workSpent } from './budget';

/** Search nodes per packed node, while the packing is within its share of the allowance; past it, FILL_NODES_LATE. */
const FILL_NODES = 20000;
const FILL_NODES_LATE = 200;
/** The share of the group's work allowance (up to its mark) the search may use before it cuts its searches short. */
const FILL_SHARE: f64 = 0.1;
/** The bonus of larger pods in a node's worth (pods are searched largest first; among sets that fill a node equally, the one with larger pods wins). */
const LARGE_BIAS: f64 = 0.01;

/** Each class's size on type x: the sum over resources of its share of the node. */
function sizes(p: Problem, x: i32): Float64Array {
  const out = new Float64Array(p.C);
  for (let c = 0; c < p.C; c++) {
    let s: f64 = 0;
    for (let r = 0; r < p.R; r++) {
      const cap = p.cap(x, r);
      if (cap > 0) s += p.req(c, r) / cap;
    }
    unchecked((out[c] = s));
  }
  return out;
}

/** The class left with the largest size, or -1 when nothing is left. */
function largest(size: Float64Array, left: Int32Array): i32 {
  let best = -1;
  for (let c = 0; c < left.length; c++) if (unchecked(left[c]) > 0 && (best < 0 || unchecked(size[c]) > unchecked(size[best]))) best = c;
  return best;
}

/**
 * Packs every pod of `p` (one type, x = 0) into nodes, fullest first; null when the type cannot hold some pod, or
 * the safety net fires. Its searches are cut short once it has used its share of the work up to `mark`.
 */
export function fillPack(p: Problem, mark: f64): Array<Bin> | null {
  if (p.X != 1) return null;
  const size = sizes(p, 0);
  const left = p.counts.slice();
  const pi = new Float64Array(p.C);
  // A bonus no set of other pods can outweigh (their sizes sum to at most R in one node) forces the largest in.
  const force = <f64>(p.R + 1) * (1 + LARGE_BIAS * <f64>p.R);
  const take = new Int32Array(p.C);
  const bins = new Array<Bin>();
  const soft = workSpent() + max(0, mark - workSpent()) * FILL_SHARE;
  for (let big = largest(size, left); big >= 0; big = largest(size, left)) {
    if (late()) return null;
    for (let c = 0; c < p.C; c++) unchecked((pi[c] = unchecked(size[c]) * (1 + LARGE_BIAS * unchecked(size[c]))));
    unchecked((pi[big] += force));
    exactBest(p, 0, pi, left, workSpent() < soft ? FILL_NODES : FILL_NODES_LATE, 0, take);
    if (unchecked(take[big]) <= 0) return null;
    for (let c = 0; c < p.C; c++) unchecked((left[c] -= unchecked(take[c])));
    bins.push(new Bin(-1, take.slice()));
  }
  return bins;
}
