// The one place where the provider's view of an EC2NodeClass differs from the engine's typed EC2NodeClass
// (engine/api/ec2nodeclass.ts), which every other file uses as is:
//
// * status.conditions[].observedGeneration: the engine's Condition drops it, but launching needs "Ready=True
//   for the current generation" (docs/karpenter/aws-provider.md §4 step 1). parseNodeClass() keeps it as an extra field
//   on each condition; a node class parsed by the engine alone has none, and then Ready=True is trusted.
// * Writing status back: the engine's conditions hold lastTransitionTime in ms since the epoch; the API server
//   wants RFC 3339. statusObject() renders the status the reconciler computed in the wire shape.
import {
  formatFieldError,
  parseEC2NodeClass,
  type Condition,
  type EC2NodeClass,
  type EC2NodeClassStatus,
  type Result,
} from '../../../../engine/index.ts';

/** A condition as the provider writes it: the engine's Condition plus the generation it was computed for. */
export type NodeClassCondition = Condition & { readonly observedGeneration?: number };

export function observedGeneration(c: Condition): number | undefined {
  const g = (c as NodeClassCondition).observedGeneration;
  return typeof g === 'number' ? g : undefined;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** parseEC2NodeClass, keeping each condition's observedGeneration (matched by type). */
export function parseNodeClass(obj: unknown): Result<EC2NodeClass> {
  const r = parseEC2NodeClass(obj);
  if (!r.ok) return r;
  const raw = record(record(obj)['status'])['conditions'];
  const generations = new Map<string, number>();
  for (const c of Array.isArray(raw) ? raw : []) {
    const { type, observedGeneration: g } = record(c);
    if (typeof type === 'string' && typeof g === 'number') generations.set(type, g);
  }
  if (generations.size === 0) return r;
  const conditions = r.value.status.conditions.map((c): NodeClassCondition => {
    const g = generations.get(c.type);
    return g === undefined ? c : { ...c, observedGeneration: g };
  });
  return { ok: true, value: { ...r.value, status: { ...r.value.status, conditions } } };
}

/** parseNodeClass, throwing an error that lists every field problem (for callers with no Result to return). */
export function mustParseNodeClass(obj: unknown): EC2NodeClass {
  const r = parseNodeClass(obj);
  if (!r.ok) throw new Error(r.errors.map(formatFieldError).join('; '));
  return r.value;
}

/** RFC 3339 at second precision, as metav1.Time serialises. */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The status in the API server's shape, to write back after reconcileNodeClass(). */
export function statusObject(status: EC2NodeClassStatus): Record<string, unknown> {
  const conditions = status.conditions.map((c) => {
    const g = observedGeneration(c);
    return {
      type: c.type,
      status: c.status,
      ...(g !== undefined ? { observedGeneration: g } : {}),
      lastTransitionTime: rfc3339(c.lastTransitionTime ?? 0),
      reason: c.reason ?? '',
      message: c.message ?? '',
    };
  });
  const out: Record<string, unknown> = {
    subnets: status.subnets,
    securityGroups: status.securityGroups,
    amis: status.amis,
  };
  // Always written: status is merge-patched, so a list that became empty must be written as empty, and a
  // field that went away as null (which removes it).
  out['capacityReservations'] = status.capacityReservations;
  out['instanceProfile'] = status.instanceProfile ?? null;
  out['conditions'] = conditions;
  return out;
}
