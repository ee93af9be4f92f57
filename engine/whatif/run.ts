// whatIf(): one snapshot through the engine. Pending pods are provisioned (the controller's decision);
// in consolidate mode the cluster that results is then handed to the consolidation planner. The LP bound
// prices the cheapest cluster that could host every pod on these NodePools. Everything comes back as a
// WhatIfReport (types.ts): costs, the savings broken down by cause, the risks of the plan, the moves.
import type { LowerBound } from '../bound/index.ts';
import { zoneLoad } from '../disruption/pricing.ts';
import { HOURS_PER_MONTH, roundMicro } from '../domain/money.ts';
import type { Pod, Snapshot, StateNode } from '../domain/types.ts';
import { reschedulablePods } from '../disruption/pods.ts';
import { asLaunched } from '../launch/price.ts';
import { provisionInput } from '../model/input.ts';
import type { ProvisionPlan } from '../model/types.ts';
import { savingsBreakdown } from './breakdown.ts';
import type { ConsolidationCommand, ConsolidationPlanner, PlanProgress, ProvisionFn } from './consolidation.ts';
import type { Built } from './build.ts';
import { nodePrice, priceInfo } from './prices.ts';
import { commandMove, existingRow, launchMove, newRow, trimWarnings, type Ledger } from './report.ts';
import { withBound, type ReportBound, type UnboundReport } from './bounded.ts';
import { risksOf } from './risks.ts';
import { afterProvisioning, launchedVirtual, Namer, virtualNode, type VirtualNode } from './state.ts';
import type { Move, NodeExplanation, NodeRow, WhatIfOptions, WhatIfReport } from './types.ts';

export interface WhatIfEngine {
  readonly provision: ProvisionFn;
  lowerBound(s: Snapshot, pods: readonly Pod[]): Promise<LowerBound>;
  /** The consolidation planner (the disruption engine, disruption-planner.ts). */
  readonly planner: ConsolidationPlanner;
}

interface WhatIfInput {
  readonly built: Built;
  readonly sources: readonly string[];
  readonly options: WhatIfOptions;
  /** How far the run is (0..1) and what it is doing: provisioning, the consolidation plan's steps, the bound. */
  readonly onProgress?: (fraction: number, stage: string) => void;
}

function podIndex(s: Snapshot): Map<string, Pod> {
  const m = new Map<string, Pod>();
  for (const n of s.nodes) for (const p of n.pods) m.set(p.uid, p);
  for (const p of s.pendingPods) m.set(p.uid, p);
  return m;
}

/**
 * The best bound (engine/bound) over every pod Karpenter could move or must place, plus what unmanaged nodes cost.
 * It depends on the snapshot alone, not on the plan.
 */
export async function reportBound(engine: Pick<WhatIfEngine, 'lowerBound'>, built: Built): Promise<ReportBound> {
  const s = built.snapshot;
  const pods = [
    ...s.nodes
      .filter((n) => n.managed)
      .flatMap((n) => reschedulablePods(n).map(({ nodeName: _n, ...p }) => ({ ...p, phase: 'Pending' as const }))),
    ...s.pendingPods,
  ];
  const fixed = s.nodes.filter((n) => !n.managed).reduce((a, n) => a + nodePrice(n, built.catalog).price, 0);
  const lb = await engine.lowerBound({ ...s, nodes: [] }, pods);
  return { perHour: lb.status === 'optimal' ? fixed + lb.perHour : 0, status: lb.status, kind: lb.kind };
}

/** What the run knows as it goes: the placement after the plan, nodes added and removed. */
interface State {
  readonly l: Ledger;
  readonly namer: Namer;
  readonly placement: Map<string, Pod[]>;
  readonly home: Map<string, string>;
  readonly removed: Set<string>;
  readonly added: VirtualNode[];
  readonly launched: VirtualNode[];
  readonly empty: Set<string>;
  readonly moves: Move[];
}

/**
 * Step 0: the pending pods through provision(); new NodeClaims become virtual nodes spread over equally cheap zones.
 * Karpenter's algorithm (--exact) names each NodeClaim's cheapest option, whatever its launch would do (a metal type
 * while generic ones remain, a spot price where the launch takes on-demand); the report names the type and price the
 * AWS provider's launch filters pick among the same options (engine/launch/price.ts), as the improvement phase's
 * plans do already. Placements are Karpenter's either way.
 */
