// What makes the planned cluster more fragile than the one it replaces, and what keeps the plan from
// saving: each risk names the nodes or pods concerned and what to set to avoid it. Pure: the report's rows
// and moves, the placement after the plan, and the pods' own constraints in; a list of risks out.
import { INSTANCE_GPU_COUNT_LABEL, INSTANCE_ACCELERATOR_COUNT_LABEL, INSTANCE_SIZE_LABEL } from '../catalog/labels.ts';
import type { InstanceType, Pod } from '../domain/types.ts';
import { ZONE_LABEL } from '../scheduling/labels.ts';
import { podKey, selectorMatches } from '../scheduling/pods.ts';
import { anyValue } from '../scheduling/requirements.ts';
import type { Move, NodeExplanation, NodeRow, Risk } from './types.ts';

export interface RiskInput {
  readonly rows: readonly NodeRow[];
  readonly moves: readonly Move[];
  readonly kept: readonly NodeExplanation[];
  /** Node name -> the pods it holds after the plan (kept and new nodes). */
  readonly placement: ReadonlyMap<string, readonly Pod[]>;
  readonly catalog: ReadonlyMap<string, InstanceType>;
  /** Spot interruption frequency band per instance type (0: <5% ... 4: >20%), when the data has it. */
  readonly interruptionBand?: (instanceType: string) => number | undefined;
  readonly nodePools: number;
}

const SEVERITY = { high: 0, medium: 1, low: 2 } as const;
const share = (part: number, whole: number): string => `${Math.round((part / whole) * 100)}%`;

function countBy<T>(xs: readonly T[], key: (x: T) => string | undefined): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    if (k === undefined) continue;
    m.set(k, [...(m.get(k) ?? []), x]);
  }
  return m;
}

function largest<T>(m: ReadonlyMap<string, readonly T[]>): [string, readonly T[]] | undefined {
  let best: [string, readonly T[]] | undefined;
  for (const e of [...m].sort(([a], [b]) => a.localeCompare(b))) if (!best || e[1].length > best[1].length) best = e;
  return best;
}

const after = (rows: readonly NodeRow[]) => rows.filter((r) => r.fate !== 'removed' && r.managed);
const before = (rows: readonly NodeRow[]) => rows.filter((r) => r.fate !== 'new' && r.managed);

/** More of the managed nodes in one zone than before (and at least half of them). */
function zoneConcentration(i: RiskInput): Risk[] {
  const a = after(i.rows),
    b = before(i.rows);
  if (a.length < 2) return [];
  const za = countBy(a, (r) => r.zone),
    zb = countBy(b, (r) => r.zone);
  const [zone, inZone] = largest(za) ?? ['', []];
  const shareAfter = inZone.length / a.length;
  const shareBefore = b.length ? (largest(zb)?.[1].length ?? 0) / b.length : 0;
  if (shareAfter < 0.5 || shareAfter <= shareBefore + 0.1) return [];
  const pools = [...new Set(inZone.map((r) => r.nodePool ?? '?'))];
  return [
    {
      kind: 'zone-concentration',
      severity: za.size === 1 && zb.size > 1 ? 'high' : 'medium',
      summary: `${share(inZone.length, a.length)} of the nodes after the plan are in ${zone} (${inZone.length} of ${a.length}), against ${share(shareBefore * b.length, b.length || 1)} in one zone before (${zb.size} zone${zb.size === 1 ? '' : 's'})`,
      nodes: inZone.filter((r) => r.fate === 'new').map((r) => r.name),
      pods: [],
      fix: `spread the workloads with topologySpreadConstraints on ${ZONE_LABEL} (maxSkew: 1), or add a ${ZONE_LABEL} topology spread to NodePool ${pools.join(', ')} workloads; a launch lands wherever the price is lowest, and these zones price alike`,
    },
  ];
}

