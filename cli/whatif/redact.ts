// What a snapshot leaves out, so the file carries no secrets: what-if reads none of it.
//
// Every object loses metadata.managedFields and the `kubectl.kubernetes.io/last-applied-configuration`
// annotation (a copy of the applied manifest, env values included). In the pod spec of a Pod or a
// DaemonSet's template, every container (init and ephemeral ones too) keeps its env variables' names but
// not their values (a valueFrom reference to a Secret or ConfigMap stays: it names, it does not hold), and
// loses command and args (where credentials are often passed); secret and projected-secret volumes lose
// their items (the keys of the Secret and where they are mounted). An EC2NodeClass loses spec.userData
// (bootstrap scripts hold tokens). Names, labels, requests, scheduling constraints and status stay.
import type { SnapshotKind } from './format.ts';

type Plain = Record<string, unknown>;

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The object with what a snapshot must not hold removed (changed in place and returned). */
export function redact(kind: SnapshotKind, obj: Plain): Plain {
  redactMeta(obj['metadata']);
  const spec = obj['spec'];
  if (!isPlain(spec)) return obj;
  if (kind === 'Pod') redactPodSpec(spec);
  if (kind === 'DaemonSet' && isPlain(spec['template'])) {
    redactMeta(spec['template']['metadata']);
    if (isPlain(spec['template']['spec'])) redactPodSpec(spec['template']['spec']);
  }
  if (kind === 'EC2NodeClass') delete spec['userData'];
  return obj;
}

function redactMeta(meta: unknown): void {
  if (!isPlain(meta)) return;
  delete meta['managedFields'];
  const annotations = meta['annotations'];
  if (!isPlain(annotations)) return;
  delete annotations[LAST_APPLIED];
  if (Object.keys(annotations).length === 0) delete meta['annotations'];
}

function redactPodSpec(spec: Plain): void {
  for (const field of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const c of list(spec[field])) if (isPlain(c)) redactContainer(c);
  }
  for (const v of list(spec['volumes'])) {
    if (!isPlain(v)) continue;
    if (isPlain(v['secret'])) delete v['secret']['items'];
    if (isPlain(v['projected'])) {
      for (const source of list(v['projected']['sources']))
        if (isPlain(source) && isPlain(source['secret'])) delete source['secret']['items'];
    }
  }
}

function redactContainer(c: Plain): void {
  delete c['command'];
  delete c['args'];
  if (!Array.isArray(c['env'])) return;
  c['env'] = c['env']
    .filter(isPlain)
    .map((e) => ({ name: e['name'], ...(e['valueFrom'] !== undefined ? { valueFrom: e['valueFrom'] } : {}) }));
}
