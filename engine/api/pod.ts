// Pod (v1) -> domain Pod: identity, effective requests (+ pods: 1), host ports, scheduling constraints,
// ownership and the status bits the scheduler and disruption read.
import type { PodResourceClaim } from '../domain/dra.ts';
import type { HostPort, OwnerRef, Pod, PodPhase } from '../domain/types.ts';
import { at, Decoder, type Obj, type PartMemo } from './decode.ts';
import { fail, isRecord, objectRef, ok, type PathSeg, type Result } from './errors.ts';
import { requirementProblem } from './problems.ts';
import { podRequests } from './requests.ts';
import { affinity, tolerations, topologySpreadConstraints } from './selectors.ts';

export interface PodOptions {
  /** Creation time for pods without metadata.creationTimestamp (raw manifests); default 0. */
  readonly now?: number;
  /**
   * Parts decoded before, by their source object (decode.ts PartMemo): only for a caller that never changes an
   * object it parsed, nor any part of it.
   */
  readonly memo?: PartMemo;
}

const PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

export function parsePod(obj: unknown, opts: PodOptions = {}): Result<Pod> {
  const d = new Decoder(objectRef(obj, 'Pod'), opts.memo);
  if (!isRecord(obj)) {
    d.err([], 'is not an object');
    return fail(d.errors);
  }
  const pod = decodePod(d, obj, [], opts);
  return d.errors.length === 0 ? ok(pod) : fail(d.errors);
}

/** Decodes a pod (or a pod template, at `path`) into the domain Pod; errors go to the decoder. */
export function decodePod(
  d: Decoder,
  o: Obj,
  path: readonly PathSeg[],
  opts: PodOptions,
  defaults: { namespace?: string; name?: string } = {},
): Pod {
  const mp = [...path, 'metadata'];
  const meta = d.obj(o['metadata'], mp);
  const spec = d.obj(o['spec'], [...path, 'spec']);
  const status = d.obj(o['status'], [...path, 'status']);
  const sp = [...path, 'spec'];
  if (!spec) d.err(sp, 'is required but missing');
  const name = d.str(at(meta, 'name'), [...mp, 'name']) ?? defaults.name ?? d.reqStr(undefined, [...mp, 'name']);
  const namespace = d.str(at(meta, 'namespace'), [...mp, 'namespace']) || defaults.namespace || 'default';
  if (spec && d.arr(spec['containers'], [...sp, 'containers']).length === 0)
    d.err([...sp, 'containers'], 'must list at least one container');
  const requests = { ...podRequests(d, spec, status, path), pods: 1 };
  const pod: Record<string, unknown> = {
    uid: d.str(at(meta, 'uid'), [...mp, 'uid']) ?? `${namespace}/${name}`,
    namespace,
    name,
    labels: d.part('strMap', at(meta, 'labels'), () => d.strMap(at(meta, 'labels'), [...mp, 'labels'])),
    annotations: d.strMap(at(meta, 'annotations'), [...mp, 'annotations']),
    requests,
    nodeSelector: d.part('strMap', at(spec, 'nodeSelector'), () =>
      d.strMap(at(spec, 'nodeSelector'), [...sp, 'nodeSelector']),
    ),
    tolerations: d.part('tolerations', at(spec, 'tolerations'), () =>
      tolerations(d, at(spec, 'tolerations'), [...sp, 'tolerations']),
    ),
    topologySpreadConstraints: d.part('topologySpreadConstraints', at(spec, 'topologySpreadConstraints'), () =>
      topologySpreadConstraints(d, at(spec, 'topologySpreadConstraints'), [...sp, 'topologySpreadConstraints']),
    ),
    hostPorts: d.part('hostPorts', at(spec, 'containers'), () => hostPorts(d, spec, sp)),
    creationTimestamp: d.time(at(meta, 'creationTimestamp'), [...mp, 'creationTimestamp']) ?? opts.now ?? 0,
    phase: d.oneOf(at(status, 'phase'), [...path, 'status', 'phase'], PHASES) ?? 'Pending',
  };
  const aff = d.part('affinity', at(spec, 'affinity'), () => affinity(d, at(spec, 'affinity'), [...sp, 'affinity']));
  set(pod, 'affinity', aff);
  set(pod, 'priority', d.int(at(spec, 'priority'), [...sp, 'priority']));
  set(pod, 'priorityClassName', d.str(at(spec, 'priorityClassName'), [...sp, 'priorityClassName']));
  set(pod, 'owner', owner(d, at(meta, 'ownerReferences'), [...mp, 'ownerReferences']));
  set(pod, 'nodeName', d.str(at(spec, 'nodeName'), [...sp, 'nodeName']) || undefined);
  set(pod, 'deletionTimestamp', d.time(at(meta, 'deletionTimestamp'), [...mp, 'deletionTimestamp']));
  set(pod, 'startTime', d.time(at(status, 'startTime'), [...path, 'status', 'startTime']));
  set(
    pod,
    'terminationGracePeriodSeconds',
    d.int(at(spec, 'terminationGracePeriodSeconds'), [...sp, 'terminationGracePeriodSeconds']),
  );
  set(
    pod,
    'nominatedNodeName',
    d.str(at(status, 'nominatedNodeName'), [...path, 'status', 'nominatedNodeName']) || undefined,
  );
  const conds = d.arr(at(status, 'conditions'), [...path, 'status', 'conditions']).map((c) => (isRecord(c) ? c : {}));
  const ready = conds.find((c) => c['type'] === 'Ready');
  if (ready) pod['ready'] = ready['status'] === 'True';
  if (conds.some((c) => c['type'] === 'PodScheduled' && c['status'] === 'False' && c['reason'] === 'Unschedulable'))
    pod['unschedulable'] = true;
  const claims = resourceClaims(d, spec, status, path);
  if (claims.length) pod['resourceClaims'] = claims;
  const containerClaims = containerClaimNames(d, spec, sp);
  if (containerClaims.length) pod['containerClaims'] = containerClaims;
  const pvcs = pvcNames(d, spec, sp, name);
  if (pvcs.length > 0) pod['pvcNames'] = pvcs;
  set(pod, 'ignoredReason', ignoredReason(pod as unknown as Pod));
  return compact(pod);
}