/** Pods whose zone spread constraint the planned placement violates (ScheduleAnyway constraints may be). */
function spreadConstraints(i: RiskInput): Risk[] {
  const zoneOf = new Map(i.rows.filter((r) => r.fate !== 'removed').map((r) => [r.name, r.zone]));
  const zones = [...new Set([...zoneOf.values()].filter((z): z is string => z !== undefined))];
  const all = [...i.placement].flatMap(([node, pods]) => pods.map((p) => ({ p, zone: zoneOf.get(node) })));
  const seen = new Set<string>();
  const out: Risk[] = [];
  for (const { p } of all) {
    for (const c of p.topologySpreadConstraints) {
      if (c.topologyKey !== ZONE_LABEL || !c.labelSelector) continue;
      const key = `${p.namespace}/${JSON.stringify(c.labelSelector)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const matching = all.filter((x) => x.p.namespace === p.namespace && selectorMatches(c.labelSelector, x.p.labels));
      const per = zones.map((z) => matching.filter((x) => x.zone === z).length);
      const skew = Math.max(...per) - Math.min(...per);
      if (skew <= c.maxSkew) continue;
      out.push({
        kind: 'spread-constraint',
        severity: c.whenUnsatisfiable === 'DoNotSchedule' ? 'high' : 'medium',
        summary: `pods of ${p.namespace}/${p.owner?.name ?? p.name} spread over zones with skew ${skew} (maxSkew ${c.maxSkew}, ${c.whenUnsatisfiable}): ${zones.map((z, k) => `${z} ${per[k]}`).join(', ')}`,
        nodes: [],
        pods: matching.map((x) => podKey(x.p)),
        fix:
          c.whenUnsatisfiable === 'ScheduleAnyway'
            ? 'make the constraint whenUnsatisfiable: DoNotSchedule if the spread matters; the planner treats ScheduleAnyway as a preference'
            : 'check the NodePool allows every zone the constraint counts',
      });
    }
  }
  return out;
}

/** Most of the capacity on spot, in few spot pools (instance type x zone), or in types often interrupted. */
function spot(i: RiskInput): Risk[] {
  const a = after(i.rows);
  const spotNodes = a.filter((r) => r.capacityType === 'spot');
  if (spotNodes.length < 2 || spotNodes.length / a.length < 0.5) return [];
  const pools = countBy(spotNodes, (r) => `${r.instanceType ?? '?'} in ${r.zone ?? '?'}`);
  const [pool, inPool] = largest(pools) ?? ['', []];
  const out: Risk[] = [];
  if (pools.size < 3 || inPool.length / spotNodes.length >= 0.5) {
    out.push({
      kind: 'spot-concentration',
      severity: pools.size === 1 ? 'high' : 'medium',
      summary: `${share(spotNodes.length, a.length)} of the nodes after the plan are spot, in ${pools.size} spot pool${pools.size === 1 ? '' : 's'}; ${inPool.length} in ${pool}: one interruption wave can take them together`,
      nodes: inPool.map((r) => r.name),
      pods: [],
      fix: 'allow more instance types in the NodePool (several families and sizes) and set minValues on karpenter.k8s.aws/instance-family or node.kubernetes.io/instance-type (e.g. minValues: 5) so each launch keeps several spot pools',
    });
  } else out.push(...spotShare(i, spotNodes, pools.size));
  const scarce = spotNodes.filter((r) => r.fate === 'new' && (i.interruptionBand?.(r.instanceType ?? '') ?? 0) >= 3);
  if (scarce.length) {
    out.push({
      kind: 'scarce-capacity',
      severity: 'medium',
      summary: `${scarce.length} new spot node${scarce.length === 1 ? '' : 's'} need${scarce.length === 1 ? 's' : ''} types the Spot Instance Advisor lists as interrupted more than 15% of the time (${[...new Set(scarce.map((r) => r.instanceType))].join(', ')}): capacity may not be there`,
      nodes: scarce.map((r) => r.name),
      pods: [],
      fix: 'allow other families in the NodePool, or on-demand as a fallback (karpenter.sh/capacity-type In [spot, on-demand])',
    });
  }
  return out;
}

/**
 * Spot spread over enough pools, but a much larger share of the cluster on spot than before: every pod on
 * those nodes can now be interrupted at two minutes' notice (the pods that cannot take that need pinning).
 */
function spotShare(i: RiskInput, spotNodes: readonly NodeRow[], pools: number): Risk[] {
  const a = after(i.rows),
    b = before(i.rows);
  const shareBefore = b.length ? b.filter((r) => r.capacityType === 'spot').length / b.length : 0;
  const shareAfter = spotNodes.length / a.length;
  if (shareAfter - shareBefore < 0.2) return [];
  const added = spotNodes.filter((r) => r.fate === 'new');
  return [
    {
      kind: 'spot-share',
      severity: shareAfter >= 0.9 ? 'medium' : 'low',
      summary: `${share(spotNodes.length, a.length)} of the nodes after the plan are spot (${share(shareBefore * b.length, b.length || 1)} before), in ${pools} spot pools: the pods on ${added.length} new spot node${added.length === 1 ? '' : 's'} can be interrupted with two minutes' notice`,
      nodes: added.map((r) => r.name),
      pods: [],
      fix: 'keep workloads that cannot be interrupted on on-demand: a karpenter.sh/capacity-type: on-demand node selector on them, or a second NodePool with karpenter.sh/capacity-type In [on-demand] (and a higher weight) for them',
    },
  ];
}

