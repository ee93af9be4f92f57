// `karpenter-ts sim`: the real controller against a simulated cluster and cloud on this machine. Runs a
// scenario (default: the guide's §11 inflate demo) on a sped-up clock and prints a timeline and node
// tables; `--serve` then leaves the API server up for kubectl.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSimulation, type Simulation } from '../../sim/environment.ts';
import { simulationEngine } from '../../sim/engine.ts';
import { warmUp } from '../../sim/warmup.ts';
import { parseScenario, ScenarioError, type Scenario } from '../../sim/scenario/format.ts';
import { runScenario } from '../../sim/scenario/runner.ts';
import { stamp, Timeline } from '../../sim/timeline.ts';
import { nodeTable } from '../../sim/view.ts';
import { manualClock, scaledClock, type SimClock } from '../../sim/clock.ts';
import { kubeConfigText } from '../../sim/kubeconfig.ts';
import { regionsInCatalog } from '../../engine/index.ts';
import type { Io } from '../io.ts';

export const summary = "run the controller against a simulated cluster and cloud (the guide's demo by default)";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_SCENARIO = join(ROOT, 'scenarios', 'guide-inflate.yaml');

const USAGE = `usage: karpenter-ts sim [--scenario FILE] [--speed N] [--serve] [options]

Runs the karpenter-ts controller against a simulated Kubernetes API server, kubelets, scheduler and a
simulated EC2 (the real instance catalog and prices), and plays a scenario: timed steps that apply YAML,
scale Deployments, inject capacity errors and interruptions, wait for and expect conditions. Prints a
timeline in simulated time and, after each wait, the node table and the cluster's $/h.

options:
  --scenario FILE    scenario to run (default scenarios/guide-inflate.yaml; format in docs/controller.md)
  --speed N          simulated seconds per wall second (default: the scenario's, else 20); 0 = jump from
                     event to event (as fast as possible, deterministic)
  --serve            after the scenario, keep the API server up (https, with a bearer token) and print
                     the path of a kubeconfig (mode 0600) that kubectl can use
  --no-token         with --serve: let any local program call the API server without a token
  --region R         AWS region of the catalog (default: the scenario's, else ap-northeast-2)
  --port N           API server port (default: a free one)
  --log-level L      controller logs (debug, info, warn, error; default off)
  --log-file FILE    write controller logs to FILE instead of stderr
  -h, --help         show this help

exit status: 0 scenario passed, 1 a wait or expectation failed, 2 usage error or bad scenario
`;

interface Args {
  scenario: string;
  speed?: number;
  serve: boolean;
  token: boolean;
  region?: string;
  port?: number;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  logFile?: string;
}

const OPTIONS = {
  scenario: { type: 'string' },
  speed: { type: 'string' },
  serve: { type: 'boolean' },
  'no-token': { type: 'boolean' },
  region: { type: 'string' },
  port: { type: 'string' },
  'log-level': { type: 'string' },
  'log-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The options, or what is wrong with them. */
function readArgs(args: string[]): Args | string {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS });
  } catch (e) {
    return (e as Error).message;
  }
  const v = parsed.values;
  const out: Args = {
    scenario: v.scenario ?? DEFAULT_SCENARIO,
    serve: v.serve === true,
    token: v['no-token'] !== true,
  };
  if (v.scenario === '') return '--scenario needs a file';
  if (v.region === '') return '--region needs a value';
  if (v['log-file'] === '') return '--log-file needs a file';
  if (v.speed !== undefined) {
    const speed = Number(v.speed);
    if (!(speed >= 0) || !Number.isFinite(speed)) return '--speed must be a number >= 0';
    out.speed = speed;
  }
  if (v.port !== undefined) {
    const port = Number(v.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) return '--port must be a port number';
    out.port = port;
  }
  if (v['log-level'] !== undefined) {
    const level = LOG_LEVELS.find((l) => l === v['log-level']);
    if (level === undefined) return '--log-level must be debug, info, warn or error';
    out.logLevel = level;
  }
  if (v.region !== undefined) out.region = v.region;
  if (v['log-file'] !== undefined) out.logFile = v['log-file'];
  return out;
}

let epipeGuard = false;