/** The fields of decodePod's literal, which every pod has. */
const LITERAL_FIELDS = 12;

/**
 * The fields decodePod sets only when the pod has them, in the order it sets them (after the literal's twelve). A
 * field it sets must be listed here: compact() keys its copiers by which of these a pod has, and refuses a pod with
 * a field it does not know (a copier made without it would drop it from every pod).
 */
const OPTIONAL_FIELDS = [
  'affinity',
  'priority',
  'priorityClassName',
  'owner',
  'nodeName',
  'deletionTimestamp',
  'startTime',
  'terminationGracePeriodSeconds',
  'nominatedNodeName',
  'ready',
  'unschedulable',
  'resourceClaims',
  'containerClaims',
  'pvcNames',
  'ignoredReason',
] as const;

/**
 * Per set of optional fields present (a bit each, OPTIONAL_FIELDS' order): a copier that writes them as one literal;
 * the pod as it is where code cannot be made from strings (node --disallow-code-generation-from-strings).
 */
const copiers = new Map<number, (pod: Record<string, unknown>) => Pod>();

const asBuilt = (pod: Record<string, unknown>): Pod => pod as unknown as Pod;

/**
 * `pod` (decodePod's, its fields in decodePod's order) copied into one object literal of exactly its fields. V8 gives
 * an object literal room for its own fields inside the object; the fields decodePod adds after its literal went to an
 * array of their own beside it, grown a few slots at a time (a bound pod's three took 64 bytes there). A cluster's pods
 * are held for their life by cluster state, the informer and the model mirror, so each pod is made the compact way
 * once. The copier of each set of fields is compiled the first time that set is met (a handful in a cluster: pending,
 * bound, running, with an owner or a priority, ...); the field names are this module's constants, never input.
 */
