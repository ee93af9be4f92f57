// `node --import tsx test/perf/pool-threads.ts [jobs] [rounds] [config,...]`: the pool suite's what-if batches
// (bench/suites/pool.ts) in several engine configurations, alternating in one process, and where each batch's time
// goes: CPU per OS thread (/proc/self/task/*/schedstat: the calling thread, each worker, and the rest, V8's and
// libuv's background threads), the time each worker was ready to run but waited for a core (on a shared machine,
// how much of the wall time other processes took), each worker's busy time (its tasks' wall time) and so the idle
// time inside the batch, the tail (one worker's last task ending before the other's), the first task's start after
// the batch began, and the workers' collections by kind (perf_hooks 'gc' entries: 1 minor, 4 major, 8 incremental).
// Prints a line per batch,
// then medians; throws if any configuration's reports differ from the first's (compared whole, digests included).
// Each line also gives the workers' pause time in collections a job and each worker's new space (its young generation's
// capacity, MiB) after its first task, the smallest and largest over the batch, and after its last task; and what the
// old generation took in a job (V8's GC profiler in each worker: what scavenges promoted, what was allocated in it
// directly between collections) and its size after the batch's last full collection. A full collection's marking runs
// on V8's helper threads, which two workers pay on their own cores: the old generation's intake sets how often.
// A configuration is `THREADS[:young=MB][:semi=MB][:root=DIR]`: workers, their young generation's maximum
// (resourceLimits.maxYoungGenerationSizeMb), its semi-space's minimum (the pool's minSemiSpaceMb, V8's
// --min-semi-space-size set only while these workers start; `semi=0` for V8's default; without it, the checkout's
// default), and the checkout whose engine runs (another worktree, for an A/B in one process; default this one). Default configurations: `1,2`. The workers are pool-threads.worker.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import type { ScenarioInput } from '../../bench/scenarios/whatif.ts';
import { runScenario, scenario } from '../../bench/scenarios/whatif.ts';
import type { Engine } from '../../engine/index.ts';

interface Reading {
  readonly tid: number;
  readonly tasks: readonly {
    readonly start: number;
    readonly end: number;
    readonly cpu: number;
    readonly newSpace: number;
  }[];
  readonly gcs: number;
  readonly gcMs: number;
  readonly kinds: Readonly<Record<string, number>>;
  /** Bytes the old generation took in by scavenges' promotion, and directly, and its size after the last full GC. */
  readonly promoted: number;
  readonly direct: number;
  readonly liveAfterMc: number;
}

const jobs = Number(process.argv[2] ?? 64);
const rounds = Number(process.argv[3] ?? 3);
const configs = (process.argv[4] ?? '1,2').split(',');
const inputs: ScenarioInput[] = Array.from({ length: jobs }, (_, i) => ({ seed: i + 1, nodes: 6, pending: 6 }));
const built = inputs.map(scenario);
const rows: Record<string, number[]> = {};
let first: string | undefined;

/** CPU ms of every thread of this process, by thread id, and ms it waited for a core (schedstat's first two fields). */
function threadCpu(): Map<number, number> & { readonly wait: Map<number, number> } {
  const m = Object.assign(new Map<number, number>(), { wait: new Map<number, number>() });
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const [run, wait] = readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ');
      m.set(Number(t), Number(run) / 1e6);
      m.wait.set(Number(t), Number(wait) / 1e6);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return m;
}

/** A thread's kind, from its name (/proc/self/task/<tid>/comm): V8's helpers, libuv's pool, the inspector, ... */
function threadKind(tid: number): string {
  try {
    return (
      readFileSync(`/proc/self/task/${tid}/comm`, 'utf8')
        .trim()
        .replace(/[0-9]+$/, '')
        .trim() || 'unnamed'
    );
  } catch {
    return 'gone';
  }
}

async function startEngine(config: string): Promise<Engine> {
  const [threads, ...kv] = config.split(':');
  const o = Object.fromEntries(kv.map((x) => x.split('=') as [string, string]));
  const root = o['root']
    ? new URL(`${o['root'].replace(/\/$/, '')}/`, 'file:///').href
    : new URL('../..', import.meta.url).href;
  // The workers copy the environment when they start: the wrapper loads this checkout's engine worker.
  process.env['POOL_THREADS_ROOT'] = root;
  const { createEngine } = (await import(
    new URL('engine/index.ts', root).href
  )) as typeof import('../../engine/index.ts');
  const young = o['young'] ? { resourceLimits: { maxYoungGenerationSizeMb: Number(o['young']) } } : {};
  const filename = new URL('./pool-threads.worker.ts', import.meta.url).href;
  // semi=MB: the workers' semi-space starts at (and never shrinks below) MB. A checkout whose pool takes
  // minSemiSpaceMb (engine/pool/young-generation.ts) sets V8's process-wide flag while its workers start; for an
  // older one it is set here, the same way, and cleared once the workers run.
  const semi = o['semi'] !== undefined ? { minSemiSpaceMb: Number(o['semi']) } : {};
  if (Number(o['semi'] ?? 0) > 0) setFlagsFromString(`--min-semi-space-size=${o['semi']}`);
  const e = createEngine({ threads: Number(threads), filename, ...young, ...semi } as never);
  await e.pool.memory();
  if (Number(o['semi'] ?? 0) > 0) setFlagsFromString('--min-semi-space-size=0');
  return e;
}

