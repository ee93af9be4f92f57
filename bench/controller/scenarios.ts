// The controller benchmark's scenarios. Each runs the real controller (a child process) against the
// simulated cluster and returns one row; what the controller does is timed inside its own process (child.ts),
// setting the cluster up is not timed.
//
// - provision-empty: 10,000 pending pods (the solver suite's generic mix) onto an empty cluster under the guide's
//   NodePool and EC2NodeClass, in rounds; after each round every pod and NodeClaim is deleted again. A warm-up
//   round of 1,000 pods comes first. Instances never boot (a launch takes an hour), so rounds stay cheap.
// - steady-churn: 5,000 nodes running 100,000 pods (one instance type, 20 pods a node), set up through the
//   controller itself; then churn: every second 100 pods deleted and 100 created (they fit the freed room),
//   and every 10 s 50 pods that each need a new node.
// - consolidate-fragmented: the same cluster after 60% of its small pods are deleted at random; consolidation
//   is turned on (consolidateAfter 0s) and runs for a while.
import { performance } from 'node:perf_hooks';
import { mulberry32 } from '../../engine/index.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import type { ObservedDecision, ObservedEvents, PhaseStats } from '../../sim/remote/protocol.ts';
import { startHarness, waitFor, type Harness } from './harness.ts';
import { requestsBetween, SetupTimeline } from './timeline.ts';
import {
  createPendingPods,
  deletePods,
  genericShapes,
  guideNodeClass,
  guideNodePool,
  LARGE,
  NAMESPACE,
  SMALL,
  uniformNodePool,
  type PodShape,
} from './workload.ts';

export interface ControllerRow {
  readonly suite: 'controller';
  readonly scenario: string;
  readonly nodes: number;
  readonly pendingPods: number;
  /** Median of: batch window closed -> first NodeClaim created, ms (undefined when no decision was made). */
  readonly decisionMs?: number;
  readonly decisions: number;
  readonly eventLoopP99Ms: number;
  readonly eventLoopMaxMs: number;
  /** Peak resident set of the controller process (main thread and its engine worker threads), MiB. */
  readonly rssMiB: number;
  /** Its resident set when the phase started (what the set-up left), MiB. */
  readonly rssStartMiB: number;
  /** The controller's main-thread V8 heap in use at the phase's end, MiB. */
  readonly heapMiB: number;
  /** Median time of the disruption passes that ran the engine (the decision-evaluation metric), ms. */
  readonly consolidationPlanMs?: number;
  readonly passes?: number;
  /** Seconds measured (setup and clean-up excluded). */
  readonly seconds: number;
  readonly [extra: string]: unknown;
}

interface ScenarioOptions {
  readonly quick: boolean;
  readonly log: (m: string) => void;
}

