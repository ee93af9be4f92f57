// The simulator's timeline: one line per thing a person watching `kubectl get nodes,nodeclaims,pods -w`
// would notice, stamped with simulated time since the start. Read from the simulated API server's store
// (so it shows what happened, not what the controller meant to do) plus the simulated cloud's prices.
import { formatBytes, formatMillicores, parseResources } from '../engine/index.ts';
import type { KObject, StoreEvent } from './apiserver/index.ts';
import type { Simulation } from './environment.ts';

/** Event reasons worth a line of their own. */
const EVENT_REASONS = new Set([
  'FailedScheduling',
  'InsufficientCapacityError',
  'NodeClassNotReady',
  'DisruptionTerminating',
  'SpotInterrupted',
  'InstanceUnhealthy',
  'FailedDraining',
  'NodeClaimTimedOut',
  'DisruptionBlocked',
  'UnregisteredTaintMissing',
  'TerminationGracePeriodExpiring',
  'ConsolidationCandidate',
  'DisruptionFailed',
  'InstanceStopping',
  'SpotRebalanceRecommendation',
]);
/** Reasons worth a line only on these kinds (node-level DisruptionBlocked repeats every candidacy check). */
const EVENT_KINDS: Readonly<Record<string, string>> = {
  DisruptionBlocked: 'NodePool',
  DisruptionTerminating: 'NodeClaim',
  ConsolidationCandidate: 'NodeClaim',
  DisruptionFailed: 'NodeClaim',
};

