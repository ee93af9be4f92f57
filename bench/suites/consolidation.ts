// The consolidation benchmark: fragmented clusters on the real EC2 catalog, from workloads sized for 100, 1,000,
// 5,000, 9,700 and 10,000 nodes (the solver packs the last into about 13,400 nodes, so 9,700, about 10,200 nodes,
// is the suite's "10,000 nodes" row; every row reports the cluster's actual node count).
// "karpenter" applies Karpenter's methods (emptiness, multi-node, single-node, with their timeouts) one
// command per loop until they find nothing; "repack" runs the global repack until it finds nothing;
// "karpenter+repack" runs the repack after Karpenter's methods stopped. Every row carries the cost before,
// after Karpenter's methods, after this engine, and the wall time to the full plan (all loops, solver included;
// the controller's 15 s validation waits and node launches are not part of it). Decisions are made as the
// controller makes them: on an Engine's worker, over a warm cluster model. Each loop's decision is carried out
// with ClusterEngine.carryOut: this thread applies the commands to its snapshot while the model carries the same
// commands out on itself, so the next loop ships nothing for the nodes they rebuilt (a controller's model learns
// the same changes from the cluster instead, shipped as a delta; the controller benchmark times that). Before each
// timed run the model is brought to the run's starting snapshot (as a controller's model is current when its
// loop starts), so a run does not time re-shipping the cluster the previous run left behind.
//
// Every row's `ms` is its first run on the suite's one worker, which serves every size in turn: for `repack` alone
// (BENCH_CONSOLIDATION_ENGINES=repack) at the first size, a fresh worker (its JIT cold, its model's caches empty;
// only the lower bound and the model's first delta ran on it); at later sizes, a worker that ran the earlier sizes'
// plans (its JIT warm, this cluster's model new). The repack row also has `warmMs`: the same plan computed again
// right after, on the same worker and model (what a running controller's worker, warmed by its earlier
// decisions, takes); the two runs must make the same plan.
//
// BENCH_CONSOLIDATION_ENGINES (a comma list of karpenter, repack, karpenter+repack; default all three) runs only
// those rows: `repack` alone times the repack on a model no karpenter row ran on before (karpenter+repack needs
// karpenter).
import type { ClusterEngine, EngineDisruptOptions, LoopState, Snapshot } from '../../engine/index.ts';
import { createEngine, INITIAL_LOOP_STATE, type Engine } from '../../engine/index.ts';
import { WasmSolver } from '../../engine/local.ts';
import { clusterCost, fragmentedCluster, type Scenario } from './consolidation-scenarios.ts';

export interface BenchRow {
  readonly suite: string;
  readonly scenario: string;
  readonly engine: string;
  readonly nodesBefore: number;
  readonly beforeCostPerHour: number;
  readonly karpenterAfterCostPerHour: number;
  readonly afterCostPerHour: number;
  /** The best lower bound on $/h of new capacity for the pods left on managed nodes (engine.lowerBound). */
  readonly lowerBound: number;
  /** Which bound it is (engine/bound: 'lp', 'patterns', 'patterns-rounded', 'whole-nodes', 'whole-node-patterns'). */
  readonly lowerBoundKind: string;
  /** afterCostPerHour / lowerBound. */
  readonly ratio: number;
  /** Wall ms of the full plan, its first run on the suite's worker (for repack alone: a fresh worker). */
  readonly ms: number;
  /**
   * The repack row's second run of the same plan on the same worker and model (JIT and caches warm), wall ms: the
   * plan time a controller's always-warm model sees, the figure issue #15's aims (1.5 s at 5,000 nodes, 3 s at
   * 10,000: size 9,700, 10,164 nodes) are about. The table prints it next to `ms`.
   */
  readonly warmMs?: number;
  readonly nodesAfter: number;
  readonly pods: number;
  readonly loops: number;
  readonly commands: number;
  /** False when the run hit its wall-clock cap, or ended on a consolidation timeout, rather than finding nothing. */
  readonly converged: boolean;
}

interface Outcome {
  readonly after: Snapshot;
  readonly ms: number;
  readonly loops: number;
  readonly commands: number;
  readonly converged: boolean;
}