const median = (xs: readonly number[]): number | undefined => {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** The compiled controller (dist/) unless BENCH_CONTROLLER_FROM=source. */
const from = (): 'dist' | 'source' => (process.env['BENCH_CONTROLLER_FROM'] === 'source' ? 'source' : 'dist');

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const ready = (o: KObject | undefined): boolean =>
  ((o?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );

/** Creates the node class and NodePool in-process and waits until the controller has made both Ready. */
async function applyPools(h: Harness, nodePool: KObject): Promise<void> {
  h.cluster.api.create('ec2nodeclasses.karpenter.k8s.aws', undefined, guideNodeClass());
  h.cluster.api.create('nodepools.karpenter.sh', undefined, nodePool);
  const name = nodePool.metadata.name!;
  await waitFor(
    'the EC2NodeClass and NodePool to be Ready',
    () =>
      ready(h.cluster.api.find('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default')) &&
      ready(h.cluster.api.find('nodepools.karpenter.sh', undefined, name)),
    60_000,
  );
}

/**
 * The decision latency of the burst that started at `since`: from the batch window that closed last before the
 * first NodeClaim created after `since`, to that NodeClaim.
 */
export function decisionAfter(events: ObservedEvents, since: number): number | undefined {
  const first = events.nodeClaimsAdded.find((n) => n.at >= since);
  if (!first) return undefined;
  const closed = events.windowsClosed.filter((t) => t >= since && t <= first.at).at(-1);
  return closed === undefined ? undefined : first.at - closed;
}

/** The burst's decision (as decisionAfter finds it): the last decision between its start and its first NodeClaim. */
function decisionOf(events: ObservedEvents, since: number): ObservedDecision | undefined {
  const first = events.nodeClaimsAdded.find((n) => n.at >= since);
  if (!first) return undefined;
  return events.decisions.filter((d) => d.at >= since && d.at <= first.at).at(-1);
}

/** The plan of the burst's decision: `taken` (solved ahead) or why it was solved afresh. */
export function speculativeAfter(events: ObservedEvents, since: number): string | undefined {
  return decisionOf(events, since)?.speculative;
}

/**
 * How the burst's decision got its plan, for a stderr line: `taken` or why not, how long its engine call queued
 * behind earlier calls, and what it found of the solve ahead at the close.
 */
export function planAfter(events: ObservedEvents, since: number): string {
  const d = decisionOf(events, since);
  if (!d) return '?';
  const queued = d.queuedMs !== undefined ? `, queued ${d.queuedMs.toFixed(0)} ms` : '';
  return `${d.speculative}${queued}${d.ahead ? `, solve ahead at the close: ${d.ahead}` : ''}`;
}

/**
 * How many provisioning decisions took the speculative plan, and why the others did not (a row's `speculative`);
 * what each found of the solve ahead at the close (`ahead`), and each one's wait behind the model's earlier calls
 * (`queuedMs`, in order).
 */
export function speculativeCounts(events: ObservedEvents): {
  taken: number;
  notTaken: Record<string, number>;
  ahead: Record<string, number>;
  queuedMs: number[];
} {
  const notTaken: Record<string, number> = {};
  const ahead: Record<string, number> = {};
  const queuedMs: number[] = [];
  let taken = 0;
  for (const d of events.decisions) {
    if (d.speculative === 'taken') taken++;
    else notTaken[d.speculative] = (notTaken[d.speculative] ?? 0) + 1;
    if (d.ahead) ahead[d.ahead] = (ahead[d.ahead] ?? 0) + 1;
    if (d.queuedMs !== undefined) queuedMs.push(Math.round(d.queuedMs));
  }
  return { taken, notTaken, ahead, queuedMs };
}

/**
 * Waits for the first NodeClaim created since `since`, then until the controller is idle (no reconcile, no
 * request in flight) and no NodeClaim has appeared for `quietMs`.
 */
async function nodeClaimsSettled(h: Harness, since: number, quietMs: number, timeoutMs: number): Promise<void> {
  let count = -1;
  let stableSince = now();
  await waitFor(
    'the first NodeClaim of the burst',
    async () => (await h.request('events')).nodeClaimsAdded.some((n) => n.at >= since),
    timeoutMs,
  );
  await waitFor(
    'NodeClaim creation to finish',
    async () => {
      const c = h.list('nodeclaims.karpenter.sh').length;
      if (c !== count || (await h.request('status')).busy) {
        count = c;
        stableSince = now();
      }
      return now() - stableSince >= quietMs;
    },
    timeoutMs,
  );
}

/** Deletes every pod and NodeClaim, waits until the controller has terminated them all and is idle again. */
async function emptyCluster(h: Harness): Promise<void> {
  await deletePods(
    h.cluster.api,
    h
      .list('pods')
      .filter((p) => p.metadata.namespace === NAMESPACE)
      .map((p) => p.metadata.name!),
  );
  // The NodeClaims go only once the controller has seen every pod go: deleted while it still holds some of the
  // deleted pods as pending, they would leave those pods without capacity, and its next decision would launch for
  // pods that no longer exist (launch traffic inside the measured phase that no workload asked for).
  await waitFor(
    'the controller to see the deleted pods go',
    async () => (await h.request('status')).pendingPods === 0,
    600_000,
    250,
  );
  // A decision still in flight when the pods go can create NodeClaims after the first sweep; each poll deletes
  // those too, so the wait ends when the controller has terminated everything it made.
  const deleteNodeClaims = () => {
    for (const nc of h.list('nodeclaims.karpenter.sh'))
      if (!nc.metadata.deletionTimestamp) h.cluster.api.delete('nodeclaims.karpenter.sh', undefined, nc.metadata.name!);
  };
  deleteNodeClaims();
  await waitFor(
    'every NodeClaim to be terminated',
    () => {
      deleteNodeClaims();
      return h.list('nodeclaims.karpenter.sh').length === 0 && h.list('nodes').length === 0;
    },
    600_000,
    500,
    () => leftOver(h),
  );
  await quiet(h);
}

/** What keeps a cluster from being empty: the NodeClaims and Nodes left, with what holds each (for a timeout). */
function leftOver(h: Harness): string {
  const claims = h.list('nodeclaims.karpenter.sh');
  const nodes = h.list('nodes');
  const describe = (o: KObject) => {
    const conditions = (
      ((o.status as { conditions?: unknown } | undefined)?.conditions ?? []) as { type: string; status: string }[]
    )
      .map((c) => `${c.type}=${c.status}`)
      .join(',');
    const deleting = o.metadata.deletionTimestamp ? `deleting since ${o.metadata.deletionTimestamp}` : 'not deleted';
    return `${o.metadata.name} (${deleting}; finalizers ${JSON.stringify(o.metadata.finalizers ?? [])}; ${conditions})`;
  };
  const sample = (xs: readonly KObject[]) => xs.slice(0, 5).map(describe).join('; ');
  return `${claims.length} NodeClaim(s) left: ${sample(claims)}; ${nodes.length} Node(s) left: ${sample(nodes)}`;
}

function row(
  scenario: string,
  nodes: number,
  pendingPods: number,
  stats: PhaseStats,
  decisions: readonly number[],
  extra: Partial<ControllerRow> = {},
): ControllerRow {
  const decisionMs = median(decisions);
  return {
    suite: 'controller',
    scenario,
    nodes,
    pendingPods,
    ...(decisionMs !== undefined ? { decisionMs } : {}),
    decisions: decisions.length,
    eventLoopP99Ms: stats.eventLoopP99Ms,
    eventLoopMaxMs: stats.eventLoopMaxMs,
    rssMiB: stats.rssPeakMiB,
    rssStartMiB: stats.rssStartMiB,
    heapMiB: stats.heapUsedMiB,
    workersMiB: workersMiB(stats),
    seconds: stats.seconds,
    memory: memoryBreakdown(stats),
    ...extra,
  };
}

/** The engine workers' resident heaps and wasm memories together, MiB. */
const workersMiB = (s: PhaseStats): number => s.workers.reduce((a, w) => a + w.heapPhysicalMiB + w.wasmMiB, 0);

const r1 = (x: number): number => Math.round(x * 10) / 10;
const roundAll = (o: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r1(v)]));

