// NodePool (karpenter.sh/v1) -> domain NodePool, after admission (validation + CRD defaults), so the
// defaults of docs/karpenter/disruption.md §0 hold: expireAfter 720h, consolidateAfter 0s, consolidationPolicy
// WhenEmptyOrUnderutilized, budgets [{nodes: 10%}].
import { parseResources } from '../domain/resources.ts';
import type {
  Budget,
  ConsolidationPolicy,
  DisruptionReason,
  NodePool,
  NodeSelectorRequirement,
  Taint,
} from '../domain/types.ts';
import { durationMs, nillableDurationMs } from './duration.ts';
import { fail, isRecord, ok, type Result } from './errors.ts';
import { admit } from './validate.ts';

export interface NodePoolOptions {
  /** Readiness for objects without status (raw manifests); default false (only Ready=True pools provision). */
  readonly assumeReady?: boolean;
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});

export function parseNodePool(obj: unknown, opts: NodePoolOptions = {}): Result<NodePool> {
  const admitted = admit(obj);
  if (!admitted.ok) return fail(admitted.errors);
  const o = admitted.value;
  if (o['kind'] !== 'NodePool')
    return fail([{ object: String(o['kind']), path: 'kind', segments: ['kind'], message: 'expected a NodePool' }]);
  const meta = rec(o['metadata']);
  const spec = rec(o['spec']);
  const template = rec(spec['template']);
  const tmeta = rec(template['metadata']);
  const tspec = rec(template['spec']);
  const disruption = rec(spec['disruption']);
  const annotations = (meta['annotations'] ?? {}) as Record<string, string>;
  const ref = rec(tspec['nodeClassRef']);
  const pool: Record<string, unknown> = {
    name: String(meta['name'] ?? meta['generateName'] ?? ''),
    weight: typeof spec['weight'] === 'number' ? spec['weight'] : 0,
    template: {
      labels: tmeta['labels'] ?? {},
      annotations: tmeta['annotations'] ?? {},
      taints: taintList(tspec['taints']),
      startupTaints: taintList(tspec['startupTaints']),
      requirements: requirementList(tspec['requirements']),
      nodeClassRef: { group: String(ref['group']), kind: String(ref['kind']), name: String(ref['name']) },
      expireAfter: nillableDurationMs(String(tspec['expireAfter'])) ?? null,
      ...(typeof tspec['terminationGracePeriod'] === 'string'
        ? { terminationGracePeriod: durationMs(tspec['terminationGracePeriod']) }
        : {}),
    },
    limits: parseResources(spec['limits'] as Record<string, string | number> | undefined),
    disruption: {
      consolidationPolicy: disruption['consolidationPolicy'] as ConsolidationPolicy,
      consolidateAfter: nillableDurationMs(String(disruption['consolidateAfter'])) ?? null,
      budgets: (disruption['budgets'] as Obj[]).map(budget),
    },
    ready: readyCondition(o['status']) ?? opts.assumeReady ?? false,
  };
  if (typeof meta['uid'] === 'string') pool['uid'] = meta['uid'];
  if (typeof meta['generation'] === 'number') pool['generation'] = meta['generation'];
  if (typeof spec['replicas'] === 'number') pool['replicas'] = spec['replicas'];
  if (meta['deletionTimestamp'] !== undefined) pool['deleting'] = true;
  if (annotations['karpenter.sh/nodepool-hash'] !== undefined) pool['hash'] = annotations['karpenter.sh/nodepool-hash'];
  if (annotations['karpenter.sh/nodepool-hash-version'] !== undefined)
    pool['hashVersion'] = annotations['karpenter.sh/nodepool-hash-version'];
  return ok(pool as unknown as NodePool);
}

function budget(b: Obj): Budget {
  const out: Record<string, unknown> = { nodes: String(b['nodes']) };
  if (Array.isArray(b['reasons'])) out['reasons'] = b['reasons'] as DisruptionReason[];
  if (typeof b['schedule'] === 'string') out['schedule'] = b['schedule'];
  if (typeof b['duration'] === 'string') out['duration'] = durationMs(b['duration']);
  return out as unknown as Budget;
}

/** Requirements of a validated object (NodePool template or NodeClaim spec). */
export function requirementList(v: unknown): NodeSelectorRequirement[] {
  return (Array.isArray(v) ? v : []).map((x) => {
    const r = rec(x);
    const req = { key: String(r['key']), operator: r['operator'], values: (r['values'] ?? []) as string[] };
    return (
      typeof r['minValues'] === 'number' ? { ...req, minValues: r['minValues'] } : req
    ) as NodeSelectorRequirement;
  });
}

/** Taints of a validated object. */
export function taintList(v: unknown): Taint[] {
  return (Array.isArray(v) ? v : []).map((x) => {
    const t = rec(x);
    const taint = { key: String(t['key']), effect: t['effect'] } as Taint;
    return typeof t['value'] === 'string' && t['value'] !== '' ? { ...taint, value: t['value'] } : taint;
  });
}

/** The Ready condition of a status: true/false, or undefined when the object has no status conditions. */
function readyCondition(status: unknown): boolean | undefined {
  const conds = rec(status)['conditions'];
  if (!Array.isArray(conds)) return undefined;
  const ready = conds.find((c) => rec(c)['type'] === 'Ready');
  return ready === undefined ? false : rec(ready)['status'] === 'True';
}
