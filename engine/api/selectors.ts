// Scheduling constraints shared by Pods, Nodes and NodeClaims: node selector requirements, affinity,
// label selectors, tolerations, topology spread constraints and taints, decoded into domain types.
import type {
  Affinity,
  LabelSelector,
  LabelSelectorOperator,
  LabelSelectorRequirement,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Operator,
  PodAffinityTerm,
  PreferredSchedulingTerm,
  Taint,
  TaintEffect,
  Toleration,
  TopologySpreadConstraint,
  WeightedPodAffinityTerm,
} from '../domain/types.ts';
import { at, type Decoder } from './decode.ts';
import type { PathSeg } from './errors.ts';

const CORE_OPERATORS: readonly Operator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const KARPENTER_OPERATORS: readonly Operator[] = [...CORE_OPERATORS, 'Gte', 'Lte'];
const SELECTOR_OPERATORS: readonly LabelSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
const TAINT_EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

type P = readonly PathSeg[];

/** A node selector requirement; `karpenter` allows Gte/Lte and minValues (NodePool/NodeClaim). */
function nodeSelectorRequirement(
  d: Decoder,
  v: unknown,
  path: P,
  karpenter = false,
): NodeSelectorRequirement | undefined {
  const o = d.obj(v, path);
  if (!o) return undefined;
  const key = d.reqStr(o['key'], [...path, 'key']);
  const operator = d.oneOf(o['operator'], [...path, 'operator'], karpenter ? KARPENTER_OPERATORS : CORE_OPERATORS);
  if (o['operator'] === undefined) d.err([...path, 'operator'], 'is required but missing');
  const values = d.strList(o['values'], [...path, 'values']);
  const minValues = karpenter ? d.int(o['minValues'], [...path, 'minValues']) : undefined;
  if (operator === undefined) return undefined;
  return minValues === undefined ? { key, operator, values } : { key, operator, values, minValues };
}

function nodeSelectorRequirements(d: Decoder, v: unknown, path: P, karpenter = false): NodeSelectorRequirement[] {
  return d.arr(v, path).flatMap((x, i) => nodeSelectorRequirement(d, x, [...path, i], karpenter) ?? []);
}

export function nodeSelectorTerm(d: Decoder, v: unknown, path: P): NodeSelectorTerm {
  const o = d.obj(v, path);
  const matchExpressions = nodeSelectorRequirements(d, at(o, 'matchExpressions'), [...path, 'matchExpressions']);
  const fields = at(o, 'matchFields');
  if (fields === undefined) return { matchExpressions };
  return { matchExpressions, matchFields: nodeSelectorRequirements(d, fields, [...path, 'matchFields']) };
}

export function labelSelector(d: Decoder, v: unknown, path: P): LabelSelector | undefined {
  const o = d.obj(v, path);
  if (!o) return undefined;
  const out: { matchLabels?: Record<string, string>; matchExpressions?: LabelSelectorRequirement[] } = {};
  if (o['matchLabels'] !== undefined) out.matchLabels = d.strMap(o['matchLabels'], [...path, 'matchLabels']);
  if (o['matchExpressions'] !== undefined) {
    out.matchExpressions = d.arr(o['matchExpressions'], [...path, 'matchExpressions']).flatMap((x, i) => {
      const p = [...path, 'matchExpressions', i];
      const e = d.obj(x, p);
      const operator = d.oneOf(at(e, 'operator'), [...p, 'operator'], SELECTOR_OPERATORS);
      const key = d.reqStr(at(e, 'key'), [...p, 'key']);
      return operator ? [{ key, operator, values: d.strList(at(e, 'values'), [...p, 'values']) }] : [];
    });
  }
  return out;
}

