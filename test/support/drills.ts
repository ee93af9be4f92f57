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
import { computePdbStatus, type KObject } from '../../sim/apiserver/index.ts';
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

export function watchDrill(sim: Simulation, opts: DrillOptions = {}): DrillWatch {
  const store = sim.cluster.store;
  const maxUnbound = opts.maxUnboundMs ?? 120_000;
  const maxPerClaim = opts.maxInstancesPerNodeClaim ?? 1;
  const found: string[] = [];
  const seen = new Set<string>();
  const report = (key: string, message: string): void => {
    if (seen.has(key)) return;
    seen.add(key);
    found.push(`${new Date(sim.clock.now()).toISOString()} ${message}`);
  };
  const unboundSince = new Map<string, { since: number; name: string }>();
  const metPdbs = new Set<string>();
  let longest = 0;

  const created = (p: KObject): number =>
    p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : sim.clock.now();
  const closeUnbound = (uid: string, now: number): void => {
    const u = unboundSince.get(uid);
    if (!u) return;
    unboundSince.delete(uid);
    const d = now - u.since;
    longest = Math.max(longest, d);
    if (d > maxUnbound)
      report(`unbound:${uid}`, `pod ${u.name} went ${d / 1000} s without a node (allowed ${maxUnbound / 1000} s)`);
  };

  function checkPdbs(now: number): void {
    for (const pdb of store.list('poddisruptionbudgets.policy')) {
      const key = `${pdb.metadata.namespace}/${pdb.metadata.name}`;
      const s = computePdbStatus(store, pdb, now);
      if (s.currentHealthy >= s.desiredHealthy) metPdbs.add(key);
      else if (metPdbs.has(key))
        report(
          `pdb:${key}:${now}`,
          `PodDisruptionBudget ${key} has ${s.currentHealthy} healthy pods, desires ${s.desiredHealthy}`,
        );
    }
  }

  function checkInstances(): void {
    for (const [claim, ids] of liveInstances(sim)) {
      if (ids.length > maxPerClaim)
        report(
          `dup:${claim}:${ids.join(',')}`,
          `nodeclaim ${claim} has ${ids.length} live instances: ${ids.join(', ')}`,
        );
    }
  }

  if (opts.pdb ?? true) checkPdbs(sim.clock.now());
  const unsubscribe = store.subscribe((e) => {
    const now = sim.clock.now();
    checkInstances();
    if (e.resource === 'poddisruptionbudgets.policy' && (opts.pdb ?? true)) checkPdbs(now);
    if (e.resource !== 'pods') return;
    const pod = e.object;
    if (pod.metadata.namespace === 'kube-system' || isDaemonPod(pod)) return;
    const uid = pod.metadata.uid!;
    if (e.type === 'DELETED' || nodeNameOf(pod)) closeUnbound(uid, now);
    else if (!unboundSince.has(uid))
      unboundSince.set(uid, { since: created(pod), name: `${pod.metadata.namespace}/${pod.metadata.name}` });
    if (opts.pdb ?? true) checkPdbs(now);
  });

  return {
    violations() {
      const now = sim.clock.now();
      checkInstances();
      for (const [uid, u] of unboundSince) {
        if (now - u.since > maxUnbound)
          report(
            `unbound:${uid}`,
            `pod ${u.name} has been without a node for ${(now - u.since) / 1000} s (allowed ${maxUnbound / 1000} s)`,
          );
      }
      return [...found];
    },
    longestUnboundMs() {
      const now = sim.clock.now();
      return Math.max(longest, ...[...unboundSince.values()].map((u) => now - u.since));
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
