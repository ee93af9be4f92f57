// `node --import tsx test/perf/wasm-ab.ts A.wasm B.wasm [scenario] [rounds] [--improve]`: the wasm search alone, two
// solver builds of one ABI on the same encoded block, interleaved in one process so both see the same machine load.
// `scenario` is `diverse-N` (the karpenter suite's mix, default diverse-20000; a bare number means diverse too) or
// `generic-N` (the solver suite's); `--improve` runs the improvement phase. Prints median wall and CPU ms per build
// and whether the result blocks are identical.
import { readFileSync } from 'node:fs';
import { encodeProvision } from '../../engine/abi/encode.ts';
import { instantiateSolver, runBlock } from '../../engine/solver/wasm.ts';
import { diversePods, karpenterInput } from '../../bench/scenarios/karpenter.ts';
import { genericInput } from '../../bench/scenarios/generic.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const improve = process.argv.includes('--improve');
const [a, b] = [args[0]!, args[1]!];
const scenario = /^\d+$/.test(args[2] ?? '') || args[2] === undefined ? `diverse-${args[2] ?? 20000}` : args[2];
const n = Number(scenario.split('-')[1]);
const rounds = Number(args[3] ?? 15);
const input = scenario.startsWith('generic') ? genericInput(n) : karpenterInput(diversePods(n));
const { block, ctx } = encodeProvision(input, { improve, improveMs: 60_000 });
const solvers = [a, b].map((f) => instantiateSolver(new WebAssembly.Module(readFileSync(f))));
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
const usage = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const results: string[] = [];
for (let r = 0; r <= rounds; r++) {
  // Alternate which build goes first.
  for (const i of r & 1 ? [1, 0] : [0, 1]) {
    const c0 = usage();
    const t0 = performance.now();
    const out = runBlock(solvers[i]!, block, ctx.keys.setBytes);
    const t1 = performance.now();
    const c1 = usage();
    if (r === 0) results[i] = Buffer.from(out).toString('base64');
    else {
      wall[i]!.push(t1 - t0);
      cpu[i]!.push(c1 - c0);
    }
  }
}
const med = (v: number[]) => [...v].sort((p, q) => p - q)[v.length >> 1]!;
process.stdout.write(
  `${scenario}${improve ? ' improved' : ''}, ${rounds} rounds: A ${med(wall[0]!).toFixed(1)} ms wall / ${med(cpu[0]!).toFixed(1)} ms cpu; ` +
    `B ${med(wall[1]!).toFixed(1)} ms wall / ${med(cpu[1]!).toFixed(1)} ms cpu; A/B cpu ${(med(cpu[0]!) / med(cpu[1]!)).toFixed(3)}; ` +
    `result blocks ${results[0] === results[1] ? 'identical' : 'DIFFER'}\n`,
);