/** `karpenter-ts sim | head` closes stdout early: stop quietly rather than crash on EPIPE. */
function guardEpipe(): void {
  if (epipeGuard) return;
  epipeGuard = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

async function loadScenario(a: Args, io: Io): Promise<{ file: string; scenario: Scenario } | undefined> {
  const file = resolve(io.cwd, a.scenario);
  try {
    return { file, scenario: parseScenario(await readFile(file, 'utf8'), relative(io.cwd, file) || file) };
  } catch (e) {
    io.err(
      e instanceof ScenarioError
        ? `karpenter-ts sim: scenario ${e.message}\n`
        : `karpenter-ts sim: cannot read scenario ${file}: ${(e as Error).message}\n`,
    );
    return undefined;
  }
}

/** `stop` ends --serve (default: SIGINT or SIGTERM). */
export async function run(args: string[], io: Io, stop?: Promise<void>): Promise<number> {
  if (args.includes('-h') || args.includes('--help')) {
    io.out(USAGE);
    return 0;
  }
  guardEpipe();
  const a = readArgs(args);
  if (typeof a === 'string') {
    io.err(`karpenter-ts sim: ${a}\n${USAGE}`);
    return 2;
  }
  const loaded = await loadScenario(a, io);
  if (!loaded) return 2;
  const { file, scenario } = loaded;
  const region = a.region ?? scenario.region ?? 'ap-northeast-2';
  if (!regionsInCatalog().includes(region)) {
    io.err(`karpenter-ts sim: region ${region} is not in the EC2 catalog (known: ${regionsInCatalog().join(', ')})\n`);
    return 2;
  }
  const speed = a.speed ?? scenario.speed ?? 20;
  await warmUp(scenario, dirname(file), region, simulationEngine());
  // Real ages in `kubectl get`: the clock starts now, unless the scenario says when.
  const start = scenario.start ?? Date.now();
  const clock = speed === 0 ? manualClock(start) : scaledClock(speed, start);
  const logDestination = a.logLevel
    ? a.logFile
      ? createWriteStream(resolve(io.cwd, a.logFile))
      : { write: (s: string) => io.err(s) }
    : undefined;
  const sim = await startSimulation({
    clock,
    region,
    ...(scenario.clusterName ? { clusterName: scenario.clusterName } : {}),
    ...(a.port !== undefined ? { port: a.port } : {}),
    // kubectl sends a token over https only: a server left up for it speaks TLS.
    tls: a.serve,
    ...(a.token ? {} : { token: false as const }),
    ...(scenario.capacityReservations ? { capacityReservations: scenario.capacityReservations } : {}),
    ...(scenario.options ? { options: scenario.options } : {}),
    logLevel: a.logLevel ?? 'silent',
    ...(logDestination ? { logDestination } : {}),
  });
  io.out(`karpenter-ts sim: scenario ${scenario.name}${scenario.description ? ` (${scenario.description})` : ''}\n`);
  io.out(
    `region ${region}, cluster ${scenario.clusterName ?? 'my-cluster'}, clock ${speed === 0 ? 'event to event' : `${speed}x`}; times are simulated [mm:ss]\n\n`,
  );
  try {
    const ok = await play(sim, scenario, dirname(file), io);
    if (a.serve) await serve(sim, clock, speed, io, stop ?? signalled());
    return ok ? 0 : 1;
  } finally {
    await sim.close();
  }
}

async function play(sim: Simulation, scenario: Scenario, baseDir: string, io: Io): Promise<boolean> {
  const started = performance.now();
  const result = await runScenario(sim, scenario, { baseDir, print: (l) => io.out(`${l}\n`) });
  io.out(
    `\n${result.ok ? 'PASSED' : 'FAILED'}: scenario ${scenario.name} in ${stamp(result.simMs)} of simulated time (${((performance.now() - started) / 1000).toFixed(1)} s wall)\n`,
  );
  for (const f of result.failures) io.out(`  - ${f}\n`);
  return result.ok;
}

function signalled(): Promise<void> {
  return new Promise<void>((r) => {
    process.once('SIGINT', () => r());
    process.once('SIGTERM', () => r());
  });
}

/** Leaves the API server up for kubectl until `stop`, with a kubeconfig only this user can read. */
async function serve(sim: Simulation, clock: SimClock, speed: number, io: Io, stop: Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'karpenter-ts-sim-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeConfigText(sim.cluster), { mode: 0o600 });
  const auth = sim.cluster.token ? 'the kubeconfig holds its token' : 'no token: any local program may call it';
  io.out(
    `\nThe simulated API server is up at ${sim.cluster.url} (clock ${speed === 0 ? 'now in real time' : `${speed}x`}; ${auth}).\n  export KUBECONFIG=${kubeconfig}\n  kubectl get nodepools,nodeclaims,nodes\nPress Ctrl-C to stop.\n`,
  );
  for (const l of nodeTable(sim)) io.out(`  ${l}\n`);
  // One line per thing the controller does while kubectl drives the cluster (NodeClaims, nodes, events).
  io.out('\nWhat the controller does from now on (times since serving began):\n');
  const timeline = new Timeline(sim, (line) => io.out(`${line}\n`));
  let stopped = false;
  void stop.then(() => (stopped = true));
  // An event-to-event clock would stand still while kubectl users wait: let it run in real time.
  if (clock.mode === 'manual') {
    while (!stopped) await Promise.race([stop, clock.advance(250).then(() => new Promise((r) => setTimeout(r, 250)))]);
  }
  await stop;
  timeline.close();
  await rm(dir, { recursive: true, force: true });
}
