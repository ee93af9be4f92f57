// Failure drill: two replicas of the controller against one API server, electing a leader with the
// `karpenter-leader-election` Lease. Only the leader runs controllers; the follower takes over when the
// leader dies (once the lease has expired), when it stops cleanly (at once), or when it cannot renew (it
// steps down first), and finishes the leader's pending work without doing any of it twice.
import { afterEach, describe, expect, it } from 'vitest';
import type { CloudProvider, Instance } from '../../controller/cloudprovider/types.ts';
import type { Operator } from '../../controller/main.ts';
import { LEASE_DEFAULTS } from '../../controller/operator/leaderelection.ts';
import { leaks, watchDrill, wrapCloud } from '../support/drills.ts';
import { deployment, guide, nodeClaims, running, scale, simulation, type Simulation } from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const ELECTION = { 'disable-leader-election': 'false', 'leader-election-namespace': 'kube-system' };
const lease = (s: Simulation) =>
  s.cluster.store.get('leases.coordination.k8s.io', 'kube-system', 'karpenter-leader-election')?.spec as
    | { holderIdentity: string; renewTime: string; leaseTransitions: number }
    | undefined;
const leaderGauge = (op: Operator) =>
  op.metrics.value('leader_election_master_status', { name: 'karpenter-leader-election' });
/** Jittered retry periods a follower may sleep between looks at the lease (client-go: up to x2.2). */
const RETRY_MAX = LEASE_DEFAULTS.retryPeriodMs * 2.2;

/** Counts a replica's launches; `die` makes the replica die inside its first launch, before the cloud sees it. */
function counted(calls: string[], die?: () => void): (cp: CloudProvider) => CloudProvider {
  return (cp) =>
    wrapCloud(cp, {
      create: async (req) => {
        calls.push(req.nodeClaimName);
        if (die) {
          die();
          return new Promise<Instance>(() => {});
        }
        return cp.create(req);
      },
    });
}

async function twoReplicas(aCalls: string[], bCalls: string[], aDies = false): Promise<{ a: Operator; b: Operator }> {
  sim = await simulation({
    options: ELECTION,
    leaderElection: { identity: 'a' },
    cloud: counted(aCalls, aDies ? () => sim!.operator.kill() : undefined),
  });
  const b = await sim.startReplica({ leaderElection: { identity: 'b' }, cloud: counted(bCalls) });
  await sim.apply(guide('guide-03.yaml'));
  await sim.apply(guide('guide-05.yaml'));
  return { a: sim.operator, b };
}

describe('leader election drills', () => {
  it('only the leader acts; when it dies mid-launch the follower takes over after the lease expires and launches the NodeClaim once', async () => {
    const aCalls: string[] = [];
    const bCalls: string[] = [];
    const { a, b } = await twoReplicas(aCalls, bCalls, true);
    expect(a.leading()).toBe(true);
    expect(b.leading()).toBe(false);
    expect(await leaderGauge(a)).toBe(1);
    expect(await leaderGauge(b)).toBe(0);
    // The follower watches (its informers run) but runs no controller.
    expect(b.runtime.queue('provisioner')).toBeUndefined();
    expect(b.cluster.nodePool('spot-diverse')).toBeDefined();

    const drill = watchDrill(sim!, { maxUnboundMs: 120_000 });
    await sim!.apply(deployment('web', 3));
    await sim!.clock.advanceUntil(() => aCalls.length === 1, 60_000, 'the leader launching');
    expect(a.alive()).toBe(false);
    const lastRenew = Date.parse(lease(sim!)!.renewTime);
    const claim = aCalls[0]!;
    expect(b.leading()).toBe(false);

    await sim!.clock.advanceUntil(() => b.leading(), 60_000, 'b leading');
    const takeover = sim!.clock.now() - lastRenew;
    expect(takeover).toBeGreaterThanOrEqual(LEASE_DEFAULTS.leaseDurationMs);
    expect(takeover).toBeLessThanOrEqual(LEASE_DEFAULTS.leaseDurationMs + 2 * RETRY_MAX);
    expect(lease(sim!)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

    await sim!.clock.advanceUntil(() => running(sim!, 'web') === 3, 120_000, 'web running');
    // The dead leader's NodeClaim, launched once by the new leader; nothing created twice.
    expect(nodeClaims(sim!).map((c) => c.metadata.name)).toEqual([claim]);
    expect(bCalls).toEqual([claim]);
    expect(sim!.provider.all()).toHaveLength(1);
    expect(await b.metrics.value('karpenter_nodeclaims_created_total')).toBeUndefined();
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim!)).toEqual([]);
    drill.stop();
  });

  it('a leader that stops cleanly hands the lease over within a retry period', async () => {
    const { a, b } = await twoReplicas([], []);
    await sim!.apply(deployment('web', 1));
    await sim!.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    const stoppedAt = sim!.clock.now();
    await a.stop();
    expect(lease(sim!)!.holderIdentity).toBe('');
    await sim!.clock.advanceUntil(() => b.leading(), 10_000, 'b leading');
    expect(sim!.clock.now() - stoppedAt).toBeLessThanOrEqual(RETRY_MAX);
    expect(await leaderGauge(b)).toBe(1);
    // The new leader does the next piece of work.
    await scale(sim!, 'web', 4);
    await sim!.clock.advanceUntil(() => running(sim!, 'web') === 4, 180_000, 'web scaled up');
    expect(await b.metrics.value('karpenter_nodeclaims_created_total')).toBeGreaterThanOrEqual(1);
    expect(leaks(sim!)).toEqual([]);
  });

  it('a leader that cannot renew its lease steps down before the follower takes over, and refuses to act from then on', async () => {
    const aCalls: string[] = [];
    const bCalls: string[] = [];
    const { a, b } = await twoReplicas(aCalls, bCalls);
    await sim!.apply(deployment('web', 1));
    await sim!.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    const drill = watchDrill(sim!, { maxUnboundMs: 120_000 });
    let steppedDown = 0;
    let tookOver = 0;
    const lastRenew = Date.parse(lease(sim!)!.renewTime);
    // Lease writes fail for a while: the API server is unreachable for the leader.
    sim!.cluster.server.faults.failNext({ resource: 'leases', verbs: ['update'], code: 500, count: 6 });
    await sim!.clock.advanceUntil(
      () => {
        if (!steppedDown && !a.leading()) steppedDown = sim!.clock.now();
        if (!tookOver && b.leading()) tookOver = sim!.clock.now();
        return tookOver > 0;
      },
      60_000,
      'b leading',
    );
    expect(steppedDown).toBeGreaterThan(0);
    expect(steppedDown - lastRenew).toBeLessThanOrEqual(LEASE_DEFAULTS.renewDeadlineMs + LEASE_DEFAULTS.retryPeriodMs);
    expect(steppedDown).toBeLessThan(tookOver);
    expect(a.alive()).toBe(false);
    expect(await leaderGauge(a)).toBe(0);
    await expect(a.kube.create('Event', { metadata: { generateName: 'x.', namespace: 'default' } })).rejects.toThrow(
      /lost the leader lease/,
    );

    await scale(sim!, 'web', 3);
    await sim!.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web scaled up');
    expect(aCalls).toHaveLength(1);
    expect(bCalls.length).toBeGreaterThanOrEqual(1);
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim!)).toEqual([]);
    drill.stop();
  });
});
