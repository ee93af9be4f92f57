// `node --import tsx test/perf/phases.ts [pods] [runs]`: the karpenter suite's diverse mix split into its phases
// (encode, wasm solve, decode), medians over `runs` solves in one process. For profiling the per-solve cost;
// the suites report whole calls.
import { decodeProvision } from '../../engine/abi/decode.ts';
import { encodeProvision } from '../../engine/abi/encode.ts';
import { instantiateSolver, runBlock, solverModule } from '../../engine/solver/wasm.ts';
import { diversePods, karpenterInput } from '../../bench/scenarios/karpenter.ts';

const n = Number(process.argv[2] ?? 20000);
const runs = Number(process.argv[3] ?? 9);
const input = karpenterInput(diversePods(n));
const x = instantiateSolver(solverModule(process.env.BUILD === 'debug' ? 'debug' : 'release'));
const t: Record<'encode' | 'wasm' | 'decode' | 'total', number[]> = { encode: [], wasm: [], decode: [], total: [] };
// CPU time of the process per phase too: on a shared, loaded machine it moves far less than wall time.
const c: Record<'encode' | 'wasm' | 'decode' | 'total', number[]> = { encode: [], wasm: [], decode: [], total: [] };
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let nodes = 0;
for (let r = 0; r < runs + 1; r++) {
  const c0 = cpu();
  const t0 = performance.now();
  const { block, ctx } = encodeProvision(input, { improve: false });
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
const median = (a: number[]) => [...a].sort((p, q) => p - q)[a.length >> 1]!;
const line = (m: typeof t) => Object.entries(m).map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ');
process.stdout.write(`diverse-${n}: ${nodes} nodes; wall ms: ${line(t)}; ${Math.round((n / median(t.total)) * 1000)} pods/s; cpu ms: ${line(c)} (medians of ${runs})\n`);
