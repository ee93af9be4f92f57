// What the fault soak checks while it runs (test/soak/soak.ts). Each promise is checked where it can break:
//
//   pdb         no pod is taken away by the controller (an eviction or a delete it sent the API server) in
//               breach of a PodDisruptionBudget: a Ready pod whose going leaves its budget with fewer healthy
//               pods than it desires. Checked in the store's change stream, at the write itself (the HTTP
//               request still in flight names the pod). Pods lost with an instance the cloud reclaimed, and
//               pods the workload controllers remove (scale-downs, rollouts), are not the controller's doing;
//   undrained   no instance is terminated by the controller while its Node still holds pods that were not
//               drained (not terminating, not finished, not a DaemonSet's): checked at every delete call the
//               controller makes to the cloud, before the cloud sees it;
//   orphan      no live instance stays without a NodeClaim that records it for longer than garbage
//               collection needs (ORPHAN_BOUND_MS: its 30 s grace, its 2-minute period, and room for a
//               leader failover);
//   duplicate   no NodeClaim has two live instances for longer than that bound (a launch whose answer was
//               lost leaves one extra, which garbage collection must take), and no two NodeClaims record
//               one instance;
//   pending     every pod without a node is placed within PENDING_BOUND_MS of its creation, or the
//               controller explains why (a FailedScheduling event naming it);
//   budget      no NodePool ever has more NodeClaims being deleted by disruption (DisruptionReason set) at
//               once than its budget allows (a pool the soak gave no budget allows none).
import type { KObject, StoreEvent } from '../../sim/apiserver/index.ts';
import { computePdbStatus, isPodReady } from '../../sim/apiserver/index.ts';
import type { Simulation } from '../support/environment.ts';

export const INVARIANTS = ['pdb', 'undrained', 'orphan', 'duplicate', 'pending', 'budget'] as const;
type Invariant = (typeof INVARIANTS)[number];

/** Garbage collection's 30 s grace and 2-minute period, a leader failover, and a failed pass or two. */
const ORPHAN_BOUND_MS = 10 * 60_000;
const PENDING_BOUND_MS = 15 * 60_000;

interface Breach {
  readonly invariant: Invariant;
  /** Simulated time, ms since the epoch. */
  readonly at: number;
  readonly message: string;
}

export interface InvariantStats {
  /** How many times each invariant was checked. */
  readonly checks: Record<Invariant, number>;
  readonly breaches: readonly Breach[];
  /** Pods that waited past the bound with an explanation (not breaches). */
  readonly explainedWaits: number;
  /** Longest any pod went without a node, ms. */
  readonly longestPendingMs: number;
}