async function provisionStep(
  input: WhatIfInput,
  engine: WhatIfEngine,
  st: State,
): Promise<{ plan: ProvisionPlan; after: Snapshot }> {
  const s = input.built.snapshot;
  const planned = await engine.provision(s, s.pendingPods, { exact: input.options.exact });
  const plan = input.options.exact ? asLaunched(provisionInput(s, []), planned) : planned;
  const loads = new Map<string, Map<string, number>>();
  const load = (pool: string) => loads.get(pool) ?? loads.set(pool, zoneLoad(s.nodes, pool)).get(pool)!;
  for (const c of plan.newNodeClaims)
    st.launched.push(virtualNode(s, st.namer.next(c.nodePool), c, st.l.podsByUid, load(c.nodePool)));
  st.added.push(...st.launched);
  const after = afterProvisioning(s, plan, st.launched, st.l.podsByUid);
  const first = launchMove(plan, st.launched, st.l);
  if (first) st.moves.push(first);
  for (const n of after.nodes) {
    st.placement.set(n.name, [...n.pods]);
    for (const p of n.pods) st.home.set(p.uid, n.name);
  }
  return { plan, after };
}

/** One consolidation command carried out on the placement (replacements named, pods rebound, candidates gone). */
function applyToPlacement(
  i: number,
  cmd: ConsolidationCommand,
  final: ReadonlyMap<string, StateNode>,
  s: Snapshot,
  st: State,
): void {
  const names = cmd.replacements.map((r, k) => cmd.replacementNames?.[k] ?? st.namer.next(r.nodePool));
  st.moves.push(commandMove(i + 1, cmd, names, (u) => st.home.get(u), st.l));
  if (cmd.kind === 'delete' && cmd.podsMoved === 0) for (const c of cmd.candidates) st.empty.add(c);
  const leaving = new Set(cmd.candidates);
  const moving = (uids: readonly string[]): string[] => uids.filter((u) => leaving.has(st.home.get(u) ?? ''));
  const land = (node: string, uids: readonly string[]): void => {
    st.placement.set(node, [
      ...(st.placement.get(node) ?? []),
      ...uids.flatMap((u) => (st.l.podsByUid.has(u) ? [st.l.podsByUid.get(u)!] : [])),
    ]);
    for (const u of uids) st.home.set(u, node);
  };
  cmd.replacements.forEach((r, k) => {
    const launched = final.get(names[k]!);
    const v = launched ? launchedVirtual(r, launched, st.l.podsByUid, s) : virtualNode(s, names[k]!, r, st.l.podsByUid);
    st.added.push(v);
    land(v.name, moving(r.pods));
  });
  for (const [node, uids] of cmd.onExisting ?? []) land(node, moving(uids));
  for (const name of cmd.candidates) {
    st.removed.add(name);
    st.placement.delete(name);
  }
}

async function consolidateStep(
  input: WhatIfInput,
  engine: WhatIfEngine,
  after: Snapshot,
  st: State,
): Promise<{ kept: readonly NodeExplanation[]; planner: string; truncated: boolean }> {
  const p = engine.planner;
  const report = input.onProgress;
  const onProgress = report
    ? (q: PlanProgress) =>
        report(0.1 + (0.8 * q.done) / (q.planned + 1), `consolidation step ${q.done} of about ${q.planned}`)
    : undefined;
  const c = await p.plan(after, {
    exact: input.options.exact,
    name: (pool) => st.namer.next(pool),
    ...(onProgress ? { onProgress } : {}),
  });
  const final = new Map((c.final?.nodes ?? []).map((n) => [n.name, n] as const));
  c.commands.forEach((cmd, i) => applyToPlacement(i, cmd, final, input.built.snapshot, st));
  return { kept: c.kept, planner: p.name, truncated: c.truncated === true };
}

function rowsOf(s: Snapshot, st: State): NodeRow[] {
  const rows: NodeRow[] = [];
  for (const n of s.nodes)
    rows.push(
      existingRow(
        n,
        st.removed.has(n.name) ? 'removed' : 'kept',
        st.removed.has(n.name) ? n.pods : (st.placement.get(n.name) ?? []),
        st.l,
      ),
    );
  for (const v of st.added) if (!st.removed.has(v.name)) rows.push(newRow(v, st.placement.get(v.name) ?? v.node.pods));
  return rows;
}

const TRUNCATED_NOTE =
  "the improvement phase's wall-clock safety net fired: this plan is not the one its work budget gives, and may differ on another machine (raise the safety net or lower the work budget)";

function notes(input: WhatIfInput, pending: number): string[] {
  const o = input.options;
  if (o.mode === 'provision') {
    return [
      `pending pods only${o.modeDefaulted ? ` (the default: ${pending} pending pod${pending === 1 ? '' : 's'} in the snapshot)` : ''}; run with --mode consolidate to see consolidation`,
    ];
  }
  return [
    o.modeDefaulted
      ? 'consolidation (the default: no pending pods in the snapshot); run with --mode provision for pending pods only'
      : 'pending pods placed, then the cluster consolidated',
  ];
}

