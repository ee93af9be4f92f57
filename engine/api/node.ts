// Node (v1) -> NodeInfo: what cluster state needs of a Node object. Joined with its NodeClaim (by
// providerID) into a StateNode by the controller.
import type { Resources } from '../domain/resources.ts';
import type { Taint } from '../domain/types.ts';
import { at, Decoder } from './decode.ts';
import { fail, isRecord, objectRef, ok, type Result } from './errors.ts';
import type { Condition } from './nodeclaim.ts';
import { taints } from './selectors.ts';

export interface NodeInfo {
  readonly name: string;
  readonly uid?: string;
  readonly providerId?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly capacity: Resources;
  readonly allocatable: Resources;
  /** spec.unschedulable (cordoned). */
  readonly unschedulable: boolean;
  /** Ready condition True. */
  readonly ready: boolean;
  /** karpenter.sh/registered=true label. */
  readonly registered: boolean;
  /** karpenter.sh/initialized=true label. */
  readonly initialized: boolean;
  /** The karpenter.sh/nodepool label. */
  readonly nodePoolName?: string;
  readonly creationTimestamp?: number;
  readonly deletionTimestamp?: number;
  readonly conditions: readonly Condition[];
}

const STATUSES = ['True', 'False', 'Unknown'] as const;

export function parseNode(obj: unknown): Result<NodeInfo> {
  const d = new Decoder(objectRef(obj, 'Node'));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const meta = d.obj(obj['metadata'], ['metadata']);
  const spec = d.obj(obj['spec'], ['spec']);
  const status = d.obj(obj['status'], ['status']);
  const labels = d.strMap(at(meta, 'labels'), ['metadata', 'labels']);
  const conditions: Condition[] = d.arr(at(status, 'conditions'), ['status', 'conditions']).map((c, i) => {
    const p = ['status', 'conditions', i];
    const o = d.obj(c, p);
    const cond: Record<string, unknown> = {
      type: d.reqStr(at(o, 'type'), [...p, 'type']),
      status: d.oneOf(at(o, 'status'), [...p, 'status'], STATUSES) ?? 'Unknown',
    };
    const reason = d.str(at(o, 'reason'), [...p, 'reason']);
    if (reason !== undefined) cond['reason'] = reason;
    const t = d.time(at(o, 'lastTransitionTime'), [...p, 'lastTransitionTime']);
    if (t !== undefined) cond['lastTransitionTime'] = t;
    return cond as unknown as Condition;
  });
  const node: Record<string, unknown> = {
    name: d.reqStr(at(meta, 'name'), ['metadata', 'name']),
    labels,
    annotations: d.strMap(at(meta, 'annotations'), ['metadata', 'annotations']),
    taints: taints(d, at(spec, 'taints'), ['spec', 'taints']),
    capacity: d.resources(at(status, 'capacity'), ['status', 'capacity']),
    allocatable: d.resources(at(status, 'allocatable'), ['status', 'allocatable']),
    unschedulable: d.bool(at(spec, 'unschedulable'), ['spec', 'unschedulable']) ?? false,
    ready: conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    registered: labels['karpenter.sh/registered'] === 'true',
    initialized: labels['karpenter.sh/initialized'] === 'true',
    conditions,
  };
  const opt = (k: string, v: unknown): void => {
    if (v !== undefined && v !== '') node[k] = v;
  };
  opt('uid', d.str(at(meta, 'uid'), ['metadata', 'uid']));
  opt('providerId', d.str(at(spec, 'providerID'), ['spec', 'providerID']));
  opt('nodePoolName', labels['karpenter.sh/nodepool']);
  opt('creationTimestamp', d.time(at(meta, 'creationTimestamp'), ['metadata', 'creationTimestamp']));
  opt('deletionTimestamp', d.time(at(meta, 'deletionTimestamp'), ['metadata', 'deletionTimestamp']));
  return d.errors.length === 0 ? ok(node as unknown as NodeInfo) : fail(d.errors);
}
