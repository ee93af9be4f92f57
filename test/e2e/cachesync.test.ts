// Failure drills: the controller restarts while the API server fails to list one kind for a while, and no
// controller may act on that kind before it has listed (controller-runtime's WaitForCacheSync). Each drill
// runs twice on the same cluster and faults: guarded (the build as it ships) and as a control run with the
// guard off (`unsafeSkipCacheSync`: controllers start, and cluster state counts as synced, at once). The
// control run must show the damage the guard prevents, so the guard, not luck, is what the test proves:
//
//   node.termination       a Node is deleting (finalizer held), the Pod list fails: the control run sees no
//                          pods on it and terminates its instance, 0 evictions, the PDB broken;
//   nodeclaim.termination  a NodeClaim is deleting, the Node list fails: the control run sees no Node and
//                          terminates the instance without a drain;
//   disruption             the Pod list fails: the control run finds the node empty and deletes it;
//   garbage collection     the NodeClaim list fails: the control run finds every instance orphaned;
//   interruption           a spot interruption warning waits in the queue, the NodeClaim list fails: the
//                          control run acknowledges it as stale and the node is reclaimed with its pods.
import { afterEach, describe, expect, it } from 'vitest';
import type { Operator } from '../../controller/main.ts';
import type { FailRule } from '../../sim/apiserver/faults.ts';
import type { KObject } from '../../sim/apiserver/index.ts';
import { watchDrill, wrapCloud } from '../support/drills.ts';
import { deployment, guide, nodeClaims, nodes, running, simulation, type Simulation } from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const PDB = JSON.stringify({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'web', namespace: 'default' },
  spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
});

/** Three pods under a PDB (minAvailable 2), running on the guide's spot pool. */
async function webCluster(): Promise<Simulation> {
  const s = await simulation();
  await s.apply(guide('guide-03.yaml'));
  await s.apply(guide('guide-05.yaml'));
  await s.apply(deployment('web', 3));
  await s.apply(PDB);
  await s.clock.advanceUntil(() => running(s, 'web') === 3, 180_000, 'web running');
  return s;
}

/** Evictions the API server granted so far. */
const evictions = (s: Simulation): number =>
  s.cluster.requests.all().filter((r) => r.subresource === 'eviction' && r.status > 0 && r.status < 300).length;
const providerIdOf = (o: KObject): string => (o.status as { providerID: string }).providerID;

interface Terminated {
  readonly providerID: string;
  readonly at: number;
  /** Evictions granted when the controller asked the cloud to terminate the instance. */
  readonly evictionsBefore: number;
}

interface Restart {
  readonly operator: Operator;
  /** The first termination the new replica asked for, per instance. */
  readonly terminated: Terminated[];
  readonly restartedAt: number;
  /** When the failing kind first listed successfully (undefined while it still fails). */
  listedAt(): number | undefined;
}

/**
 * Kills the running controller, lets `whileDown` change the world, makes the API server fail the next
 * `fail.count` lists of one kind with 500, and starts a fresh replica (guarded or not). Every instance the
 * new replica terminates is recorded with the evictions granted by then.
 */
async function restartWhileListFails(
  s: Simulation,
  fail: FailRule & { resource: string },
  guarded: boolean,
  whileDown: () => Promise<void> = async () => {},
): Promise<Restart> {
  s.operator.kill();
  await whileDown();
  await s.settle();
  s.cluster.faults.failNext({ verbs: ['list'], code: 500, ...fail });
  const terminated: Terminated[] = [];
  const restartedAt = s.clock.now();
  const sameResource = (r?: string): boolean => r === fail.resource || r?.startsWith(`${fail.resource}.`) === true;
  const listedAt = (): number | undefined =>
    s.cluster.requests
      .all()
      .find((r) => r.verb === 'list' && sameResource(r.resource) && r.status === 200 && r.time >= restartedAt)?.time;
  const operator = await s.startReplica({
    name: guarded ? 'restarted' : 'restarted-unguarded',
    unsafeSkipCacheSync: !guarded,
    cloud: (cp) =>
      wrapCloud(cp, {
        delete: (id) => {
          if (!terminated.some((t) => t.providerID === id))
            terminated.push({ providerID: id, at: s.clock.now(), evictionsBefore: evictions(s) });
          return cp.delete(id);
        },
      }),
  });
  return { operator, terminated, listedAt, restartedAt };
}