function compact(pod: Record<string, unknown>): Pod {
  let mask = 0;
  for (let i = 0; i < OPTIONAL_FIELDS.length; i++) if (pod[OPTIONAL_FIELDS[i]!] !== undefined) mask |= 1 << i;
  let copy = copiers.get(mask);
  if (!copy) {
    const fields = Object.keys(pod);
    let present = 0;
    for (let m = mask; m; m &= m - 1) present++;
    if (fields.length !== LITERAL_FIELDS + present)
      throw new Error(`decodePod set a field its OPTIONAL_FIELDS do not list: ${fields.join(', ')}`);
    copy = copier(fields);
    copiers.set(mask, copy);
  }
  return copy(pod);
}

/** A function returning a literal of `fields` read from its argument (compiled: only a literal keeps them inside). */
function copier(fields: readonly string[]): (pod: Record<string, unknown>) => Pod {
  try {
    return new Function('p', `return { ${fields.map((k) => `${k}: p.${k}`).join(', ')} };`) as (
      pod: Record<string, unknown>,
    ) => Pod;
  } catch {
    return asBuilt;
  }
}

/** A field a decoder reads as an empty list when it is missing or null. */
const absent = (v: unknown): boolean => v === undefined || v === null;

function set(o: Record<string, unknown>, k: string, v: unknown): void {
  if (v !== undefined) o[k] = v;
}

/** Host ports of app containers (init containers do not count, as in Karpenter's hostportusage). */
function hostPorts(d: Decoder, spec: Obj | undefined, sp: readonly PathSeg[]): HostPort[] {
  const out: HostPort[] = [];
  d.arr(at(spec, 'containers'), [...sp, 'containers']).forEach((c, i) => {
    const cp = [...sp, 'containers', i, 'ports'];
    d.arr(at(c as Obj, 'ports'), cp).forEach((p, j) => {
      const po = d.obj(p, [...cp, j]);
      const port = d.int(at(po, 'hostPort'), [...cp, j, 'hostPort']) ?? 0;
      if (port === 0) return;
      out.push({
        ip: d.str(at(po, 'hostIP'), [...cp, j, 'hostIP']) || '0.0.0.0',
        port,
        protocol: d.str(at(po, 'protocol'), [...cp, j, 'protocol']) || 'TCP',
      });
    });
  });
  return out;
}

/** The controller owner reference, else the first one. */
function owner(d: Decoder, v: unknown, path: readonly PathSeg[]): OwnerRef | undefined {
  const refs = d.arr(v, path).map((r, i) => {
    const o = d.obj(r, [...path, i]);
    const ref: Record<string, unknown> = {
      kind: d.reqStr(at(o, 'kind'), [...path, i, 'kind']),
      name: d.reqStr(at(o, 'name'), [...path, i, 'name']),
    };
    set(ref, 'uid', d.str(at(o, 'uid'), [...path, i, 'uid']));
    set(ref, 'apiVersion', d.str(at(o, 'apiVersion'), [...path, i, 'apiVersion']));
    set(ref, 'controller', d.bool(at(o, 'controller'), [...path, i, 'controller']));
    return ref as unknown as OwnerRef;
  });
  return refs.find((r) => r.controller) ?? refs[0];
}

/**
 * spec.resourceClaims (DRA): each names a ResourceClaim or a ResourceClaimTemplate; for templates the claim
 * generated for this pod is read from status.resourceClaimStatuses.
 */
