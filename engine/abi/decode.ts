// The solver's result block -> a ProvisionPlan (solver-as/abi.ts). The result is read from a copy (an
// ArrayBuffer the caller owns), so decoding works the same in-thread and after a pool worker returned it.
import * as A from '../../solver-as/abi.ts';
import type { InstanceType, Pod, Requirements } from '../domain/types.ts';
import { claimPlan, orderByPrice } from '../model/claim.ts';
import { RESERVATION_ID_LABEL, withReservationRequirements } from '../model/reservations.ts';
import { minValuesUnmetKeys, offeringAllowed } from '../model/templates.ts';
import type { NewNodeClaimPlan, PodError, ProvisionPlan } from '../model/types.ts';
import { minValuesTruncated } from '../scheduling/minvalues.ts';
import type { EncodeContext } from './encode.ts';
import { selectCandidates } from '../launch/filter.ts';
import { toMicros } from '../domain/money.ts';
import { decodeSet } from './keyspace.ts';

class SolverResultError extends Error {
  override name = 'SolverResultError';
}

type Ordered = Array<{ it: InstanceType; micros: number }>;

/** The result block's words and the decoded sets and lists (shared: NodeClaims of similar size share one list). */
interface Reader {
  readonly ctx: EncodeContext;
  readonly buf: ArrayBuffer;
  readonly w: Int32Array;
  readonly sets: Map<number, Requirements>;
  readonly lists: Map<number, Ordered>;
  /** Lists named as launched (launchOrder), by list and set. */
  readonly launched: Map<string, Ordered>;
}

/** Where the pods went: existing nodes, claims, or nowhere (with the claim a minValues failure dropped them from). */
interface Placements {
  readonly existing: Map<string, string[]>;
  readonly claimPods: Pod[][];
  /** Each pod's requests as entries, one array per pod class (pods of a class have equal requests). */
  readonly claimRequests: Array<Array<ReadonlyArray<readonly [string, number]>>>;
  readonly failed: number[];
  /** Pod -> the claim it was dropped from when truncating its instance types broke minValues. */
  readonly minValuesFailed: Map<number, number>;
  readonly reservedFailed: Set<number>;
}

export function decodeProvision(
  ctx: EncodeContext,
  buf: ArrayBuffer,
): ProvisionPlan & { improved: boolean; improveWork: number } {
  const w = new Int32Array(buf);
  const status = w[A.R_STATUS]!;
  if (status !== A.S_OK) throw new SolverResultError(`solver rejected its input (status ${status})`);
  const r: Reader = { ctx, buf, w, sets: new Map(), lists: new Map(), launched: new Map() };
  const placed = readPlacements(r);
  const unschedulable: PodError[] = [];
  const newNodeClaims = finishClaims(r, placed, unschedulable);
  explainFailures(r, placed, unschedulable);
  return {
    existing: placed.existing,
    newNodeClaims,
    unschedulable,
    ignored: ctx.ignored,
    costPerHour: newNodeClaims.reduce((acc, c) => acc + c.price, 0),
    ...(w[A.R_TRUNCATED]! !== 0 ? { truncated: true as const } : {}),
    improved: w[A.R_IMPROVED]! !== 0,
    improveWork: w[A.R_WORK]! * 1000,
  };
}

