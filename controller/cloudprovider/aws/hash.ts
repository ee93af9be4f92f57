// The EC2NodeClass static hash behind NodeClassDrift (docs/karpenter/aws-provider.md §5 "Drift" 1): a hash of the spec
// with lists treated as sets and zero values ignored, minus the fields Karpenter marks hash:"ignore" (the
// selector terms, amiFamily, ipPrefixCount), plus the resolved AMI family and the cluster CA bundle. It is
// written to the node class and to each NodeClaim at launch as `karpenter.k8s.aws/ec2nodeclass-hash`, with
// `...-hash-version`. The spec is the engine parser's, so CRD defaults (metadataOptions) are hashed as
// Karpenter hashes its defaulted spec.
//
// Our digest is sha256 over canonical JSON, not Karpenter's hashstructure/FNV, so its values differ from
// Karpenter's. The version therefore differs too (Karpenter v1.14.1 writes "v5"): drift is only declared
// when versions are equal, so NodeClaims launched by Karpenter get their hash rewritten on migration
// instead of all drifting at once.
import { createHash } from 'node:crypto';
import type { AMIFamily, EC2NodeClass, EC2NodeClassSpec } from '../../../engine/index.ts';
import { NODECLASS_HASH_ANNOTATION, NODECLASS_HASH_VERSION_ANNOTATION } from './settings.ts';

export const EC2NODECLASS_HASH_VERSION = 'kts-v1';

const IGNORED: ReadonlySet<string> = new Set([
  'subnetSelectorTerms',
  'securityGroupSelectorTerms',
  'amiSelectorTerms',
  'capacityReservationSelectorTerms',
  'amiFamily',
  'ipPrefixCount',
]);

/** Drops zero values (undefined, null, "", 0, false, [], {}) recursively; undefined when nothing is left. */
function normalize(v: unknown): unknown {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return undefined;
  if (Array.isArray(v)) {
    const items = v.map(normalize).filter((x) => x !== undefined);
    if (!items.length) return undefined;
    // A list is a set: order does not matter.
    return items
      .map((x) => [canonical(x), x] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([, x]) => x);
  }
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) {
      const x = normalize((v as Record<string, unknown>)[k]);
      if (x !== undefined) out[k] = x;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v;
}

/** JSON with object keys sorted. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

interface HashInputs {
  readonly spec: EC2NodeClassSpec;
  readonly amiFamily: AMIFamily;
  readonly caBundle?: string;
}

/** A decimal uint64 (the look of Karpenter's hash annotation). */
export function nodeClassHash({ spec, amiFamily, caBundle }: HashInputs): string {
  const hashed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!IGNORED.has(k)) hashed[k] = v;
  const doc = normalize({ spec: hashed, amiFamily, caBundle }) ?? {};
  return createHash('sha256').update(canonical(doc)).digest().readBigUInt64BE(0).toString(10);
}

/**
 * The node class's hash and version: its annotations when the controller has written them, else computed
 * now (a node class not yet reconciled), with the engine's resolved AMI family.
 */
export function currentHash(
  nc: Pick<EC2NodeClass, 'spec' | 'amiFamily' | 'annotations'>,
  caBundle?: string,
): { readonly hash: string; readonly version: string } {
  return {
    hash:
      nc.annotations[NODECLASS_HASH_ANNOTATION] ??
      nodeClassHash({ spec: nc.spec, amiFamily: nc.amiFamily, ...(caBundle ? { caBundle } : {}) }),
    version: nc.annotations[NODECLASS_HASH_VERSION_ANNOTATION] ?? EC2NODECLASS_HASH_VERSION,
  };
}
