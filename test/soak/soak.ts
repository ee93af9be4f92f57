// The randomized fault soak: the real controller (two replicas electing a leader) against the simulator,
// on simulated time, for H hours of workload churn while faults are injected at random, with the
// invariants of invariants.ts checked all the while. A seed names the whole schedule (schedule.ts), so a
// failing run is run again with the command the report prints:
//
//   npm run soak -- --hours 4 --seed 7
//
// The run: the cluster comes up (a NodeClass, one NodePool with a disruption budget, three Deployments,
// two with PodDisruptionBudgets), then the schedule plays out in 15-second steps of simulated time with
// the periodic checks after each; replicas that die (killed, or stepped down after losing the lease) are
// replaced after 20-60 s, half of them meeting failing lists as they start. A quiet tail (no new faults)
// follows, for garbage collection and pending pods to settle, then the final checks.
import { parseArgs } from 'node:util';
import type { Operator } from '../../controller/main.ts';
import { leaks } from '../support/drills.ts';
import { deployment, guide, simulation, type Simulation } from '../support/environment.ts';
import { CloudFaults } from './cloud.ts';
import { INVARIANTS, InvariantMonitor, type InvariantStats } from './invariants.ts';
import { Rng } from './rng.ts';
import {
  FAULT_KINDS,
  schedule,
  WORKLOAD_KINDS,
  type EventKind,
  type FaultKind,
  type WorkloadKind,
} from './schedule.ts';

interface SoakOptions {
  readonly hours: number;
  readonly seed: number;
  /** Simulated minutes after the last fault for things to settle (default 20). */
  readonly quietMinutes?: number;
  /** Progress lines (default none). */
  readonly progress?: (line: string) => void;
}

interface SoakReport {
  readonly seed: number;
  readonly hours: number;
  readonly quietMinutes: number;
  readonly wallMs: number;
  readonly faults: Record<FaultKind, number>;
  readonly workload: Record<WorkloadKind, number>;
  readonly invariants: InvariantStats;
  /** What is left unmatched at the end (instances, NodeClaims, Nodes), after the quiet tail. */
  readonly leaks: readonly string[];
  readonly cluster: {
    readonly launches: number;
    readonly maxLiveInstances: number;
    readonly replicasStarted: number;
    readonly leaderChanges: number;
    readonly lostLaunches: number;
    readonly partialLaunches: number;
  };
  /** A failure of the soak itself (the simulation threw), if any. */
  readonly error?: string;
  readonly passed: boolean;
}

const STEP_MS = 15_000;
const POOL = 'soak';
const BUDGET_NODES = 2;
const ELECTION = { 'disable-leader-election': 'false', 'leader-election-namespace': 'kube-system' };
const APPS = [
  { name: 'web', cpu: '500m', memory: '512Mi', min: 2, max: 14 },
  { name: 'api', cpu: '1', memory: '1Gi', min: 3, max: 10 },
  { name: 'batch', cpu: '2', memory: '2Gi', min: 0, max: 12 },
] as const;
const PDBS = [
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'default' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
  },
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'api', namespace: 'default' },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'api' } } },
  },
];

/** One NodePool: spot and on-demand, consolidation, a budget of two nodes. */
const NODEPOOL = JSON.stringify({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: POOL },
  spec: {
    template: {
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
          { key: 'karpenter.k8s.aws/instance-size', operator: 'In', values: ['large', 'xlarge', '2xlarge'] },
        ],
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        expireAfter: '720h',
      },
    },
    disruption: {
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      budgets: [{ nodes: String(BUDGET_NODES) }],
    },
  },
});

/** Everything a run changes as it goes. */
interface Run {
  readonly sim: Simulation;
  readonly rng: Rng;
  readonly cloud: CloudFaults;
  readonly monitor: InvariantMonitor;
  readonly faults: Record<FaultKind, number>;
  readonly workload: Record<WorkloadKind, number>;
  replicaSeq: number;
  restartAt: number | undefined;
  leader: string | undefined;
  leaderChanges: number;
  maxLive: number;
  driftSeq: number;
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const started = performance.now();
  const quietMinutes = o.quietMinutes ?? 20;
  const run = await bringUp(o.seed);
  let error: string | undefined;
  try {
    await playSchedule(run, o);
    run.cloud.disarm();
    run.sim.cluster.server.faults.reset();
    await advance(run, quietMinutes * 60_000, false);
  } catch (e) {
    error = e instanceof Error ? (e.stack ?? e.message) : String(e);
  }
  const report = finish(run, o, quietMinutes, performance.now() - started, error);
  await run.sim.close().catch(() => undefined);
  return report;
}