/** Where the controller process's memory was at the phase's end (docs/benchmarks.md, "Controller memory"). */
function memoryBreakdown(s: PhaseStats): Record<string, unknown> {
  const main = s.heapPhysicalMiB + s.externalMiB + s.mallocedMiB;
  return {
    rssWindows: s.rssWindowsMiB,
    rssEnd: r1(s.rssEndMiB),
    ...(s.rssAnonMiB !== undefined ? { rssAnon: r1(s.rssAnonMiB), rssFile: r1(s.rssFileMiB ?? 0) } : {}),
    ...(s.rssAfterGcMiB !== undefined ? { rssAfterGc: r1(s.rssAfterGcMiB) } : {}),
    main: {
      heapUsed: r1(s.heapUsedMiB),
      heapTotal: r1(s.heapTotalMiB),
      heapResident: r1(s.heapPhysicalMiB),
      heapLimit: r1(s.heapLimitMiB),
      ...(s.liveHeapMiB !== undefined ? { liveHeap: r1(s.liveHeapMiB) } : {}),
      external: r1(s.externalMiB),
      arrayBuffers: r1(s.arrayBuffersMiB),
      ...(s.liveArrayBuffersMiB !== undefined ? { liveArrayBuffers: r1(s.liveArrayBuffersMiB) } : {}),
      malloced: r1(s.mallocedMiB),
      spacesStart: roundAll(s.spacesStartMiB),
      spacesEnd: roundAll(s.spacesEndMiB),
    },
    workers: s.workers.map((w) => ({
      heapUsed: r1(w.heapUsedMiB),
      heapTotal: r1(w.heapTotalMiB),
      heapResident: r1(w.heapPhysicalMiB),
      heapLimit: r1(w.heapLimitMiB),
      ...(w.liveHeapMiB !== undefined ? { liveHeap: r1(w.liveHeapMiB) } : {}),
      wasm: r1(w.wasmMiB),
      models: w.models.length,
    })),
    // Code, thread stacks, malloc arenas and what the allocator keeps: RSS less what V8 accounts for.
    unaccounted: r1(s.rssEndMiB - main - workersMiB(s)),
    ...(s.mallocTrims ? { mallocTrims: { ...s.mallocTrims, totalMs: r1(s.mallocTrims.totalMs) } } : {}),
  };
}