/** One instance type, or one family, holding most nodes after the plan. */
function singleType(i: RiskInput): Risk[] {
  const a = after(i.rows);
  if (a.length < 3) return [];
  const [type, nodes] = largest(countBy(a, (r) => r.instanceType)) ?? ['', []];
  if (nodes.length / a.length >= 0.6 && nodes.some((r) => r.fate === 'new')) {
    return [
      {
        kind: 'single-instance-type',
        severity: nodes.length === a.length ? 'medium' : 'low',
        summary: `${nodes.length} of ${a.length} nodes after the plan are ${type}: a shortage of that one type blocks replacements and scale-ups alike`,
        nodes: nodes.map((r) => r.name),
        pods: [],
        fix: 'set minValues on node.kubernetes.io/instance-type in the NodePool requirements (e.g. minValues: 5) to keep launches flexible',
      },
    ];
  }
  const [family, inFamily] = largest(countBy(a, (r) => r.instanceType?.split('.')[0])) ?? ['', []];
  if (inFamily.length / a.length < 0.75 || !inFamily.some((r) => r.fate === 'new')) return [];
  return [
    {
      kind: 'single-instance-type',
      severity: 'low',
      summary: `${inFamily.length} of ${a.length} nodes after the plan are of the ${family} family (${[...new Set(inFamily.map((r) => r.instanceType))].sort().join(', ')}): a shortage of that family blocks replacements and scale-ups alike`,
      nodes: inFamily.map((r) => r.name),
      pods: [],
      fix: 'set minValues on karpenter.k8s.aws/instance-family in the NodePool requirements (e.g. minValues: 3) so launches keep several families',
    },
  ];
}

function isExotic(it: InstanceType | undefined): string | undefined {
  if (!it) return undefined;
  const v = (k: string) => {
    const r = it.requirements.get(k);
    return r ? anyValue(r) : undefined;
  };
  if (v(INSTANCE_SIZE_LABEL)?.includes('metal')) return 'bare metal';
  if (Number(v(INSTANCE_GPU_COUNT_LABEL) ?? 0) > 0) return 'GPU';
  if (Number(v(INSTANCE_ACCELERATOR_COUNT_LABEL) ?? 0) > 0) return 'accelerator';
  return undefined;
}

const wantsAccelerator = (p: Pod): boolean => Object.keys(p.requests).some((k) => /gpu|neuron|accelerator/i.test(k));

/** New metal or accelerator nodes for pods that need neither. */
function exotic(i: RiskInput): Risk[] {
  const hits = after(i.rows)
    .filter((r) => r.fate === 'new')
    .flatMap((r) => {
      const kind = isExotic(r.instanceType ? i.catalog.get(r.instanceType) : undefined);
      const pods = i.placement.get(r.name) ?? [];
      return kind && !pods.some(wantsAccelerator) ? [{ r, kind }] : [];
    });
  if (!hits.length) return [];
  return [
    {
      kind: 'exotic-instance-type',
      severity: 'medium',
      summary: `${hits.length} new node${hits.length === 1 ? ' is' : 's are'} ${[...new Set(hits.map((h) => `${h.kind} (${h.r.instanceType})`))].join(', ')} for pods that need no accelerator: the launch would likely skip such types, so the real price may differ`,
      nodes: hits.map((h) => h.r.name),
      pods: [],
      fix: 'exclude them in the NodePool: karpenter.k8s.aws/instance-size NotIn [metal, metal-24xl, metal-48xl] and karpenter.k8s.aws/instance-gpu-count DoesNotExist (or NotIn the accelerator families)',
    },
  ];
}

