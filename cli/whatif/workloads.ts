// Workload manifests in a what-if input (Deployment, StatefulSet, Job) become the pods they would run: a
// manifest applied to the cluster would create `replicas` pods from its template, so what-if places the ones
// the input does not already hold (pods in the namespace that its selector matches) as pending pods. Each
// pod goes through the engine's Pod parser, so it means exactly what the same pod written out would.
import { parsePod, selectorMatches, type Pod } from '../../engine/index.ts';
import { InputError } from './errors.ts';

export const EXPANDED_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'Job']);
/** More pods than this from one manifest is a mistake in the input, not a cluster. */
const MAX_REPLICAS = 100_000;

export interface Workload {
  readonly raw: Record<string, unknown>;
  /** Where it was read ("FILE: document 2"). */
  readonly where: string;
}

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : {});

/** How many pods the manifest asks for: replicas (default 1); a Job's parallelism, at most its completions. */
function wanted(kind: string, spec: Rec, where: string): number {
  const n = (k: string, d: number): number => {
    const v = spec[k];
    if (v === undefined || v === null) return d;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_REPLICAS)
      throw new InputError(`${where}: spec.${k}: ${JSON.stringify(v)} is not a whole number from 0 to ${MAX_REPLICAS}`);
    return v;
  };
  if (kind !== 'Job') return n('replicas', 1);
  const parallelism = n('parallelism', 1);
  return Math.min(parallelism, n('completions', parallelism));
}

/** The pending pods each workload still needs, and one line per workload that added any. */
export function expandWorkloads(
  workloads: readonly Workload[],
  existing: readonly Pod[],
): { pods: Pod[]; notes: string[] } {
  const pods: Pod[] = [];
  const notes: string[] = [];
  for (const { raw, where } of workloads) {
    const kind = String(raw['kind']);
    const meta = rec(raw['metadata']);
    const name = String(meta['name'] ?? '');
    const namespace = String(meta['namespace'] ?? 'default');
    const spec = rec(raw['spec']);
    const template = rec(spec['template']);
    const tmeta = rec(template['metadata']);
    const labels = rec(tmeta['labels']) as Record<string, string>;
    const selector = rec(spec['selector']);
    const matchLabels = Object.keys(rec(selector['matchLabels'])).length
      ? (rec(selector['matchLabels']) as Record<string, string>)
      : labels;
    const have = existing.filter(
      (p) =>
        p.namespace === namespace && Object.keys(matchLabels).length > 0 && selectorMatches({ matchLabels }, p.labels),
    ).length;
    const missing = Math.max(0, wanted(kind, spec, where) - have);
    for (let i = 0; i < missing; i++) {
      const podName = kind === 'StatefulSet' ? `${name}-${have + i}` : `${name}-whatif-${i + 1}`;
      const r = parsePod({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...tmeta,
          name: podName,
          namespace,
          uid: `whatif/${namespace}/${kind}/${name}/${i}`,
          labels,
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: kind === 'Deployment' ? 'ReplicaSet' : kind, name, controller: true },
          ],
        },
        spec: template['spec'] ?? {},
      });
      if (!r.ok)
        throw new InputError(
          `${where}: ${kind}/${namespace}/${name}: spec.template: ${r.errors
            .slice(0, 3)
            .map((e) => `${e.path}: ${e.message}`)
            .join('; ')}`,
        );
      pods.push(r.value);
    }
    if (missing > 0)
      notes.push(
        `${kind} ${namespace}/${name}: ${missing} of its pods ${missing === 1 ? 'is' : 'are'} not in the input; placed as pending pods from its template`,
      );
  }
  return { pods, notes };
}

/**
 * DaemonSets are not pods to place: the engine counts each one's pod requests into every node it selects
 * (every new node's size, as Karpenter does). One line for the report's assumptions.
 */
export function daemonSetNote(daemonSets: readonly { namespace: string; name: string }[]): string[] {
  if (daemonSets.length === 0) return [];
  const names = daemonSets.map((d) => `${d.namespace}/${d.name}`).sort();
  const shown = names.length > 4 ? `${names.slice(0, 4).join(', ')} and ${names.length - 4} more` : names.join(', ');
  return [
    `${names.length} DaemonSet${names.length === 1 ? '' : 's'} (${shown}): overhead on every node ${names.length === 1 ? 'it selects' : 'they select'}, counted into each new node's size; not pods to place`,
  ];
}
