// Building disruption candidates (docs/karpenter/disruption.md §1.3): the filters in Karpenter's order, each failure
// with Karpenter's message (and the DisruptionBlocked event it publishes), then the per-candidate figures.
import type { NodePool, Snapshot, StateNode } from '../domain/types.ts';
import {
  CAPACITY_TYPE_LABEL,
  DO_NOT_DISRUPT_ANNOTATION,
  INSTANCE_TYPE_LABEL,
  NODEPOOL_LABEL,
  ZONE_LABEL,
} from '../scheduling/labels.ts';
import type { ModelCaches } from '../model/caches.ts';
import { podKey } from '../scheduling/pods.ts';
import { podBlock, reschedulablePods, rescheduleDisruptionCost, type PodBlock } from './pods.ts';
import { nodeOfferingPrice, typeByName } from './pricing.ts';
import type { Candidate, DecisionCandidate, DisruptionClass, Explanation } from './types.ts';
import { capitalize, explanation, utcTime } from './words.ts';

type CandidateResult =
  | { readonly ok: true; readonly candidate: Candidate }
  | { readonly ok: false; readonly explanation: Explanation };

/** NodePools whose instance types are known (non-empty); nodes of other pools are "nodepool not found". */
export function managedPools(s: Snapshot): Map<string, NodePool> {
  const out = new Map<string, NodePool>();
  for (const p of s.nodePools) if ((s.instanceTypes.get(p.name)?.length ?? 0) > 0) out.set(p.name, p);
  return out;
}

function blocked(
  node: StateNode,
  code: Explanation['code'],
  message: string,
  data: Record<string, unknown> = {},
  eventMessage?: string,
): CandidateResult {
  return {
    ok: false,
    explanation: explanation(node.name, code, message, data, {
      reason: 'DisruptionBlocked',
      message: eventMessage ?? capitalize(message),
    }),
  };
}

/**
 * One node as a candidate for a method of the given class, or the first reason it is not (§1.3 steps 1-9).
 * `queued` holds provider ids (or names) of nodes already in a queued command.
 */
export function newCandidate(
  s: Snapshot,
  node: StateNode,
  cls: DisruptionClass,
  pools: ReadonlyMap<string, NodePool>,
  queued?: ReadonlySet<string>,
  caches?: ModelCaches,
): CandidateResult {
  const nodeBlocked = nodeBlock(s, node, queued);
  if (nodeBlocked) return nodeBlocked;
  const poolName = node.labels[NODEPOOL_LABEL];
  if (poolName === undefined)
    return blocked(node, 'no-nodepool-label', `node doesn't have required label (label=${NODEPOOL_LABEL})`);
  const pool = pools.get(poolName);
  if (!pool)
    return blocked(
      node,
      'nodepool-not-found',
      `nodepool not found (NodePool=${poolName})`,
      { nodePool: poolName },
      `NodePool not found (NodePool=${poolName})`,
    );
  const block = podBlock(node, s.pdbs, s.now, caches);
  // An eventual method with a termination grace period goes on regardless: the deadline will evict them.
  if (block && !(cls === 'eventual' && node.terminationGracePeriod !== undefined)) return podBlocked(s, node, block);
  return { ok: true, candidate: candidateOf(s, node, pool, caches) };
}

/** The first reason the node itself is not a candidate (§1.3 steps 1-6): queued, unmanaged, ..., do-not-disrupt. */
function nodeBlock(s: Snapshot, node: StateNode, queued: ReadonlySet<string> | undefined): CandidateResult | undefined {
  if (queued && (queued.has(node.providerId ?? '') || queued.has(node.name))) {
    return {
      ok: false,
      explanation: explanation(node.name, 'already-disrupting', 'candidate is already being disrupted'),
    };
  }
  if (!node.hasNodeClaim) return blocked(node, 'not-managed', "node isn't managed by karpenter");
  if (!node.hasNode) return blocked(node, 'no-node', 'nodeclaim does not have an associated node');
  if (!node.initialized) return blocked(node, 'not-initialized', "node isn't initialized");
  if (node.markedForDeletion || node.deleting || node.instanceTerminating)
    return blocked(node, 'deleting', 'node is deleting or marked for deletion');
  if (node.nominatedUntil !== undefined && node.nominatedUntil > s.now) {
    return blocked(node, 'nominated', 'node is nominated for a pending pod', { until: node.nominatedUntil });
  }
  if (node.annotations[DO_NOT_DISRUPT_ANNOTATION] === 'true') {
    return blocked(
      node,
      'node-do-not-disrupt',
      `disruption is blocked through the "${DO_NOT_DISRUPT_ANNOTATION}" annotation`,
    );
  }
  return undefined;
}