/** 10,000 pending pods onto an empty cluster, `rounds` times after a warm-up round. */
export async function provisionEmpty(o: ScenarioOptions, pods = 10_000): Promise<ControllerRow> {
  const rounds = o.quick ? 1 : 3;
  const h = await startHarness({ launchMs: 3_600_000, from: from() });
  try {
    await applyPools(h, guideNodePool());
    const decisions: number[] = [];
    for (let r = 0; r <= rounds; r++) {
      const n = r === 0 ? 1_000 : pods;
      const since = now();
      const shapes = genericShapes(n, 42 + r);
      await createPendingPods(
        h.cluster.api,
        shapes.map((shape, i) => ({ name: `r${r}-${i}`, shape, app: `app-${i % 20}` })),
      );
      // Generous: on a loaded machine a round of 10,000 pods can take minutes to settle (the round is not timed).
      await nodeClaimsSettled(h, since, 2_000, 900_000);
      const events = await h.request('events');
      const d = decisionAfter(events, since);
      o.log(
        `provision-empty: round ${r}${r === 0 ? ' (warm-up)' : ''}: ${n} pods, ${h.list('nodeclaims.karpenter.sh').length} NodeClaims, decision ${d?.toFixed(0) ?? '?'} ms (speculative plan: ${planAfter(events, since)})`,
      );
      if (r > 0 && d !== undefined) decisions.push(d);
      await emptyCluster(h);
      // Measured from the first real round on: its pods, decision, NodeClaims and their clean-up.
      if (r === 0) await h.request('phase-start');
    }
    const speculative = speculativeCounts(await h.request('events'));
    const stats = await h.request('phase-end');
    return row('provision-empty', 0, pods, stats, decisions, { rounds, speculative });
  } finally {
    await h.close();
  }
}

/** How the big cluster's set-up went: its length, each step's times and the controller's requests. */
interface SetupReport {
  readonly seconds: number;
  readonly steps: ReturnType<SetupTimeline['summary']>;
  /** Batch windows closed during the set-up (each a provisioning decision's start). */
  readonly windows: number;
  readonly requests: Record<string, number>;
  /** Events in the cluster at the end of the set-up, by reason. */
  readonly events: Record<string, number>;
}

/** The 5,000-node cluster, set up through the controller: the pods pending, the controller provisions, the binder binds. */
async function bigCluster(
  h: Harness,
  nodes: number,
  o: ScenarioOptions,
): Promise<{ names: string[]; setup: SetupReport }> {
  await applyPools(h, uniformNodePool());
  const names = Array.from({ length: nodes * 20 }, (_, i) => `s-${i}`);
  const before = h.cluster.requests.tally();
  const timeline = new SetupTimeline(h.cluster.api, now);
  const t0 = now();
  await createPendingPods(
    h.cluster.api,
    names.map((name, i) => ({ name, shape: SMALL, app: `app-${i % 100}` })),
  );
  let reported = now();
  await waitFor(
    `${nodes} nodes running ${names.length} pods`,
    () => {
      const done = h.binder.pending === 0 && h.list('nodes').length >= nodes && running(h) >= names.length;
      if (!done && now() - reported > 30_000) {
        reported = now();
        const c = Object.entries(timeline.counts()).map(([k, v]) => `${k} ${v}`);
        o.log(`cluster after ${((now() - t0) / 1000).toFixed(0)} s: ${c.join(', ')}`);
      }
      return done;
    },
    3 * 3_600_000,
    1_000,
  );
  const setup: SetupReport = {
    seconds: Math.round((now() - t0) / 100) / 10,
    steps: timeline.summary(),
    windows: (await h.request('events')).windowsClosed.filter((t) => t >= t0).length,
    requests: Object.fromEntries(requestsBetween(before, h.cluster.requests.tally())),
    events: eventReasons(h.list('events')),
  };
  timeline.close();
  logSetup(o, h, setup);
  await quiet(h);
  return { names, setup };
}