function readPlacements(r: Reader): Placements {
  const { ctx, w } = r;
  const np = ctx.pods.length;
  const nClaims = w[A.R_NCLAIMS]!;
  const placements = w.subarray(w[A.R_PLACEMENTS]!, w[A.R_PLACEMENTS]! + np);
  const errors = w.subarray(w[A.R_ERRORS]!, w[A.R_ERRORS]! + np);
  const out: Placements = {
    existing: new Map(),
    claimPods: Array.from({ length: nClaims }, () => []),
    claimRequests: Array.from({ length: nClaims }, () => []),
    failed: [],
    minValuesFailed: new Map(),
    reservedFailed: new Set(),
  };
  const classRequests: Array<ReadonlyArray<readonly [string, number]> | undefined> = [];
  for (let p = 0; p < np; p++) {
    const at = placements[p]!;
    const pod = ctx.pods[p]!;
    if (errors[p] === A.E_MIN_VALUES) {
      out.failed.push(p);
      out.minValuesFailed.set(p, A.PLACED_CLAIM_BASE - at);
    } else if (at >= 0) {
      const name = ctx.model.existing[at]!.node.name;
      let l = out.existing.get(name);
      if (!l) out.existing.set(name, (l = []));
      l.push(pod.uid);
    } else if (at <= A.PLACED_CLAIM_BASE) {
      const c = A.PLACED_CLAIM_BASE - at;
      out.claimPods[c]!.push(pod);
      const cls = ctx.podClass[p]!;
      let entries = classRequests[cls];
      if (!entries) classRequests[cls] = entries = Object.entries(pod.requests);
      out.claimRequests[c]!.push(entries);
    } else {
      out.failed.push(p);
      if (errors[p] === A.E_RESERVED) out.reservedFailed.add(p);
    }
  }
  return out;
}

/** Claim c's template index, final requirements and price-ordered instance types. */
function claimParts(r: Reader, c: number): { t: number; reqs: Requirements; ordered: Ordered } {
  const { ctx, w } = r;
  const rec = w[A.R_CLAIMS]! + c * A.C_STRIDE;
  const t = w[rec + A.C_TMPL]!;
  const template = ctx.templates[t]!;
  const si = w[rec + A.C_SET]!;
  let reqs = r.sets.get(si);
  if (!reqs) r.sets.set(si, (reqs = decodeSet(ctx.keys, r.buf, w[A.R_SETS]! + si * ctx.keys.setBytes)));
  const itAt = w[rec + A.C_ITS]!;
  let ordered = r.lists.get(itAt);
  if (!ordered) {
    const n = w[itAt]!;
    ordered = [];
    for (let i = 0; i < n; i++) {
      const gi = w[itAt + 1 + 2 * i]!;
      ordered.push({ it: template.instanceTypes[gi - ctx.itStart[t]!]!, micros: w[itAt + 2 + 2 * i]! });
    }
    r.lists.set(itAt, ordered);
  }
  const resvAt = w[rec + A.C_RESV]!;
  if (resvAt >= 0) ({ reqs, ordered } = withHeldReservations(ctx, w, resvAt, itAt, t, reqs));
  else if ((w[rec + A.C_FLAGS]! & A.CF_LAUNCH) !== 0) ordered = launchOrder(r, ordered, reqs, `${itAt}/${si}`);
  return { t, reqs, ordered };
}

/**
 * With the improvement phase, a plan names the type and price each NodeClaim's launch would get: its types are
 * filtered as the launch filters them (engine/launch/filter.ts; the phase's own NodeClaims already were, in
 * solver-as/assembly/quota.ts), priced at the cheapest offering of the capacity type the launch picks, and ordered
 * so. Claims sharing a list and a requirement set share the result.
 */
function launchOrder(r: Reader, ordered: Ordered, reqs: Requirements, key: string): Ordered {
  let out = r.launched.get(key);
  if (out) return out;
  const sel = selectCandidates(
    ordered.map((o) => o.it),
    reqs,
    {},
    r.ctx.input.options.minValuesPolicy,
  );
  out = sel.ok ? sel.candidates.map((c) => ({ it: c.type, micros: toMicros(c.offerings[0]!.price) })) : ordered;
  r.launched.set(key, out);
  return out;
}