function resourceClaims(
  d: Decoder,
  spec: Obj | undefined,
  status: Obj | undefined,
  path: readonly PathSeg[],
): PodResourceClaim[] {
  // Most pods claim nothing: nothing to read, and no paths to build for it.
  if (absent(at(spec, 'resourceClaims')) && absent(at(status, 'resourceClaimStatuses'))) return [];
  const sp = [...path, 'spec', 'resourceClaims'];
  const generated = new Map<string, string>();
  d.arr(at(status, 'resourceClaimStatuses'), [...path, 'status', 'resourceClaimStatuses']).forEach((x, i) => {
    const xp = [...path, 'status', 'resourceClaimStatuses', i];
    const o = d.obj(x, xp);
    const n = d.reqStr(at(o, 'name'), [...xp, 'name']);
    const c = d.str(at(o, 'resourceClaimName'), [...xp, 'resourceClaimName']);
    if (c) generated.set(n, c);
  });
  return d.arr(at(spec, 'resourceClaims'), sp).map((x, i) => {
    const o = d.obj(x, [...sp, i]);
    const name = d.reqStr(at(o, 'name'), [...sp, i, 'name']);
    const claim = d.str(at(o, 'resourceClaimName'), [...sp, i, 'resourceClaimName']) || undefined;
    const tmpl = d.str(at(o, 'resourceClaimTemplateName'), [...sp, i, 'resourceClaimTemplateName']) || undefined;
    if ((claim === undefined) === (tmpl === undefined))
      d.err([...sp, i], 'must set exactly one of resourceClaimName and resourceClaimTemplateName');
    const gen = generated.get(name);
    return {
      name,
      ...(claim ? { resourceClaimName: claim } : {}),
      ...(tmpl ? { resourceClaimTemplateName: tmpl } : {}),
      ...(tmpl && gen ? { generatedClaimName: gen } : {}),
    };
  });
}

/** Claim names containers and init containers list in resources.claims. */
function containerClaimNames(d: Decoder, spec: Obj | undefined, sp: readonly PathSeg[]): string[] {
  const [init, app] = (['initContainers', 'containers'] as const).map((kind) =>
    d.part('claimNames', at(spec, kind), () => claimNamesOf(d, at(spec, kind), [...sp, kind])),
  );
  if (init!.length === 0 && app!.length === 0) return [];
  return [...new Set([...init!, ...app!])].sort();
}

/** The claim names one list of containers (at `lp`) lists in resources.claims, in order, repeats included. */
function claimNamesOf(d: Decoder, list: unknown, lp: readonly PathSeg[]): string[] {
  const out: string[] = [];
  d.arr(list, lp).forEach((c, i) => {
    const rp = [...lp, i, 'resources', 'claims'];
    d.arr(at(d.obj(at(c as Obj, 'resources'), [...lp, i, 'resources']), 'claims'), rp).forEach((x, j) => {
      const n = d.reqStr(at(d.obj(x, [...rp, j]), 'name'), [...rp, j, 'name']);
      if (n) out.push(n);
    });
  });
  return out;
}

/** PVCs the pod mounts, including generic ephemeral volumes (named <pod>-<volume>). */
function pvcNames(d: Decoder, spec: Obj | undefined, sp: readonly PathSeg[], podName: string): string[] {
  const out: string[] = [];
  d.arr(at(spec, 'volumes'), [...sp, 'volumes']).forEach((v, i) => {
    const vo = d.obj(v, [...sp, 'volumes', i]);
    const claim = d.obj(at(vo, 'persistentVolumeClaim'), [...sp, 'volumes', i, 'persistentVolumeClaim']);
    if (claim) out.push(d.reqStr(claim['claimName'], [...sp, 'volumes', i, 'persistentVolumeClaim', 'claimName']));
    else if (at(vo, 'ephemeral') !== undefined) out.push(`${podName}-${String(at(vo, 'name'))}`);
  });
  return out;
}

/**
 * Why Karpenter would ignore this pod (docs/karpenter/scheduling.md §1.10), for the constraints visible on the pod
 * itself: restricted or invalid keys in nodeSelector or required node affinity, In without values,
 * malformed Gt/Lt, matchFields. PVC problems are found later, where PVCs are known.
 */
function ignoredReason(pod: Pod): string | undefined {
  for (const [k, v] of Object.entries(pod.nodeSelector)) {
    const p = requirementProblem({ key: k, operator: 'In', values: [v] }, 'nodeclaim');
    if (p) return `nodeSelector ${k}: ${p}`;
  }
  for (const [i, term] of (pod.affinity?.nodeAffinity?.required ?? []).entries()) {
    if (term.matchFields && term.matchFields.length > 0)
      return `required node affinity term ${i} uses matchFields, which Karpenter does not support`;
    for (const r of term.matchExpressions) {
      const p = requirementProblem(r, 'nodeclaim');
      if (p) return `required node affinity term ${i}, key ${r.key}: ${p}`;
    }
  }
  return undefined;
}
