// NodeClaim (karpenter.sh/v1) -> NodeClaimInfo: the spec (after admission and defaults) and the status the
// lifecycle, drift and disruption logic read. Cluster state joins it with its Node into a StateNode.
import { parseResources, type Resources } from '../domain/resources.ts';
import type { NodeClassRef, NodeSelectorRequirement, Taint } from '../domain/types.ts';
import { durationMs, nillableDurationMs } from './duration.ts';
import { fail, isRecord, ok, type Result } from './errors.ts';
import { requirementList, taintList } from './nodepool.ts';
import { admit } from './validate.ts';

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
  /** ms since the epoch. */
  readonly lastTransitionTime?: number;
}

export interface NodeClaimInfo {
  readonly name: string;
  readonly uid?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** The karpenter.sh/nodepool label. */
  readonly nodePoolName?: string;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
  readonly requirements: readonly NodeSelectorRequirement[];
  readonly requests: Resources;
  readonly nodeClassRef: NodeClassRef;
  /** ms; null = Never. */
  readonly expireAfter: number | null;
  readonly terminationGracePeriod?: number;
  readonly creationTimestamp?: number;
  readonly deletionTimestamp?: number;
  readonly nodeName?: string;
  readonly providerId?: string;
  readonly imageId?: string;
  readonly capacity: Resources;
  readonly allocatable: Resources;
  readonly lastPodEventTime?: number;
  readonly conditions: readonly Condition[];
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (isRecord(v) ? v : {});
const time = (v: unknown): number | undefined =>
  typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined;

export function parseNodeClaim(obj: unknown): Result<NodeClaimInfo> {
  const admitted = admit(obj);
  if (!admitted.ok) return fail(admitted.errors);
  const o = admitted.value;
  const meta = rec(o['metadata']);
  const spec = rec(o['spec']);
  const status = rec(o['status']);
  const ref = rec(spec['nodeClassRef']);
  const labels = (meta['labels'] ?? {}) as Record<string, string>;
  const nc: Record<string, unknown> = {
    name: String(meta['name'] ?? meta['generateName'] ?? ''),
    labels,
    annotations: meta['annotations'] ?? {},
    taints: taintList(spec['taints']),
    startupTaints: taintList(spec['startupTaints']),
    requirements: requirementList(spec['requirements']),
    requests: parseResources(rec(spec['resources'])['requests'] as Record<string, string> | undefined),
    nodeClassRef: { group: String(ref['group']), kind: String(ref['kind']), name: String(ref['name']) },
    expireAfter: nillableDurationMs(String(spec['expireAfter'])) ?? null,
    capacity: parseResources(status['capacity'] as Record<string, string> | undefined),
    allocatable: parseResources(status['allocatable'] as Record<string, string> | undefined),
    conditions: conditionList(status['conditions']),
  };
  const opt = (k: string, v: unknown): void => {
    if (v !== undefined && v !== '') nc[k] = v;
  };
  opt('uid', meta['uid']);
  opt('nodePoolName', labels['karpenter.sh/nodepool']);
  opt(
    'terminationGracePeriod',
    typeof spec['terminationGracePeriod'] === 'string' ? durationMs(spec['terminationGracePeriod']) : undefined,
  );
  opt('creationTimestamp', time(meta['creationTimestamp']));
  opt('deletionTimestamp', time(meta['deletionTimestamp']));
  opt('nodeName', status['nodeName']);
  opt('providerId', status['providerID']);
  opt('imageId', status['imageID']);
  opt('lastPodEventTime', time(status['lastPodEventTime']));
  return ok(nc as unknown as NodeClaimInfo);
}

export function conditionList(v: unknown): Condition[] {
  return (Array.isArray(v) ? v : []).map((x) => {
    const c = rec(x);
    const out: Record<string, unknown> = { type: String(c['type']), status: c['status'] ?? 'Unknown' };
    if (typeof c['reason'] === 'string') out['reason'] = c['reason'];
    if (typeof c['message'] === 'string') out['message'] = c['message'];
    const t = time(c['lastTransitionTime']);
    if (t !== undefined) out['lastTransitionTime'] = t;
    return out as unknown as Condition;
  });
}

/** The condition of this type, if present. */
export function condition(conds: readonly Condition[], type: string): Condition | undefined {
  return conds.find((c) => c.type === type);
}

export function conditionTrue(conds: readonly Condition[], type: string): boolean {
  return condition(conds, type)?.status === 'True';
}
