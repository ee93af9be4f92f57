// The solver's result block -> a ProvisionPlan (solver-as/abi.ts). The result is read from a copy (an
// ArrayBuffer the caller owns), so decoding works the same in-thread and after a pool worker returned it.
import * as A from '../../solver-as/abi.ts';
import type { InstanceType, Pod, Requirements } from '../domain/types.ts';
import { claimPlan, orderByPrice } from '../solver/reference/finalize.ts';
import { RESERVATION_ID_LABEL, withReservationRequirements } from '../solver/reference/reservations.ts';
import { offeringAllowed } from '../solver/reference/templates.ts';
import type { NewNodeClaimPlan, PodError, ProvisionPlan } from '../solver/types.ts';
import type { EncodeContext } from './encode.ts';
import { decodeSet } from './keyspace.ts';

export class SolverResultError extends Error {
  override name = 'SolverResultError';
}

export function decodeProvision(ctx: EncodeContext, buf: ArrayBuffer): ProvisionPlan & { improved: boolean; improveWork: number } {
  const w = new Int32Array(buf);
  const status = w[A.R_STATUS]!;
  if (status !== A.S_OK) throw new SolverResultError(`solver rejected its input (status ${status})`);
  const np = ctx.pods.length;
  const nClaims = w[A.R_NCLAIMS]!;
  const placements = w.subarray(w[A.R_PLACEMENTS]!, w[A.R_PLACEMENTS]! + np);
  const errors = w.subarray(w[A.R_ERRORS]!, w[A.R_ERRORS]! + np);
  const setsAt = w[A.R_SETS]!;

  const existing = new Map<string, string[]>();
  const claimPods: Pod[][] = Array.from({ length: nClaims }, () => []);
  // Each pod's requests as entries, one array per class (pods of a class have equal requests).
  const claimRequests: Array<Array<ReadonlyArray<readonly [string, number]>>> = Array.from({ length: nClaims }, () => []);
  const classRequests: Array<ReadonlyArray<readonly [string, number]> | undefined> = [];
  const failed: number[] = [];
  const minValuesFailed = new Set<number>();
  const reservedFailed = new Set<number>();
  for (let p = 0; p < np; p++) {
    const at = placements[p]!;
    const pod = ctx.pods[p]!;
    if (at >= 0) {
      const name = ctx.scheduler.existing[at]!.node.name;
      let l = existing.get(name);
      if (!l) existing.set(name, (l = []));
      l.push(pod.uid);
    } else if (at <= -2) {
      claimPods[-(at + 2)]!.push(pod);
      const cls = ctx.podClass[p]!;
      let entries = classRequests[cls];
      if (!entries) classRequests[cls] = entries = Object.entries(pod.requests);
      claimRequests[-(at + 2)]!.push(entries);
    } else {
      failed.push(p);
      if (errors[p] === A.E_MIN_VALUES) minValuesFailed.add(p);
      if (errors[p] === A.E_RESERVED) reservedFailed.add(p);
    }
  }

  const newNodeClaims: NewNodeClaimPlan[] = [];
  const decoded = new Map<number, Requirements>();
  // NodeClaims of similar size share one instance-type list in the result; decode each once.
  const lists = new Map<number, Array<{ it: InstanceType; micros: number }>>();
  const unschedulable: PodError[] = [];
  for (let c = 0; c < nClaims; c++) {
    const rec = w[A.R_CLAIMS]! + c * A.C_STRIDE;
    const pods = claimPods[c]!;
    if (pods.length === 0) continue;
    const t = w[rec + A.C_TMPL]!;
    const template = ctx.templates[t]!;
    const si = w[rec + A.C_SET]!;
    let reqs = decoded.get(si);
    if (!reqs) decoded.set(si, (reqs = decodeSet(ctx.keys, buf, setsAt + si * ctx.keys.setBytes)));
    const itAt = w[rec + A.C_ITS]!;
    let ordered = lists.get(itAt);
    if (!ordered) {
      const n = w[itAt]!;
      ordered = [];
      for (let i = 0; i < n; i++) {
        const gi = w[itAt + 1 + 2 * i]!;
        ordered.push({ it: template.instanceTypes[gi - ctx.itStart[t]!]!, micros: w[itAt + 2 + 2 * i]! });
      }
      lists.set(itAt, ordered);
    }
    const resvAt = w[rec + A.C_RESV]!;
    if (resvAt >= 0) ({ reqs, ordered } = withHeldReservations(ctx, w, resvAt, itAt, t, reqs));
    // The pool label and node-class label are template requirements the solver keeps as they were.
    const f = claimPlan(template, reqs, ordered, pods, ctx.input.options, ctx.scheduler.wellKnown, claimRequests[c]);
    if (f.ok) newNodeClaims.push(f.claim);
    else for (const p of pods) unschedulable.push({ uid: p.uid, reason: f.reason });
  }
  // One explanation per pod class: 2,500 replicas stuck on a NodePool limit share it.
  const explained = new Map<number, { reason: string; perNodePool?: Record<string, string> }>();
  for (const p of failed) {
    const pod = ctx.pods[p]!;
    if (reservedFailed.has(p)) {
      unschedulable.push({ uid: pod.uid, reason: RESERVED_REASON, reservedOffering: true });
      continue;
    }
    if (minValuesFailed.has(p)) {
      unschedulable.push({ uid: pod.uid, reason: "NodePool couldn't meet minValues requirements after truncating instance types" });
      continue;
    }
    const cls = ctx.podClass[p]!;
    let e = explained.get(cls);
    if (!e) explained.set(cls, (e = ctx.scheduler.explain(pod)));
    unschedulable.push({ uid: pod.uid, reason: e.reason, ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}) });
  }
  return {
    existing,
    newNodeClaims,
    unschedulable,
    ignored: ctx.ignored,
    costPerHour: newNodeClaims.reduce((acc, c) => acc + c.price, 0),
    ...(w[A.R_TRUNCATED]! !== 0 ? { truncated: true as const } : {}),
    improved: w[A.R_IMPROVED]! !== 0,
    improveWork: w[A.R_WORK]! * 1000,
  };
}

const RESERVED_REASON = 'compatible reserved offerings are available, but other NodeClaims of this plan hold all of their capacity';

/**
 * Finalisation of a claim holding reservations (as the reference solver's finalizeClaim does it): the requirements
 * launch into a held reservation, the types without an offering they allow are dropped, the rest re-ordered by
 * price and truncated. The solver passed every type (not truncated) for this.
 */
function withHeldReservations(
  ctx: EncodeContext, w: Int32Array, at: number, itAt: number, t: number, reqs: Requirements,
): { reqs: Requirements; ordered: Array<{ it: InstanceType; micros: number }> } {
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