async function bringUp(seed: number): Promise<Run> {
  const rng = new Rng(seed ^ 0x5eed);
  // The cloud faults and the monitor need the simulation, and its first replica needs them: bound late.
  let now = (): number => 0;
  const cloud = new CloudFaults(() => now(), new Rng(seed ^ 0xc10d));
  let monitor: InvariantMonitor | undefined;
  const sim = await simulation({
    options: ELECTION,
    leaderElection: { identity: 'r1' },
    cloud: (cp) => cloud.wrap(cp, (id) => monitor?.beforeTerminate(id, 'r1')),
  });
  now = () => sim.clock.now();
  monitor = new InvariantMonitor(sim, (pool) => (pool === POOL ? BUDGET_NODES : undefined));
  const run: Run = {
    sim,
    rng,
    cloud,
    monitor,
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    workload: Object.fromEntries(WORKLOAD_KINDS.map((k) => [k, 0])) as Record<WorkloadKind, number>,
    replicaSeq: 1,
    restartAt: undefined,
    leader: 'r1',
    leaderChanges: 0,
    maxLive: 0,
    driftSeq: 0,
  };
  await startReplica(run, false);
  await sim.apply(guide('guide-03.yaml'));
  await sim.apply(NODEPOOL);
  for (const a of APPS) await sim.apply(deployment(a.name, Math.max(a.min, 2), { cpu: a.cpu, memory: a.memory }));
  for (const p of PDBS) await sim.apply(JSON.stringify(p));
  return run;
}

async function playSchedule(run: Run, o: SoakOptions): Promise<void> {
  const durationMs = o.hours * 3_600_000;
  const events = schedule(o.seed, durationMs);
  const t0 = run.sim.clock.now();
  let next = 0;
  let lastHour = 0;
  while (run.sim.clock.now() - t0 < durationMs) {
    await advance(run, STEP_MS, true);
    const elapsed = run.sim.clock.now() - t0;
    while (next < events.length && events[next]!.at <= elapsed) await apply(run, events[next++]!.kind);
    if (o.progress && Math.floor(elapsed / 3_600_000) > lastHour) {
      lastHour = Math.floor(elapsed / 3_600_000);
      o.progress(
        `hour ${lastHour}: ${run.monitor.stats().breaches.length} breaches, ${liveInstances(run)} instances, ${run.sim.replicas.filter((r) => r.alive()).length} replicas`,
      );
    }
  }
}

/** Moves simulated time on in steps, with the periodic checks and replica upkeep after each. */
async function advance(run: Run, ms: number, upkeep: boolean): Promise<void> {
  for (let left = ms; left > 0; left -= STEP_MS) {
    await run.sim.clock.advance(Math.min(STEP_MS, left));
    run.monitor.check();
    run.maxLive = Math.max(run.maxLive, liveInstances(run));
    noteLeader(run);
    await keepReplicas(run, upkeep);
  }
}

const liveInstances = (run: Run): number =>
  run.sim.provider.all().filter((i) => i.instance.state !== 'terminated' && i.instance.state !== 'shutting-down')
    .length;

function noteLeader(run: Run): void {
  const holder = (
    run.sim.cluster.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election')?.spec as
      | { holderIdentity?: string }
      | undefined
  )?.holderIdentity;
  if (holder && holder !== run.leader) {
    run.leader = holder;
    run.leaderChanges++;
  }
}

/** Two replicas run at all times, give or take the 20-60 s a dead one takes to come back. */
async function keepReplicas(run: Run, faulty: boolean): Promise<void> {
  const live = run.sim.replicas.filter((r) => r.alive()).length;
  const now = run.sim.clock.now();
  if (live >= 2) return;
  if (run.restartAt === undefined) {
    run.restartAt = now + run.rng.int(20, 60) * 1_000;
    return;
  }
  if (now < run.restartAt) return;
  run.restartAt = undefined;
  await startReplica(run, faulty && run.rng.chance(0.5));
}

async function startReplica(run: Run, failingLists: boolean): Promise<Operator> {
  const identity = `r${++run.replicaSeq}`;
  if (failingLists) {
    run.faults['list-failure-at-start']++;
    run.sim.cluster.server.faults.failNext({
      resource: run.rng.pick(['pods', 'nodes', 'nodeclaims']),
      verbs: ['list'],
      code: 500,
      count: run.rng.int(2, 6),
    });
  }
  return run.sim.startReplica({
    name: identity,
    leaderElection: { identity },
    cloud: (cp) => run.cloud.wrap(cp, (id) => run.monitor.beforeTerminate(id, identity)),
  });
}

