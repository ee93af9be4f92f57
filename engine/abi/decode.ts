// The solver's result block -> a ProvisionPlan (solver-as/abi.ts). The result is read from a copy (an
// ArrayBuffer the caller owns), so decoding works the same in-thread and after a pool worker returned it.
import * as A from '../../solver-as/abi.ts';
import type { InstanceType, Pod, Requirements } from '../domain/types.ts';
import { claimPlan, orderByPrice } from '../model/claim.ts';
import { RESERVATION_ID_LABEL, withReservationRequirements } from '../model/reservations.ts';
import { offeringAllowed } from '../model/templates.ts';
import type { NewNodeClaimPlan, PodError, ProvisionPlan } from '../model/types.ts';
import type { EncodeContext } from './encode.ts';
import { decodeSet } from './keyspace.ts';

export class SolverResultError extends Error {
  override name = 'SolverResultError';
}

/** Where the result puts each pod: on an existing node, in a NodeClaim, or nowhere (with the solver's error). */
interface Placements {
  readonly existing: Map<string, string[]>;
  readonly claimPods: Pod[][];
  /** Each claim's pods' requests as entries, one array per class (pods of a class have equal requests). */
  readonly claimRequests: Array<Array<ReadonlyArray<readonly [string, number]>>>;
  /** Pod indices left unplaced. */
  readonly failed: number[];
  readonly errors: Int32Array;
}

export function decodeProvision(ctx: EncodeContext, buf: ArrayBuffer): ProvisionPlan & { improved: boolean; improveWork: number } {
  const w = new Int32Array(buf);
  const status = w[A.R_STATUS]!;
  if (status !== A.S_OK) throw new SolverResultError(`solver rejected its input (status ${status})`);
  const placed = placementsOf(ctx, w);
  const unschedulable: PodError[] = [];
  const newNodeClaims = claimsOf(ctx, w, buf, placed, unschedulable);
  unplaced(ctx, placed, unschedulable);
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

function placementsOf(ctx: EncodeContext, w: Int32Array): Placements {
  const np = ctx.pods.length;
  const nClaims = w[A.R_NCLAIMS]!;
  const placements = w.subarray(w[A.R_PLACEMENTS]!, w[A.R_PLACEMENTS]! + np);
  const out: Placements = {
    existing: new Map(),
    claimPods: Array.from({ length: nClaims }, () => []),
    claimRequests: Array.from({ length: nClaims }, () => []),
    failed: [],
    errors: w.subarray(w[A.R_ERRORS]!, w[A.R_ERRORS]! + np),
  };
  const classRequests: Array<ReadonlyArray<readonly [string, number]> | undefined> = [];
  for (let p = 0; p < np; p++) {
    const at = placements[p]!;
    const pod = ctx.pods[p]!;
    if (at >= 0) {
      const name = ctx.model.existing[at]!.node.name;
      let l = out.existing.get(name);
      if (!l) out.existing.set(name, (l = []));
      l.push(pod.uid);
    } else if (at <= -2) {
      out.claimPods[-(at + 2)]!.push(pod);
      const cls = ctx.podClass[p]!;
      let entries = classRequests[cls];
      if (!entries) classRequests[cls] = entries = Object.entries(pod.requests);
      out.claimRequests[-(at + 2)]!.push(entries);
    } else {
      out.failed.push(p);
    }
  }
  return out;
}

/** The plan's NodeClaims; pods of a claim that cannot be finished go to `unschedulable`. */
function claimsOf(ctx: EncodeContext, w: Int32Array, buf: ArrayBuffer, placed: Placements, unschedulable: PodError[]): NewNodeClaimPlan[] {
  const newNodeClaims: NewNodeClaimPlan[] = [];
  const decoded = new Map<number, Requirements>();
  // NodeClaims of similar size share one instance-type list in the result; decode each once.
  const lists = new Map<number, Array<{ it: InstanceType; micros: number }>>();
  const setsAt = w[A.R_SETS]!;
  for (let c = 0; c < placed.claimPods.length; c++) {
    const rec = w[A.R_CLAIMS]! + c * A.C_STRIDE;
    const pods = placed.claimPods[c]!;
    if (pods.length === 0) continue;
    const t = w[rec + A.C_TMPL]!;
    const template = ctx.templates[t]!;
    const si = w[rec + A.C_SET]!;
    let reqs = decoded.get(si);
    if (!reqs) decoded.set(si, (reqs = decodeSet(ctx.keys, buf, setsAt + si * ctx.keys.setBytes)));
    const itAt = w[rec + A.C_ITS]!;
    let ordered = lists.get(itAt);
    if (!ordered) lists.set(itAt, (ordered = typeList(ctx, w, itAt, t)));
    const resvAt = w[rec + A.C_RESV]!;
    if (resvAt >= 0) ({ reqs, ordered } = withHeldReservations(ctx, w, resvAt, itAt, t, reqs));
    // The pool label and node-class label are template requirements the solver keeps as they were.
    const f = claimPlan({ template, requirements: reqs, ordered, pods, podRequests: placed.claimRequests[c]! }, ctx.input.options, ctx.model.wellKnown, ctx.model.caches);
    if (f.ok) newNodeClaims.push(f.claim);
    else for (const p of pods) unschedulable.push({ uid: p.uid, reason: f.reason });
  }
  return newNodeClaims;
}

/** A claim's instance types with their prices, as the result lists them at word `itAt`. */
function typeList(ctx: EncodeContext, w: Int32Array, itAt: number, t: number): Array<{ it: InstanceType; micros: number }> {
  const types = ctx.templates[t]!.instanceTypes;
  const out: Array<{ it: InstanceType; micros: number }> = [];
  for (let i = 0; i < w[itAt]!; i++) out.push({ it: types[w[itAt + 1 + 2 * i]! - ctx.itStart[t]!]!, micros: w[itAt + 2 + 2 * i]! });
  return out;
}

/** Why each unplaced pod is unplaced: the solver's own error codes, else one explanation per pod class. */
function unplaced(ctx: EncodeContext, placed: Placements, unschedulable: PodError[]): void {
  // One explanation per pod class: 2,500 replicas stuck on a NodePool limit share it.
  const explained = new Map<number, { reason: string; perNodePool?: Record<string, string> }>();
  for (const p of placed.failed) {
    const pod = ctx.pods[p]!;
    if (placed.errors[p] === A.E_RESERVED) {
      unschedulable.push({ uid: pod.uid, reason: RESERVED_REASON, reservedOffering: true });
      continue;
    }
    if (placed.errors[p] === A.E_MIN_VALUES) {
      unschedulable.push({ uid: pod.uid, reason: "NodePool couldn't meet minValues requirements after truncating instance types" });
      continue;
    }
    const cls = ctx.podClass[p]!;
    let e = explained.get(cls);
    if (!e) explained.set(cls, (e = ctx.model.explain(pod)));
    unschedulable.push({ uid: pod.uid, reason: e.reason, ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}) });
  }
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
