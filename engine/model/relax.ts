// Relaxation (docs/karpenter/scheduling.md §2.17): each call removes exactly one soft constraint from a copy of the
// pod, in Karpenter's fixed order, or returns undefined when nothing is left to relax.
import type { Pod, PreferencePolicy } from '../domain/types.ts';
import { PREFER_NO_SCHEDULE_TOLERATION } from './templates.ts';

function heaviestRemoved<T extends { weight: number }>(terms: readonly T[]): T[] {
  const sorted = [...terms].sort((a, b) => b.weight - a.weight);
  return sorted.slice(1);
}

export function relax(pod: Pod, policy: PreferencePolicy, anyPoolPreferNoSchedule: boolean): Pod | undefined {
  const a = pod.affinity;
  const na = a?.nodeAffinity;
  // 1. More than one required node-affinity term: drop the first (terms are ORed).
  if ((na?.required?.length ?? 0) > 1) {
    return { ...pod, affinity: { ...a, nodeAffinity: { ...na, required: na!.required!.slice(1) } } };
  }
  if (policy === 'Respect') {
    // 2. Preferred pod affinity: the heaviest term.
    if (a?.podAffinity?.preferred?.length) {
      return {
        ...pod,
        affinity: { ...a, podAffinity: { ...a.podAffinity, preferred: heaviestRemoved(a.podAffinity.preferred) } },
      };
    }
    // 3. Preferred pod anti-affinity: the heaviest term.
    if (a?.podAntiAffinity?.preferred?.length) {
      return {
        ...pod,
        affinity: {
          ...a,
          podAntiAffinity: { ...a.podAntiAffinity, preferred: heaviestRemoved(a.podAntiAffinity.preferred) },
        },
      };
    }
    // 4. Preferred node affinity: the heaviest term (the next heaviest becomes active).
    if (na?.preferred?.length) {
      return { ...pod, affinity: { ...a, nodeAffinity: { ...na, preferred: heaviestRemoved(na.preferred) } } };
    }
    // 5. One ScheduleAnyway topology spread constraint.
    const i = pod.topologySpreadConstraints.findIndex((t) => t.whenUnsatisfiable === 'ScheduleAnyway');
    if (i >= 0) return { ...pod, topologySpreadConstraints: pod.topologySpreadConstraints.filter((_, j) => j !== i) };
  }
  // 6. Tolerate PreferNoSchedule taints, when some NodePool has one.
  if (
    anyPoolPreferNoSchedule &&
    !pod.tolerations.some((t) => t.operator === 'Exists' && t.effect === 'PreferNoSchedule' && !t.key)
  ) {
    return { ...pod, tolerations: [...pod.tolerations, PREFER_NO_SCHEDULE_TOLERATION] };
  }
  return undefined;
}