function podAffinityTerm(d: Decoder, v: unknown, path: P): PodAffinityTerm {
  const o = d.obj(v, path);
  const t: {
    topologyKey: string;
    labelSelector?: LabelSelector;
    namespaces?: string[];
    namespaceSelector?: LabelSelector;
    matchLabelKeys?: string[];
    mismatchLabelKeys?: string[];
  } = { topologyKey: d.reqStr(at(o, 'topologyKey'), [...path, 'topologyKey']) };
  const ls = labelSelector(d, at(o, 'labelSelector'), [...path, 'labelSelector']);
  if (ls) t.labelSelector = ls;
  if (at(o, 'namespaces') !== undefined) t.namespaces = d.strList(at(o, 'namespaces'), [...path, 'namespaces']);
  const ns = labelSelector(d, at(o, 'namespaceSelector'), [...path, 'namespaceSelector']);
  if (ns) t.namespaceSelector = ns;
  if (at(o, 'matchLabelKeys') !== undefined)
    t.matchLabelKeys = d.strList(at(o, 'matchLabelKeys'), [...path, 'matchLabelKeys']);
  if (at(o, 'mismatchLabelKeys') !== undefined)
    t.mismatchLabelKeys = d.strList(at(o, 'mismatchLabelKeys'), [...path, 'mismatchLabelKeys']);
  return t;
}

const REQ = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREF = 'preferredDuringSchedulingIgnoredDuringExecution';

function podAffinity(d: Decoder, v: unknown, path: P): Affinity['podAffinity'] | undefined {
  const o = d.obj(v, path);
  if (!o) return undefined;
  const required = d.arr(o[REQ], [...path, REQ]).map((x, i) => podAffinityTerm(d, x, [...path, REQ, i]));
  const preferred: WeightedPodAffinityTerm[] = d.arr(o[PREF], [...path, PREF]).map((x, i) => {
    const p = [...path, PREF, i];
    const w = d.obj(x, p);
    return {
      weight: d.int(at(w, 'weight'), [...p, 'weight']) ?? 0,
      podAffinityTerm: podAffinityTerm(d, at(w, 'podAffinityTerm'), [...p, 'podAffinityTerm']),
    };
  });
  return { required, preferred };
}

export function affinity(d: Decoder, v: unknown, path: P): Affinity | undefined {
  const o = d.obj(v, path);
  if (!o) return undefined;
  const out: {
    nodeAffinity?: Affinity['nodeAffinity'];
    podAffinity?: Affinity['podAffinity'];
    podAntiAffinity?: Affinity['podAntiAffinity'];
  } = {};
  const na = d.obj(o['nodeAffinity'], [...path, 'nodeAffinity']);
  if (na) {
    const np = [...path, 'nodeAffinity'];
    const req = d.obj(na[REQ], [...np, REQ]);
    const required = req
      ? d
          .arr(req['nodeSelectorTerms'], [...np, REQ, 'nodeSelectorTerms'])
          .map((t, i) => nodeSelectorTerm(d, t, [...np, REQ, 'nodeSelectorTerms', i]))
      : undefined;
    const preferred: PreferredSchedulingTerm[] = d.arr(na[PREF], [...np, PREF]).map((x, i) => {
      const p = [...np, PREF, i];
      const w = d.obj(x, p);
      return {
        weight: d.int(at(w, 'weight'), [...p, 'weight']) ?? 0,
        preference: nodeSelectorTerm(d, at(w, 'preference'), [...p, 'preference']),
      };
    });
    out.nodeAffinity = required === undefined ? { preferred } : { required, preferred };
  }
  const pa = podAffinity(d, o['podAffinity'], [...path, 'podAffinity']);
  if (pa) out.podAffinity = pa;
  const paa = podAffinity(d, o['podAntiAffinity'], [...path, 'podAntiAffinity']);
  if (paa) out.podAntiAffinity = paa;
  return out;
}

