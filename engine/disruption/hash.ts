// The NodePool template hash (docs/karpenter/disruption.md §4.2): a structural hash of spec.template's metadata and
// the fields that shape a node once launched (labels, annotations, taints, startup taints, node class,
// terminationGracePeriod, expireAfter). Requirements are left out (requirements drift handles them), as is
// everything outside the template. Lists are sets, empty values are ignored, so reordering taints or adding
// an empty map does not drift nodes. The hash is FNV-1a 64 over a canonical text, printed in decimal.
import type { NodePool, Taint } from '../domain/types.ts';

export const NODEPOOL_HASH_VERSION = 'v3';

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;

/** FNV-1a, 64 bits, over the UTF-8 bytes of `text`. */
export function fnv1a64(text: string): bigint {
  let h = FNV_OFFSET;
  for (const b of new TextEncoder().encode(text)) {
    h ^= BigInt(b);
    h = (h * FNV_PRIME) & MASK;
  }
  return h;
}

function taintSet(ts: readonly Taint[]): string[] {
  return [...new Set(ts.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`))].sort();
}

function sortedEntries(m: Readonly<Record<string, string>>): Array<[string, string]> {
  return Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The canonical text the hash is taken over (exported for tests and debugging). */
function canonicalTemplate(pool: NodePool): string {
  const t = pool.template;
  const parts: Array<[string, unknown]> = [];
  const labels = sortedEntries(t.labels);
  if (labels.length) parts.push(['labels', labels]);
  const annotations = sortedEntries(t.annotations);
  if (annotations.length) parts.push(['annotations', annotations]);
  const taints = taintSet(t.taints);
  if (taints.length) parts.push(['taints', taints]);
  const startup = taintSet(t.startupTaints);
  if (startup.length) parts.push(['startupTaints', startup]);
  const ref = t.nodeClassRef;
  if (ref.group || ref.kind || ref.name) parts.push(['nodeClassRef', [ref.group, ref.kind, ref.name]]);
  if (t.terminationGracePeriod) parts.push(['terminationGracePeriod', t.terminationGracePeriod]);
  if (t.expireAfter === null) parts.push(['expireAfter', 'Never']);
  else if (t.expireAfter) parts.push(['expireAfter', t.expireAfter]);
  return JSON.stringify(parts);
}

/** The karpenter.sh/nodepool-hash value for the pool's template. */
export function nodePoolHash(pool: NodePool): string {
  return fnv1a64(canonicalTemplate(pool)).toString(10);
}