async function apply(run: Run, kind: EventKind): Promise<void> {
  if ((WORKLOAD_KINDS as readonly string[]).includes(kind)) {
    if (await applyWorkload(run, kind as WorkloadKind)) run.workload[kind as WorkloadKind]++;
  } else if (await applyFault(run, kind as FaultKind)) run.faults[kind as FaultKind]++;
}

async function applyWorkload(run: Run, kind: WorkloadKind): Promise<boolean> {
  const { sim, rng } = run;
  switch (kind) {
    case 'scale': {
      const a = rng.pick(APPS);
      await sim.kube.patch(
        'Deployment',
        a.name,
        { spec: { replicas: rng.int(a.min, a.max) } },
        { namespace: 'default' },
      );
      return true;
    }
    case 'rollout': {
      const a = rng.pick(APPS);
      await sim.kube.patch(
        'Deployment',
        a.name,
        { spec: { template: { metadata: { annotations: { 'soak/restartedAt': String(sim.clock.now()) } } } } },
        { namespace: 'default' },
      );
      return true;
    }
    case 'spot-interruption': {
      const spot = sim.provider
        .all()
        .filter((i) => i.instance.state === 'running' && i.instance.capacityType === 'spot');
      if (!spot.length) return false;
      sim.provider.interrupt(rng.pick(spot).instance.providerID, 'spotInterruption');
      return true;
    }
    case 'drift':
      await sim.kube.patch('EC2NodeClass', 'default', {
        spec: { tags: { 'soak/generation': String(++run.driftSeq) } },
      });
      return true;
  }
}

const API_RESOURCES = ['nodeclaims', 'nodes', 'pods', 'nodepools'] as const;

