// Where the big cluster's set-up time goes: the parent watches its own store and notes when each step of
// bringing a pod to a running node happened, for every object (pods written, NodeClaims created, launched,
// registered and initialized, nodes created and Ready, pods bound and running), and tallies the controller's
// HTTP requests by verb and resource. Nothing here touches the controller; it only reads the store's events.
import type { Api, KObject, StoreEvent } from '../../sim/apiserver/index.ts';
import { BENCH_SCHEDULER, NAMESPACE } from './workload.ts';

const STEPS = [
  'podsWritten',
  'nodeClaimsCreated',
  'nodeClaimsLaunched',
  'nodesCreated',
  'nodeClaimsRegistered',
  'nodesReady',
  'nodeClaimsInitialized',
  'podsBound',
  'podsRunning',
] as const;
type Step = (typeof STEPS)[number];

/** One step's progress, seconds from the timeline's start: first, half, 90% and last of the objects. */
interface StepTimes {
  readonly count: number;
  readonly first: number;
  readonly p50: number;
  readonly p90: number;
  readonly last: number;
}

const conditionTrue = (o: KObject | undefined, type: string): boolean =>
  ((o?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === type && c.status === 'True',
  );

const ourPod = (o: KObject): boolean =>
  o.metadata.namespace === NAMESPACE &&
  (o.spec as { schedulerName?: string } | undefined)?.schedulerName === BENCH_SCHEDULER;

export class SetupTimeline {
  private readonly t0: number;
  private readonly at = new Map<Step, number[]>(STEPS.map((s) => [s, []]));
  private readonly seen = new Map<Step, Set<string>>(STEPS.map((s) => [s, new Set()]));
  private readonly unsubscribe: () => void;

  constructor(
    api: Api,
    private readonly now: () => number,
  ) {
    this.t0 = now();
    this.unsubscribe = api.store.subscribe((e) => this.observe(e));
  }

  close(): void {
    this.unsubscribe();
  }

  /** How many objects have reached each step so far. */
  counts(): Record<Step, number> {
    return Object.fromEntries(STEPS.map((s) => [s, this.at.get(s)!.length])) as Record<Step, number>;
  }

  /** Each step's first, median, 90th-percentile and last time, seconds since the start. */
  summary(): Record<Step, StepTimes> {
    const r = (ms: number | undefined) => Math.round(((ms ?? this.t0) - this.t0) / 100) / 10;
    const out = {} as Record<Step, StepTimes>;
    for (const s of STEPS) {
      const xs = this.at.get(s)!;
      const q = (f: number) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))];
      out[s] = { count: xs.length, first: r(xs[0]), p50: r(q(0.5)), p90: r(q(0.9)), last: r(xs.at(-1)) };
    }
    return out;
  }

  private mark(step: Step, key: string): void {
    const seen = this.seen.get(step)!;
    if (seen.has(key)) return;
    seen.add(key);
    this.at.get(step)!.push(this.now());
  }

  private observe(e: StoreEvent): void {
    if (e.type === 'DELETED') return;
    const o = e.object;
    const name = o.metadata.name!;
    if (e.resource === 'pods') {
      if (!ourPod(o)) return;
      this.mark('podsWritten', name);
      if ((o.spec as { nodeName?: string }).nodeName) this.mark('podsBound', name);
      if ((o.status as { phase?: string } | undefined)?.phase === 'Running') this.mark('podsRunning', name);
    } else if (e.resource === 'nodes') {
      this.mark('nodesCreated', name);
      if (conditionTrue(o, 'Ready')) this.mark('nodesReady', name);
    } else if (e.resource === 'nodeclaims.karpenter.sh') {
      this.mark('nodeClaimsCreated', name);
      if (conditionTrue(o, 'Launched')) this.mark('nodeClaimsLaunched', name);
      if (conditionTrue(o, 'Registered')) this.mark('nodeClaimsRegistered', name);
      if (conditionTrue(o, 'Initialized')) this.mark('nodeClaimsInitialized', name);
    }
  }
}

/** The requests in `after` and not in `before` (two RequestLog tallies), most first. */
export function requestsBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Array<[string, number]> {
  return [...after]
    .map(([k, n]): [string, number] => [k, n - (before.get(k) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}
