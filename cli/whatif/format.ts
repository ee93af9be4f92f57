// The msgpack snapshot file `karpenter-ts snapshot` writes and `karpenter-ts whatif` reads: the cluster's
// objects as the API server returned them (apiVersion and kind filled in), grouped by kind, with a header
// that names the format and its version. Reading validates the header and the shape before anything is
// parsed, so a truncated or foreign file gets one clear line, never a stack trace.
import { Packr } from 'msgpackr';
import { InputError } from './errors.ts';

export const SNAPSHOT_FORMAT = 'karpenter-ts/snapshot';
export const SNAPSHOT_VERSION = 1;

/** The kinds a snapshot holds, with the apiVersion each is written with. */
export const SNAPSHOT_KINDS = {
  Node: 'v1',
  Pod: 'v1',
  NodePool: 'karpenter.sh/v1',
  NodeClaim: 'karpenter.sh/v1',
  EC2NodeClass: 'karpenter.k8s.aws/v1',
  DaemonSet: 'apps/v1',
  PodDisruptionBudget: 'policy/v1',
} as const;

export type SnapshotKind = keyof typeof SNAPSHOT_KINDS;

export interface SnapshotFile {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: number;
  /** ISO time the objects were listed. */
  readonly createdAt: string;
  /** Where they came from (API server URL, kubeconfig context). */
  readonly source: { readonly server?: string; readonly context?: string };
  readonly objects: { readonly [K in SnapshotKind]: readonly Record<string, unknown>[] };
}

// Plain maps and arrays only (no records extension), so any msgpack reader can open the file.
const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeSnapshot(f: SnapshotFile): Uint8Array {
  // pack() returns a view on a reused buffer: copy it out (docs/stack.md §4).
  return Uint8Array.prototype.slice.call(packr.pack(f));
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** Decodes and checks a snapshot file; every problem is an InputError naming the file and the field. */
export function decodeSnapshot(bytes: Uint8Array, file: string): SnapshotFile {
  let v: unknown;
  try {
    v = packr.unpack(bytes);
  } catch (e) {
    throw new InputError(
      `${file}: not a readable karpenter-ts snapshot: the msgpack data is truncated or corrupt (${(e as Error).message})`,
    );
  }
  const bad = (what: string): never => {
    throw new InputError(`${file}: not a valid karpenter-ts snapshot: ${what}`);
  };
  if (!isRecord(v)) return bad('the top level is not a map');
  if (v['format'] !== SNAPSHOT_FORMAT)
    return bad(`format is ${JSON.stringify(v['format'])}, expected "${SNAPSHOT_FORMAT}"`);
  if (typeof v['version'] !== 'number') return bad('version is missing');
  if (v['version'] > SNAPSHOT_VERSION)
    return bad(
      `format version ${v['version']} is newer than this karpenter-ts reads (${SNAPSHOT_VERSION}); upgrade karpenter-ts`,
    );
  if (v['version'] < 1 || !Number.isInteger(v['version'])) return bad(`format version ${v['version']} is not valid`);
  if (typeof v['createdAt'] !== 'string' || Number.isNaN(Date.parse(v['createdAt'])))
    return bad('createdAt is not an ISO time');
  const objects = v['objects'];
  if (!isRecord(objects)) return bad('objects is not a map of kinds');
  for (const [kind, list] of Object.entries(objects)) {
    if (!(kind in SNAPSHOT_KINDS))
      return bad(`objects.${kind}: unknown kind (a snapshot holds ${Object.keys(SNAPSHOT_KINDS).join(', ')})`);
    if (!Array.isArray(list)) return bad(`objects.${kind} is not a list`);
    list.forEach((o, i) => {
      if (!isRecord(o)) bad(`objects.${kind}[${i}] is not an object`);
    });
  }
  for (const kind of Object.keys(SNAPSHOT_KINDS)) if (!(kind in objects)) return bad(`objects.${kind} is missing`);
  return {
    ...(v as unknown as SnapshotFile),
    source: isRecord(v['source']) ? (v['source'] as SnapshotFile['source']) : {},
  };
}

/** msgpack files start with a map header (fixmap 0x80-0x8f, map16 0xde, map32 0xdf); YAML and JSON never do. */
export function looksLikeMsgpack(bytes: Uint8Array): boolean {
  const b = bytes[0];
  return b !== undefined && ((b >= 0x80 && b <= 0x8f) || b === 0xde || b === 0xdf);
}
