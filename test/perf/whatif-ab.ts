// `node --import tsx test/perf/whatif-ab.ts /path/to/other/tree [scenarios]`: the pool suite's what-if job
// (bench/scenarios/whatif.ts) in this thread, this tree against another checkout of the project, scenarios
// interleaved in one process so both see the same load. Prints median CPU and wall ms per scenario and
// checks that both trees return the same results.
import type { ScenarioInput, ScenarioResult } from '../../bench/scenarios/whatif.ts';
import { scenario } from '../../bench/scenarios/whatif.ts';
import { inThreadEngine, whatIf } from '../../engine/local.ts';

/** What both trees' scenarios report (older trees have no report digest). */
type Common = Pick<ScenarioResult, 'seed' | 'costPerHourBefore' | 'costPerHourAfter' | 'moves'>;
type Run = (i: ScenarioInput) => Promise<Common>;
const other = process.argv[2]!;
const count = Number(process.argv[3] ?? 16);
const engine = inThreadEngine();
const here: Run = async (input) => {
  const r = await whatIf(
    { built: scenario(input), sources: [`seed-${input.seed}`], options: { mode: 'consolidate', exact: true } },
    engine,
  );
  return {
    seed: input.seed,
    costPerHourBefore: r.costPerHourBefore,
    costPerHourAfter: r.costPerHourAfter,
    moves: r.moves.length,
  };
};
const theirs = (await import(`${other}/bench/scenarios/whatif.ts`)).runScenario as Run;
const there: Run = async (input) => {
  const { seed, costPerHourBefore, costPerHourAfter, moves } = await theirs(input);
  return { seed, costPerHourBefore, costPerHourAfter, moves };
};
const usage = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const t = { other: { cpu: [] as number[], wall: [] as number[] }, here: { cpu: [] as number[], wall: [] as number[] } };
for (const run of [there, here]) await run({ seed: 999, nodes: 6, pending: 6 });
let same = true;
for (let s = 1; s <= count; s++) {
  const input = { seed: s, nodes: 6, pending: 6 };
  const out: string[] = [];
  for (const [k, run] of [
    ['other', there],
    ['here', here],
  ] as const) {
    const c0 = usage();
    const t0 = performance.now();
    out.push(JSON.stringify(await run(input)));
    t[k].wall.push(performance.now() - t0);
    t[k].cpu.push(usage() - c0);
  }
  if (out[0] !== out[1]) same = false;
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!.toFixed(1);
process.stdout.write(
  `${count} what-if scenarios: other tree ${med(t.other.cpu)} ms cpu / ${med(t.other.wall)} ms wall; this tree ${med(t.here.cpu)} ms cpu / ${med(t.here.wall)} ms wall (medians per scenario); results ${same ? 'identical' : 'DIFFER'}\n`,
);
