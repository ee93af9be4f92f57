// What every failure drill promises, checked over the whole run of a simulated cluster:
//
//   unbound    no pod (outside kube-system, not a DaemonSet's) goes without a node longer than the drill
//              allows, counted from its creation (a pod recreated after an eviction starts a new count);
//   pdb        no PodDisruptionBudget has fewer healthy pods than it desires, once it has been met;
//   duplicate  no NodeClaim ever has two live instances at once (checked at every change the API
//              server stores, and whenever asked);
//   leaks      at the end: every live instance belongs to a NodeClaim that names it, every NodeClaim
//              that names an instance has it, and every Node has its instance.
//
// It listens to the simulated API server's store, so it sees every change in order and needs no timer:
//
//   const d = watchDrill(sim, { maxUnboundMs: 90_000 });
//   ... drive the drill ...
//   expect(d.violations()).toEqual([]);
//   expect(leaks(sim)).toEqual([]);
import type { CloudProvider } from '../../controller/cloudprovider/types.ts';
import { computePdbStatus, type KObject, type StoreEvent } from '../../sim/apiserver/index.ts';
import type { Simulation } from './environment.ts';

interface DrillOptions {
  /** Longest a pod may stay without a node, from its creation (default 2 min). */
  readonly maxUnboundMs?: number;
  /** Check PodDisruptionBudgets (default true). */
  readonly pdb?: boolean;
  /** Instances a NodeClaim may have alive at once (default 1). */
  readonly maxInstancesPerNodeClaim?: number;
}

interface DrillWatch {
  /** Every broken promise so far, including pods without a node for too long right now. */
  violations(): string[];
  /** The longest any pod went (or is going) without a node, ms. */
  longestUnboundMs(): number;
  stop(): void;
}

const nodeNameOf = (p: KObject): string | undefined => (p.spec as { nodeName?: string } | undefined)?.nodeName;
const isDaemonPod = (p: KObject): boolean => (p.metadata.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet');
const providerIdOf = (o: KObject): string | undefined =>
  (o.status as { providerID?: string } | undefined)?.providerID ??
  (o.spec as { providerID?: string } | undefined)?.providerID;

/** Live instances (not shutting down or terminated) by the NodeClaim name they were launched for. */
export function liveInstances(sim: Simulation): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { instance: i, launchedFor } of sim.provider.all()) {
    if (i.state === 'terminated' || i.state === 'shutting-down') continue;
    out.set(launchedFor, [...(out.get(launchedFor) ?? []), i.providerID]);
  }
  return out;
}

/** What the drill watch keeps between store events. */
interface Drill {
  readonly sim: Simulation;
  readonly maxUnbound: number;
  readonly maxPerClaim: number;
  readonly pdb: boolean;
  readonly found: string[];
  /** Keys of the promises already reported broken (each is reported once). */
  readonly seen: Set<string>;
  /** pod uid -> when it was created without a node, and its namespace/name (only while without one). */
  readonly unboundSince: Map<string, { since: number; name: string }>;
  /** PodDisruptionBudgets that have been met once (only those can break). */
  readonly metPdbs: Set<string>;
  longest: number;
}

function report(d: Drill, key: string, message: string): void {
  if (d.seen.has(key)) return;
  d.seen.add(key);
  d.found.push(`${new Date(d.sim.clock.now()).toISOString()} ${message}`);
}

/** A pod without a node got one or is gone: how long it went without, and whether that was too long. */
function closeUnbound(d: Drill, uid: string, now: number): void {
  const u = d.unboundSince.get(uid);
  if (!u) return;
  d.unboundSince.delete(uid);
  const ms = now - u.since;
  d.longest = Math.max(d.longest, ms);
  if (ms > d.maxUnbound)
    report(d, `unbound:${uid}`, `pod ${u.name} went ${ms / 1000} s without a node (allowed ${d.maxUnbound / 1000} s)`);
}

/** Pods still without a node past the limit, now. */
function reportOverdue(d: Drill, now: number): void {
  for (const [uid, u] of d.unboundSince) {
    if (now - u.since > d.maxUnbound)
      report(
        d,
        `unbound:${uid}`,
        `pod ${u.name} has been without a node for ${(now - u.since) / 1000} s (allowed ${d.maxUnbound / 1000} s)`,
      );
  }
}

function checkPdbs(d: Drill, now: number): void {
  const store = d.sim.cluster.store;
  for (const pdb of store.list('poddisruptionbudgets.policy')) {
    const key = `${pdb.metadata.namespace}/${pdb.metadata.name}`;
    const s = computePdbStatus(store, pdb, now);
    if (s.currentHealthy >= s.desiredHealthy) d.metPdbs.add(key);
    else if (d.metPdbs.has(key))
      report(
        d,
        `pdb:${key}:${now}`,
        `PodDisruptionBudget ${key} has ${s.currentHealthy} healthy pods, desires ${s.desiredHealthy}`,
      );
  }
}

