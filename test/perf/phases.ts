// `node --import tsx test/perf/phases.ts [pods | diverse-N | generic-N] [runs] [--improve]`: the karpenter suite's
// diverse mix (or the solver suite's generic one) split into its phases (encode, wasm solve, decode), medians over
// `runs` solves in one process, with the caches a WasmSolver keeps between calls (as the suites call it).
// `--improve` runs the improvement phase. For profiling the per-solve cost; the suites report whole calls.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { decodeProvision } from '../../engine/abi/decode.ts';
import { encodeProvision } from '../../engine/abi/encode.ts';
import { ModelCaches } from '../../engine/model/caches.ts';
import { solverModule } from '../../engine/solver/module.ts';
import { instantiateSolver, runBlock } from '../../engine/solver/wasm.ts';
import { diversePods, karpenterInput } from '../../bench/scenarios/karpenter.ts';
import { genericInput } from '../../bench/scenarios/generic.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const improve = process.argv.includes('--improve');
const scenario = /^\d+$/.test(args[0] ?? '') || args[0] === undefined ? `diverse-${args[0] ?? 20000}` : args[0];
const n = Number(scenario.split('-')[1]);
const runs = Number(args[1] ?? 9);
const input = {
  ...(scenario.startsWith('generic') ? genericInput(n) : karpenterInput(diversePods(n))),
  caches: new ModelCaches(),
};
// WASM_FILE: a solver build of the same ABI to load instead (e.g. a release build with a name section, for profiles).
const x = instantiateSolver(
  process.env.WASM_FILE
    ? new WebAssembly.Module(readFileSync(process.env.WASM_FILE))
    : solverModule(process.env.BUILD === 'debug' ? 'debug' : 'release'),
);
const t: Record<'encode' | 'wasm' | 'decode' | 'total', number[]> = { encode: [], wasm: [], decode: [], total: [] };
// CPU time of the process per phase too: on a shared, loaded machine it moves far less than wall time.
const c: Record<'encode' | 'wasm' | 'decode' | 'total', number[]> = { encode: [], wasm: [], decode: [], total: [] };
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
// PROFILE=file.cpuprofile: a V8 CPU profile of the measured solves only (after the warm-up), for Chrome DevTools.
const profiler = process.env.PROFILE ? new Session() : undefined;
let nodes = 0;
for (let r = 0; r < runs + 1; r++) {
  if (r === 1 && profiler) {
    profiler.connect();
    await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const c0 = cpu();
  const t0 = performance.now();
  const { block, ctx } = encodeProvision(input, { improve, improveMs: 60_000 });
  const t1 = performance.now();
  const c1 = cpu();
  const result = runBlock(x, block, ctx.keys.setBytes);
  const t2 = performance.now();
  const c2 = cpu();
  const plan = decodeProvision(ctx, result);
  const t3 = performance.now();
  const c3 = cpu();
  nodes = plan.newNodeClaims.length;
  if (r === 0 && process.env.COUNTERS) {
    const wc = (x as unknown as { workCounters(): number }).workCounters();
    process.stdout.write(`work counters: ${[...new Int32Array(x.memory.buffer, wc, 8)].join(' ')}\n`);
  }
  if (r === 0) continue; // warm-up
  t.encode.push(t1 - t0);
  t.wasm.push(t2 - t1);
  t.decode.push(t3 - t2);
  t.total.push(t3 - t0);
  c.encode.push(c1 - c0);
  c.wasm.push(c2 - c1);
  c.decode.push(c3 - c2);
  c.total.push(c3 - c0);
}
if (profiler) writeFileSync(process.env.PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
const line = (m: typeof t) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${median(v).toFixed(1)}`)
    .join(', ');
process.stdout.write(
  `${scenario}${improve ? ' improved' : ''}: ${nodes} nodes; wall ms: ${line(t)}; ${Math.round((n / median(t.total)) * 1000)} pods/s; cpu ms: ${line(c)} (medians of ${runs})\n`,
);
