// The integer-aware lower bound (engine/bound/patterns.ts; docs/lower-bound.md): column generation over node patterns
// for every pod class and every NodePool option it may use, with exact pricing (cg.ts), reporting Farley's bound.
// The configuration LP counts pods whole and nodes as patterns of whole pods, so where a few large pods fill large
// nodes badly it sits well above the resource LP; Farley's bound is a valid lower bound at every round, so a
// budget that stops the generation early only makes it weaker.
import {
  BH_ALLOWED, BH_C, BH_CAPS, BH_COUNTS, BH_MAGIC, BH_PRICES, BH_R, BH_REQS, BH_VERSION, BH_WORK, BH_X, BOUND_MAGIC,
  ABI_VERSION, BR_BOUND, BR_LP, BR_ROUNDS, BR_STATUS, BR_WORDS, BR_WORK, BS_BAD_INPUT, BS_FAILED, BS_OPTIMAL, BS_STOPPED,
} from '../abi';
import { CG_FAILED, CG_OPTIMAL, ColumnGen, EXACT_NODES_MAX } from './cg';
import { Problem } from './problem';
import { startBudget, workSpent } from './budget';

/** Rounds at most (the work budget usually ends it first). */
const MAX_ROUNDS = 100000;
/** Nodes the closing exact search of each type may visit (past the budget: it runs once, and only when stopped). */
const FINAL_NODES = EXACT_NODES_MAX * 4;

@inline function word(input: usize, i: i32): i32 {
  return load<i32>(input + (<usize>i << 2));
}

function read(input: usize): Problem {
  const R = word(input, BH_R);
  const C = word(input, BH_C);
  const X = word(input, BH_X);
  const p = new Problem(C, X, R);
  const reqs = input + <usize>word(input, BH_REQS);
  const caps = input + <usize>word(input, BH_CAPS);
  const prices = input + <usize>word(input, BH_PRICES);
  const counts = input + <usize>word(input, BH_COUNTS);
  for (let i = 0; i < C * R; i++) unchecked((p.reqs[i] = load<f64>(reqs + (<usize>i << 3))));
  for (let i = 0; i < X * R; i++) unchecked((p.caps[i] = load<f64>(caps + (<usize>i << 3))));
  for (let x = 0; x < X; x++) unchecked((p.prices[x] = load<f64>(prices + (<usize>x << 3))));
  for (let c = 0; c < C; c++) unchecked((p.counts[c] = load<i32>(counts + (<usize>c << 2))));
  const at = word(input, BH_ALLOWED);
  if (at >= 0) {
    const a = new Uint8Array(C * X);
    memory.copy(a.dataStart, input + <usize>at, <usize>(C * X));
    p.allowed = a;
  }
  return p;
}

function result(status: i32, bound: f64, lp: f64, rounds: i32): usize {
  const r = heap.alloc(<usize>(BR_WORDS << 3));
  memory.fill(r, 0, <usize>(BR_WORDS << 3));
  store<f64>(r + (<usize>BR_STATUS << 3), <f64>status);
  store<f64>(r + (<usize>BR_BOUND << 3), bound);
  store<f64>(r + (<usize>BR_LP << 3), lp);
  store<f64>(r + (<usize>BR_WORK << 3), workSpent());
  store<f64>(r + (<usize>BR_ROUNDS << 3), <f64>rounds);
  return r;
}

/** Bounds the problem in the block at `input`; returns the address of BR_WORDS f64s. */
export function boundPatterns(input: usize): usize {
  if (word(input, BH_MAGIC) != BOUND_MAGIC || word(input, BH_VERSION) != ABI_VERSION) return result(BS_BAD_INPUT, 0, 0, 0);
  startBudget(word(input, BH_WORK), 0);
  const p = read(input);
  const left = p.counts.slice();
  const cg = new ColumnGen(p);
  if (!cg.seedSingles(left)) return result(BS_FAILED, 0, 0, 0);
  cg.tracking = true;
  cg.tail = false;
  cg.maxNodes = EXACT_NODES_MAX;
  const status = cg.run(left, MAX_ROUNDS, Infinity);
  if (status == CG_FAILED) return result(BS_FAILED, cg.lower, cg.m.obj, cg.rounds);
  if (status != CG_OPTIMAL) cg.exactFarley(left, FINAL_NODES);
  return result(status == CG_OPTIMAL ? BS_OPTIMAL : BS_STOPPED, cg.lower, cg.m.obj, cg.rounds);
}
