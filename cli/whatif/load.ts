// Reading what-if inputs: a `kubectl get -o yaml` dump (a List or multi-document YAML/JSON), a folder of
// such files, or a msgpack snapshot from `karpenter-ts snapshot`. Objects are parsed by the engine; any
// parse error, and any kind what-if does not know, stops the load with the file, the object and the field.
// The input limits (cli/limits.ts) are checked first: a file's size before it is read, the number of
// objects (over all the files of one snapshot) before any object is parsed.
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  emptyClusterObjects,
  formatFieldError,
  karpenterKindProblem,
  listItems,
  parseDocuments,
  parseObject,
  parseText,
  safeText,
  type ClusterObjectLists,
  type ClusterObjects,
  type ParsedObject,
  type Result,
  type SourceDocument,
} from '../../engine/index.ts';
import { countProblem, inputLimits, sizeProblem, type InputLimits } from '../limits.ts';
import { fsProblem, InputError } from './errors.ts';
import { decodeSnapshot, looksLikeMsgpack } from './format.ts';
import { EXPANDED_KINDS, expandWorkloads, type Workload } from './workloads.ts';

/** Kinds a cluster dump often holds that what-if does not need: skipped (and counted), not rejected. */
const SKIPPED_KINDS = new Set([
  'Namespace',
  'Service',
  'Endpoints',
  'EndpointSlice',
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'Job',
  'CronJob',
  'ReplicationController',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'StorageClass',
  'Event',
  'Lease',
  'PriorityClass',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'Ingress',
  'IngressClass',
  'NetworkPolicy',
  'HorizontalPodAutoscaler',
  'LimitRange',
  'ResourceQuota',
  'CSINode',
  'CSIDriver',
  'VolumeAttachment',
  'PodTemplate',
  'ControllerRevision',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'APIService',
  'RuntimeClass',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'ComponentStatus',
]);

const READ_KINDS = 'Node, Pod, NodePool, NodeClaim, EC2NodeClass, NodeOverlay, DaemonSet, PodDisruptionBudget';

interface Loaded {
  readonly objects: ClusterObjects;
  /** The files read, in order. */
  readonly files: readonly string[];
  /** ms since the epoch the snapshot was taken (msgpack snapshots). */
  readonly createdAt?: number;
  /** Kinds skipped, with counts. */
  readonly skipped: ReadonlyMap<string, number>;
  /** What the load assumed (workload manifests expanded into pods). */
  readonly notes: readonly string[];
}

interface Acc extends ClusterObjectLists {
  skipped: Map<string, number>;
  workloads: Workload[];
  /** Objects counted so far, against limits.objects. */
  count: number;
  readonly limits: InputLimits;
  /** Where each object was read, by kind, namespace and name: a cluster holds one object of a name. */
  readonly seen: Map<string, string>;
}

function emptyAcc(limits: InputLimits): Acc {
  return { ...emptyClusterObjects(), skipped: new Map(), workloads: [], count: 0, limits, seen: new Map() };
}

/** Counts `n` more objects of `file`, refusing them before they are parsed when the total passes the limit. */
function admitCount(acc: Acc, n: number, file: string): void {
  acc.count += n;
  const problem = countProblem(acc.count, 'objects', acc.limits);
  if (problem)
    throw new InputError(`${file}: ${problem}${acc.count > n ? ' (counting the files read before it)' : ''}`);
}

/** Adds one parsed object; `where` locates it ("FILE: document 2 (line 14)"). */
function collect(acc: Acc, r: Result<ParsedObject>, source: unknown, where: string): void {
  if (!r.ok) {
    const lines = r.errors
      .slice(0, 5)
      .map((e) => `${where}${e.line !== undefined ? ` line ${e.line}` : ''}: ${formatFieldError(e)}`);
    if (r.errors.length > 5) lines.push(`${where}: ... and ${r.errors.length - 5} more problems`);
    throw new InputError(lines.join('\n'));
  }
  const p = r.value;
  if (p.kind !== 'Other') admitName(acc, p.kind, p.value, where);
  switch (p.kind) {
    case 'Node':
      acc.nodes.push(p.value);
      return;
    case 'NodeClaim':
      acc.nodeClaims.push(p.value);
      return;
    case 'Pod':
      acc.pods.push(p.value);
      return;
    case 'NodePool':
      acc.nodePools.push(p.value);
      return;
    case 'EC2NodeClass':
      acc.nodeClasses.push(p.value);
      return;
    case 'NodeOverlay':
      acc.nodeOverlays.push(p.value);
      return;
    case 'DaemonSet':
      acc.daemonSets.push(p.value);
      return;
    case 'PodDisruptionBudget':
      acc.pdbs.push(withAllowed(p.value, source));
      return;
    case 'Other': {
      const kind = String(p.value['kind']);
      if (EXPANDED_KINDS.has(kind)) {
        acc.workloads.push({ raw: p.value, where });
        return;
      }
      if (SKIPPED_KINDS.has(kind)) {
        acc.skipped.set(kind, (acc.skipped.get(kind) ?? 0) + 1);
        return;
      }
      const meta = p.value['metadata'] as Record<string, unknown> | undefined;
      const karpenter = karpenterKindProblem(p.value);
      if (karpenter) throw new InputError(`${where}: ${karpenter} (object ${String(meta?.['name'] ?? '<unnamed>')})`);
      throw new InputError(
        `${where}: unknown kind ${String(p.value['apiVersion'])}/${kind} (object ${String(meta?.['name'] ?? '<unnamed>')}); what-if reads ${READ_KINDS}`,
      );
    }
  }
}

