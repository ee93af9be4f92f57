// whatIf(): one snapshot through the engine. Pending pods are provisioned (the controller's decision);
// in consolidate mode the cluster that results is then handed to the consolidation planner. The LP bound
// prices the cheapest cluster that could host every pod on these NodePools. Everything comes back as a
// WhatIfReport (types.ts).
import type { LowerBound } from '../bound/index.ts';
import { HOURS_PER_MONTH } from '../domain/money.ts';
import type { Pod, Snapshot } from '../domain/types.ts';
import { reschedulablePods } from '../disruption/pods.ts';
import type { ConsolidationPlanner, ProvisionFn } from './consolidation.ts';
import type { Built } from './build.ts';
import { nodePrice } from './prices.ts';
import { commandMove, existingRow, launchMove, newRow, trimWarnings, type Ledger } from './report.ts';
import { afterProvisioning, Namer, virtualNode, type VirtualNode } from './state.ts';
import type { Move, NodeRow, WhatIfOptions, WhatIfReport } from './types.ts';

export interface WhatIfEngine {
  readonly provision: ProvisionFn;
  lowerBound(s: Snapshot, pods: readonly Pod[]): Promise<LowerBound>;
  /** The consolidation planner (the disruption engine, disruption-planner.ts). */
  readonly planner: ConsolidationPlanner;
}

export interface WhatIfInput {
  readonly built: Built;
  readonly sources: readonly string[];
  readonly options: WhatIfOptions;
}

const round = (v: number): number => Math.round(v * 1e6) / 1e6;

function podIndex(s: Snapshot): Map<string, Pod> {
  const m = new Map<string, Pod>();
  for (const n of s.nodes) for (const p of n.pods) m.set(p.uid, p);
  for (const p of s.pendingPods) m.set(p.uid, p);
  return m;
}

/** The LP bound over every pod Karpenter could move or must place, plus what unmanaged nodes cost. */
async function bound(engine: WhatIfEngine, built: Built): Promise<{ perHour: number; status: string }> {
  const s = built.snapshot;
  const pods = [...s.nodes.filter((n) => n.managed).flatMap((n) => reschedulablePods(n).map(({ nodeName: _n, ...p }) => ({ ...p, phase: 'Pending' as const }))), ...s.pendingPods];
  const fixed = s.nodes.filter((n) => !n.managed).reduce((a, n) => a + nodePrice(n, built.catalog).price, 0);
  const lb = await engine.lowerBound({ ...s, nodes: [] }, pods);
  return { perHour: lb.status === 'optimal' ? fixed + lb.perHour : 0, status: lb.status };
}

export async function whatIf(input: WhatIfInput, engine: WhatIfEngine): Promise<WhatIfReport> {
  const { built, options } = input;
  const s = built.snapshot;
  const podsByUid = podIndex(s);
  const l: Ledger = { catalog: built.catalog, podsByUid, warnings: [...built.warnings] };
  const namer = new Namer();

  const plan = await engine.provision(s, s.pendingPods, { exact: options.exact });
  const launched: VirtualNode[] = plan.newNodeClaims.map((c) => virtualNode(s, namer.next(c.nodePool), c, podsByUid));
  const after = afterProvisioning(s, plan, launched, podsByUid);
  const moves: Move[] = [];
  const first = launchMove(plan, launched, l);
  if (first) moves.push(first);

  // Final placement: node name -> pods, starting from the provisioned state; consolidation edits it.
  const placement = new Map<string, Pod[]>(after.nodes.map((n) => [n.name, [...n.pods]]));
  const removed = new Set<string>();
  const added: VirtualNode[] = [...launched];
  let kept: WhatIfReport['kept'] = [];
  let planner: string | undefined;
  if (options.mode === 'consolidate') {
    const p = engine.planner;
    planner = p.name;
    const c = await p.plan(after, { exact: options.exact, name: (pool) => namer.next(pool) });
    kept = c.kept;
    const home = new Map<string, string>();
    for (const [node, pods] of placement) for (const pod of pods) home.set(pod.uid, node);
    const podsOf = (uids: readonly string[]): Pod[] => uids.flatMap((u) => (podsByUid.has(u) ? [podsByUid.get(u)!] : []));
    c.commands.forEach((cmd, i) => {
      const names = cmd.replacements.map((r, k) => cmd.replacementNames?.[k] ?? namer.next(r.nodePool));
      moves.push(commandMove(i + 1, cmd, names, (u) => home.get(u), l));
      const leaving = new Set(cmd.candidates);
      const moving = (uids: readonly string[]): string[] => uids.filter((u) => leaving.has(home.get(u) ?? ''));
      const land = (node: string, uids: readonly string[]): void => {
        placement.set(node, [...(placement.get(node) ?? []), ...podsOf(uids)]);
        for (const u of uids) home.set(u, node);
      };
      cmd.replacements.forEach((r, k) => {
        const v = virtualNode(s, names[k]!, r, podsByUid);
        added.push(v);
        land(v.name, moving(r.pods));
      });
      for (const [node, uids] of cmd.onExisting ?? []) land(node, moving(uids));
      for (const name of cmd.candidates) {
        removed.add(name);
        placement.delete(name);
      }
    });
  }

  const rows: NodeRow[] = [];
  for (const n of s.nodes) rows.push(existingRow(n, removed.has(n.name) ? 'removed' : 'kept', removed.has(n.name) ? n.pods : (placement.get(n.name) ?? []), l));
  for (const v of added) if (!removed.has(v.name)) rows.push(newRow(v, placement.get(v.name) ?? v.node.pods));
  const before = rows.filter((r) => r.fate !== 'new').reduce((a, r) => a + r.pricePerHour, 0);
  const afterCost = rows.filter((r) => r.fate !== 'removed').reduce((a, r) => a + r.pricePerHour, 0);
  const lb = await bound(engine, built);
  const eff = (cost: number): number | null => (cost > 0 && lb.perHour > 0 ? round(lb.perHour / cost) : null);
  const unschedulable = [...plan.unschedulable, ...plan.ignored].map((e) => {
    const p = podsByUid.get(e.uid);
    return { pod: p ? `${p.namespace}/${p.name}` : e.uid, reason: e.reason, ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}) };
  });
  return {
    schema: 'karpenter-ts/whatif-report@1',
    input: {
      sources: input.sources, region: built.region, now: new Date(s.now).toISOString(), mode: options.mode, exact: options.exact,
      ...(planner ? { planner } : {}),
    },
    costPerHourBefore: round(before),
    costPerHourAfter: round(afterCost),
    costPerMonthBefore: round(before * HOURS_PER_MONTH),
    costPerMonthAfter: round(afterCost * HOURS_PER_MONTH),
    savingsPerHour: round(before - afterCost),
    lowerBoundPerHour: round(lb.perHour),
    lowerBoundStatus: lb.status,
    efficiencyBefore: eff(before),
    efficiencyAfter: eff(afterCost),
    counts: {
      nodesBefore: s.nodes.length,
      nodesAfter: rows.filter((r) => r.fate !== 'removed').length,
      pods: podsByUid.size,
      pending: s.pendingPods.length,
      unschedulable: unschedulable.length,
    },
    nodes: rows,
    moves,
    unschedulable,
    kept,
    warnings: trimWarnings(l.warnings),
  };
}

