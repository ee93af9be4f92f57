// NodeOverlay (karpenter.sh/v1alpha1) -> the engine's NodeOverlay, after admission (the CRD's schema and
// rules), plus the checks Karpenter makes at run time (pkg/apis/v1alpha1/nodeoverlay_validation.go, main after
// v1.14.1): each requirement must pass the NodePool requirement rules, and capacity must not name a well-known
// resource. An overlay failing those is reported on its status (ValidationSucceeded=False, RuntimeValidation)
// and applies to nothing.
import { parseResources } from '../domain/resources.ts';
import type { NodeSelectorRequirement, Resources } from '../domain/types.ts';
import { fail, fieldError, isRecord, objectRef, ok, type Result } from './errors.ts';
import { requirementProblem } from './problems.ts';
import { admit } from './validate.ts';

export interface NodeOverlay {
  readonly name: string;
  /** spec.weight; 0 when absent (Karpenter's lo.FromPtr). */
  readonly weight: number;
  readonly requirements: readonly NodeSelectorRequirement[];
  /** spec.price (absolute, $/h) or spec.priceAdjustment (±N or ±N%), as written. */
  readonly price?: string;
  readonly priceAdjustment?: string;
  /** spec.capacity: extended resources added to the matching types. */
  readonly capacity?: Resources;
  /** Problems Karpenter's run-time validation finds; non-empty = the overlay applies to nothing. */
  readonly runtimeProblems: readonly string[];
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});
const WELL_KNOWN_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'pods']);

function requirementsOf(list: unknown): NodeSelectorRequirement[] {
  return (Array.isArray(list) ? list : []).map((r: Obj) => ({
    key: String(r['key']),
    operator: r['operator'] as NodeSelectorRequirement['operator'],
    values: (r['values'] as string[] | undefined) ?? [],
  }));
}

function runtimeProblems(reqs: readonly NodeSelectorRequirement[], capacity: Obj | undefined): string[] {
  const out: string[] = [];
  for (const r of reqs) {
    const p = requirementProblem(r, 'nodeclaim');
    if (p) out.push(`invalid value: ${p} in requirements, restricted`);
    if (r.operator === 'NotIn' && r.values.length === 0)
      out.push(`key ${r.key} with operator NotIn must have a value defined`);
  }
  for (const k of Object.keys(capacity ?? {}))
    if (WELL_KNOWN_RESOURCES.has(k)) out.push(`invalid capacity: ${k} in resource, restricted`);
  return out;
}

export function parseNodeOverlay(obj: unknown): Result<NodeOverlay> {
  const admitted = admit(obj);
  if (!admitted.ok) return fail(admitted.errors);
  const o = admitted.value;
  if (o['kind'] !== 'NodeOverlay') return fail([fieldError(objectRef(o), ['kind'], 'expected a NodeOverlay')]);
  const spec = rec(o['spec']);
  const requirements = requirementsOf(spec['requirements']);
  const capacity = isRecord(spec['capacity']) ? spec['capacity'] : undefined;
  const overlay: Record<string, unknown> = {
    name: String(rec(o['metadata'])['name'] ?? ''),
    weight: typeof spec['weight'] === 'number' ? spec['weight'] : 0,
    requirements,
    runtimeProblems: runtimeProblems(requirements, capacity),
  };
  if (typeof spec['price'] === 'string') overlay['price'] = spec['price'];
  if (typeof spec['priceAdjustment'] === 'string') overlay['priceAdjustment'] = spec['priceAdjustment'];
  if (capacity) overlay['capacity'] = parseResources(capacity as Record<string, string | number>);
  return ok(overlay as unknown as NodeOverlay);
}
