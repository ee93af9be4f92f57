// `node --import tsx test/perf/solve-ab.ts /path/to/other/tree [scenario] [rounds] [--improve]`: one solver call
// as the benchmark suites make it (encode, wasm solve, decode, with the caches a WasmSolver keeps between calls),
// this tree against another checkout (with its own built wasm), interleaved in one process so both see the same
// machine load. `scenario` is `diverse-N` (the karpenter suite's mix, default diverse-20000) or `generic-N` (the
// solver suite's); `--improve` runs the improvement phase (the solver suite's wasm-release row). Prints median
// wall ms per phase and per call for each, the median process CPU ms per call (steadier than wall time on a
// shared machine; it counts GC helper threads too), and whether the plans are identical.
import { existsSync } from 'node:fs';
import type { ProvisionInput, ProvisionPlan } from '../../engine/index.ts';

interface Tree {
  encodeProvision(
    input: ProvisionInput,
    opts: { improve: boolean; improveMs?: number },
  ): { block: Uint8Array; ctx: { keys: { setBytes: number } } };
  decodeProvision(ctx: unknown, result: ArrayBuffer): ProvisionPlan;
  runBlock(x: unknown, block: Uint8Array, setBytes: number): ArrayBuffer;
  x: unknown;
  input: ProvisionInput;
}
const args = process.argv.slice(2);
const improve = args.includes('--improve');
const [other, scenario = 'diverse-20000', roundsArg = '15'] = args.filter((a) => !a.startsWith('--'));
const rounds = Number(roundsArg);
const [mix, size] = scenario.split('-') as [string, string];
const n = Number(size);

async function load(root: string): Promise<Tree> {
  const enc = await import(`${root}/engine/abi/encode.ts`);
  const dec = await import(`${root}/engine/abi/decode.ts`);
  const wasm = await import(`${root}/engine/solver/wasm.ts`);
  // solverModule lives in module.ts now; older trees exported it from wasm.ts.
  const { solverModule } = existsSync(`${root}/engine/solver/module.ts`)
    ? await import(`${root}/engine/solver/module.ts`)
    : wasm;
  const { ModelCaches } = await import(`${root}/engine/model/caches.ts`);
  let input: ProvisionInput;
  if (mix === 'generic') input = (await import(`${root}/bench/scenarios/generic.ts`)).genericInput(n);
  else {
    const k = await import(`${root}/bench/scenarios/karpenter.ts`);
    input = k.karpenterInput(k.diversePods(n));
  }
  return {
    encodeProvision: enc.encodeProvision,
    decodeProvision: dec.decodeProvision,
    runBlock: wasm.runBlock,
    x: wasm.instantiateSolver(solverModule('release')),
    input: { ...input, caches: new ModelCaches() },
  };
}
const trees = { other: await load(other!), here: await load(new URL('../..', import.meta.url).pathname) };
type Phase = 'encode' | 'wasm' | 'decode' | 'total';
const t = {
  other: { encode: [], wasm: [], decode: [], total: [] },
  here: { encode: [], wasm: [], decode: [], total: [] },
} as Record<'other' | 'here', Record<Phase, number[]>>;
const plans: Record<string, ProvisionPlan> = {};
const cpu = { other: [] as number[], here: [] as number[] };
const usage = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (let r = 0; r <= rounds; r++) {
  // Alternate which tree goes first, so neither always runs right after the other's garbage.
  const order = (r & 1 ? ['here', 'other'] : ['other', 'here']) as Array<'other' | 'here'>;
  for (const k of order) {
    const tree = trees[k];
    const c0 = usage();
    const t0 = performance.now();
    const { block, ctx } = tree.encodeProvision(tree.input, { improve, improveMs: 60_000 });
    const t1 = performance.now();
    const result = tree.runBlock(tree.x, block, ctx.keys.setBytes);
    const t2 = performance.now();
    const plan = tree.decodeProvision(ctx, result);
    const t3 = performance.now();
    const c1 = usage();
    if (r === 0) plans[k] = plan;
    else {
      cpu[k].push(c1 - c0);
      t[k].encode.push(t1 - t0);
      t[k].wasm.push(t2 - t1);
      t[k].decode.push(t3 - t2);
      t[k].total.push(t3 - t0);
    }
  }
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const line = (m: Record<Phase, number[]>) =>
  (Object.keys(m) as Phase[]).map((p) => `${p} ${med(m[p]).toFixed(1)}`).join(', ');
const summary = (p: ProvisionPlan) =>
  `${p.newNodeClaims.length} nodes, $${p.costPerHour.toFixed(4)}/h, ${p.unschedulable.length} unschedulable`;
const same = JSON.stringify(plans.other) === JSON.stringify(plans.here);
process.stdout.write(
  `${scenario}${improve ? ' improved' : ''}, ${rounds} rounds (median wall ms):\n  other: ${line(t.other)}; cpu ${med(cpu.other).toFixed(1)}; ${summary(plans.other!)}\n  here:  ${line(t.here)}; cpu ${med(cpu.here).toFixed(1)}; ${summary(plans.here!)}\n` +
    `  total ratio other/here: wall ${(med(t.other.total) / med(t.here.total)).toFixed(3)}, cpu ${(med(cpu.other) / med(cpu.here)).toFixed(3)}; plans ${same ? 'identical' : 'DIFFER'}\n`,
);
