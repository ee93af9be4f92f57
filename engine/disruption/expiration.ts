// Expiration (docs/karpenter/disruption.md §5.1): a forceful disruption outside budgets, PDBs and do-not-disrupt; the
// NodeClaim is deleted once creationTimestamp + expireAfter has passed and its pods reschedule as it drains.
import type { Snapshot, StateNode } from '../domain/types.ts';

/** When the node expires (ms), or undefined for unmanaged nodes, unknown pools and expireAfter Never. */
export function expiresAt(s: Snapshot, node: StateNode): number | undefined {
  if (!node.hasNodeClaim || !node.managed) return undefined;
  const pool = s.nodePools.find((p) => p.name === node.nodePoolName);
  const after = node.expireAfter !== undefined ? node.expireAfter : pool?.template.expireAfter;
  if (after === null || after === undefined) return undefined;
  return node.creationTimestamp + after;
}

/** Names of the nodes (StateNode.name) whose NodeClaim has expired and is not already being deleted. */
export function expired(s: Snapshot): string[] {
  return s.nodes
    .filter((n) => !n.deleting && !n.instanceTerminating && (expiresAt(s, n) ?? Infinity) <= s.now)
    .map((n) => n.name);
}
