// Migrations to Karpenter (docs/whatif.md "Migrations"). A cluster whose nodes Karpenter does not manage
// (Cluster Autoscaler over EKS managed node groups or ASGs) is planned as Karpenter would carry out the move
// once its NodePools exist: every node of a migrated group is taken as a NodeClaim of the NodePool that
// replaces the group, drifted, so the disruption engine replaces it as it replaces any drifted node: one at
// a time within the NodePool's budgets, its pods rescheduled by the provisioner onto the new NodePools, PDBs
// and do-not-disrupt pods respected. What remains afterwards is consolidated as usual.
//
// Also here: renaming the NodePools of karpenter-managed nodes (--map-nodepool old=new), the warning when
// --nodepools names pools the nodes do not have, and drift of managed nodes against NodePools given in place
// of the snapshot's (what the controller would find once the new NodePools are applied).
import { driftReason } from '../disruption/driftcheck.ts';
import type { NodePool, StateNode, Taint } from '../domain/types.ts';
import { CAPACITY_TYPE_LABEL, NODEPOOL_LABEL } from '../scheduling/labels.ts';
import type { Built } from './build.ts';
import { claimedNodes, karpenterManaged, nodeCapacityType, sameTaints, type NodeGroup } from './nodegroups.ts';
import type { ClusterObjects, GroupMapping, MigrationInfo, WhatIfReport } from './types.ts';

/** The drift reason a migrated node carries (it shows in explanations). */
const MIGRATION_DRIFT_REASON = 'NodeGroupMigration';

/** Nodes exist, no NodeClaim, and no node carries a Karpenter label (karpenter.sh/...): none came from Karpenter. */
export function unmanagedCluster(o: ClusterObjects): boolean {
  const claimed = claimedNodes(o);
  const karpenterLabel = (labels: Readonly<Record<string, string>>) =>
    Object.keys(labels).some((k) => k.startsWith('karpenter.sh/'));
  return (
    o.nodes.length > 0 &&
    o.nodeClaims.length === 0 &&
    !o.nodes.some((n) => karpenterManaged(n, claimed) || karpenterLabel(n.labels))
  );
}

const taintText = (ts: readonly Taint[]): string =>
  ts.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ') || 'no taints';

/** Why `pool` cannot take over group `g`'s work, or undefined when it can. */
function misfit(g: NodeGroup, pool: NodePool): string | undefined {
  if (!sameTaints(g.taints, pool.template.taints))
    return `taints: the group has ${taintText(g.taints)}, NodePool ${pool.name} ${taintText(pool.template.taints)}`;
  const missing = Object.entries(g.selectedLabels).filter(([k, v]) => pool.template.labels[k] !== v);
  if (missing.length)
    return `NodePool ${pool.name} does not set ${missing.map(([k, v]) => `${k}=${v}`).join(', ')}, which the group's pods select`;
  const arch = pool.template.requirements.find((r) => r.key === 'kubernetes.io/arch');
  if (arch && arch.operator === 'In' && !g.arches.some((a) => arch.values.includes(a)))
    return `NodePool ${pool.name} allows ${arch.values.join(', ')}, the group runs ${g.arches.join(', ')}`;
  return undefined;
}

function mappingOf(g: NodeGroup, nodePool: string | null, reason?: string): GroupMapping {
  return {
    group: g.name,
    namedBy: g.namedBy,
    nodes: g.nodes.map((n) => n.name),
    instanceTypes: g.instanceTypes,
    capacityTypes: g.capacityTypes,
    nodePool,
    ...(reason ? { reason } : {}),
  };
}

/**
 * Each group's NodePool: the proposal's (`proposed`: group -> pool), else the first of `pools` (highest weight,
 * then name) with the group's taints, the labels its pods select and one of its architectures.
 */
export function mapGroups(
  groups: readonly NodeGroup[],
  pools: readonly NodePool[],
  proposed?: Readonly<Record<string, string>>,
  left: readonly { group: string; reason: string }[] = [],
): GroupMapping[] {
  const order = [...pools].sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  return groups.map((g) => {
    const out = left.find((l) => l.group === g.name);
    if (out) return mappingOf(g, null, out.reason);
    if (proposed) return mappingOf(g, proposed[g.name] ?? null, proposed[g.name] ? undefined : 'no proposed NodePool');
    const fits = order.find((p) => p.replicas === undefined && misfit(g, p) === undefined);
    if (fits) return mappingOf(g, fits.name);
    const why = order.length
      ? order.map((p) => misfit(g, p) ?? `NodePool ${p.name} is static (replicas)`).join('; ')
      : 'there is no NodePool';
    return mappingOf(g, null, `no NodePool fits: ${why}`);
  });
}

/** A node as Karpenter holds it after adopting it into `pool`: its NodeClaim, drifted `order` ms before now. */
function adopted(n: StateNode, pool: string, capacityType: string, now: number, order: number): StateNode {
  return {
    ...n,
    managed: true,
    hasNodeClaim: true,
    nodeClaimName: n.nodeClaimName ?? n.name,
    nodePoolName: pool,
    labels: {
      ...n.labels,
      [NODEPOOL_LABEL]: pool,
      [CAPACITY_TYPE_LABEL]: n.labels[CAPACITY_TYPE_LABEL] ?? capacityType,
      'karpenter.sh/registered': 'true',
      'karpenter.sh/initialized': 'true',
    },
    registered: true,
    initialized: true,
    conditions: {
      ...n.conditions,
      drifted: { reason: MIGRATION_DRIFT_REASON, since: now - order },
      initializedAt: n.conditions.initializedAt ?? n.creationTimestamp,
    },
  };
}

