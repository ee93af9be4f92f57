// Disruption candidates (spec/disruption.md §1.3): managed, initialized nodes that nothing protects —
// not already being disrupted or deleted, not nominated for pending pods, not annotated do-not-disrupt,
// of a known NodePool, with no pod that do-not-disrupt or a PodDisruptionBudget protects.
import {
  isActive, isMirrorPod, selectorMatches, tolerates, type InstanceType, type NodePool, type Pod, type PodDisruptionBudget, type StateNode,
} from '../../../engine/index.ts';
import { DISRUPTED_TAINT, DO_NOT_DISRUPT_ANNOTATION } from '../keys.ts';
import { doNotDisrupt } from '../node/termination/drain.ts';
import type { Candidate } from './types.ts';

export interface CandidateInput {
  readonly now: number;
  readonly nodes: readonly StateNode[];
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly instanceTypes: ReadonlyMap<string, readonly InstanceType[]>;
  readonly pdbs: readonly PodDisruptionBudget[];
  /** providerIDs already in a queued command. */
  readonly inFlight: ReadonlySet<string>;
}

/** Why a node is not a candidate, or undefined when it is one. */
export function blockReason(n: StateNode, input: CandidateInput): string | undefined {
  if (n.providerId && input.inFlight.has(n.providerId)) return 'candidate is already being disrupted';
  if (!n.hasNodeClaim) return "node isn't managed by karpenter";
  if (!n.hasNode) return 'nodeclaim does not have an associated node';
  if (!n.initialized) return "node isn't initialized";
  if (n.markedForDeletion || n.deleting || n.instanceTerminating) return 'node is deleting or marked for deletion';
  if (n.nominatedUntil !== undefined && n.nominatedUntil > input.now) return 'node is nominated for a pending pod';
  if (n.annotations[DO_NOT_DISRUPT_ANNOTATION] === 'true') return `disruption is blocked through the "${DO_NOT_DISRUPT_ANNOTATION}" annotation`;
  if (!n.nodePoolName) return "node doesn't have required label (label=karpenter.sh/nodepool)";
  if (!input.pools.has(n.nodePoolName)) return `nodepool not found (NodePool=${n.nodePoolName})`;
  for (const p of n.pods) {
    if (!isActive(p)) continue;
    if (doNotDisrupt(p, input.now)) return `pod has "${DO_NOT_DISRUPT_ANNOTATION}" annotation (Pod=${p.namespace}/${p.name})`;
  }
  return pdbBlock(n.pods, input.pdbs);
}

function pdbBlock(pods: readonly Pod[], pdbs: readonly PodDisruptionBudget[]): string | undefined {
  for (const p of pods) {
    if (!isActive(p) || isMirrorPod(p) || p.tolerations.some((t) => tolerates(t, DISRUPTED_TAINT))) continue;
    const matching = pdbs.filter((b) => b.namespace === p.namespace && selectorMatches(b.selector, p.labels));
    if (matching.length > 1) return `eviction does not support multiple PDBs (PodDisruptionBudget(s)=[${matching.map((b) => `${b.namespace}/${b.name}`).join(', ')}])`;
    const b = matching[0];
    if (b && b.disruptionsAllowed === 0 && !(b.unhealthyPodEvictionPolicy === 'AlwaysAllow' && p.ready === false)) return `pdb prevents pod evictions (PodDisruptionBudget=[${b.namespace}/${b.name}])`;
  }
  return undefined;
}

/** $/h of the offering the node runs on (instance type, zone, capacity type), regardless of availability. */
export function nodePrice(n: StateNode, types: readonly InstanceType[]): number {
  const it = types.find((t) => t.name === n.labels['node.kubernetes.io/instance-type']);
  const o = it?.offerings.find((x) => x.zone === n.labels['topology.kubernetes.io/zone'] && x.capacityType === n.labels['karpenter.sh/capacity-type']);
  return o && Number.isFinite(o.price) ? o.price : 0;
}

export function buildCandidates(input: CandidateInput, onBlocked?: (n: StateNode, reason: string) => void): Candidate[] {
  const out: Candidate[] = [];
  for (const n of input.nodes) {
    const why = blockReason(n, input);
    if (why) {
      if (n.managed) onBlocked?.(n, why);
      continue;
    }
    out.push({ node: n, providerId: n.providerId!, nodeClaimName: n.nodeClaimName!, nodePool: input.pools.get(n.nodePoolName!)!, price: nodePrice(n, input.instanceTypes.get(n.nodePoolName!) ?? []) });
  }
  return out;
}
