// `node --import tsx test/perf/pool-alloc.ts [jobs] [top] [root=DIR]`: what the pool suite's what-if jobs
// (bench/suites/pool.ts) allocate on a pool worker, by V8's sampling heap profiler (one sample per 16 KiB allocated
// on average, POOL_ALLOC_INTERVAL to change it; objects that collections freed are counted too). One worker, a
// warm-up of two jobs, then `jobs` jobs (default 10) profiled. Prints the sampled total (MB), then the `top`
// (default 25) functions by bytes they allocated themselves and by bytes allocated under them (inclusive), each
// with its file and line, and the digest of the jobs' reports (to compare two checkouts: root=DIR runs another
// worktree's engine). Counts bytes, not time: a loaded machine does not change it. POOL_ALLOC_MINOR=0 leaves out
// what scavenges freed (what is left was promoted, or is alive at the end); POOL_ALLOC_MAJOR=0 also what full
// collections freed.
import { createHash } from 'node:crypto';
import { runScenario, scenario, type ScenarioInput } from '../../bench/scenarios/whatif.ts';
import type { Engine } from '../../engine/index.ts';

interface Node {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly Node[];
}

const jobs = Number(process.argv[2] ?? 10);
const top = Number(process.argv[3] ?? 25);
const rootArg = process.argv
  .slice(2)
  .find((a) => a.startsWith('root='))
  ?.slice(5);
const root = rootArg
  ? new URL(`${rootArg.replace(/\/$/, '')}/`, 'file:///').href
  : new URL('../..', import.meta.url).href;
process.env['POOL_THREADS_ROOT'] = root;
const { createEngine } = (await import(
  new URL('engine/index.ts', root).href
)) as typeof import('../../engine/index.ts');
const e: Engine = createEngine({ threads: 1, filename: new URL('./pool-alloc.worker.ts', import.meta.url).href });
const inputs: ScenarioInput[] = Array.from({ length: jobs + 2 }, (_, i) => ({ seed: i + 1, nodes: 6, pending: 6 }));
const built = inputs.map(scenario);
const run = (from: number, to: number) =>
  Promise.all(inputs.slice(from, to).map((input, i) => runScenario(e, input, built[from + i])));

await run(0, 2);
await e.pool.memory();
const results = await run(2, jobs + 2);
const [profile] = (await e.pool.memory()) as unknown as { head: Node }[];
await e.close();

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const name = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(root, '')}:${n.callFrame.lineNumber + 1}`;
/** Adds each node's bytes to its function (self) and, once per function on the path, to every caller (inclusive). */
function walk(n: Node, path: Set<string>): number {
  const k = name(n);
  self.set(k, (self.get(k) ?? 0) + n.selfSize);
  const fresh = !path.has(k);
  if (fresh) path.add(k);
  let total = n.selfSize;
  for (const c of n.children) total += walk(c, path);
  if (fresh) {
    path.delete(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + total);
  }
  return total;
}
const total = walk(profile!.head, new Set());
const mb = (b: number) => (b / 1e6).toFixed(1).padStart(7);
const list = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${mb(v)} MB ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
console.log(`sampled allocation over ${jobs} jobs: ${mb(total)} MB (${mb(total / jobs)} MB a job)`);
console.log('\nself:\n' + list(self).join('\n'));
console.log('\ninclusive:\n' + list(inclusive).join('\n'));
console.log(`\nreports digest ${createHash('sha256').update(JSON.stringify(results)).digest('hex').slice(0, 16)}`);
