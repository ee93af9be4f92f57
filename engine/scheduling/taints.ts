// Taints and tolerations with Kubernetes' matching rules (docs/karpenter/scheduling.md §2.12). A pod must tolerate
// every taint of a node, whatever the effect (NoSchedule, NoExecute and PreferNoSchedule alike).
import type { Taint, Toleration } from '../domain/types.ts';

/** Kubernetes ToleratesTaint, with the numeric Lt/Gt operators (taint value compared to the toleration's). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator ?? 'Equal';
  switch (op) {
    case 'Exists':
      return true;
    case 'Equal':
      if (!t.key && !t.value) return false;
      return (t.value ?? '') === (taint.value ?? '');
    case 'Gt':
    case 'Lt': {
      if (!/^-?\d+$/.test(taint.value ?? '') || !/^-?\d+$/.test(t.value ?? '')) return false;
      const tv = Number(taint.value);
      const v = Number(t.value);
      return op === 'Gt' ? tv > v : tv < v;
    }
  }
}

/** The first taint the tolerations do not tolerate, or undefined when all are tolerated. */
export function firstUntolerated(tolerations: readonly Toleration[], taints: readonly Taint[]): Taint | undefined {
  for (const taint of taints) if (!tolerations.some((t) => tolerates(t, taint))) return taint;
  return undefined;
}

export function toleratesAll(tolerations: readonly Toleration[], taints: readonly Taint[]): boolean {
  return firstUntolerated(tolerations, taints) === undefined;
}

export function formatTaint(t: Taint): string {
  return `${t.key}${t.value ? '=' + t.value : ''}:${t.effect}`;
}

/** Taints Karpenter ignores on a node that is not yet initialized (§2.12, disruption.md §5.4). */
export function isKnownEphemeralTaint(t: Taint): boolean {
  if (t.key === 'node.kubernetes.io/not-ready' && (t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return true;
  if (t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoSchedule') return true;
  if (t.key === 'node.cloudprovider.kubernetes.io/uninitialized' && t.effect === 'NoSchedule') return true;
  if (t.key === 'karpenter.sh/unregistered') return true;
  return t.key.startsWith('readiness.k8s.io/');
}