const readyOf = (n: KObject | undefined): boolean =>
  ((n?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );
const condTrue = (o: KObject | undefined, type: string): boolean =>
  ((o?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === type && c.status === 'True',
  );
const conditionReason = (o: KObject, type: string): string =>
  ((o.status as { conditions?: Array<{ type: string; reason?: string }> } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  )?.reason ?? '';
const phase = (p: KObject | undefined): string | undefined => (p?.status as { phase?: string } | undefined)?.phase;

export function stamp(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

export class Timeline {
  private readonly start: number;
  private readonly unsubscribe: () => void;
  private podsDirty = false;
  private lastPods = '';
  private readonly seenMessages = new Set<string>();

  constructor(
    private readonly sim: Simulation,
    private readonly print: (line: string) => void,
  ) {
    this.start = sim.clock.now();
    this.unsubscribe = sim.cluster.store.subscribe((e) => this.observe(e));
  }

  /** Prints a line with the current sim time. */
  line(text: string): void {
    this.print(`[${stamp(this.sim.clock.now() - this.start)}] ${text}`);
  }

  elapsed(): number {
    return this.sim.clock.now() - this.start;
  }

  close(): void {
    this.unsubscribe();
  }

  private observe(e: StoreEvent): void {
    const o = e.object;
    const name = o.metadata.name ?? '';
    switch (e.resource) {
      case 'nodeclaims.karpenter.sh':
        return this.nodeClaim(e, name);
      case 'nodes':
        if (e.type === 'ADDED')
          this.line(
            `node ${name} registered (${o.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '?'}, ${o.metadata.labels?.['topology.kubernetes.io/zone'] ?? '?'})`,
          );
        else if (e.type === 'MODIFIED' && readyOf(o) && !readyOf(e.old)) this.line(`node ${name} is Ready`);
        else if (e.type === 'MODIFIED' && o.metadata.deletionTimestamp && !e.old?.metadata.deletionTimestamp)
          this.line(`node ${name} is being deleted (cordoned and drained)`);
        else if (e.type === 'DELETED') this.line(`node ${name} removed`);
        return;
      case 'pods':
        if (!this.podsDirty) {
          this.podsDirty = true;
          setImmediate(() => this.podSummary());
        }
        return;
      case 'events':
        return this.event(o);
    }
  }

  private nodeClaim(e: StoreEvent, name: string): void {
    const o = e.object;
    if (e.type === 'ADDED') {
      const req = parseResources(
        (o.spec as { resources?: { requests?: Record<string, string> } }).resources?.requests ?? {},
      );
      const types =
        ((o.spec as { requirements?: Array<{ key: string; values?: string[] }> }).requirements ?? []).find(
          (r) => r.key === 'node.kubernetes.io/instance-type',
        )?.values ?? [];
      this.line(
        `nodeclaim ${name} created (nodepool ${o.metadata.labels?.['karpenter.sh/nodepool'] ?? '?'}; requests cpu ${formatMillicores(req['cpu'] ?? 0)}, memory ${formatBytes(req['memory'] ?? 0)}, ${req['pods'] ?? 0} pods; ${types.length} instance types allowed)`,
      );
      return;
    }
    if (e.type === 'DELETED') {
      this.line(`nodeclaim ${name} deleted`);
      return;
    }
    const pid = (o.status as { providerID?: string } | undefined)?.providerID;
    if (pid && !(e.old?.status as { providerID?: string } | undefined)?.providerID) {
      const l = o.metadata.labels ?? {};
      const price = this.sim.provider.priceOf(pid);
      this.line(
        `nodeclaim ${name} launched: ${l['node.kubernetes.io/instance-type'] ?? '?'} in ${l['topology.kubernetes.io/zone'] ?? '?'}, ${l['karpenter.sh/capacity-type'] ?? '?'}, $${(price ?? 0).toFixed(4)}/h`,
      );
    }
    if (condTrue(o, 'Initialized') && !condTrue(e.old, 'Initialized'))
      this.line(`nodeclaim ${name} initialized: its node takes pods`);
    if (condTrue(o, 'Consolidatable') && !condTrue(e.old, 'Consolidatable'))
      this.line(`nodeclaim ${name} is consolidatable (consolidateAfter has passed)`);
    if (condTrue(o, 'Drifted') && !condTrue(e.old, 'Drifted'))
      this.line(`nodeclaim ${name} drifted (${conditionReason(o, 'Drifted')})`);
    if (condTrue(o, 'DisruptionReason') && !condTrue(e.old, 'DisruptionReason'))
      this.line(
        `nodeclaim ${name} is being disrupted (${conditionReason(o, 'DisruptionReason')}): its node is tainted karpenter.sh/disrupted`,
      );
    if (!condTrue(o, 'DisruptionReason') && condTrue(e.old, 'DisruptionReason') && !o.metadata.deletionTimestamp)
      this.line(`nodeclaim ${name} is no longer being disrupted`);
    if (o.metadata.deletionTimestamp && !e.old?.metadata.deletionTimestamp)
      this.line(`nodeclaim ${name} is being deleted`);
  }

  private event(o: KObject): void {
    const reason = String(o['reason'] ?? '');
    if (!EVENT_REASONS.has(reason)) return;
    const involved = (o['involvedObject'] ?? {}) as { kind?: string; name?: string; namespace?: string };
    if (EVENT_KINDS[reason] && involved.kind !== EVENT_KINDS[reason]) return;
    const message = String(o['message'] ?? '');
    // One line per distinct (reason, message) for pods, so ten pending replicas print one FailedScheduling.
    const key =
      involved.kind === 'Pod' ? `${reason}|${message}` : `${reason}|${involved.kind}|${involved.name}|${message}`;
    if (this.seenMessages.has(key)) return;
    this.seenMessages.add(key);
    this.line(`event ${reason} on ${involved.kind?.toLowerCase()}/${involved.name}: ${message}`);
  }

  private podSummary(): void {
    this.podsDirty = false;
    const pods = this.sim.cluster.store.list('pods').filter((p) => p.metadata.namespace !== 'kube-system');
    const running = pods.filter((p) => phase(p) === 'Running' && !p.metadata.deletionTimestamp).length;
    const pending = pods.filter((p) => phase(p) === 'Pending' && !p.metadata.deletionTimestamp).length;
    const terminating = pods.filter((p) => p.metadata.deletionTimestamp).length;
    const text = `pods: ${running} running, ${pending} pending${terminating ? `, ${terminating} terminating` : ''}`;
    if (text === this.lastPods) return;
    this.lastPods = text;
    this.line(text);
  }
}