/** The NodeClaims of the claims that kept pods. */
function finishClaims(r: Reader, placed: Placements, unschedulable: PodError[]): NewNodeClaimPlan[] {
  const out: NewNodeClaimPlan[] = [];
  for (let c = 0; c < placed.claimPods.length; c++) {
    const pods = placed.claimPods[c]!;
    if (pods.length === 0) continue;
    const { t, reqs, ordered } = claimParts(r, c);
    // The pool label and node-class label are template requirements the solver keeps as they were.
    const template = r.ctx.templates[t]!;
    const f = claimPlan(
      { template, requirements: reqs, ordered, pods, podRequests: placed.claimRequests[c]! },
      r.ctx.input.options,
      r.ctx.model.wellKnown,
      r.ctx.model.caches,
    );
    if (f.ok) out.push(f.claim);
    else for (const p of pods) unschedulable.push({ uid: p.uid, reason: f.reason });
  }
  return out;
}

/** Why each unplaced pod failed; one explanation per pod class (2,500 replicas stuck on a NodePool limit share it). */
function explainFailures(r: Reader, placed: Placements, unschedulable: PodError[]): void {
  const { ctx } = r;
  const explained = new Map<number, { reason: string; perNodePool?: Record<string, string> }>();
  const truncated = new Map<number, string>();
  for (const p of placed.failed) {
    const pod = ctx.pods[p]!;
    if (placed.reservedFailed.has(p)) {
      unschedulable.push({ uid: pod.uid, reason: RESERVED_REASON, reservedOffering: true });
      continue;
    }
    const dropped = placed.minValuesFailed.get(p);
    if (dropped !== undefined) {
      let reason = truncated.get(dropped);
      if (reason === undefined) {
        const { t, reqs, ordered } = claimParts(r, dropped);
        truncated.set(
          dropped,
          (reason = minValuesTruncated(
            ctx.templates[t]!.pool.name,
            minValuesUnmetKeys(
              reqs,
              ordered.map((o) => o.it),
            ),
          )),
        );
      }
      unschedulable.push({ uid: pod.uid, reason });
      continue;
    }
    const cls = ctx.podClass[p]!;
    let e = explained.get(cls);
    if (!e) explained.set(cls, (e = ctx.model.explain(pod)));
    unschedulable.push({ uid: pod.uid, reason: e.reason, ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}) });
  }
}

const RESERVED_REASON =
  'compatible reserved offerings are available, but other NodeClaims of this plan hold all of their capacity';

/**
 * Finalisation of a claim holding reservations (as the reference solver's finalizeClaim does it): the requirements
 * launch into a held reservation, the types without an offering they allow are dropped, the rest re-ordered by
 * price and truncated. The solver passed every type (not truncated) for this.
 */
function withHeldReservations(
  ctx: EncodeContext,
  w: Int32Array,
  at: number,
  itAt: number,
  t: number,
  reqs: Requirements,
): { reqs: Requirements; ordered: Ordered } {
  const k = ctx.keys.index.get(RESERVATION_ID_LABEL)!;
  const held = new Set<string>();
  for (let i = 0; i < w[at]!; i++) held.add(ctx.keys.values[k]![w[at + 1 + i]!]!);
  const final = withReservationRequirements(reqs, held);
  // Catalog order first: equal prices keep it, as in the reference.
  const local: number[] = [];
  for (let i = 0; i < w[itAt]!; i++) local.push(w[itAt + 1 + 2 * i]! - ctx.itStart[t]!);
  local.sort((a, b) => a - b);
  const types = ctx.templates[t]!.instanceTypes;
  const its = local.map((j) => types[j]!).filter((it) => it.offerings.some((o) => offeringAllowed(final, o)));
  return { reqs: final, ordered: orderByPrice(final, its).slice(0, ctx.input.options.maxInstanceTypes) };
}

/** Size in bytes of a result block, from its header (to copy it out of linear memory). */
export function resultSize(mem: ArrayBuffer, at: number, setBytes: number): number {
  const w = new Int32Array(mem, at, A.R_WORDS);
  if (w[A.R_STATUS] !== A.S_OK) return A.R_WORDS * 4;
  return w[A.R_SETS]! + w[A.R_NSETS]! * setBytes;
}