/** Pods the plan moves more than once. */
function movedTwice(i: RiskInput): Risk[] {
  const times = new Map<string, number>();
  for (const m of i.moves) for (const p of m.pods) if (p.from !== null) times.set(p.pod, (times.get(p.pod) ?? 0) + 1);
  const pods = [...times]
    .filter(([, n]) => n > 1)
    .map(([p]) => p)
    .sort();
  if (!pods.length) return [];
  return [
    {
      kind: 'pods-moved-twice',
      severity: 'low',
      summary: `${pods.length} pod${pods.length === 1 ? ' is' : 's are'} evicted more than once while the plan runs in budget-sized steps`,
      nodes: [],
      pods,
      fix: 'a larger disruption budget (spec.disruption.budgets nodes: "20%") lets more of the plan run in one step',
    },
  ];
}

/** Nodes consolidation would take but a PDB or do-not-disrupt keeps. */
function blocked(i: RiskInput): Risk[] {
  const out: Risk[] = [];
  const byCode = (codes: readonly string[]) => i.kept.filter((k) => k.code !== undefined && codes.includes(k.code));
  const pdb = byCode(['pdb-blocked', 'pdb-multiple']);
  const pod = (k: NodeExplanation) => /(?:\(pod |Pod=)([^)\s]+)\)/.exec(k.reason)?.[1];
  if (pdb.length) {
    out.push({
      kind: 'blocked-by-pdb',
      severity: 'low',
      summary: `${pdb.length} node${pdb.length === 1 ? '' : 's'} cannot be consolidated: a PodDisruptionBudget allows no eviction now (${pdb[0]!.reason})`,
      nodes: pdb.map((k) => k.node),
      pods: [...new Set(pdb.map(pod).filter((p): p is string => !!p))],
      fix: 'give the PDB room (maxUnavailable: 1, or minAvailable below the replica count), or add a replica',
    });
  }
  const dnd = byCode(['pod-do-not-disrupt', 'node-do-not-disrupt']);
  if (dnd.length) {
    out.push({
      kind: 'blocked-by-do-not-disrupt',
      severity: 'low',
      summary: `${dnd.length} node${dnd.length === 1 ? '' : 's'} cannot be consolidated because of karpenter.sh/do-not-disrupt`,
      nodes: dnd.map((k) => k.node),
      pods: [...new Set(dnd.map(pod).filter((p): p is string => !!p))],
      fix: 'use a duration instead of "true" (karpenter.sh/do-not-disrupt: "4h") or drop the annotation where a move is acceptable',
    });
  }
  return out;
}

/** Input problems that make the plan save nothing. */
function coverage(i: RiskInput): Risk[] {
  const unmanaged = i.rows.filter((r) => !r.managed);
  const out: Risk[] = [];
  if (i.nodePools === 0) {
    out.push({
      kind: 'no-nodepools',
      severity: 'high',
      summary: 'the input has no NodePool: nothing can be launched or consolidated, so the plan cannot save anything',
      nodes: [],
      pods: [],
      fix: 'pass --nodepools FILE with the NodePools (and EC2NodeClasses) karpenter-ts should use, or --from cluster-autoscaler to have them proposed from the nodes and pods',
    });
  }
  if (unmanaged.length) {
    out.push({
      kind: 'unmanaged-nodes',
      severity: unmanaged.length === i.rows.filter((r) => r.fate !== 'new').length ? 'high' : 'low',
      summary: `${unmanaged.length} node${unmanaged.length === 1 ? ' has' : 's have'} no karpenter.sh/nodepool label: karpenter-ts would not touch ${unmanaged.length === 1 ? 'it' : 'them'}`,
      nodes: unmanaged.map((r) => r.name),
      pods: [],
      fix: 'karpenter-ts disrupts only nodes it launched (with a NodeClaim); run with --from cluster-autoscaler to plan moving these nodes to NodePools (proposed, or yours with --nodepools)',
    });
  }
  return out;
}

export function risksOf(i: RiskInput): Risk[] {
  const all = [
    ...coverage(i),
    ...zoneConcentration(i),
    ...spreadConstraints(i),
    ...spot(i),
    ...singleType(i),
    ...exotic(i),
    ...movedTwice(i),
    ...blocked(i),
  ];
  return all.sort((a, b) => SEVERITY[a.severity] - SEVERITY[b.severity]);
}
