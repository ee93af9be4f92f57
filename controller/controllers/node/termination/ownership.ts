// Which NodeClaim a deleting Node belongs to, before its finalizer may delete a NodeClaim or terminate an
// instance. A Node names its instance by spec.providerID, but any Node object can carry any providerID
// (a Node created by hand with a copied one): the instance belongs to the NodeClaim that records that
// providerID, and that NodeClaim's node is the one its status.nodeName names (set at registration). So:
//
//   owned      a NodeClaim records the providerID and names this Node (or names no node yet): the finalizer
//              deletes that NodeClaim and terminates its instance;
//   unclaimed  no NodeClaim records the providerID: the Node is drained and released, its instance left to
//              garbage collection (which terminates it only if it is this cluster's and no NodeClaim owns it);
//   foreign    a NodeClaim records the providerID for another Node: this Node is released at once, and
//              neither that NodeClaim nor its instance is touched.
import type { Cluster } from '../../../state/cluster.ts';
import type { NodeClaimEntry, NodeEntry } from '../../../state/statenode.ts';

type Ownership =
  | { readonly kind: 'owned'; readonly claim: NodeClaimEntry }
  | { readonly kind: 'unclaimed' }
  | { readonly kind: 'foreign'; readonly claim: NodeClaimEntry };

export function ownershipOf(cluster: Pick<Cluster, 'nodeClaimByProviderID'>, node: NodeEntry): Ownership {
  const pid = node.info.providerId;
  const claim = pid ? cluster.nodeClaimByProviderID(pid) : undefined;
  if (!claim) return { kind: 'unclaimed' };
  const named = claim.info.nodeName;
  return named === undefined || named === node.info.name ? { kind: 'owned', claim } : { kind: 'foreign', claim };
}
