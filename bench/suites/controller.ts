// `npm run bench -- controller [--json] [--quick] [--sizes=NODES]`: the real controller, in a process of its
// own, against the simulator (API server, kubelets, cloud) at scale (bench/controller/scenarios.ts). Rows: the
// decision latency (batch window closed -> first NodeClaim created, median), the controller process's
// event-loop delay (p99, max) and peak resident memory over the measured phase, and the disruption passes'
// evaluation time where consolidation runs. --sizes sets the big cluster's node count (default 5,000; 20 pods
// a node); --quick runs fewer rounds and shorter phases. BENCH_CONTROLLER_SCENARIOS=empty or =big runs only
// provision-empty or only the big cluster's scenarios (steady-churn, consolidate-fragmented); =setup only sets the
// big cluster up, as a measured phase of its own (where the set-up time goes: bench/controller/timeline.ts).
// BENCH_CONTROLLER_MEMORY_LIMIT_MIB=N runs the controller with the heaps Node gives it in a container limited to N
// MiB (the chart's limit is 1,024; bench/controller/harness.ts, containerHeapFlags); each row then says
// `memoryLimitMiB`.
import { bigClusterScenarios, provisionEmpty, setupScenario, type ControllerRow } from '../controller/scenarios.ts';

export async function run(opts: {
  json: boolean;
  quick: boolean;
  sizes?: readonly number[];
}): Promise<ControllerRow[]> {
  // Progress on stderr, with --json too (stdout carries only the rows): a full run takes a long while.
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const o = { quick: opts.quick, log };
  const only = process.env['BENCH_CONTROLLER_SCENARIOS'] ?? '';
  if (only && only !== 'empty' && only !== 'big' && only !== 'setup')
    throw new Error(`BENCH_CONTROLLER_SCENARIOS must be empty, big or setup, got ${only}`);
  const rows: ControllerRow[] = [];
  const nodes = opts.sizes?.[0] ?? 5_000;
  if (only === 'setup') rows.push(await setupScenario(o, nodes));
  if (!only || only === 'empty') rows.push(await provisionEmpty(o));
  if (!only || only === 'big') rows.push(...(await bigClusterScenarios(o, nodes)));
  const limit = process.env['BENCH_CONTROLLER_MEMORY_LIMIT_MIB'];
  const stated: ControllerRow[] = limit ? rows.map((r) => ({ ...r, memoryLimitMiB: Number(limit) })) : rows;
  for (const r of stated) log(`${r.scenario}: memory at the end (MiB) ${JSON.stringify(r['memory'])}`);
  return stated;
}
