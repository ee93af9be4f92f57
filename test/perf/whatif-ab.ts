// `node --import tsx test/perf/whatif-ab.ts /path/to/other/tree [scenarios]`: the pool suite's what-if job
// (bench/scenarios/whatif.ts: a seeded fragmented cluster, consolidated with Karpenter's exact algorithm, and its LP
// bound) in this thread, this tree against another checkout of the project, each tree with its own engine modules,
// scenarios interleaved in one process (the order alternating) so both see the same load. Prints the median process
// CPU and wall ms per scenario for each tree, their ratios, and whether both trees' reports are identical.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Built, WhatIfEngine, WhatIfReport } from '../../engine/index.ts';
import type { ScenarioInput } from '../../bench/scenarios/whatif.ts';

/** One tree's what-if job on a scenario: the report's digest (its whole JSON) and its cost after. */
type Run = (input: ScenarioInput) => Promise<{ digest: string; costPerHourAfter: number }>;

interface TreeModules {
  readonly scenario?: (input: ScenarioInput) => Built;
  readonly whatIf?: (input: unknown, engine: WhatIfEngine) => Promise<WhatIfReport>;
  readonly inThreadEngine?: () => WhatIfEngine;
}

/**
 * A tree's job, from its own modules: the scenario builder of its pool suite and the engine's in-thread what-if (the
 * call a pool worker makes for a job). The what-if input has been `{ built, sources, options }` since the engine
 * became a process boundary; a tree without these exports is named with what it lacks.
 */
async function load(root: string): Promise<Run> {
  const file = (rel: string) => {
    const p = resolve(root, rel);
    if (!existsSync(p)) throw new Error(`whatif-ab: ${root} has no ${rel}: is it a checkout of this project?`);
    return p;
  };
  const m: TreeModules = {
    ...(await import(file('bench/scenarios/whatif.ts'))),
    ...(await import(file('engine/local.ts'))),
  };
  const missing = (['scenario', 'whatIf', 'inThreadEngine'] as const).filter((k) => typeof m[k] !== 'function');
  if (missing.length) throw new Error(`whatif-ab: ${root}: no ${missing.join(', ')} exported where expected`);
  const engine = m.inThreadEngine!();
  return async (input) => {
    const built = m.scenario!(input);
    const r = await m.whatIf!(
      { built, sources: [`seed-${input.seed}`], options: { mode: 'consolidate', exact: true } },
      engine,
    );
    return {
      digest: createHash('sha256').update(JSON.stringify(r)).digest('hex'),
      costPerHourAfter: r.costPerHourAfter,
    };
  };
}

const other = process.argv[2];
if (!other) {
  console.error('usage: node --import tsx test/perf/whatif-ab.ts /path/to/other/tree [scenarios]');
  process.exit(2);
}
const count = Number(process.argv[3] ?? 16);
const trees = {
  other: await load(resolve(other)),
  here: await load(fileURLToPath(new URL('../..', import.meta.url))),
};
type Tree = keyof typeof trees;

const usage = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const t = { other: { cpu: [] as number[], wall: [] as number[] }, here: { cpu: [] as number[], wall: [] as number[] } };
// Warm-up: each tree compiles its solver and HiGHS and loads the catalog once.
for (const run of Object.values(trees)) await run({ seed: 999, nodes: 6, pending: 6 });
let same = true;
for (let s = 1; s <= count; s++) {
  const input = { seed: s, nodes: 6, pending: 6 };
  const digests: Partial<Record<Tree, string>> = {};
  const order: Tree[] = s % 2 ? ['other', 'here'] : ['here', 'other'];
  for (const k of order) {
    const c0 = usage();
    const t0 = performance.now();
    digests[k] = (await trees[k](input)).digest;
    t[k].wall.push(performance.now() - t0);
    t[k].cpu.push(usage() - c0);
  }
  if (digests.other !== digests.here) same = false;
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const ms = (v: number[]) => median(v).toFixed(1);
const ratio = (k: 'cpu' | 'wall') => (median(t.here[k]) / median(t.other[k])).toFixed(3);
process.stdout.write(
  `${count} what-if scenarios (medians per scenario): other tree ${ms(t.other.cpu)} ms cpu / ${ms(t.other.wall)} ms wall; ` +
    `this tree ${ms(t.here.cpu)} ms cpu / ${ms(t.here.wall)} ms wall; this/other ${ratio('cpu')} cpu, ${ratio('wall')} wall; ` +
    `reports ${same ? 'identical' : 'DIFFER'}\n`,
);