/** Runs disrupt() on a warm model and applies its decision (with any repack follow-ups) until it finds nothing. */
async function untilStop(
  cluster: ClusterEngine,
  start: Snapshot,
  opts: EngineDisruptOptions,
  capMs: number,
): Promise<Outcome> {
  await cluster.lowerBound(start, []);
  const t0 = performance.now();
  let s = start;
  let state: LoopState = INITIAL_LOOP_STATE;
  let version = 0;
  let loops = 0;
  let commands = 0;
  for (;;) {
    if (performance.now() - t0 > capMs)
      return { after: s, ms: performance.now() - t0, loops, commands, converged: false };
    loops++;
    const r = await cluster.disrupt(s, { ...opts, state, consolidationState: version, deadlines: true });
    state = r.state;
    const d = r.decision;
    // A no-op after a timeout is not "nothing to do": Karpenter would keep looping (at scale, forever).
    const timedOut = (r.metrics.timeouts.single ?? 0) + (r.metrics.timeouts.multi ?? 0) > 0;
    if (d.kind === 'noop') return { after: s, ms: performance.now() - t0, loops, commands, converged: !timedOut };
    const carried = [d, ...(d.followUps ?? []), ...(d.concurrent ?? [])];
    const names = carried.map((c) => {
      const k = commands++;
      return c.replacements.map((_, i) => `v${version}-c${k}-r${i}`);
    });
    s = await cluster.carryOut(s, carried, names);
    version++;
  }
}

/** The repack's plan again on the same worker and model (warm), wall ms; it must be the first run's plan. */
async function warmRepeat(cluster: ClusterEngine, start: Snapshot, first: Outcome, capMs: number): Promise<number> {
  const again = await untilStop(cluster, start, { repackDeadlineMs: 30_000, repack: 'only' }, capMs);
  const plan = (o: Outcome) => `${managed(o.after)} nodes, $${clusterCost(o.after).toFixed(4)}/h, ${o.loops} loops`;
  if (plan(again) !== plan(first))
    throw new Error(`consolidation bench: the warm repack planned ${plan(again)}, the first run ${plan(first)}`);
  return again.ms;
}

function managed(s: Snapshot): number {
  return s.nodes.filter((n) => n.hasNodeClaim).length;
}

/** The best bound for the pods on managed nodes, as if every node were new capacity of the same NodePools. */
async function boundOf(engine: Engine, s: Snapshot): Promise<{ perHour: number; kind: string }> {
  const pods = s.nodes.filter((n) => n.hasNodeClaim).flatMap((n) => n.pods);
  const b = await engine.lowerBound({ ...s, nodes: s.nodes.filter((n) => !n.hasNodeClaim) }, pods);
  if (b.status !== 'optimal' || b.unplaceable.length > 0)
    throw new Error(`consolidation bench: lower bound ${b.status}, ${b.unplaceable.length} pods unplaceable`);
  return { perHour: b.perHour, kind: b.kind };
}

const ENGINES = ['karpenter', 'repack', 'karpenter+repack'] as const;

