// The controller benchmark's parent process: the simulated cluster (API server on loopback, kubelets,
// workload controllers) on the wall clock, and the controller forked into a child process
// (sim/remote/controller-process.ts) that reaches the API server over HTTP. Kubelet calls from the child's
// simulated cloud arrive over IPC. The child runs compiled (dist/, as the image runs the controller: no
// TypeScript loader, whose hook threads would add to its memory; from the run's own copy of dist/, taken once,
// which a build during the run leaves alone: dist-copy.ts) or from source (tests), with the image's malloc
// settings (image-env.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workerModule } from '../../engine/index.ts';
import { installAdmission } from '../../sim/admission.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { scaledClock } from '../../sim/clock.ts';
import { startSimCluster, type SimCluster } from '../../sim/cluster/cluster.ts';
import type {
  ChildStatus,
  FromChild,
  ObservedEvents,
  PhaseStats,
  Request,
  ToChild,
} from '../../sim/remote/protocol.ts';
import { Binder } from './binder.ts';
import { privateDist } from './dist-copy.ts';
import { benchImageEnv } from './image-env.ts';

interface HarnessOptions {
  /** The simulated cloud's CreateFleet-to-running delay in the child. */
  readonly launchMs: number;
  readonly terminateMs?: number;
  /** Controller option overrides by flag name. */
  readonly options?: Readonly<Record<string, string>>;
  /**
   * Run the controller compiled (dist/, checked to be newer than the sources, from the process's copy of it taken on
   * the first such start) or from source (default).
   */
  readonly from?: 'dist' | 'source';
}

export interface Harness {
  readonly cluster: SimCluster;
  readonly binder: Binder;
  request(op: 'phase-start'): Promise<void>;
  request(op: 'phase-end'): Promise<PhaseStats>;
  request(op: 'events'): Promise<ObservedEvents>;
  request(op: 'status'): Promise<ChildStatus>;
  /** Objects of a resource in the simulated store. */
  list(resource: string): KObject[];
  close(): Promise<void>;
}

/** Every simulated delay 0: nodes register and turn Ready, and pods start, in the turn after they are due. */
const NO_DELAYS = { registerMs: 0, readyMs: 0, startupTaintMs: 0, podStartMs: 0, nodeRemovalMs: 0 };

export async function startHarness(o: HarnessOptions): Promise<Harness> {
  const errors: unknown[] = [];
  // The wall clock (speed 1 from now), as the controller's: both write and compare the same timestamps.
  const cluster = await startSimCluster({
    clock: scaledClock(1, Date.now()),
    kubeletDelays: NO_DELAYS,
    // Watches can resume across the setup's hundreds of thousands of writes (a relist of 100,000 pods is not
    // what this benchmark measures).
    apiServer: { eventWindow: 2_000_000 },
    onError: (err) => errors.push(err),
  });
  installAdmission(cluster.server);
  const binder = new Binder(cluster.api);
  const child = await forkController(cluster, o);
  let seq = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: FromChild) => {
    if (m.t !== 'res') return;
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error) w?.reject(new Error(`controller process: ${m.error}`));
    else w?.resolve(m.value);
  });
  const request = (op: Request): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      waiting.set(id, { resolve, reject });
      child.send({ t: 'req', id, op } satisfies ToChild);
    });
  return {
    cluster,
    binder,
    request: request as Harness['request'],
    list: (resource) => cluster.store.list(resource),
    async close() {
      if (child.connected) await request('stop').catch(() => undefined);
      await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      binder.close();
      await cluster.close();
      if (errors.length) throw new Error(`simulated cluster errors: ${errors.slice(0, 3).map(String).join('; ')}`);
    },
  };
}

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The first runtime source newer than dist/'s build stamp (as bin/karpenter-ts.mjs checks), if any. */
function newerThanBuild(): string | undefined {
  const stamp = join(root, 'dist', 'BUILD');
  if (!existsSync(stamp)) return 'dist/ (not built)';
  const built = statSync(stamp).mtimeMs;
  const walk = (dir: string): string | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const found = e.isDirectory()
        ? walk(p)
        : /\.(ts|json|yaml)$/.test(e.name) && !e.name.endsWith('.test.ts') && statSync(p).mtimeMs > built
          ? p
          : undefined;
      if (found) return found;
    }
    return undefined;
  };
  for (const d of ['engine', 'controller', 'sim', 'solver-as/build']) {
    const found = existsSync(join(root, d)) ? walk(join(root, d)) : undefined;
    if (found) return found.slice(root.length);
  }
  return undefined;
}

/**
 * BENCH_CONTROLLER_OPTIONS: controller options for every scenario, as `flag=value` words (e.g.
 * `engine-worker-heap-mib=1024 heap-growing-percent=50`), over the scenario's own; unset: none.
 */
