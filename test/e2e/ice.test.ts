// Failure drill: insufficient capacity (ICE) on launch. Within one launch the cloud falls through the
// NodeClaim's offerings to the next one; when none of a NodeClaim's offerings has capacity, the NodeClaim
// is deleted and the very next provisioning batch places the pods on the next NodePool, without trying the
// failed offerings again: they stay in the unavailable-offerings cache for 3 minutes, and only then
// become candidates again (docs/karpenter/aws-provider.md §3).
import { afterEach, describe, expect, it } from 'vitest';
import { toNodeClass } from '../../engine/index.ts';
import { SimCloudProvider } from '../../sim/cloud/provider.ts';
import { ICE_TTL_MS } from '../../sim/cloud/ice.ts';
import type { CloudProvider, Instance } from '../../controller/cloudprovider/types.ts';
import { leaks, watchDrill, wrapCloud } from '../support/drills.ts';
import {
  deployment,
  events,
  guide,
  label,
  nodeClaims,
  running,
  scale,
  simulation,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const metric = (name: string, labels: Record<string, string> = {}) => sim!.operator.metrics.value(name, labels);
const createdIn = async (pool: string): Promise<number> =>
  (await metric('karpenter_nodeclaims_created_total', { nodepool: pool })) ?? 0;

describe('insufficient capacity drills', () => {
  it('falls through to the next offering within the same launch when the first has no capacity', async () => {
    // Whatever the cloud would launch first has no capacity: a throwaway copy of the simulated cloud says
    // which instance type that is, and every offering of that type is blocked before the real launch.
    let first: Instance | undefined;
    const launched: Instance[] = [];
    const probeFirst = (cp: CloudProvider): CloudProvider =>
      wrapCloud(cp, {
        create: async (req) => {
          if (!first) {
            const probe = new SimCloudProvider({
              clock: sim!.clock,
              kubelet: { registerInstance() {}, terminateInstance() {} },
              zonesOf: (nc) => toNodeClass(nc).zones,
              nodeClass: (n) => sim!.operator.cluster.nodeClass(n)?.nodeClass,
            });
            first = await probe.create(req);
            sim!.provider.blockCapacity({ instanceType: first.instanceType, capacityType: first.capacityType });
          }
          const i = await cp.create(req);
          launched.push(i);
          return i;
        },
      });
    sim = await simulation({ cloud: probeFirst });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    const drill = watchDrill(sim, { maxUnboundMs: 60_000 });
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 180_000, 'web running');

    expect(first).toBeDefined();
    expect(launched).toHaveLength(1);
    expect(launched[0]!.instanceType).not.toBe(first!.instanceType);
    expect(launched[0]!.capacityType).toBe('spot');
    // One NodeClaim, launched on its first try: the failed offerings never surfaced as an error...
    expect(nodeClaims(sim)).toHaveLength(1);
    expect(await createdIn('spot-diverse')).toBe(1);
    expect(events(sim, 'InsufficientCapacityError')).toEqual([]);
    // ...but every one of them tried is in the cache.
    const cached = sim.provider.ice.entries();
    expect(cached.length).toBeGreaterThan(0);
    expect(cached.every((k) => k.startsWith(`spot:${first!.instanceType}:`))).toBe(true);
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });

  it('falls back to the next NodePool in the next batch, keeps the failed offerings out for 3 minutes, then tries them again', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    // guide-06's two pools, the spot one narrowed to offerings one NodeClaim covers (a launch tries at most
    // the NodeClaim's instance types; a wider pool would take a few batches to exhaust, as in Karpenter).
    await sim.apply(
      guide('guide-06.yaml').replace(
        "values: ['spot']",
        "values: ['spot']\n        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: ['c5.large', 'c5.xlarge', 'm5.large', 'm5.xlarge']",
      ),
    );
    sim.provider.blockCapacity({ capacityType: 'spot' });
    const created: Array<{ at: number; pool: string }> = [];
    const stop = sim.cluster.store.subscribe((e) => {
      if (e.resource === 'nodeclaims.karpenter.sh' && e.type === 'ADDED')
        created.push({ at: sim!.clock.now(), pool: e.object.metadata.labels!['karpenter.sh/nodepool']! });
    });
    const drill = watchDrill(sim, { maxUnboundMs: 60_000 });
    await sim.apply(deployment('web', 1, { onePerNode: true }));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');

    // Batch 1: a spot-first NodeClaim, which fails on launch and is deleted; batch 2, right after: on-demand.
    expect(created.map((c) => c.pool)).toEqual(['spot-first', 'on-demand-fallback']);
    expect(created[1]!.at - created[0]!.at).toBeLessThanOrEqual(11_000);
    expect(events(sim, 'InsufficientCapacityError')).toHaveLength(1);
    expect(
      await metric('karpenter_nodeclaims_disrupted_total', { reason: 'insufficient_capacity', nodepool: 'spot-first' }),
    ).toBe(1);
    const markedAt = sim.clock.now();
    expect(sim.provider.ice.entries().length).toBeGreaterThan(0);

    // Spot capacity is back, but the cache still says no: a new pod goes on-demand without a spot attempt.
    sim.provider.unblockCapacity();
    await scale(sim, 'web', 2);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 2, 120_000, 'second pod running');
    expect(sim.clock.now() - markedAt).toBeLessThan(ICE_TTL_MS);
    expect(created.map((c) => c.pool)).toEqual(['spot-first', 'on-demand-fallback', 'on-demand-fallback']);
    expect(events(sim, 'InsufficientCapacityError')).toHaveLength(1);

    // Three minutes after the failures the offerings are candidates again, and spot-first wins.
    await sim.clock.advance(Math.max(0, markedAt + ICE_TTL_MS - sim.clock.now()) + 1_000);
    expect(sim.provider.ice.entries()).toEqual([]);
    await scale(sim, 'web', 3);
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 3, 120_000, 'third pod running');
    expect(created.map((c) => c.pool)).toEqual([
      'spot-first',
      'on-demand-fallback',
      'on-demand-fallback',
      'spot-first',
    ]);
    expect(
      nodeClaims(sim)
        .map((c) => label(c, 'karpenter.sh/capacity-type'))
        .sort(),
    ).toEqual(['on-demand', 'on-demand', 'spot']);
    stop();
    expect(drill.violations()).toEqual([]);
    expect(leaks(sim)).toEqual([]);
    drill.stop();
  });
});
