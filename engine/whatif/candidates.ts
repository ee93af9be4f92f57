// Which nodes consolidation may touch, and why not the others (docs/spec/disruption.md §1.3-§1.5, the
// graceful class). The provisional planner uses it; the disruption engine has its own when it plugs in.
// What-if answers for the steady state, so the Consolidatable condition (consolidateAfter not yet elapsed)
// is not required; consolidateAfter: Never still disables a pool.
import { durationMs } from '../api/duration.ts';
import type { NodePool, Pod, PodDisruptionBudget, Snapshot, StateNode } from '../domain/types.ts';
import { DO_NOT_DISRUPT_ANNOTATION } from '../scheduling/labels.ts';
import { isActive, isMirrorPod, isOwnedByDaemonSet, isStatefulSetPod, isTerminating, podKey, selectorMatches } from '../scheduling/pods.ts';

export interface Candidate {
  readonly node: StateNode;
  readonly pool: NodePool;
  readonly price: number;
  /** Pods that must find a new home if the node goes. */
  readonly reschedulable: readonly Pod[];
  /** 1 + Σ eviction cost of the reschedulable pods (§1.5). */
  readonly disruptionCost: number;
  readonly empty: boolean;
}

export interface CandidateSet {
  readonly candidates: readonly Candidate[];
  /** Node name -> why it is not a candidate. */
  readonly blocked: ReadonlyMap<string, string>;
}

/** EvictionCost (§1.5): 1 + deletion cost / 2^27 + priority / 2^25, clamped to [-10, 10]. */
export function evictionCost(p: Pod): number {
  let cost = 1;
  const del = Number.parseFloat(p.annotations['controller.kubernetes.io/pod-deletion-cost'] ?? '');
  if (Number.isFinite(del)) cost += del / 2 ** 27;
  if (p.priority !== undefined) cost += p.priority / 2 ** 25;
  return Math.min(10, Math.max(-10, cost));
}

export function reschedulablePods(n: StateNode): Pod[] {
  return n.pods.filter((p) => (isActive(p) || (isTerminating(p) && isStatefulSetPod(p))) && !isOwnedByDaemonSet(p) && !isMirrorPod(p));
}

/** Why a pod's do-not-disrupt annotation protects it now, or undefined. */
function doNotDisrupt(p: Pod, now: number): boolean {
  const v = p.annotations[DO_NOT_DISRUPT_ANNOTATION];
  if (v === undefined) return false;
  if (v === 'true') return true;
  const ms = durationMs(v);
  if (ms === undefined || ms <= 0) return false;
  return p.startTime === undefined || now - p.startTime < ms;
}

function pdbBlock(p: Pod, pdbs: readonly PodDisruptionBudget[]): string | undefined {
  const matching = pdbs.filter((b) => b.namespace === p.namespace && selectorMatches(b.selector, p.labels));
  if (matching.length > 1) return `eviction does not support multiple PDBs (PodDisruptionBudget(s)=[${matching.map((b) => `${b.namespace}/${b.name}`).join(', ')}])`;
  const b = matching[0];
  if (!b || b.disruptionsAllowed > 0) return undefined;
  if (b.unhealthyPodEvictionPolicy === 'AlwaysAllow' && p.ready === false) return undefined;
  return `pdb ${b.namespace}/${b.name} prevents pod evictions (pod ${podKey(p)})`;
}

/** The first reason the node cannot be a graceful consolidation candidate, or undefined. */
export function blockReason(n: StateNode, s: Snapshot): string | undefined {
  if (!n.hasNodeClaim || !n.managed) return "node isn't managed by karpenter";
  if (!n.hasNode) return 'nodeclaim does not have an associated node';
  if (!n.initialized) return "node isn't initialized";
  if (n.markedForDeletion || n.deleting || n.instanceTerminating) return 'node is deleting or marked for deletion';
  if (n.nominatedUntil !== undefined && n.nominatedUntil > s.now) return 'node is nominated for a pending pod';
  if (n.annotations[DO_NOT_DISRUPT_ANNOTATION] === 'true') return 'disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation';
  const pool = s.nodePools.find((p) => p.name === n.nodePoolName);
  if (!pool || !s.instanceTypes.get(pool.name)?.length) return `nodepool not found (NodePool=${n.nodePoolName ?? ''})`;
  for (const p of n.pods) {
    if (isActive(p) && doNotDisrupt(p, s.now)) return `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=${podKey(p)})`;
  }
  for (const p of n.pods) {
    if (!isActive(p) || isMirrorPod(p)) continue;
    const why = pdbBlock(p, s.pdbs);
    if (why) return why;
  }
  if (pool.replicas !== undefined) return `NodePool "${pool.name}" is static`;
  if (pool.disruption.consolidateAfter === null) return `NodePool "${pool.name}" has consolidation disabled`;
  return undefined;
}

/** Candidates sorted as Karpenter sorts them: price / disruption cost, highest first. */
export function candidatesOf(s: Snapshot, priceOf: (n: StateNode) => number): CandidateSet {
  const blocked = new Map<string, string>();
  const out: Candidate[] = [];
  for (const n of s.nodes) {
    const why = blockReason(n, s);
    if (why) {
      blocked.set(n.name, why);
      continue;
    }
    const pool = s.nodePools.find((p) => p.name === n.nodePoolName)!;
    const reschedulable = reschedulablePods(n);
    const disruptionCost = 1 + reschedulable.reduce((a, p) => a + Math.max(0, evictionCost(p)), 0);
    out.push({ node: n, pool, price: priceOf(n), reschedulable, disruptionCost, empty: disruptionCost <= 1 });
  }
  out.sort((a, b) => b.price / b.disruptionCost - a.price / a.disruptionCost || a.node.name.localeCompare(b.node.name));
  return { candidates: out, blocked };
}