function envOptions(): Record<string, string> | undefined {
  const words = (process.env['BENCH_CONTROLLER_OPTIONS'] ?? '').split(/\s+/).filter(Boolean);
  if (words.length === 0) return undefined;
  const options: Record<string, string> = {};
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new Error(`BENCH_CONTROLLER_OPTIONS: "${w}" is not flag=value`);
    options[w.slice(0, eq).replace(/^--/, '')] = w.slice(eq + 1);
  }
  return options;
}

/**
 * BENCH_CONTROLLER_MEMORY_LIMIT_MIB: the heaps Node gives the controller in a container with that memory limit (the
 * chart's `resources.limits.memory`, 1 GiB by default). In a container Node sizes V8's heaps from the container's
 * limit instead of the host's memory: each thread's old generation gets half of it and its semi-spaces 1/256 (V8's
 * `Heap::HeapSizeFromPhysicalMemory` and `YoungGenerationSizeFromOldGenerationSize` on 64 bits without pointer
 * compression; 1 GiB gives 512 + 3 x 4 = 524 MiB, the limit a thread reads in a 1 GiB memory cgroup). The flags
 * below give every thread of the controller process the same, on a host without that container; flags given in
 * BENCH_CONTROLLER_NODE_ARGS come after them and win. Unset or empty: none (the host's memory sizes the heaps).
 */
export function containerHeapFlags(limit: string | undefined): string[] {
  if (limit === undefined || limit === '') return [];
  const mib = Number(limit);
  if (!Number.isSafeInteger(mib) || mib < 256)
    throw new Error(`BENCH_CONTROLLER_MEMORY_LIMIT_MIB: "${limit}" is not a whole number of MiB >= 256`);
  const semi = Math.min(16, Math.max(1, Math.floor(mib / 256)));
  return [`--max-old-space-size=${Math.floor(mib / 2)}`, `--max-semi-space-size=${semi}`];
}

let compiled: string | undefined;

/**
 * The run's copy of dist/ (dist-copy.ts), taken on the first call if dist/ is newer than the sources; every later
 * call gets the same copy, whatever happens to dist/ or the sources meanwhile.
 */
function compiledDist(): string {
  if (compiled) return compiled;
  const stale = newerThanBuild();
  if (stale)
    throw new Error(
      `controller bench: ${stale} is newer than dist/: run \`npm run build\` first (it runs the compiled controller)`,
    );
  compiled = privateDist(root);
  return compiled;
}

/** The controller process's module and Node flags. */
function childModule(from: 'dist' | 'source'): { file: string; execArgv: string[] } {
  // BENCH_CONTROLLER_NODE_ARGS: extra Node flags for the controller process (and so its engine workers), e.g.
  // `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--heapsnapshot-signal=SIGUSR2` to profile it.
  const extra = [
    ...containerHeapFlags(process.env['BENCH_CONTROLLER_MEMORY_LIMIT_MIB']),
    ...(process.env['BENCH_CONTROLLER_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean),
  ];
  if (from === 'dist') return { file: join(compiledDist(), 'sim', 'remote', 'controller-process.js'), execArgv: extra };
  const m = workerModule('../../sim/remote/controller-process.ts', import.meta.url);
  return { file: fileURLToPath(m.filename), execArgv: [...(m.execArgv ?? []), ...extra] };
}

/** Forks the controller process and waits until its operator has started. */
async function forkController(cluster: SimCluster, o: HarnessOptions): Promise<ChildProcess> {
  const m = childModule(o.from ?? 'source');
  const child = fork(m.file, [], {
    execArgv: m.execArgv,
    env: { ...process.env, ...benchImageEnv() },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (msg: FromChild) => {
    if (msg.t !== 'kubelet') return;
    if (msg.op === 'register') cluster.kubelet.registerInstance(msg.spec);
    else cluster.kubelet.terminateInstance(msg.providerID);
  });
  const init: ToChild = {
    t: 'init',
    kubeConfig: cluster.kubeConfig().exportConfig(),
    launchMs: o.launchMs,
    terminateMs: o.terminateMs ?? 0,
    ...(o.options || envOptions() ? { options: { ...o.options, ...envOptions() } } : {}),
  };
  child.send(init);
  await new Promise<void>((resolve, reject) => {
    const onMessage = (msg: FromChild) => {
      if (msg.t === 'ready') done(resolve);
      else if (msg.t === 'fatal') done(() => reject(new Error(`controller process failed to start: ${msg.error}`)));
    };
    const onExit = (code: number | null) =>
      done(() => reject(new Error(`controller process exited (${code}) before it started`)));
    const done = (f: () => void) => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      f();
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
  return child;
}

/** Polls `check` every `everyMs` until it returns true; throws after `timeoutMs`, naming `what` and what `state` says. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 200,
  state?: () => string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      const seen = state ? `: ${state()}` : '';
      throw new Error(`controller bench: timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${seen}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