/**
 * Refuses a second object of one kind, namespace and name: a cluster holds one, and which of the two a plan would
 * keep is not the input's to leave open (two pods of one name on two nodes would be one pod in two places).
 */
function admitName(acc: Acc, kind: string, value: unknown, where: string): void {
  const { name, namespace } = value as { readonly name?: unknown; readonly namespace?: unknown };
  if (typeof name !== 'string') return;
  const ns = typeof namespace === 'string' ? namespace : undefined;
  const key = `${kind}/${ns ?? ''}/${name}`;
  const first = acc.seen.get(key);
  if (first !== undefined)
    throw new InputError(
      `${where}: ${kind} ${safeText(ns === undefined ? name : `${ns}/${name}`)} is listed twice (first at ${first})`,
    );
  acc.seen.set(key, where);
}

/** A PDB written without status (a manifest, not a dump) gets the disruptions its spec allows at most. */
function withAllowed<T extends { disruptionsAllowed: number; maxUnavailable?: string | number }>(
  pdb: T,
  source: unknown,
): T {
  const status = (source as Record<string, unknown> | undefined)?.['status'];
  if (status !== undefined || pdb.maxUnavailable === undefined) return pdb;
  const n =
    typeof pdb.maxUnavailable === 'number'
      ? pdb.maxUnavailable
      : /^\d+$/.test(pdb.maxUnavailable)
        ? Number(pdb.maxUnavailable)
        : 1;
  return { ...pdb, disruptionsAllowed: n };
}

function objectsIn(docs: readonly SourceDocument[]): number {
  return docs.reduce((n, d) => n + (d.value === undefined ? 0 : (listItems(d.value)?.length ?? 1)), 0);
}

function addText(acc: Acc, text: string, file: string): void {
  const docs = parseDocuments(text);
  admitCount(acc, objectsIn(docs), file);
  for (const e of parseText(docs, { assumeReady: true })) {
    const where = `${file}: document ${e.document}${e.item !== undefined ? ` item ${e.item}` : ''}`;
    collect(acc, e.result, e.source, where);
  }
}

function addMsgpack(acc: Acc, bytes: Uint8Array, file: string): number {
  const snap = decodeSnapshot(bytes, file);
  admitCount(
    acc,
    Object.values(snap.objects).reduce((n, list) => n + list.length, 0),
    file,
  );
  for (const [kind, list] of Object.entries(snap.objects)) {
    list.forEach((o, i) => collect(acc, parseObject(o, { assumeReady: true }), o, `${file}: objects.${kind}[${i}]`));
  }
  return Date.parse(snap.createdAt);
}

async function filesOf(path: string): Promise<string[]> {
  const st = await stat(path).catch((e: unknown) => {
    throw fsProblem(path, e);
  });
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await filesOf(p)));
    else if (/\.(ya?ml|json|msgpack)$/i.test(entry.name)) out.push(p);
  }
  if (out.length === 0) throw new InputError(`${path}: the folder has no .yaml, .yml, .json or .msgpack files`);
  return out;
}

/** Whether a file starts like a msgpack map (its first bytes only). */
async function startsLikeMsgpack(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    return looksLikeMsgpack(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/** A file's bytes, after its size has been checked against the limit for its kind (text or msgpack). */
async function readWithin(abs: string, shown: string, limits: InputLimits): Promise<Buffer> {
  const size = (
    await stat(abs).catch((e: unknown) => {
      throw fsProblem(shown, e);
    })
  ).size;
  if (size > limits.textBytes) {
    const msgpack = /\.msgpack$/i.test(abs) || (await startsLikeMsgpack(abs).catch(() => false));
    const problem = sizeProblem(size, msgpack ? 'snapshot' : 'text', limits);
    if (problem) throw new InputError(`${shown}: ${problem}`);
  }
  return readFile(abs).catch((e: unknown) => {
    throw fsProblem(shown, e);
  });
}

/** A text input (a CSV trace) read within the text limit. */
export async function readTextInput(
  file: string,
  cwd: string,
  limits: InputLimits = inputLimits(process.env),
): Promise<string> {
  return (await readWithin(resolve(cwd, file), file, limits)).toString('utf8');
}

/** Loads one snapshot: a file, or every YAML/JSON/msgpack file under a folder (sorted, recursive). */
export async function loadSnapshot(
  path: string,
  cwd: string,
  limits: InputLimits = inputLimits(process.env),
): Promise<Loaded> {
  const acc = emptyAcc(limits);
  const files = await filesOf(resolve(cwd, path));
  let createdAt: number | undefined;
  for (const abs of files) {
    const shown = abs.startsWith(resolve(cwd) + '/') ? abs.slice(resolve(cwd).length + 1) : abs;
    const bytes = await readWithin(abs, shown, limits);
    if (/\.msgpack$/i.test(abs) || looksLikeMsgpack(bytes)) createdAt = addMsgpack(acc, bytes, shown);
    else addText(acc, bytes.toString('utf8'), shown);
  }
  const { skipped, workloads, count: _count, limits: _limits, seen: _seen, ...parsed } = acc;
  const expanded = expandWorkloads(workloads, parsed.pods);
  const objects = { ...parsed, pods: [...parsed.pods, ...expanded.pods] };
  return {
    objects,
    notes: expanded.notes,
    files: files.map((f) => (f.startsWith(resolve(cwd) + '/') ? f.slice(resolve(cwd).length + 1) : f)),
    skipped,
    ...(createdAt !== undefined ? { createdAt } : {}),
  };
}
