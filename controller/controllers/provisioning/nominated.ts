// The Nominated event: one builder for every place that tells a pod where it goes.
import { POD_NOMINATION_RATE, podTarget, type Event } from '../../operator/events.ts';

/**
 * A pod's Nominated event: where it should schedule (a NodeClaim, its Node, or both). Karpenter builds every one,
 * from a provisioning pass (new NodeClaims, existing and in-flight nodes) and from a started disruption command
 * (its scheduling results), with one function, NominatePodEvent, whose dedupe value is the pod's UID alone and
 * whose rate is the shared nomination bucket, POD_NOMINATION_RATE (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling/
 * events.go, v1): within the dedupe window a pod hears where it goes once, even if a later pass sends it
 * elsewhere.
 */
export function nominatedEvent(
  pod: { readonly name: string; readonly namespace: string; readonly uid: string },
  to: { readonly nodeClaim?: string | undefined; readonly node?: string | undefined },
): Event {
  const where = [to.nodeClaim ? `nodeclaim/${to.nodeClaim}` : '', to.node ? `node/${to.node}` : '']
    .filter(Boolean)
    .join(', ');
  return {
    involved: podTarget(pod),
    type: 'Normal',
    reason: 'Nominated',
    message: `Pod should schedule on: ${where}`,
    dedupeValues: [pod.uid],
    rateLimit: POD_NOMINATION_RATE,
  };
}