/**
 * The snapshot with every node of a mapped group adopted by its NodePool and drifted. Drift goes oldest
 * first: the groups in order, so each group is replaced before the next starts.
 */
export function adoptForMigration(built: Built, mapping: readonly GroupMapping[], groups: readonly NodeGroup[]): Built {
  const s = built.snapshot;
  const target = new Map<string, { pool: string; capacityType: string; order: number }>();
  const total = mapping.reduce((a, m) => a + m.nodes.length, 0);
  let i = 0;
  for (const m of mapping) {
    const g = groups.find((x) => x.name === m.group);
    for (const n of g?.nodes ?? []) {
      i++;
      if (m.nodePool) target.set(n.name, { pool: m.nodePool, capacityType: nodeCapacityType(n), order: total - i + 1 });
    }
  }
  const nodes = s.nodes.map((n) => {
    const t = target.get(n.name);
    return t ? adopted(n, t.pool, t.capacityType, s.now, t.order) : n;
  });
  return { ...built, snapshot: { ...s, nodes } };
}

/** The objects with the karpenter.sh/nodepool label of nodes and NodeClaims renamed (old -> new). */
export function renameNodePools(o: ClusterObjects, map: Readonly<Record<string, string>>): ClusterObjects {
  const relabel = <T extends { labels: Readonly<Record<string, string>> }>(x: T): T => {
    const to = map[x.labels[NODEPOOL_LABEL] ?? ''];
    return to === undefined ? x : { ...x, labels: { ...x.labels, [NODEPOOL_LABEL]: to } };
  };
  return {
    ...o,
    nodes: o.nodes.map((n) => {
      const r = relabel(n);
      return r === n ? n : { ...r, nodePoolName: r.labels[NODEPOOL_LABEL] };
    }),
    nodeClaims: o.nodeClaims.map(relabel),
  };
}

/** NodePool names on the nodes that the NodePools in use do not have, with how many nodes carry each. */
export function missingNodePools(o: ClusterObjects, pools: readonly NodePool[]): { name: string; nodes: number }[] {
  const have = new Set(pools.map((p) => p.name));
  const counts = new Map<string, number>();
  for (const n of o.nodes) {
    const p = n.labels[NODEPOOL_LABEL];
    if (p !== undefined && !have.has(p)) counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, nodes]) => ({ name, nodes }));
}

/**
 * Managed nodes checked for drift against the NodePools in the snapshot (after --nodepools or a rename): the
 * controller marks them Drifted once the new NodePools are applied, and the disruption engine replaces them.
 */
export function withDrift(built: Built): { built: Built; drifted: { node: string; reason: string }[] } {
  const s = built.snapshot;
  const drifted: { node: string; reason: string }[] = [];
  const nodes = s.nodes.map((n) => {
    if (!n.managed || n.conditions.drifted) return n;
    const reason = driftReason(s, n, { checkInstanceType: false });
    if (!reason) return n;
    drifted.push({ node: n.name, reason });
    return { ...n, conditions: { ...n.conditions, drifted: { reason, since: s.now } } };
  });
  return { built: drifted.length ? { ...built, snapshot: { ...s, nodes } } : built, drifted };
}

function migrationNote(info: MigrationInfo): string {
  const moved = info.groups.filter((g) => g.nodePool !== null);
  const nodes = moved.reduce((a, g) => a + g.nodes.length, 0);
  const how =
    info.trigger === 'detected'
      ? 'no node of the input is managed by Karpenter, so this is planned as a migration (as with --from cluster-autoscaler)'
      : 'migration from cluster-autoscaler';
  return `${how}: ${nodes} node${nodes === 1 ? '' : 's'} of ${moved.length} node group${moved.length === 1 ? '' : 's'} move to ${info.nodePools} NodePools, each replaced as Karpenter replaces a drifted node (budgets, PDBs and do-not-disrupt apply), then the cluster is consolidated`;
}

/** The report of a migration: the mapping, the moves and kept nodes said in migration terms, the note first. */
export function migrationReport(r: WhatIfReport, info: MigrationInfo): WhatIfReport {
  const groupOf = new Map(info.groups.flatMap((g) => g.nodes.map((n) => [n, g] as const)));
  const moves = r.moves.map((m) => {
    const g = m.remove.map((n) => groupOf.get(n)).find((x) => x?.nodePool);
    return g
      ? { ...m, reason: `node group ${g.group} -> NodePool ${g.nodePool}: replaced as a drifted node (${m.reason})` }
      : m;
  });
  const kept = r.kept.map((k) => (groupOf.get(k.node)?.nodePool ? { ...k, reason: `not migrated: ${k.reason}` } : k));
  const unmapped = info.groups
    .filter((g) => g.nodePool === null)
    .flatMap((g) =>
      g.nodes.map((node) => ({ node, reason: `not migrated: ${g.reason ?? 'no NodePool'}`, code: 'not-migrated' })),
    );
  return { ...r, notes: [migrationNote(info), ...r.notes], moves, kept: [...kept, ...unmapped], migration: info };
}