describe('controllers wait for the kinds they read to list (cache sync drills)', () => {
  describe('node.termination: a Node deleting while the Pod list fails (~7 s)', () => {
    const drill = async (guarded: boolean) => {
      sim = await webCluster();
      const [node] = nodes(sim);
      const watch = watchDrill(sim, { maxUnboundMs: 150_000 });
      const r = await restartWhileListFails(sim, { resource: 'pods', count: 3 }, guarded, () =>
        sim!.kube.delete('Node', node!.metadata.name!),
      );
      await sim.clock.advanceUntil(
        () => r.terminated.length > 0 && (!guarded || running(sim!, 'web') === 3),
        300_000,
        'the instance terminated',
      );
      await sim.clock.advance(30_000);
      return { r, violations: watch.violations() };
    };

    it('guarded: drains through the Eviction API after the Pod list succeeds, the PDB held', async () => {
      const { r, violations } = await drill(true);
      expect(r.terminated).toHaveLength(1);
      expect(r.terminated[0]!.evictionsBefore).toBe(3);
      expect(r.terminated[0]!.at).toBeGreaterThan(r.listedAt()!);
      expect(violations).toEqual([]);
    });

    it('control run without the guard: the instance goes at +5 s with 0 evictions and the PDB breaks', async () => {
      const { r, violations } = await drill(false);
      expect(r.terminated[0]!.evictionsBefore).toBe(0);
      expect(r.terminated[0]!.at - r.restartedAt).toBe(5_000);
      expect(r.terminated[0]!.at).toBeLessThan(r.listedAt()!);
      expect(violations.some((v) => v.includes('PodDisruptionBudget default/web'))).toBe(true);
    });
  });

  describe('nodeclaim.termination: a NodeClaim deleting while the Node list fails (~7 s)', () => {
    const drill = async (guarded: boolean) => {
      sim = await webCluster();
      const [claim] = nodeClaims(sim);
      const watch = watchDrill(sim, { maxUnboundMs: 150_000 });
      const r = await restartWhileListFails(sim, { resource: 'nodes', count: 3 }, guarded, () =>
        sim!.kube.delete('NodeClaim', claim!.metadata.name!),
      );
      await sim.clock.advanceUntil(
        () => r.terminated.length > 0 && (!guarded || running(sim!, 'web') === 3),
        300_000,
        'the instance terminated',
      );
      await sim.clock.advance(30_000);
      return { r, violations: watch.violations(), claim: claim! };
    };

    it('guarded: deletes the Node first, which is drained, and only then the instance', async () => {
      const { r, violations, claim } = await drill(true);
      expect(r.terminated.map((t) => t.providerID)).toEqual([providerIdOf(claim)]);
      expect(r.terminated[0]!.evictionsBefore).toBe(3);
      expect(violations).toEqual([]);
    });

    it('control run without the guard: the instance goes at once, no drain, the PDB breaks', async () => {
      const { r, violations } = await drill(false);
      expect(r.terminated[0]!.evictionsBefore).toBe(0);
      expect(r.terminated[0]!.at).toBeLessThan(r.listedAt()!);
      expect(violations.some((v) => v.includes('PodDisruptionBudget default/web'))).toBe(true);
    });
  });

  describe('disruption: the Pod list fails for ~1 minute after a restart', () => {
    const drill = async (guarded: boolean) => {
      sim = await webCluster();
      const claims = nodeClaims(sim).map((c) => c.metadata.name);
      const r = await restartWhileListFails(sim, { resource: 'pods', count: 6 }, guarded);
      await sim.clock.advance(180_000);
      const disrupted = await r.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'empty' });
      return { r, claims, disrupted };
    };

    it('guarded: sees the pods once they list and leaves the busy node alone', async () => {
      const { r, claims, disrupted } = await drill(true);
      expect(disrupted).toBeUndefined();
      expect(r.terminated).toEqual([]);
      expect(nodeClaims(sim!).map((c) => c.metadata.name)).toEqual(claims);
      expect(running(sim!, 'web')).toBe(3);
    });

    it('control run without the guard: the node looks empty and is deleted as such', async () => {
      const { r, disrupted } = await drill(false);
      expect(disrupted).toBeGreaterThanOrEqual(1);
      expect(r.terminated[0]!.evictionsBefore).toBe(0);
    });
  });

  describe('garbage collection: the NodeClaim list fails for ~30 s after a restart', () => {
    const drill = async (guarded: boolean) => {
      sim = await webCluster();
      const instances = nodeClaims(sim).map(providerIdOf);
      const r = await restartWhileListFails(sim, { resource: 'nodeclaims', count: 5 }, guarded);
      await sim.clock.advance(60_000);
      return { ...r, instances };
    };

    it('guarded: terminates nothing', async () => {
      const r = await drill(true);
      expect(r.listedAt()).toBeDefined();
      expect(r.terminated).toEqual([]);
      expect(running(sim!, 'web')).toBe(3);
    });

    it('control run without the guard: every instance looks orphaned and is terminated', async () => {
      const r = await drill(false);
      expect(r.terminated.map((t) => t.providerID)).toEqual(r.instances);
      expect(r.terminated[0]!.at).toBeLessThan(r.listedAt()!);
    });
  });

  describe('interruption: a spot warning waits in the queue while the NodeClaim list fails (~7 s)', () => {
    const drill = async (guarded: boolean) => {
      sim = await webCluster();
      const [claim] = nodeClaims(sim);
      const watch = watchDrill(sim, { maxUnboundMs: 150_000 });
      const r = await restartWhileListFails(sim, { resource: 'nodeclaims', count: 3 }, guarded, async () => {
        sim!.provider.interrupt(providerIdOf(claim!), 'spotInterruption');
      });
      await sim.clock.advance(180_000);
      return { r, violations: watch.violations(), claim: claim! };
    };

    it('guarded: handles the message once the NodeClaims list: drained in time, the PDB held', async () => {
      const { r, violations, claim } = await drill(true);
      expect(
        await r.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted' }),
      ).toBe(1);
      expect(sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim.metadata.name!)).toBeUndefined();
      expect(sim!.provider.interruptions.acknowledged).toHaveLength(1);
      expect(running(sim!, 'web')).toBe(3);
      expect(violations).toEqual([]);
    });

    it('control run without the guard: the message is acknowledged with no action and the node is reclaimed with its pods', async () => {
      const { r, violations } = await drill(false);
      expect(sim!.provider.interruptions.acknowledged).toHaveLength(1);
      expect(
        await r.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'spot_interrupted' }),
      ).toBeUndefined();
      expect(violations.some((v) => v.includes('PodDisruptionBudget default/web'))).toBe(true);
    });
  });
});