async function applyFault(run: Run, kind: FaultKind): Promise<boolean> {
  const { sim, rng, cloud } = run;
  const faults = sim.cluster.server.faults;
  switch (kind) {
    case 'api-500':
    case 'api-409':
      faults.failNext({
        resource: rng.pick(API_RESOURCES),
        code: kind === 'api-500' ? 500 : 409,
        count: rng.int(1, 3),
        ...(kind === 'api-409'
          ? { message: 'the object has been modified; please apply your changes to the latest version and try again' }
          : {}),
      });
      return true;
    case 'api-429':
      // Throttling on writes, and on evictions (which a PDB also answers with 429).
      if (rng.chance(0.5))
        faults.failNext({
          resource: 'pods',
          verbs: ['create'],
          subresource: 'eviction',
          code: 429,
          count: rng.int(1, 3),
        });
      else faults.failNext({ resource: rng.pick(API_RESOURCES), code: 429, count: rng.int(1, 3) });
      return true;
    case 'list-failure':
      // Watches end with 410 Gone, and the relists that follow fail for a while.
      faults.failNext({
        resource: rng.pick(['pods', 'nodes', 'nodeclaims', 'nodepools']),
        verbs: ['list'],
        code: 500,
        count: rng.int(1, 5),
      });
      faults.dropWatches({ gone: true });
      return true;
    case 'watch-failure':
      if (rng.chance(0.5)) faults.nextWatchGone(rng.int(1, 3));
      faults.dropWatches({ gone: rng.chance(0.5) });
      return true;
    case 'cloud-500':
      cloud.arm(rng.pick(['create', 'delete', 'get', 'list'] as const), 'fail', rng.int(1, 3));
      return true;
    case 'hung-call':
      cloud.arm(rng.pick(['create', 'delete', 'get', 'list'] as const), 'hang', 1);
      return true;
    case 'lost-launch':
      cloud.arm('create', 'lost', 1);
      return true;
    case 'controller-kill': {
      const leader = sim.replicas.find((r) => r.alive() && r.leading());
      if (!leader) return false;
      leader.kill();
      return true;
    }
    case 'leader-failover':
      // The leader's lease renewals fail until it steps down (and exits, as controller-runtime does).
      faults.failNext({ resource: 'leases', verbs: ['update'], code: 500, count: 8 });
      return true;
    case 'ice': {
      const zone = rng.pick(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c']);
      sim.provider.blockCapacity({ zone, capacityType: 'spot' });
      const until = sim.clock.now() + rng.int(3, 10) * 60_000;
      sim.clock.setTimer(until - sim.clock.now(), () => sim.provider.unblockCapacity());
      return true;
    }
    case 'partial-fleet':
      cloud.partialFleets(rng.int(2, 5) * 60_000);
      return true;
    case 'list-failure-at-start':
      return false;
  }
}

function finish(run: Run, o: SoakOptions, quietMinutes: number, wallMs: number, error: string | undefined): SoakReport {
  run.monitor.check();
  const invariants = run.monitor.stats();
  run.monitor.stop();
  const left = leaks(run.sim);
  return {
    seed: o.seed,
    hours: o.hours,
    quietMinutes,
    wallMs,
    faults: run.faults,
    workload: run.workload,
    invariants,
    leaks: left,
    cluster: {
      launches: run.sim.provider.all().length,
      maxLiveInstances: run.maxLive,
      replicasStarted: run.replicaSeq,
      leaderChanges: run.leaderChanges,
      lostLaunches: run.cloud.effects.lostLaunches,
      partialLaunches: run.cloud.effects.partialLaunches,
    },
    ...(error ? { error } : {}),
    passed: !error && invariants.breaches.length === 0 && left.length === 0,
  };
}

/** The invariant report, as `npm run soak` prints it. */
export function formatReport(r: SoakReport): string {
  const counts = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  const byInvariant = INVARIANTS.map((i) => {
    const n = r.invariants.breaches.filter((b) => b.invariant === i).length;
    return `  ${i.padEnd(10)} ${String(n).padStart(3)} breaches  (${r.invariants.checks[i]} checks)`;
  });
  const lines = [
    `karpenter-ts fault soak: seed ${r.seed}, ${r.hours} simulated hours + ${r.quietMinutes} min quiet tail, ${(r.wallMs / 1000).toFixed(1)} s wall`,
    `faults injected (${total(r.faults)}): ${counts(r.faults)}`,
    `workload changes (${total(r.workload)}): ${counts(r.workload)}`,
    `cluster: ${r.cluster.launches} instances launched (at most ${r.cluster.maxLiveInstances} live), ${r.cluster.lostLaunches} launches whose answer was lost, ${r.cluster.partialLaunches} partial-fleet refusals, ${r.cluster.replicasStarted} controller replicas started, ${r.cluster.leaderChanges} leader changes`,
    `pods: longest without a node ${Math.round(r.invariants.longestPendingMs / 1000)} s, ${r.invariants.explainedWaits} waits past the bound explained by FailedScheduling`,
    'invariants:',
    ...byInvariant,
    `  leaks at the end: ${r.leaks.length}`,
    ...r.invariants.breaches.map((b) => `  BREACH ${new Date(b.at).toISOString()} [${b.invariant}] ${b.message}`),
    ...r.leaks.map((l) => `  LEAK ${l}`),
    ...(r.error ? [`  the soak itself failed: ${r.error}`] : []),
    `result: ${r.passed ? 'PASS' : 'FAIL'}`,
    `reproduce: npm run soak -- --hours ${r.hours} --seed ${r.seed}`,
  ];
  return lines.join('\n');
}

/** `npm run soak -- --hours H --seed S [--quiet-minutes M]`; exit 0 when every invariant held, 1 otherwise, 2 on bad arguments. */
export async function main(argv: readonly string[]): Promise<number> {
  const args = readArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`soak: ${args}\nusage: npm run soak -- --hours H --seed S [--quiet-minutes M]\n`);
    return 2;
  }
  process.stdout.write(
    `soak: seed ${args.seed}, ${args.hours} simulated hours (reproduce: npm run soak -- --hours ${args.hours} --seed ${args.seed})\n`,
  );
  const report = await runSoak({ ...args, progress: (l) => process.stdout.write(`soak: ${l}\n`) });
  process.stdout.write(`${formatReport(report)}\n`);
  return report.passed ? 0 : 1;
}

function readArgs(argv: readonly string[]): { hours: number; seed: number; quietMinutes?: number } | string {
  const { tokens } = parseArgs({
    args: [...argv],
    options: { hours: { type: 'string' }, seed: { type: 'string' }, 'quiet-minutes': { type: 'string' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const out: { hours: number; seed: number; quietMinutes?: number } = {
    hours: 1,
    seed: Math.floor(Math.random() * 2 ** 31),
  };
  for (const t of tokens) {
    if (t.kind === 'positional') return `unknown argument ${JSON.stringify(t.value)}`;
    if (t.kind !== 'option') continue;
    if (!['hours', 'seed', 'quiet-minutes'].includes(t.name)) return `unknown argument ${JSON.stringify(t.rawName)}`;
    const n = Number(t.value);
    if (t.value === undefined || t.value === '' || !Number.isFinite(n) || n < 0)
      return `${t.rawName} needs a number >= 0, got ${JSON.stringify(t.value)}`;
    if (t.name === 'hours') out.hours = n;
    else if (t.name === 'seed') {
      if (!Number.isInteger(n) || n >= 2 ** 32) return `--seed must be an integer below 2^32, got ${t.value}`;
      out.seed = n;
    } else out.quietMinutes = n;
  }
  if (out.hours <= 0) return '--hours must be more than 0';
  return out;
}
