// The provisioner's scheduler metrics beyond duration and queue depth: the pods it left out
// (karpenter_scheduler_ignored_pods_count), the pending pods by the zone their constraints allow
// (karpenter_scheduler_pending_pods_by_effective_zone_count: one zone, `flexible` for several or any,
// `none` when node selector, required node affinity and volume topology leave no zone), and when each pod
// was first seen and first decided (karpenter_pods_scheduling_decision_duration_seconds).
import type { NodeSelectorRequirement, Pod, ProvisionPlan, Snapshot } from '../../../engine/index.ts';
import type { Metrics } from '../../operator/metrics.ts';

const ZONE = 'topology.kubernetes.io/zone';

/** The zones `reqs` allows out of `all`; undefined when they say nothing about zones. */
function zonesOf(reqs: readonly NodeSelectorRequirement[], all: ReadonlySet<string>): Set<string> | undefined {
  let out: Set<string> | undefined;
  for (const r of reqs) {
    if (r.key !== ZONE) continue;
    const values = new Set(r.values);
    let allowed: Set<string>;
    if (r.operator === 'In') allowed = values;
    else if (r.operator === 'NotIn') allowed = new Set([...all].filter((z) => !values.has(z)));
    else if (r.operator === 'DoesNotExist') allowed = new Set();
    else continue;
    out = out ? new Set([...out].filter((z) => allowed.has(z))) : allowed;
  }
  return out;
}

/** OR over alternatives (node-affinity terms, volume topologies); undefined when one leaves zones open. */
function anyOf(
  alternatives: ReadonlyArray<readonly NodeSelectorRequirement[]>,
  all: ReadonlySet<string>,
): Set<string> | undefined {
  if (!alternatives.length) return undefined;
  const out = new Set<string>();
  for (const alt of alternatives) {
    const z = zonesOf(alt, all);
    if (!z) return undefined;
    for (const v of z) out.add(v);
  }
  return out;
}

/** The zone label value of one pod: a zone name, `flexible` or `none`. */
function effectiveZone(pod: Pod, all: ReadonlySet<string>): string {
  let zones: Set<string> | undefined;
  const narrow = (z: Set<string> | undefined): void => {
    if (z) zones = zones ? new Set([...zones].filter((x) => z.has(x))) : z;
  };
  const selected = pod.nodeSelector[ZONE];
  if (selected !== undefined) narrow(new Set([selected]));
  const terms = pod.affinity?.nodeAffinity?.required ?? [];
  narrow(
    anyOf(
      terms.map((t) => t.matchExpressions),
      all,
    ),
  );
  narrow(anyOf(pod.volumeRequirements ?? [], all));
  if (!zones) return 'flexible';
  if (zones.size === 0) return 'none';
  return zones.size === 1 ? [...zones][0]! : 'flexible';
}

function zonesOfSnapshot(s: Snapshot): Set<string> {
  const out = new Set<string>();
  for (const types of s.instanceTypes.values()) for (const t of types) for (const o of t.offerings) out.add(o.zone);
  return out;
}

/** After a provisioning pass: ignored pods, pending pods by zone, and the first decision for each pod. */
export function recordSchedulingPass(
  metrics: Metrics,
  controller: string,
  snapshot: Snapshot,
  plan: ProvisionPlan,
  pods: ReadonlyMap<string, Pod>,
  now: number,
): void {
  metrics.ignoredPods.set(plan.ignored.length);
  const all = zonesOfSnapshot(snapshot);
  const byZone = new Map<string, number>();
  for (const p of pods.values()) {
    const z = effectiveZone(p, all);
    byZone.set(z, (byZone.get(z) ?? 0) + 1);
  }
  metrics.pendingPodsByZone.reset();
  for (const [zone, n] of byZone) metrics.pendingPodsByZone.set({ controller, zone }, n);
  const waiting = new Set([...plan.unschedulable, ...plan.ignored].filter((e) => e.reservedOffering).map((e) => e.uid));
  const decided = [...pods.values()].filter((p) => !waiting.has(p.uid));
  for (const ms of metrics.podTimes.decided(decided, now)) metrics.podSchedulingDecisionDuration.observe(ms / 1000);
}
