// --scheduler-config (SCHEDULER_CONFIG): the parts of the cluster's kube-scheduler configuration the scheduling
// simulation must mirror, as Karpenter core's main branch after v1.14.1 takes them (pkg/operator/options
// ParseSchedulerConfiguration, designs/default-topology-spread-awareness.md). Today one section:
//
//   podTopologySpread:
//     defaultConstraints:          # kube-scheduler's PodTopologySpread defaultConstraints, pasted as they are
//       - maxSkew: 1
//         topologyKey: topology.kubernetes.io/zone
//         whenUnsatisfiable: ScheduleAnyway
//
// A YAML or JSON document, decoded strictly (an unknown field is an error) and validated as kube-scheduler
// validates the plugin's arguments, so a value accepted here is one the scheduler accepts: maxSkew > 0, a
// topologyKey that is a label name, whenUnsatisfiable DoNotSchedule or ScheduleAnyway, no labelSelector (one
// is deduced for each pod), no matchLabelKeys (inert on defaults), no (topologyKey, whenUnsatisfiable) twice.
import type { TopologySpreadConstraint } from '../domain/types.ts';
import { labelKeyProblem } from './labels.ts';
import { parseDocuments } from './yaml.ts';

export interface SchedulerConfig {
  readonly podTopologySpread?: { readonly defaultConstraints: readonly TopologySpreadConstraint[] };
}

type SchedulerConfigResult =
  | { readonly ok: true; readonly value: SchedulerConfig | undefined }
  | { readonly ok: false; readonly problems: readonly string[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const CONSTRAINT_FIELDS = [
  'maxSkew',
  'topologyKey',
  'whenUnsatisfiable',
  'labelSelector',
  'minDomains',
  'nodeAffinityPolicy',
  'nodeTaintsPolicy',
  'matchLabelKeys',
];

function unknownFields(o: Obj, path: string, allowed: readonly string[], problems: string[]): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      problems.push(`${path}${path ? '.' : ''}${k}: unknown field (allowed: ${allowed.join(', ')})`);
}

/** One default constraint, or the problems with it; path names it (podTopologySpread.defaultConstraints[i]). */
function constraint(v: unknown, path: string, problems: string[]): TopologySpreadConstraint | undefined {
  if (!isObj(v)) {
    problems.push(`${path} must be a topology spread constraint (maxSkew, topologyKey, whenUnsatisfiable)`);
    return undefined;
  }
  const before = problems.length;
  unknownFields(v, path, CONSTRAINT_FIELDS, problems);
  const { maxSkew, topologyKey, whenUnsatisfiable, minDomains, nodeAffinityPolicy, nodeTaintsPolicy } = v;
  if (!(typeof maxSkew === 'number' && Number.isInteger(maxSkew) && maxSkew > 0))
    problems.push(`${path}.maxSkew must be greater than 0`);
  if (typeof topologyKey !== 'string' || topologyKey === '') problems.push(`${path}.topologyKey must be set`);
  else if (labelKeyProblem(topologyKey))
    problems.push(`${path}.topologyKey "${topologyKey}" is not a valid label name, ${labelKeyProblem(topologyKey)}`);
  if (whenUnsatisfiable !== 'DoNotSchedule' && whenUnsatisfiable !== 'ScheduleAnyway')
    problems.push(
      `${path}.whenUnsatisfiable ${JSON.stringify(whenUnsatisfiable ?? '')} must be one of "DoNotSchedule" or "ScheduleAnyway"`,
    );
  if (v['labelSelector'] !== undefined)
    problems.push(`${path}.labelSelector must not be set, as selectors are deduced for each pod`);
  if (v['matchLabelKeys'] !== undefined)
    problems.push(`${path}.matchLabelKeys must not be set, as it has no effect on default constraints`);
  if (minDomains !== undefined && !(typeof minDomains === 'number' && Number.isInteger(minDomains) && minDomains > 0))
    problems.push(`${path}.minDomains must be greater than 0`);
  for (const [k, p] of [
    ['nodeAffinityPolicy', nodeAffinityPolicy],
    ['nodeTaintsPolicy', nodeTaintsPolicy],
  ] as const) {
    if (p !== undefined && p !== 'Honor' && p !== 'Ignore') problems.push(`${path}.${k} must be "Honor" or "Ignore"`);
  }
  if (problems.length > before) return undefined;
  return {
    maxSkew: maxSkew as number,
    topologyKey: topologyKey as string,
    whenUnsatisfiable: whenUnsatisfiable as 'DoNotSchedule' | 'ScheduleAnyway',
    ...(minDomains !== undefined ? { minDomains: minDomains as number } : {}),
    ...(nodeAffinityPolicy !== undefined ? { nodeAffinityPolicy: nodeAffinityPolicy as 'Honor' | 'Ignore' } : {}),
    ...(nodeTaintsPolicy !== undefined ? { nodeTaintsPolicy: nodeTaintsPolicy as 'Honor' | 'Ignore' } : {}),
  };
}

function defaultConstraints(v: unknown, problems: string[]): TopologySpreadConstraint[] {
  const path = 'podTopologySpread.defaultConstraints';
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    problems.push(`${path} must be a list of topology spread constraints`);
    return [];
  }
  const out: TopologySpreadConstraint[] = [];
  v.forEach((x, i) => {
    const c = constraint(x, `${path}[${i}]`, problems);
    if (!c) return;
    const j = out.findIndex((o) => o.topologyKey === c.topologyKey && o.whenUnsatisfiable === c.whenUnsatisfiable);
    if (j >= 0) problems.push(`${path}[${i}] is a duplicate of [${j}], {${c.topologyKey}, ${c.whenUnsatisfiable}}`);
    else out.push(c);
  });
  return out;
}

/** Parses a --scheduler-config value; an empty one means no overrides (undefined). */
export function parseSchedulerConfig(text: string): SchedulerConfigResult {
  if (text.trim() === '') return { ok: true, value: undefined };
  const docs = parseDocuments(text).filter((d) => d.value !== undefined || d.syntaxErrors.length);
  const syntax = docs.flatMap((d) => d.syntaxErrors.map((e) => `${e.line ? `line ${e.line}: ` : ''}${e.message}`));
  if (syntax.length) return { ok: false, problems: syntax };
  if (docs.length !== 1 || !isObj(docs[0]!.value))
    return { ok: false, problems: ['must be one YAML or JSON document: a mapping with podTopologySpread'] };
  const doc = docs[0]!.value as Obj;
  const problems: string[] = [];
  unknownFields(doc, '', ['podTopologySpread'], problems);
  const pts = doc['podTopologySpread'];
  let constraints: TopologySpreadConstraint[] = [];
  if (pts !== undefined && pts !== null) {
    if (!isObj(pts)) problems.push('podTopologySpread must be a mapping with defaultConstraints');
    else {
      unknownFields(pts, 'podTopologySpread', ['defaultConstraints'], problems);
      constraints = defaultConstraints(pts['defaultConstraints'], problems);
    }
  }
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    value: pts === undefined || pts === null ? {} : { podTopologySpread: { defaultConstraints: constraints } },
  };
}
