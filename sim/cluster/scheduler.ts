// The simulated kube-scheduler. It binds pending pods to nodes the way kube-scheduler would in the
// respects that matter to a node autoscaler, and marks the rest PodScheduled=False/Unschedulable with
// kube-scheduler's message ("0/3 nodes are available: 1 Insufficient cpu, ..."), which is what makes a
// pod provisionable for Karpenter.
//
// One pass (a Reactor, run after changes):
// 1. Pending pods (unbound, not deleting, schedulerName default-scheduler) that have not been tried since
//    the cluster last changed in a way that could help them (a node changed; a pod was bound, removed,
//    finished or relabelled), highest priority first, then oldest.
// 2. For each: node filters (node affinity + nodeSelector, taints incl. not-ready and cordon,
//    resources incl. pods, host ports), then inter-pod affinity/anti-affinity and topology spread.
// 3. Among feasible nodes: the nominated node (status.nominatedNodeName) if feasible, else the highest
//    LeastAllocated score (kube-scheduler's default: spread load), ties by name.
// 4. Bind through the binding subresource; the node's usage is updated for the rest of the pass.
//
// Left out: preemption, soft preferences (preferred affinity, ScheduleAnyway spread, PreferNoSchedule),
// volume topology, and the scheduler's retry backoff (pods are retried when the cluster changes).
import type { Api, KObject, StoreEvent } from '../apiserver/index.ts';
import { toKubeTime, type Clock } from '../../controller/operator/clock.ts';
import { Reactor } from './reactor.ts';
import { leastAllocatedScore, nodeFilters } from './scheduling/filters.ts';
import { isTerminal, NodeInfo, podRequests, podSpec } from './scheduling/nodes.ts';
import { Placement } from './scheduling/placement.ts';
import { withDefaultConstraints } from './scheduling/defaults.ts';
import type { TopologySpreadConstraint } from '../../engine/index.ts';

interface SchedulerOptions {
  readonly api: Api;
  readonly clock: Clock;
  readonly onError: (err: unknown) => void;
  /** Pods naming another scheduler are left alone (default default-scheduler). */
  readonly schedulerName?: string;
  /** The PodTopologySpread plugin's defaultConstraints (the simulated cluster's scheduler configuration). */
  readonly defaultConstraints?: readonly TopologySpreadConstraint[];
}

type ScheduleResult = { node: string } | { message: string };

export class Scheduler {
  readonly reactor: Reactor;
  private generation = 0;
  private readonly tried = new Map<string, number>();
  /** Pods waiting for a node, kept from store events so a pass does not scan every pod. */
  private readonly waiting = new Map<string, { namespace: string; name: string }>();
  private readonly unsubscribe: () => void;
  private readonly schedulerName: string;
  /** Counters for tests and the simulator's status line. */
  readonly stats = { bound: 0, unschedulable: 0 };

  constructor(private readonly opts: SchedulerOptions) {
    this.schedulerName = opts.schedulerName ?? 'default-scheduler';
    this.reactor = new Reactor('scheduler', () => this.pass(), opts.onError);
    this.unsubscribe = opts.api.store.subscribe((e) => this.observe(e));
    for (const p of opts.api.store.list('pods')) this.track(p, false);
    this.reactor.kick();
  }

  close(): void {
    this.unsubscribe();
    this.reactor.close();
  }

  private observe(e: StoreEvent): void {
    if (e.resource === 'nodes') {
      this.generation++;
      this.reactor.kick();
      return;
    }
    if (e.resource !== 'pods') return;
    if (e.type === 'DELETED') this.tried.delete(e.object.metadata.uid!);
    this.track(e.object, e.type === 'DELETED');
    if (helps(e)) this.generation++;
    this.reactor.kick();
  }

  private track(p: KObject, gone: boolean): void {
    const spec = podSpec(p);
    const key = `${p.metadata.namespace}/${p.metadata.name}`;
    const waiting =
      !gone &&
      !spec.nodeName &&
      !p.metadata.deletionTimestamp &&
      !isTerminal(p) &&
      (spec.schedulerName ?? 'default-scheduler') === this.schedulerName;
    if (waiting) this.waiting.set(key, { namespace: p.metadata.namespace!, name: p.metadata.name! });
    else this.waiting.delete(key);
  }

  private pending(): KObject[] {
    const out: KObject[] = [];
    for (const { namespace, name } of this.waiting.values()) {
      const p = this.opts.api.store.get('pods', namespace, name);
      if (p) out.push(p);
    }
    return out;
  }

