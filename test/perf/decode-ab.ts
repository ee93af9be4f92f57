// `node --import tsx test/perf/decode-ab.ts /path/to/other/tree [scenario] [rounds]`: the decoder alone, this tree
// against another checkout, each decoding its own solver's result for the same input (with the caches a WasmSolver
// keeps between calls) many times, interleaved in one process. `scenario` as in solve-ab.ts. Prints median CPU ms
// per decode for each and whether the plans are identical.
import type { ProvisionPlan } from '../../engine/index.ts';

const [other, scenario = 'diverse-20000', roundsArg = '40'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const [mix, size] = scenario.split('-') as [string, string];
async function load(root: string): Promise<{ decode(): ProvisionPlan }> {
  const { encodeProvision } = await import(`${root}/engine/abi/encode.ts`);
  const { decodeProvision } = await import(`${root}/engine/abi/decode.ts`);
  const wasm = await import(`${root}/engine/solver/wasm.ts`);
  const { ModelCaches } = await import(`${root}/engine/model/caches.ts`);
  const base =
    mix === 'generic'
      ? (await import(`${root}/bench/scenarios/generic.ts`)).genericInput(Number(size))
      : await import(`${root}/bench/scenarios/karpenter.ts`).then((k) => k.karpenterInput(k.diversePods(Number(size))));
  const input = { ...base, caches: new ModelCaches() };
  const { block, ctx } = encodeProvision(input, { improve: false });
  const result = wasm.runBlock(wasm.instantiateSolver(wasm.solverModule('release')), block, ctx.keys.setBytes);
  return { decode: () => decodeProvision(ctx, result) };
}
const trees = { other: await load(other!), here: await load(new URL('../..', import.meta.url).pathname) };
const cpu = { other: [] as number[], here: [] as number[] };
const plans: Record<string, string> = {};
const usage = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (let r = 0; r <= rounds; r++) {
  for (const k of (r & 1 ? ['here', 'other'] : ['other', 'here']) as Array<'here' | 'other'>) {
    const c0 = usage();
    const plan = trees[k].decode();
    const c1 = usage();
    if (r === 0) plans[k] = JSON.stringify(plan);
    else cpu[k].push(c1 - c0);
  }
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
// The mean counts the garbage collections a decode's allocations cause, which fall on some rounds only.
const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
process.stdout.write(
  `${scenario} decode, ${rounds} rounds (cpu ms, median / mean): other ${med(cpu.other).toFixed(2)} / ${mean(cpu.other).toFixed(2)}, ` +
    `here ${med(cpu.here).toFixed(2)} / ${mean(cpu.here).toFixed(2)}, ratio ${(med(cpu.other) / med(cpu.here)).toFixed(3)} / ` +
    `${(mean(cpu.other) / mean(cpu.here)).toFixed(3)}; plans ${plans.other === plans.here ? 'identical' : 'DIFFER'}\n`,
);
