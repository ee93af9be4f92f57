// Topology groups (docs/karpenter/scheduling.md §3): one constraint shared by every pod that declares it identically,
// counting selected pods per domain, and the pieces of the ids that tell groups apart.
import type { LabelSelector, Pod, Requirements, Taint } from '../domain/types.ts';
import { selectorMatches } from '../scheduling/pods.ts';
import { compatible } from '../scheduling/requirements.ts';
import { toleratesAll } from '../scheduling/taints.ts';

type GroupType = 'spread' | 'affinity' | 'anti-affinity';

/** Where a pod would land, as topology sees it. */
export interface Placement {
  readonly requirements: Requirements;
  readonly taints: readonly Taint[];
}

export interface NodeFilter {
  /** ORed alternatives; a node passes when strictly compatible with one. Empty = no filter. */
  readonly alternatives: readonly Requirements[];
  readonly honorTaints: boolean;
  readonly tolerations: Pod['tolerations'];
}

export class TopologyGroup {
  readonly owners = new Set<string>();
  readonly domains = new Map<string, number>();
  constructor(
    readonly id: string,
    readonly type: GroupType,
    readonly key: string,
    readonly namespaces: ReadonlySet<string> | 'all',
    readonly selector: LabelSelector | undefined,
    readonly maxSkew: number,
    readonly minDomains: number | undefined,
    readonly nodeFilter: NodeFilter | undefined,
    readonly inverse: boolean,
  ) {}

  selects(pod: Pod): boolean {
    return (
      (this.namespaces === 'all' || this.namespaces.has(pod.namespace)) && selectorMatches(this.selector, pod.labels)
    );
  }

  /** Does a node with these requirements and taints take part in this group's counts (TSC node policies)? */
  counts(p: Placement): boolean {
    const f = this.nodeFilter;
    if (!f) return true;
    if (f.honorTaints && !toleratesAll(f.tolerations, p.taints)) return false;
    if (f.alternatives.length === 0) return true;
    return f.alternatives.some((alt) => compatible(p.requirements, alt) === undefined);
  }

  register(domain: string): void {
    if (!this.domains.has(domain)) this.domains.set(domain, 0);
  }

  increment(domain: string): void {
    this.domains.set(domain, (this.domains.get(domain) ?? 0) + 1);
  }
}

/** The selector with matchLabelKeys resolved against the pod's own labels (an In expression per present key). */
export function selectorWithLabelKeys(
  sel: LabelSelector | undefined,
  keys: readonly string[] | undefined,
  labels: Readonly<Record<string, string>>,
): LabelSelector | undefined {
  if (!sel || !keys?.length) return sel;
  const extra = keys
    .filter((k) => labels[k] !== undefined)
    .map((k) => ({ key: k, operator: 'In' as const, values: [labels[k]!] }));
  return { ...sel, matchExpressions: [...(sel.matchExpressions ?? []), ...extra] };
}

/** A selector as a canonical string: the same for selectors that match the same labels by construction. */
export function stableKey(sel: LabelSelector | undefined): string {
  if (!sel) return 'nil';
  const ml = Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const me = (sel.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${[...e.values].sort().join(',')}`).sort();
  return JSON.stringify([ml, me]);
}