  private pass(): void {
    const todo = this.pending().filter((p) => this.tried.get(p.metadata.uid!) !== this.generation);
    if (!todo.length) return;
    const generation = this.generation;
    const store = this.opts.api.store;
    const nodes = store
      .list('nodes')
      .filter((n) => !n.metadata.deletionTimestamp)
      .map((n) => new NodeInfo(n));
    const byName = new Map(nodes.map((n) => [n.name, n]));
    for (const p of store.list('pods')) {
      const nodeName = podSpec(p).nodeName;
      if (nodeName) byName.get(nodeName)?.use(p);
    }
    todo.sort(byPriorityThenAge);
    const placement = new Placement(nodes);
    for (const pod of withDefaultConstraints(todo, this.opts.defaultConstraints ?? [], store)) {
      this.tried.set(pod.metadata.uid!, generation);
      const result = schedule(pod, nodes, placement);
      if ('node' in result) {
        const bound = this.opts.api.bind(pod.metadata.namespace!, pod.metadata.name!, result.node);
        const info = byName.get(result.node)!;
        info.use(bound);
        placement.add(bound, info);
        this.stats.bound++;
      } else {
        this.markUnschedulable(pod, result.message);
      }
    }
  }

  private markUnschedulable(pod: KObject, message: string): void {
    const conditions = (pod.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? [];
    const cur = conditions.find((c) => c.type === 'PodScheduled');
    if (cur?.status === 'False' && cur.reason === 'Unschedulable' && cur.message === message) return;
    const since = cur?.status === 'False' ? cur.lastTransitionTime : toKubeTime(this.opts.clock.now());
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastProbeTime: null,
      lastTransitionTime: since,
    };
    this.opts.api.patch(
      'pods',
      pod.metadata.namespace,
      pod.metadata.name!,
      'strategic',
      { status: { conditions: [condition] } },
      { subresource: 'status' },
    );
    this.stats.unschedulable++;
  }
}

/** Whether a pod change could make another pending pod schedulable. */
function helps(e: StoreEvent): boolean {
  const now = e.object;
  const old = e.old;
  if (e.type === 'DELETED') return !!podSpec(now).nodeName;
  if (!old) return !!podSpec(now).nodeName;
  return (
    podSpec(now).nodeName !== podSpec(old).nodeName ||
    isTerminal(now) !== isTerminal(old) ||
    !!now.metadata.deletionTimestamp !== !!old.metadata.deletionTimestamp ||
    JSON.stringify(now.metadata.labels ?? {}) !== JSON.stringify(old.metadata.labels ?? {})
  );
}

function byPriorityThenAge(a: KObject, b: KObject): number {
  const pa = podSpec(a).priority ?? 0;
  const pb = podSpec(b).priority ?? 0;
  if (pa !== pb) return pb - pa;
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

/** Picks a node for one pod, or explains why none fits. */
export function schedule(
  pod: KObject,
  nodes: readonly NodeInfo[],
  placement: Placement = new Placement(nodes),
): ScheduleResult {
  if (!nodes.length) return { message: 'no nodes available to schedule pods' };
  try {
    podRequests(pod);
  } catch (e) {
    return {
      message: `pod ${pod.metadata.namespace}/${pod.metadata.name} has invalid resource requests: ${(e as Error).message}`,
    };
  }
  let check: ((n: NodeInfo) => string | undefined) | undefined;
  const reasons = new Map<string, number>();
  const feasible: NodeInfo[] = [];
  for (const n of nodes) {
    let why = nodeFilters(pod, n);
    if (!why.length) {
      check ??= placement.check(pod);
      const r = check(n);
      if (r) why = [r];
    }
    if (why.length) for (const r of why) reasons.set(r, (reasons.get(r) ?? 0) + 1);
    else feasible.push(n);
  }
  if (!feasible.length) {
    const parts = [...reasons.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([r, n]) => `${n} ${r}`);
    return { message: `0/${nodes.length} nodes are available: ${parts.join(', ')}.` };
  }
  const nominated = (pod.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName;
  const preferred = nominated ? feasible.find((n) => n.name === nominated) : undefined;
  if (preferred) return { node: preferred.name };
  let best = feasible[0]!;
  let bestScore = leastAllocatedScore(pod, best);
  for (const n of feasible.slice(1)) {
    const s = leastAllocatedScore(pod, n);
    if (s > bestScore || (s === bestScore && n.name < best.name)) {
      best = n;
      bestScore = s;
    }
  }
  return { node: best.name };
}