export function tolerations(d: Decoder, v: unknown, path: P): Toleration[] {
  return d.arr(v, path).map((x, i) => {
    const p = [...path, i];
    const o = d.obj(x, p);
    const t: {
      key?: string;
      operator?: Toleration['operator'];
      value?: string;
      effect?: TaintEffect;
      tolerationSeconds?: number;
    } = {};
    const key = d.str(at(o, 'key'), [...p, 'key']);
    if (key !== undefined && key !== '') t.key = key;
    const op = d.oneOf(at(o, 'operator'), [...p, 'operator'], ['Exists', 'Equal', 'Lt', 'Gt'] as const);
    if (op) t.operator = op;
    const value = d.str(at(o, 'value'), [...p, 'value']);
    if (value !== undefined) t.value = value;
    const effect = at(o, 'effect') === '' ? undefined : d.oneOf(at(o, 'effect'), [...p, 'effect'], TAINT_EFFECTS);
    if (effect) t.effect = effect;
    const secs = d.int(at(o, 'tolerationSeconds'), [...p, 'tolerationSeconds']);
    if (secs !== undefined) t.tolerationSeconds = secs;
    return t;
  });
}

export function topologySpreadConstraints(d: Decoder, v: unknown, path: P): TopologySpreadConstraint[] {
  return d.arr(v, path).flatMap((x, i) => {
    const p = [...path, i];
    const o = d.obj(x, p);
    const maxSkew = d.int(at(o, 'maxSkew'), [...p, 'maxSkew']);
    if (maxSkew === undefined || maxSkew < 1) d.err([...p, 'maxSkew'], 'must be an integer of at least 1');
    const whenUnsatisfiable = d.oneOf(at(o, 'whenUnsatisfiable'), [...p, 'whenUnsatisfiable'], [
      'DoNotSchedule',
      'ScheduleAnyway',
    ] as const);
    if (at(o, 'whenUnsatisfiable') === undefined) d.err([...p, 'whenUnsatisfiable'], 'is required but missing');
    const c: {
      maxSkew: number;
      topologyKey: string;
      whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
      labelSelector?: LabelSelector;
      minDomains?: number;
      nodeAffinityPolicy?: 'Honor' | 'Ignore';
      nodeTaintsPolicy?: 'Honor' | 'Ignore';
      matchLabelKeys?: string[];
    } = {
      maxSkew: maxSkew ?? 1,
      topologyKey: d.reqStr(at(o, 'topologyKey'), [...p, 'topologyKey']),
      whenUnsatisfiable: whenUnsatisfiable ?? 'DoNotSchedule',
    };
    const ls = labelSelector(d, at(o, 'labelSelector'), [...p, 'labelSelector']);
    if (ls) c.labelSelector = ls;
    const minDomains = d.int(at(o, 'minDomains'), [...p, 'minDomains']);
    if (minDomains !== undefined) c.minDomains = minDomains;
    const nap = d.oneOf(at(o, 'nodeAffinityPolicy'), [...p, 'nodeAffinityPolicy'], ['Honor', 'Ignore'] as const);
    if (nap) c.nodeAffinityPolicy = nap;
    const ntp = d.oneOf(at(o, 'nodeTaintsPolicy'), [...p, 'nodeTaintsPolicy'], ['Honor', 'Ignore'] as const);
    if (ntp) c.nodeTaintsPolicy = ntp;
    if (at(o, 'matchLabelKeys') !== undefined)
      c.matchLabelKeys = d.strList(at(o, 'matchLabelKeys'), [...p, 'matchLabelKeys']);
    return [c];
  });
}

export function taints(d: Decoder, v: unknown, path: P): Taint[] {
  return d.arr(v, path).flatMap((x, i) => {
    const p = [...path, i];
    const o = d.obj(x, p);
    const key = d.reqStr(at(o, 'key'), [...p, 'key']);
    const effect = d.oneOf(at(o, 'effect'), [...p, 'effect'], TAINT_EFFECTS);
    if (at(o, 'effect') === undefined) d.err([...p, 'effect'], 'is required but missing');
    const value = d.str(at(o, 'value'), [...p, 'value']);
    if (!effect) return [];
    return [value === undefined || value === '' ? { key, effect } : { key, value, effect }];
  });
}