/** A pod that keeps the node: do-not-disrupt, several PDBs, or a PDB that allows no disruption. */
function podBlocked(s: Snapshot, node: StateNode, block: PodBlock): CandidateResult {
  const pod = podKey(block.pod);
  if (block.kind === 'do-not-disrupt') {
    const words =
      block.until !== undefined
        ? `pod ${pod} has ${DO_NOT_DISRUPT_ANNOTATION} until ${utcTime(block.until, s.now)}`
        : `pod ${pod} has ${DO_NOT_DISRUPT_ANNOTATION}`;
    return blocked(
      node,
      'pod-do-not-disrupt',
      words,
      { pod, ...(block.until !== undefined ? { until: block.until } : {}) },
      capitalize(block.message),
    );
  }
  if (block.kind === 'pdb-multiple') {
    return blocked(
      node,
      'pdb-multiple',
      `pod ${pod} is selected by several PDBs (${block.pdbs.join(', ')}); eviction supports only one`,
      { pod, pdbs: block.pdbs },
      capitalize(block.message),
    );
  }
  return blocked(
    node,
    'pdb-blocked',
    `pdb ${block.pdb} allows 0 disruptions (pod ${pod})`,
    { pod, pdb: block.pdb },
    capitalize(block.message),
  );
}

/** The candidate's figures: its instance type, zone, capacity type, price, pods to reschedule and their cost. */
function candidateOf(s: Snapshot, node: StateNode, pool: NodePool, caches: ModelCaches | undefined): Candidate {
  const its = s.instanceTypes.get(pool.name) ?? [];
  const itName = node.labels[INSTANCE_TYPE_LABEL];
  const instanceType = itName === undefined ? undefined : typeByName(its, itName, caches);
  const resched = reschedulablePods(node, caches);
  const cost = rescheduleDisruptionCost(resched);
  const zone = node.labels[ZONE_LABEL];
  const capacityType = node.labels[CAPACITY_TYPE_LABEL];
  return {
    node,
    nodePool: pool,
    ...(instanceType ? { instanceType } : {}),
    ...(zone !== undefined ? { zone } : {}),
    ...(capacityType !== undefined ? { capacityType } : {}),
    price: nodeOfferingPrice(instanceType, node.labels),
    reschedulablePods: resched,
    disruptionCost: cost,
    empty: cost <= 1,
  };
}

export interface CandidateSet {
  /** Nodes passing §1.3 steps 1-9 (before the method filter); Balanced pool totals count these. */
  readonly all: readonly Candidate[];
  /** Nodes that are not candidates, with the reason. */
  readonly rejected: readonly Explanation[];
}

/** Every state node through steps 1-9. */
export function candidateSet(
  s: Snapshot,
  cls: DisruptionClass,
  queued?: ReadonlySet<string>,
  caches?: ModelCaches,
): CandidateSet {
  const pools = managedPools(s);
  const all: Candidate[] = [];
  const rejected: Explanation[] = [];
  for (const n of s.nodes) {
    const r = newCandidate(s, n, cls, pools, queued, caches);
    if (r.ok) all.push(r.candidate);
    else rejected.push(r.explanation);
  }
  return { all, rejected };
}

/** Price / RescheduleDisruptionCost, highest first (§1.5); stable. */
export function bySavingsRatio(cs: readonly Candidate[]): Candidate[] {
  return cs
    .map((c, i) => ({ c, i, r: c.price / c.disruptionCost }))
    .sort((a, b) => b.r - a.r || a.i - b.i)
    .map((x) => x.c);
}

export function describeCandidate(c: Candidate): DecisionCandidate {
  return {
    name: c.node.name,
    ...(c.node.nodeClaimName !== undefined ? { nodeClaimName: c.node.nodeClaimName } : {}),
    ...(c.node.providerId !== undefined ? { providerId: c.node.providerId } : {}),
    nodePool: c.nodePool.name,
    ...(c.instanceType
      ? { instanceType: c.instanceType.name }
      : c.node.labels[INSTANCE_TYPE_LABEL] !== undefined
        ? { instanceType: c.node.labels[INSTANCE_TYPE_LABEL] }
        : {}),
    ...(c.capacityType !== undefined ? { capacityType: c.capacityType } : {}),
    ...(c.zone !== undefined ? { zone: c.zone } : {}),
    price: c.price,
    reschedulablePods: c.reschedulablePods.length,
    disruptionCost: c.disruptionCost,
  };
}

/**
 * Round-robin by pool over the (already ratio-sorted) candidates: pools not reached before the last timeout
 * first, then the others, each in order of first appearance; rank 0 of every pool, then rank 1, ...
 */
export function interleave(sorted: readonly Candidate[], previouslyUnseen: readonly string[]): Candidate[] {
  const groups = new Map<string, Candidate[]>();
  for (const c of sorted) groups.set(c.nodePool.name, [...(groups.get(c.nodePool.name) ?? []), c]);
  const unseen = new Set(previouslyUnseen);
  const order = [
    ...[...groups.keys()].filter((p) => unseen.has(p)),
    ...[...groups.keys()].filter((p) => !unseen.has(p)),
  ];
  const out: Candidate[] = [];
  for (let rank = 0; out.length < sorted.length; rank++) {
    for (const p of order) {
      const c = groups.get(p)![rank];
      if (c) out.push(c);
    }
  }
  return out;
}