function unschedulableOf(plan: ProvisionPlan, podsByUid: ReadonlyMap<string, Pod>): WhatIfReport['unschedulable'] {
  return [...plan.unschedulable, ...plan.ignored].map((e) => {
    const p = podsByUid.get(e.uid);
    return {
      pod: p ? `${p.namespace}/${p.name}` : e.uid,
      reason: e.reason,
      ...(e.perNodePool ? { perNodePool: e.perNodePool } : {}),
    };
  });
}

/** $/h before and after: a reserved node that goes is still paid for (its reservation bills either way). */
function costs(rows: readonly NodeRow[]): { before: number; after: number } {
  const before = rows.filter((r) => r.fate !== 'new').reduce((a, r) => a + r.pricePerHour, 0);
  const after = rows
    .filter((r) => r.fate !== 'removed' || r.capacityType === 'reserved')
    .reduce((a, r) => a + r.pricePerHour, 0);
  return { before, after };
}

/** The nodes provisioning launched, as the savings breakdown reads them. */
function launchedNodes(st: State) {
  return st.launched.map((v) => ({
    name: v.name,
    ...(v.instanceType ? { instanceType: v.instanceType.name } : {}),
    ...(v.zone ? { zone: v.zone } : {}),
    ...(v.capacityType ? { capacityType: v.capacityType } : {}),
    nodePool: v.claim.nodePool,
    pricePerHour: v.claim.price,
  }));
}

/** One snapshot through the engine: the plan, then its lower bound. */
export async function whatIf(input: WhatIfInput, engine: WhatIfEngine): Promise<WhatIfReport> {
  const report = await whatIfPlan(input, engine);
  input.onProgress?.(0.9, 'lower bound');
  return withBound(report, await reportBound(engine, input.built));
}

/** The report but its lower bound: provisioning, then (consolidate mode) the consolidation plan. */
export async function whatIfPlan(input: WhatIfInput, engine: WhatIfEngine): Promise<UnboundReport> {
  const { built, options } = input;
  const s = built.snapshot;
  const st: State = {
    l: { catalog: built.catalog, podsByUid: podIndex(s), warnings: [...built.warnings] },
    namer: new Namer(),
    placement: new Map(),
    home: new Map(),
    removed: new Set(),
    added: [],
    launched: [],
    empty: new Set(),
    moves: [],
  };
  const { plan, after } = await provisionStep(input, engine, st);
  input.onProgress?.(0.1, 'pending pods placed');
  const consolidation = options.mode === 'consolidate' ? await consolidateStep(input, engine, after, st) : undefined;
  const rows = rowsOf(s, st);
  const cost = costs(rows);
  const savingsPerHour = roundMicro(cost.before - cost.after);
  const unschedulable = unschedulableOf(plan, st.l.podsByUid);
  const kept = consolidation?.kept ?? [];
  const truncated = plan.truncated === true || consolidation?.truncated === true;
  const launched = launchedNodes(st);
  return {
    cost,
    schema: 'karpenter-ts/whatif-report@2',
    input: {
      sources: input.sources,
      region: built.region,
      now: new Date(s.now).toISOString(),
      mode: options.mode,
      modeSource: options.modeDefaulted ? 'default' : 'option',
      exact: options.exact,
      ...(consolidation ? { planner: consolidation.planner } : {}),
    },
    notes: [...notes(input, s.pendingPods.length), ...(truncated ? [TRUNCATED_NOTE] : [])],
    ...(truncated ? { truncated: true as const } : {}),
    risks: risksOf({
      rows,
      moves: st.moves,
      kept,
      placement: st.placement,
      catalog: built.catalog,
      nodePools: s.nodePools.length,
    }),
    costPerHourBefore: roundMicro(cost.before),
    costPerHourAfter: roundMicro(cost.after),
    costPerMonthBefore: roundMicro(cost.before * HOURS_PER_MONTH),
    costPerMonthAfter: roundMicro(cost.after * HOURS_PER_MONTH),
    savingsPerHour,
    counts: {
      nodesBefore: s.nodes.length,
      nodesAfter: rows.filter((r) => r.fate !== 'removed').length,
      pods: st.l.podsByUid.size,
      pending: s.pendingPods.length,
      unschedulable: unschedulable.length,
    },
    savingsBreakdown: savingsBreakdown({
      rows,
      launched,
      launchedRemoved: new Set(launched.filter((l) => st.removed.has(l.name)).map((l) => l.name)),
      empty: st.empty,
      catalog: built.catalog,
      savingsPerHour,
    }),
    prices: priceInfo(built.region, rows, built.live),
    nodes: rows,
    moves: st.moves,
    unschedulable,
    kept,
    warnings: trimWarnings(st.l.warnings),
  };
}