const podsResource = 'pods';
const isDaemonPod = (p: KObject): boolean => (p.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
const nodeNameOf = (p: KObject): string | undefined => (p.spec as { nodeName?: string } | undefined)?.nodeName;
const phaseOf = (p: KObject): string | undefined => (p.status as { phase?: string } | undefined)?.phase;
const providerIdOf = (o: KObject): string | undefined =>
  (o.status as { providerID?: string } | undefined)?.providerID ??
  (o.spec as { providerID?: string } | undefined)?.providerID;
const conditionsOf = (o: KObject): Array<{ type: string; status: string; reason?: string }> =>
  (o.status as { conditions?: Array<{ type: string; status: string; reason?: string }> } | undefined)?.conditions ?? [];
const workloadPod = (p: KObject): boolean => p.metadata.namespace !== 'kube-system' && !isDaemonPod(p);

export class InvariantMonitor {
  private readonly found: Breach[] = [];
  private readonly seen = new Set<string>();
  private readonly checks = Object.fromEntries(INVARIANTS.map((i) => [i, 0])) as Record<Invariant, number>;
  private readonly unownedSince = new Map<string, number>();
  private readonly duplicateSince = new Map<string, number>();
  private readonly unbound = new Map<string, { since: number; name: string; ns: string }>();
  private explained = new Set<string>();
  private longestPending = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly sim: Simulation,
    private readonly budgets: (pool: string) => number | undefined,
  ) {
    this.unsubscribe = sim.cluster.store.subscribe((e) => this.onChange(e));
    for (const p of sim.cluster.store.list(podsResource)) if (workloadPod(p) && !nodeNameOf(p)) this.trackUnbound(p);
  }

  stop(): void {
    this.unsubscribe();
  }

  stats(): InvariantStats {
    return {
      checks: { ...this.checks },
      breaches: [...this.found],
      explainedWaits: this.explained.size,
      longestPendingMs: this.longestPending,
    };
  }

  /** The controller is about to terminate `providerID` (called by the soak's cloud wrapper). */
  beforeTerminate(providerID: string, replica: string): void {
    const inst = this.sim.provider.all().find((i) => i.instance.providerID === providerID)?.instance;
    if (!inst || inst.state === 'shutting-down' || inst.state === 'terminated') return;
    this.checks.undrained++;
    const store = this.sim.cluster.store;
    const names = new Set(
      store
        .list('nodes')
        .filter((n) => providerIdOf(n) === providerID)
        .map((n) => n.metadata.name!),
    );
    const held = store
      .list(podsResource)
      .filter(
        (p) =>
          names.has(nodeNameOf(p) ?? '') &&
          workloadPod(p) &&
          !p.metadata.deletionTimestamp &&
          phaseOf(p) !== 'Succeeded' &&
          phaseOf(p) !== 'Failed',
      );
    if (held.length) {
      this.report(
        'undrained',
        `undrained:${providerID}`,
        `${replica} terminated ${providerID} (node ${[...names].join(', ')}) with ${held.length} pods not drained: ${held.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).join(', ')}`,
      );
    }
  }

  /** The periodic checks: orphans, duplicates, pending pods. */
  check(): void {
    const now = this.sim.clock.now();
    this.checkInstances(now);
    this.checkPending(now);
  }

  private report(invariant: Invariant, key: string, message: string): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.found.push({ invariant, at: this.sim.clock.now(), message });
  }

  private onChange(e: StoreEvent): void {
    if (e.resource === podsResource) this.onPod(e);
    else if (e.resource === 'nodeclaims.karpenter.sh') this.checkBudgets();
  }

  private onPod(e: StoreEvent): void {
    const pod = e.object;
    if (!workloadPod(pod)) return;
    const uid = pod.metadata.uid!;
    if (e.type === 'DELETED' || nodeNameOf(pod)) this.closeUnbound(uid);
    else if (!this.unbound.has(uid)) this.trackUnbound(pod);
    const before = e.old;
    const goes =
      e.type === 'DELETED'
        ? !before?.metadata.deletionTimestamp
        : Boolean(pod.metadata.deletionTimestamp) && !before?.metadata.deletionTimestamp;
    if (goes && before && isPodReady(before)) this.checkPdb(pod);
  }

  /** A Ready pod is going: if the controller's request did it, its budget must still be met. */
  private checkPdb(pod: KObject): void {
    const by = this.controllerRequestFor(pod);
    if (!by) return;
    this.checks.pdb++;
    const store = this.sim.cluster.store;
    for (const pdb of store.list('poddisruptionbudgets.policy', { namespace: pod.metadata.namespace ?? '' })) {
      const s = computePdbStatus(store, pdb, this.sim.clock.now());
      const selects = (pdb.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels ?? {};
      if (!Object.entries(selects).every(([k, v]) => pod.metadata.labels?.[k] === v)) continue;
      if (s.currentHealthy < s.desiredHealthy) {
        this.report(
          'pdb',
          `pdb:${pod.metadata.uid}`,
          `${by} took pod ${pod.metadata.namespace}/${pod.metadata.name}: PodDisruptionBudget ${pdb.metadata.name} left with ${s.currentHealthy} healthy pods, desires ${s.desiredHealthy}`,
        );
      }
    }
  }

  /** The HTTP request (in flight now) that removes this pod: an eviction or a delete. */
  private controllerRequestFor(pod: KObject): string | undefined {
    const all = this.sim.cluster.requests.all();
    for (let i = all.length - 1, n = 0; i >= 0 && n < 500; i--, n++) {
      const r = all[i]!;
      if (
        r.status !== 0 ||
        r.resource !== podsResource ||
        r.name !== pod.metadata.name ||
        r.namespace !== pod.metadata.namespace
      )
        continue;
      if (r.subresource === 'eviction') return 'an eviction';
      if (r.verb === 'delete') return 'a pod delete';
    }
    return undefined;
  }

  private checkBudgets(): void {
    const deleting = new Map<string, number>();
    for (const c of this.sim.cluster.store.list('nodeclaims.karpenter.sh')) {
      if (
        !c.metadata.deletionTimestamp ||
        !conditionsOf(c).some((x) => x.type === 'DisruptionReason' && x.status === 'True')
      )
        continue;
      const pool = c.metadata.labels?.['karpenter.sh/nodepool'] ?? '';
      deleting.set(pool, (deleting.get(pool) ?? 0) + 1);
    }
    this.checks.budget++;
    for (const [pool, n] of deleting) {
      const allowed = this.budgets(pool);
      // A pool the soak gave no budget (not one it made, or no nodepool label) allows no disruption at all.
      if (allowed === undefined)
        this.report(
          'budget',
          `budget:${pool}:${this.sim.clock.now()}`,
          `NodePool ${pool || '(no karpenter.sh/nodepool label)'} has ${n} NodeClaims deleting for disruption, and the soak has no budget for it`,
        );
      else if (n > allowed)
        this.report(
          'budget',
          `budget:${pool}:${this.sim.clock.now()}`,
          `NodePool ${pool} has ${n} NodeClaims deleting for disruption at once; its budget allows ${allowed}`,
        );
    }
  }

  private checkInstances(now: number): void {
    const claims = this.sim.cluster.store.list('nodeclaims.karpenter.sh');
    const recordedBy = new Map<string, string[]>();
    for (const c of claims) {
      const pid = providerIdOf(c);
      if (pid) recordedBy.set(pid, [...(recordedBy.get(pid) ?? []), c.metadata.name!]);
    }
    const perClaim = new Map<string, string[]>();
    const live = new Set<string>();
    for (const { instance: i, launchedFor } of this.sim.provider.all()) {
      if (i.state === 'terminated' || i.state === 'shutting-down') continue;
      live.add(i.providerID);
      perClaim.set(launchedFor, [...(perClaim.get(launchedFor) ?? []), i.providerID]);
      this.checks.orphan++;
      const owners = recordedBy.get(i.providerID) ?? [];
      if (owners.length > 1)
        this.report(
          'duplicate',
          `shared:${i.providerID}`,
          `instance ${i.providerID} is recorded by ${owners.length} NodeClaims: ${owners.join(', ')}`,
        );
      this.overdue(
        'orphan',
        this.unownedSince,
        i.providerID,
        owners.length === 0,
        now,
        (ms) =>
          `instance ${i.providerID} (launched for ${launchedFor}) has had no NodeClaim for ${Math.round(ms / 1000)} s`,
      );
    }
    for (const pid of this.unownedSince.keys()) if (!live.has(pid)) this.unownedSince.delete(pid);
    for (const [claim, ids] of perClaim) {
      this.checks.duplicate++;
      this.overdue(
        'duplicate',
        this.duplicateSince,
        claim,
        ids.length > 1,
        now,
        (ms) =>
          `nodeclaim ${claim} has had ${ids.length} live instances for ${Math.round(ms / 1000)} s: ${ids.join(', ')}`,
      );
    }
    for (const claim of this.duplicateSince.keys()) if (!perClaim.has(claim)) this.duplicateSince.delete(claim);
  }

  /** Tracks how long `bad` has held for `key`; reports once it has held past the orphan bound. */
  private overdue(
    invariant: Invariant,
    since: Map<string, number>,
    key: string,
    bad: boolean,
    now: number,
    message: (ms: number) => string,
  ): void {
    if (!bad) {
      since.delete(key);
      return;
    }
    const from = since.get(key) ?? now;
    since.set(key, from);
    if (now - from > ORPHAN_BOUND_MS) this.report(invariant, `${invariant}:${key}:${from}`, message(now - from));
  }

  private trackUnbound(p: KObject): void {
    const since = p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : this.sim.clock.now();
    this.unbound.set(p.metadata.uid!, { since, name: p.metadata.name!, ns: p.metadata.namespace ?? '' });
  }

  private closeUnbound(uid: string): void {
    const u = this.unbound.get(uid);
    if (!u) return;
    this.unbound.delete(uid);
    this.longestPending = Math.max(this.longestPending, this.sim.clock.now() - u.since);
  }

  private checkPending(now: number): void {
    const overdue = [...this.unbound].filter(([, u]) => now - u.since > PENDING_BOUND_MS);
    this.checks.pending += this.unbound.size;
    if (!overdue.length) return;
    const explainedNames = new Set(
      this.sim.cluster.store
        .list('events')
        .filter(
          (e) =>
            e['reason'] === 'FailedScheduling' &&
            (e['source'] as { component?: string } | undefined)?.component === 'karpenter',
        )
        .map((e) => {
          const o = e['involvedObject'] as { namespace?: string; name?: string };
          return `${o.namespace}/${o.name}`;
        }),
    );
    for (const [uid, u] of overdue) {
      this.longestPending = Math.max(this.longestPending, now - u.since);
      if (explainedNames.has(`${u.ns}/${u.name}`)) this.explained.add(uid);
      else
        this.report(
          'pending',
          `pending:${uid}`,
          `pod ${u.ns}/${u.name} has been without a node for ${Math.round((now - u.since) / 1000)} s, and no FailedScheduling event explains it`,
        );
    }
  }
}