function checkInstances(d: Drill): void {
  for (const [claim, ids] of liveInstances(d.sim)) {
    if (ids.length > d.maxPerClaim)
      report(
        d,
        `dup:${claim}:${ids.join(',')}`,
        `nodeclaim ${claim} has ${ids.length} live instances: ${ids.join(', ')}`,
      );
  }
}

/** A pod changed: it waits for a node from its creation, or its wait ends (bound or deleted). */
function podEvent(d: Drill, e: StoreEvent, now: number): void {
  const pod = e.object;
  if (pod.metadata.namespace === 'kube-system' || isDaemonPod(pod)) return;
  const uid = pod.metadata.uid!;
  if (e.type === 'DELETED' || nodeNameOf(pod)) closeUnbound(d, uid, now);
  else if (!d.unboundSince.has(uid)) {
    const since = pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : now;
    d.unboundSince.set(uid, { since, name: `${pod.metadata.namespace}/${pod.metadata.name}` });
  }
  if (d.pdb) checkPdbs(d, now);
}

export function watchDrill(sim: Simulation, opts: DrillOptions = {}): DrillWatch {
  const d: Drill = {
    sim,
    maxUnbound: opts.maxUnboundMs ?? 120_000,
    maxPerClaim: opts.maxInstancesPerNodeClaim ?? 1,
    pdb: opts.pdb ?? true,
    found: [],
    seen: new Set(),
    unboundSince: new Map(),
    metPdbs: new Set(),
    longest: 0,
  };
  if (d.pdb) checkPdbs(d, sim.clock.now());
  const unsubscribe = sim.cluster.store.subscribe((e) => {
    const now = sim.clock.now();
    checkInstances(d);
    if (e.resource === 'poddisruptionbudgets.policy' && d.pdb) checkPdbs(d, now);
    if (e.resource === 'pods') podEvent(d, e, now);
  });
  return {
    violations() {
      checkInstances(d);
      reportOverdue(d, sim.clock.now());
      return [...d.found];
    },
    longestUnboundMs() {
      const now = sim.clock.now();
      return Math.max(d.longest, ...[...d.unboundSince.values()].map((u) => now - u.since));
    },
    stop: unsubscribe,
  };
}

/** What is left over once things have settled: instances and objects that do not match up. */
export function leaks(sim: Simulation): string[] {
  const out: string[] = [];
  const store = sim.cluster.store;
  const claims = store.list('nodeclaims.karpenter.sh');
  const claimByPid = new Map(claims.flatMap((c) => (providerIdOf(c) ? [[providerIdOf(c)!, c] as const] : [])));
  const live = new Set<string>();
  for (const { instance: i, launchedFor } of sim.provider.all()) {
    if (i.state === 'terminated' || i.state === 'shutting-down') continue;
    live.add(i.providerID);
    if (!claimByPid.has(i.providerID))
      out.push(`instance ${i.providerID} (launched for ${launchedFor}) belongs to no NodeClaim`);
  }
  for (const c of claims) {
    const pid = providerIdOf(c);
    if (pid && !live.has(pid) && !c.metadata.deletionTimestamp)
      out.push(`nodeclaim ${c.metadata.name} names instance ${pid}, which is gone`);
  }
  for (const n of store.list('nodes')) {
    const pid = providerIdOf(n);
    if (pid && !live.has(pid) && !n.metadata.deletionTimestamp)
      out.push(`node ${n.metadata.name} has no instance (${pid})`);
  }
  return out;
}

/** The provider with some methods replaced (the others bound to it), for a replica's view of the cloud. */
export function wrapCloud(
  cp: CloudProvider,
  over: Partial<Pick<CloudProvider, 'create' | 'delete' | 'get' | 'list'>>,
): CloudProvider {
  return {
    name: cp.name,
    create: over.create ?? ((req) => cp.create(req)),
    delete: over.delete ?? ((id) => cp.delete(id)),
    get: over.get ?? ((id) => cp.get(id)),
    list: over.list ?? (() => cp.list()),
    getInstanceTypes: (np) => cp.getInstanceTypes(np),
    isDrifted: (q) => cp.isDrifted(q),
    repairPolicies: () => cp.repairPolicies(),
    ...(cp.interruptions ? { interruptions: cp.interruptions } : {}),
    ...(cp.nodeClasses ? { nodeClasses: cp.nodeClasses } : {}),
    ...(cp.instanceTagging ? { instanceTagging: cp.instanceTagging } : {}),
    ...(cp.start ? { start: () => cp.start!() } : {}),
    ...(cp.stop ? { stop: () => cp.stop!() } : {}),
  };
}