function eventReasons(events: readonly KObject[]): Record<string, number> {
  const n = new Map<string, number>();
  for (const e of events) {
    const k = `${(e as { involvedObject?: { kind?: string } }).involvedObject?.kind ?? '?'} ${(e as { reason?: string }).reason ?? '?'}`;
    n.set(k, (n.get(k) ?? 0) + 1);
  }
  return Object.fromEntries([...n].sort((a, b) => b[1] - a[1]));
}

function logSetup(o: ScenarioOptions, h: Harness, s: SetupReport): void {
  o.log(`cluster: ${h.list('nodes').length} nodes, ${running(h)} pods running, set up in ${s.seconds.toFixed(0)} s`);
  o.log(`cluster set-up, seconds from the first pod written (first / median / 90% / last):`);
  for (const [step, t] of Object.entries(s.steps))
    o.log(`  ${step.padEnd(22)} ${String(t.count).padStart(7)}  ${t.first} / ${t.p50} / ${t.p90} / ${t.last}`);
  o.log(`  batch windows closed: ${s.windows}`);
  const top = Object.entries(s.requests).slice(0, 12);
  o.log(`  controller requests: ${top.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  o.log(
    `  events by reason: ${Object.entries(s.events)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
}

/** How many NodeClaims carry each of Launched, Registered, Initialized and Consolidatable as True. */
function claimConditions(h: Harness): string {
  const claims = h.list('nodeclaims.karpenter.sh');
  const n = new Map<string, number>();
  for (const c of claims)
    for (const cond of (c.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ??
      [])
      if (cond.status === 'True') n.set(cond.type, (n.get(cond.type) ?? 0) + 1);
  const shown = ['Launched', 'Registered', 'Initialized', 'Consolidatable'].map((t) => `${t} ${n.get(t) ?? 0}`);
  return `${claims.length} NodeClaims: ${shown.join(', ')}`;
}

const running = (h: Harness): number =>
  h.list('pods').filter((p) => (p.status as { phase?: string } | undefined)?.phase === 'Running').length;

/** Waits until the controller has caught up (not busy) for a second. */
async function quiet(h: Harness): Promise<void> {
  let since = now();
  await waitFor(
    'the controller to go idle',
    async () => {
      const s = await h.request('status');
      if (s.busy || !s.synced) since = now();
      return now() - since >= 1_000;
    },
    600_000,
    250,
  );
}

/** Removes and returns xs[i] (the last element takes its place). */
function takeAt<T>(xs: T[], i: number): T {
  const x = xs[i]!;
  xs[i] = xs[xs.length - 1]!;
  xs.pop();
  return x;
}

/**
 * Churn on the big cluster for `seconds`: returns the decision latencies of the bursts of large pods, and how many
 * of the phase's decisions took the speculative plan.
 */
async function churn(
  h: Harness,
  small: string[],
  seconds: number,
  o: ScenarioOptions,
): Promise<{ decisions: number[]; speculative: ReturnType<typeof speculativeCounts> }> {
  const rng = mulberry32(7);
  const bursts: number[] = [];
  let made = 0;
  for (let s = 0; s < seconds; s++) {
    const tick = now();
    const gone = Array.from({ length: 100 }, () => takeAt(small, Math.floor(rng() * small.length)));
    await deletePods(h.cluster.api, gone);
    const fresh = Array.from({ length: 100 }, () => `c-${made++}`);
    small.push(...fresh);
    await createPendingPods(
      h.cluster.api,
      fresh.map((name) => ({ name, shape: SMALL, app: 'churn' })),
    );
    if (s % 10 === 5) {
      bursts.push(now());
      await createPendingPods(
        h.cluster.api,
        Array.from({ length: 50 }, (_, i) => ({ name: `l-${s}-${i}`, shape: LARGE as PodShape, app: 'large' })),
      );
    }
    await sleep(Math.max(0, 1_000 - (now() - tick)));
  }
  await sleep(5_000);
  const events = await h.request('events');
  const decisions = bursts.map((t) => decisionAfter(events, t)).filter((d): d is number => d !== undefined);
  const plans = bursts.map((t) => planAfter(events, t));
  o.log(
    `steady-churn: ${seconds} s, ${bursts.length} bursts, decisions ${decisions.map((d) => d.toFixed(0)).join(', ')} ms (speculative plans: ${plans.join('; ')})`,
  );
  return { decisions, speculative: speculativeCounts(events) };
}

/**
 * Only the big cluster's set-up, measured as a phase of its own (BENCH_CONTROLLER_SCENARIOS=setup): the
 * controller's event loop and memory while it brings up `nodes` nodes for 20 times as many pending pods.
 */
export async function setupScenario(o: ScenarioOptions, nodes = 5_000): Promise<ControllerRow> {
  const h = await startHarness({ launchMs: 0, from: from() });
  try {
    await h.request('phase-start');
    const { names, setup } = await bigCluster(h, nodes, o);
    return row('setup', h.list('nodes').length, names.length, await h.request('phase-end'), [], {
      setupSeconds: setup.seconds,
      setup,
    });
  } finally {
    await h.close();
  }
}

/** How long consolidate-fragmented runs: BENCH_CONTROLLER_CONSOLIDATE_SECONDS, else 90 s (40 s with --quick). */
function consolidateSeconds(quick: boolean): number {
  const v = process.env['BENCH_CONTROLLER_CONSOLIDATE_SECONDS'];
  if (v === undefined || v === '') return quick ? 40 : 90;
  const s = Number(v);
  if (!Number.isInteger(s) || s <= 0)
    throw new Error(`BENCH_CONTROLLER_CONSOLIDATE_SECONDS: "${v}" is not a whole number of seconds above 0`);
  return s;
}

/** Lets consolidation run for `seconds`, logging the node and NodeClaim counts every 10 s. */
async function consolidating(h: Harness, seconds: number, o: ScenarioOptions): Promise<void> {
  const start = now();
  for (let t = 10; t < seconds; t += 10) {
    await sleep(Math.max(0, start + t * 1_000 - now()));
    o.log(
      `consolidate-fragmented: after ${t} s: ${h.list('nodes').length} nodes, ${h.list('nodeclaims.karpenter.sh').length} NodeClaims`,
    );
  }
  await sleep(Math.max(0, start + seconds * 1_000 - now()));
}

/** steady-churn and consolidate-fragmented on one 5,000-node cluster. */
export async function bigClusterScenarios(o: ScenarioOptions, nodes = 5_000): Promise<ControllerRow[]> {
  const h = await startHarness({ launchMs: 0, from: from() });
  try {
    const { names: small, setup } = await bigCluster(h, nodes, o);
    const before = h.list('nodes').length;
    o.log(`steady-churn: at the start: ${claimConditions(h)}`);
    await h.request('phase-start');
    const { decisions, speculative } = await churn(h, small, o.quick ? 20 : 60, o);
    const steady = row('steady-churn', before, 0, await h.request('phase-end'), decisions, {
      speculative,
      pods: h.list('pods').length,
      setupSeconds: setup.seconds,
      setup,
    });
    const rng = mulberry32(11);
    const gone = small.filter(() => rng() < 0.6);
    await deletePods(h.cluster.api, gone);
    await quiet(h);
    const fragmented = h.list('nodes').length;
    o.log(`consolidate-fragmented: at the start: ${claimConditions(h)}`);
    await h.request('phase-start');
    const pool = h.cluster.api.find('nodepools.karpenter.sh', undefined, 'uniform')!;
    h.cluster.api.patch('nodepools.karpenter.sh', undefined, 'uniform', 'merge', {
      spec: { disruption: { ...(pool.spec as { disruption: object }).disruption, consolidateAfter: '0s' } },
    });
    const start = now();
    await consolidating(h, consolidateSeconds(o.quick), o);
    const events = await h.request('events');
    const passes = events.disruptionPasses.map((p) => p.seconds * 1000);
    const consolidation = row('consolidate-fragmented', fragmented, 0, await h.request('phase-end'), [], {
      ...(passes.length ? { consolidationPlanMs: median(passes)! } : {}),
      passes: passes.length,
      decided: events.disruptionPasses.filter((p) => p.reason !== '').length,
      nodesAfter: h.list('nodes').length,
    });
    o.log(
      `consolidate-fragmented: ${passes.length} passes (${passes.map((p) => p.toFixed(0)).join(', ')} ms), nodes ${fragmented} -> ${h.list('nodes').length}`,
    );
    for (const p of events.disruptionPasses)
      o.log(
        `  pass at ${((p.at - start) / 1000).toFixed(1)} s: ${(p.seconds * 1000).toFixed(0)} ms, ${p.reason ? `${p.reason} (${p.consolidationType})` : 'nothing'}`,
      );
    return [steady, consolidation];
  } finally {
    await h.close();
  }
}