/** The rows BENCH_CONSOLIDATION_ENGINES asks for (all by default). */
function enginesOf(env: string | undefined): ReadonlySet<string> {
  const asked = (env ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (asked.length === 0) return new Set(ENGINES);
  for (const e of asked)
    if (!(ENGINES as readonly string[]).includes(e))
      throw new Error(`BENCH_CONSOLIDATION_ENGINES: unknown engine ${e} (expected ${ENGINES.join(', ')})`);
  if (asked.includes('karpenter+repack') && !asked.includes('karpenter'))
    throw new Error('BENCH_CONSOLIDATION_ENGINES: karpenter+repack starts where karpenter ended; list karpenter too');
  return new Set(asked);
}

async function scenarioRows(
  sc: Scenario,
  engine: Engine,
  capMs: number,
  engines: ReadonlySet<string>,
  log: (m: string) => void,
  /** Nothing ran on the worker before this scenario's first row. */
  fresh: boolean,
): Promise<BenchRow[]> {
  const base = { repackDeadlineMs: 30_000 } satisfies EngineDisruptOptions;
  // One warm model per scenario, as a controller keeps across its decisions (each run starts from its own snapshot).
  const cluster = engine.cluster(sc.name);
  const before = clusterCost(sc.snapshot);
  const { perHour: bound, kind } = await boundOf(engine, sc.snapshot);
  log(
    `${sc.name}: ${managed(sc.snapshot)} nodes, ${sc.pods} pods, $${before.toFixed(2)}/h, lower bound $${bound.toFixed(2)}/h`,
  );
  const skipped: Outcome = { after: sc.snapshot, ms: 0, loops: 0, commands: 0, converged: true };
  const karpenter = engines.has('karpenter')
    ? await untilStop(cluster, sc.snapshot, { ...base, repack: 'off' }, capMs)
    : skipped;
  const kCost = clusterCost(karpenter.after);
  if (engines.has('karpenter'))
    log(
      `  karpenter: ${managed(karpenter.after)} nodes, $${kCost.toFixed(2)}/h, ${karpenter.loops} loops, ${(karpenter.ms / 1000).toFixed(1)} s${karpenter.converged ? '' : ' (capped)'}`,
    );
  const repack = engines.has('repack')
    ? await untilStop(cluster, sc.snapshot, { ...base, repack: 'only' }, capMs)
    : skipped;
  const warm = engines.has('repack') ? await warmRepeat(cluster, sc.snapshot, repack, capMs) : undefined;
  if (engines.has('repack'))
    log(
      `  repack: ${managed(repack.after)} nodes, $${clusterCost(repack.after).toFixed(2)}/h, ${repack.loops} loops, ${(repack.ms / 1000).toFixed(1)} s first run${fresh ? ' (fresh worker)' : ''}, ${((warm ?? 0) / 1000).toFixed(1)} s warm (again, same worker and model)`,
    );
  const both = engines.has('karpenter+repack')
    ? await untilStop(cluster, karpenter.after, { ...base, repack: 'only' }, capMs)
    : skipped;
  await cluster.close();
  if (engines.has('karpenter+repack'))
    log(
      `  karpenter+repack: ${managed(both.after)} nodes, $${clusterCost(both.after).toFixed(2)}/h, +${(both.ms / 1000).toFixed(1)} s`,
    );
  const row = (engine: string, o: Outcome, extraMs = 0): BenchRow => ({
    suite: 'consolidation',
    scenario: sc.name,
    engine,
    nodesBefore: managed(sc.snapshot),
    beforeCostPerHour: before,
    karpenterAfterCostPerHour: kCost,
    afterCostPerHour: clusterCost(o.after),
    lowerBound: bound,
    lowerBoundKind: kind,
    ratio: clusterCost(o.after) / bound,
    ms: o.ms + extraMs,
    nodesAfter: managed(o.after),
    pods: sc.pods,
    loops: o.loops,
    commands: o.commands,
    converged: o.converged,
  });
  const rows = [
    row('karpenter', karpenter),
    { ...row('repack', repack), ...(warm !== undefined ? { warmMs: warm } : {}) },
    row('karpenter+repack', both, karpenter.ms),
  ];
  return rows.filter((r) => engines.has(r.engine));
}

/**
 * The cluster's seed: a size's place in the suite's first list of sizes, else the size itself, so `--sizes 1000`
 * builds the same cluster as a full run, and the clusters of earlier figures stay the same.
 */
export function seedOf(n: number): number {
  const at = [100, 1000, 5000, 10_000].indexOf(n);
  return 20_261_129 + (at >= 0 ? at : n);
}

export async function run(opts: { json: boolean; quick: boolean; sizes?: readonly number[] }): Promise<BenchRow[]> {
  const log = (m: string) => {
    if (!opts.json && process.stderr.isTTY) process.stderr.write(m + '\n');
  };
  const solver = new WasmSolver();
  const all = [100, 1000, 5000, 9700, 10_000];
  const sizes = opts.sizes ?? (opts.quick ? [100] : all);
  // Karpenter's single-node loops take about a minute each at 1,000 nodes: cap every run (rows say if capped).
  const capMs = opts.quick ? 120_000 : 600_000;
  const engines = enginesOf(process.env['BENCH_CONSOLIDATION_ENGINES']);
  const rows: BenchRow[] = [];
  const engine = createEngine({ threads: 1 });
  try {
    for (const [i, n] of sizes.entries()) {
      const sc = await fragmentedCluster(n, seedOf(n), solver);
      const fresh = i === 0 && !engines.has('karpenter');
      rows.push(...(await scenarioRows(sc, engine, capMs, engines, log, fresh)));
    }
  } finally {
    await engine.close();
  }
  return rows;
}
