// DaemonSet (apps/v1) and PodDisruptionBudget (policy/v1) -> domain types; the selectors of Services,
// ReplicaSets, StatefulSets and ReplicationControllers (default topology spread deduction).
import type { DaemonSet, LabelSelector, Pod, PodDisruptionBudget } from '../domain/types.ts';
import { at, Decoder } from './decode.ts';
import { fail, isRecord, objectRef, ok, type Result } from './errors.ts';
import { decodePod, type PodOptions } from './pod.ts';
import { affinity, labelSelector } from './selectors.ts';

interface DaemonSetOptions extends PodOptions {
  /**
   * The DaemonSet's newest pod, if any. Its requests reflect what actually runs (e.g. after a mutating
   * webhook), but its node affinity was pinned to one node by the DaemonSet controller, so the template's
   * affinity is put back (as Karpenter's daemonset cache does).
   */
  readonly newestPod?: unknown;
}

export function parseDaemonSet(obj: unknown, opts: DaemonSetOptions = {}): Result<DaemonSet> {
  const d = new Decoder(objectRef(obj, 'DaemonSet'));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const meta = d.obj(obj['metadata'], ['metadata']);
  const name = d.reqStr(at(meta, 'name'), ['metadata', 'name']);
  const namespace = d.str(at(meta, 'namespace'), ['metadata', 'namespace']) || 'default';
  const spec = d.obj(obj['spec'], ['spec']);
  const template = d.obj(at(spec, 'template'), ['spec', 'template']);
  if (!template) {
    d.err(['spec', 'template'], 'is required but missing');
    return fail(d.errors);
  }
  const owner = {
    kind: 'DaemonSet',
    name,
    apiVersion: 'apps/v1',
    controller: true,
    ...(typeof at(meta, 'uid') === 'string' ? { uid: at(meta, 'uid') as string } : {}),
  };
  let pod: Pod;
  if (isRecord(opts.newestPod)) {
    const pd = new Decoder(objectRef(opts.newestPod, 'Pod'));
    const newest = decodePod(pd, opts.newestPod, [], opts);
    d.errors.push(...pd.errors);
    const tmplAffinity = affinity(d, at(d.obj(template['spec'], ['spec', 'template', 'spec']), 'affinity'), [
      'spec',
      'template',
      'spec',
      'affinity',
    ]);
    const { affinity: _pinned, ...rest } = newest;
    pod = tmplAffinity ? { ...rest, affinity: tmplAffinity } : rest;
  } else {
    const synthesized = decodePod(d, template, ['spec', 'template'], opts, { namespace, name: `${name}-template` });
    pod = { ...synthesized, namespace, owner: synthesized.owner ?? owner };
  }
  return d.errors.length === 0 ? ok({ namespace, name, pod }) : fail(d.errors);
}

const POLICIES = ['IfHealthyBudget', 'AlwaysAllow'] as const;

export function parsePodDisruptionBudget(obj: unknown): Result<PodDisruptionBudget> {
  const d = new Decoder(objectRef(obj, 'PodDisruptionBudget'));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const meta = d.obj(obj['metadata'], ['metadata']);
  const spec = d.obj(obj['spec'], ['spec']);
  const status = d.obj(obj['status'], ['status']);
  const pdb: Record<string, unknown> = {
    namespace: d.str(at(meta, 'namespace'), ['metadata', 'namespace']) || 'default',
    name: d.reqStr(at(meta, 'name'), ['metadata', 'name']),
    selector: labelSelector(d, at(spec, 'selector'), ['spec', 'selector']) ?? {},
    disruptionsAllowed: d.int(at(status, 'disruptionsAllowed'), ['status', 'disruptionsAllowed']) ?? 0,
  };
  for (const field of ['maxUnavailable', 'minAvailable'] as const) {
    const v = at(spec, field);
    if (v === undefined || v === null) continue;
    if ((typeof v === 'number' && Number.isInteger(v) && v >= 0) || (typeof v === 'string' && /^(\d+|\d+%)$/.test(v)))
      pdb[field] = v;
    else
      d.err(['spec', field], `must be a non-negative integer or a percentage such as "50%", not ${JSON.stringify(v)}`);
  }
  if (pdb['maxUnavailable'] !== undefined && pdb['minAvailable'] !== undefined)
    d.err(['spec'], 'minAvailable and maxUnavailable cannot both be set');
  const policy = d.oneOf(at(spec, 'unhealthyPodEvictionPolicy'), ['spec', 'unhealthyPodEvictionPolicy'], POLICIES);
  if (policy) pdb['unhealthyPodEvictionPolicy'] = policy;
  return d.errors.length === 0 ? ok(pdb as unknown as PodDisruptionBudget) : fail(d.errors);
}

/** A Service's pod selector for default spread deduction; `selector` absent when the Service has none (nil). */
export interface ServiceSelector {
  readonly namespace: string;
  readonly name: string;
  readonly selector?: Readonly<Record<string, string>>;
}

export function parseServiceSelector(obj: unknown): Result<ServiceSelector> {
  const d = new Decoder(objectRef(obj, 'Service'));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const meta = d.obj(obj['metadata'], ['metadata']);
  const spec = d.obj(obj['spec'], ['spec']);
  const name = d.reqStr(at(meta, 'name'), ['metadata', 'name']);
  const namespace = d.str(at(meta, 'namespace'), ['metadata', 'namespace']) || 'default';
  const raw = at(spec, 'selector');
  const selector = raw === undefined || raw === null ? undefined : d.strMap(raw, ['spec', 'selector']);
  return d.errors.length === 0 ? ok({ namespace, name, ...(selector ? { selector } : {}) }) : fail(d.errors);
}

/** A ReplicaSet's, StatefulSet's or ReplicationController's pod selector, for default spread deduction. */
export interface WorkloadSelector {
  readonly kind: 'ReplicaSet' | 'StatefulSet' | 'ReplicationController';
  readonly namespace: string;
  readonly name: string;
  readonly selector: LabelSelector;
}

export function parseWorkloadSelector(obj: unknown, kind: WorkloadSelector['kind']): Result<WorkloadSelector> {
  const d = new Decoder(objectRef(obj, kind));
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const meta = d.obj(obj['metadata'], ['metadata']);
  const spec = d.obj(obj['spec'], ['spec']);
  const name = d.reqStr(at(meta, 'name'), ['metadata', 'name']);
  const namespace = d.str(at(meta, 'namespace'), ['metadata', 'namespace']) || 'default';
  // A ReplicationController's selector is a plain label map; the apps/v1 kinds use a LabelSelector.
  const selector: LabelSelector =
    kind === 'ReplicationController'
      ? { matchLabels: d.strMap(at(spec, 'selector'), ['spec', 'selector']) }
      : (labelSelector(d, at(spec, 'selector'), ['spec', 'selector']) ?? {});
  return d.errors.length === 0 ? ok({ kind, namespace, name, selector }) : fail(d.errors);
}