const batch = (e: Engine, n = jobs) =>
  Promise.all(inputs.slice(0, n).map((input, i) => runScenario(e, input, built[i])));
const readings = async (e: Engine) => (await e.pool.memory()) as unknown as Reading[];
/** A worker's new space over a batch's tasks: after its first task, the smallest and largest, after its last. */
const newSpaceRange = (xs: readonly number[]) =>
  `${xs[0]?.toFixed(0)}[${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}]${xs.at(-1)?.toFixed(0)}`;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const put = (k: string, v: number) => (rows[k] ??= []).push(v);

/** One timed batch on one configuration: records its figures and prints its line. */
async function measure(config: string, e: Engine, round: number): Promise<void> {
  const c0 = threadCpu();
  const t0 = performance.timeOrigin + performance.now();
  const results = JSON.stringify(await batch(e));
  const t1 = performance.timeOrigin + performance.now();
  const c1 = threadCpu();
  if ((first ??= results) !== results)
    throw new Error(`pool-threads: [${config}] reported otherwise than [${configs[0]}]`);
  const rs = await readings(e);
  const d = (tid: number) => (c1.get(tid) ?? 0) - (c0.get(tid) ?? 0);
  const workerTids = new Set(rs.map((x) => x.tid));
  const bgTids = [...c1.keys()].filter((tid) => tid !== process.pid && !workerTids.has(tid));
  const bg = sum(bgTids.map(d));
  const byKind = new Map<string, number>();
  for (const tid of bgTids) byKind.set(threadKind(tid), (byKind.get(threadKind(tid)) ?? 0) + d(tid));
  const wall = t1 - t0;
  const main = d(process.pid);
  const wcpu = rs.map((x) => d(x.tid));
  const wwait = rs.map((x) => (c1.wait.get(x.tid) ?? 0) - (c0.wait.get(x.tid) ?? 0));
  const busy = rs.map((x) => sum(x.tasks.map((t) => t.end - t.start)));
  const lastEnd = rs.map((x) => Math.max(...x.tasks.map((t) => t.end)));
  const firstStart = Math.min(...rs.flatMap((x) => x.tasks.map((t) => t.start)));
  const k = `[${config}]`;
  const total = main + bg + sum(wcpu);
  put(`${k} wall`, wall);
  put(`${k} cpu/job`, total / jobs);
  put(`${k} worker cpu/job`, sum(wcpu) / jobs);
  put(`${k} worker run-queue wait/job`, sum(wwait) / jobs);
  put(`${k} bg cpu/job`, bg / jobs);
  put(`${k} main cpu/job`, main / jobs);
  for (const [kind, ms] of byKind) if (ms > 0) put(`${k} bg '${kind}' cpu/job`, ms / jobs);
  put(`${k} idle ms (sum over workers)`, sum(busy.map((b) => wall - b)));
  put(`${k} tail ms`, Math.max(...lastEnd) - Math.min(...lastEnd));
  put(`${k} first start ms`, firstStart - t0);
  put(`${k} gcs/job`, sum(rs.map((x) => x.gcs)) / jobs);
  put(`${k} gc ms/job`, sum(rs.map((x) => x.gcMs)) / jobs);
  put(`${k} full gcs/job`, sum(rs.map((x) => x.kinds['4'] ?? 0)) / jobs);
  put(`${k} promoted MB/job`, sum(rs.map((x) => x.promoted)) / 1e6 / jobs);
  put(`${k} old-gen direct MB/job`, sum(rs.map((x) => x.direct)) / 1e6 / jobs);
  const perJob = (xs: readonly number[]) => xs.map((c) => (c / jobs).toFixed(1)).join('+');
  console.log(
    `round ${round} ${k}: wall ${wall.toFixed(0)} cpu/job ${(total / jobs).toFixed(1)} (workers ${perJob(wcpu)}, ` +
      `bg ${(bg / jobs).toFixed(1)}, main ${(main / jobs).toFixed(1)}) waited ${perJob(wwait)} busy ${busy.map((b) => b.toFixed(0)).join('/')} ` +
      `tasks ${rs.map((x) => x.tasks.length).join('/')} gcs ${rs.map((x) => JSON.stringify(x.kinds)).join('/')} ` +
      `gc ms/job ${(sum(rs.map((x) => x.gcMs)) / jobs).toFixed(1)} new space MiB ${rs.map((x) => newSpaceRange(x.tasks.map((t) => t.newSpace))).join('/')} ` +
      `old gen MB/job promoted ${rs.map((x) => (x.promoted / 1e6 / jobs).toFixed(2)).join('+')} direct ${rs.map((x) => (x.direct / 1e6 / jobs).toFixed(2)).join('+')} ` +
      `live after full gc MB ${rs.map((x) => (x.liveAfterMc / 1e6).toFixed(1)).join('/')} load ${loadavg()[0]!.toFixed(2)}`,
  );
}

const engines: [string, Engine][] = [];
for (const c of configs) engines.push([c, await startEngine(c)]);
// Warm-up as the suite's: two jobs a worker, every worker started.
for (const [, e] of engines) {
  await batch(e, e.pool.size * 2);
  await readings(e);
}
for (let r = 0; r < rounds; r++) for (const [c, e] of engines) await measure(c, e, r);
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const [k, v] of Object.entries(rows))
  console.log(`${k}: median ${med(v).toFixed(1)}  (${v.map((x) => x.toFixed(1)).join(', ')})`);
await Promise.all(engines.map(([, e]) => e.close()));
