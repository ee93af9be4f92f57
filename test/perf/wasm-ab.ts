// `node --import tsx test/perf/wasm-ab.ts A.wasm B.wasm [pods] [rounds]`: the wasm search alone, two solver
// builds of one ABI on the same encoded block (the karpenter suite's diverse mix), interleaved in one
// process so both see the same machine load. Prints median wall and CPU ms per build.
import { readFileSync } from 'node:fs';
import { DEFAULT_ENGINE_OPTIONS, withExtraWellKnown, type ProvisionInput } from '../../engine/index.ts';
import { encodeProvision } from '../../engine/abi/encode.ts';
import { instantiateSolver, runBlock } from '../../engine/solver/wasm.ts';
import { FAKE_WELL_KNOWN_LABELS } from '../fixtures/instancetypes.ts';
import { diversePods, karpenterInstanceTypes, karpenterNodePool } from '../../bench/scenarios/karpenter.ts';

const [a, b] = [process.argv[2]!, process.argv[3]!];
const n = Number(process.argv[4] ?? 20000);
const rounds = Number(process.argv[5] ?? 15);
const pool = karpenterNodePool();
const input: ProvisionInput = { nodePools: [pool], instanceTypes: new Map([[pool.name, karpenterInstanceTypes()]]), nodes: [], daemonSets: [], options: DEFAULT_ENGINE_OPTIONS, wellKnownLabels: withExtraWellKnown(FAKE_WELL_KNOWN_LABELS), pods: diversePods(n) };
const { block, ctx } = encodeProvision(input, { improve: false });
const solvers = [a, b].map((f) => instantiateSolver(new WebAssembly.Module(readFileSync(f))));
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
const usage = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const results: string[] = [];
for (let r = 0; r <= rounds; r++) {
  solvers.forEach((x, i) => {
    const c0 = usage();
    const t0 = performance.now();
    const out = runBlock(x, block, ctx.keys.setBytes);
    const t1 = performance.now();
    const c1 = usage();
    if (r === 0) results[i] = Buffer.from(out).toString('base64');
    else { wall[i]!.push(t1 - t0); cpu[i]!.push(c1 - c0); }
  });
}
const med = (v: number[]) => [...v].sort((p, q) => p - q)[v.length >> 1]!.toFixed(1);
process.stdout.write(`diverse-${n}, ${rounds} rounds: A ${med(wall[0]!)} ms wall / ${med(cpu[0]!)} ms cpu; B ${med(wall[1]!)} ms wall / ${med(cpu[1]!)} ms cpu; result blocks ${results[0] === results[1] ? 'identical' : 'DIFFER'}\n`);
