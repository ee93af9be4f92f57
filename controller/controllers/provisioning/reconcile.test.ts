// The provisioner against the simulator, without the NodeClaim lifecycle: what it creates, when, and
// what it tells pods.
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterEngine, Engine } from '../../../engine/index.ts';
import { simulationEngine } from '../../../sim/engine.ts';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  scale,
  simulation,
  type Simulation,
} from '../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const ONLY = ['nodeclass.status', 'nodepool.readiness', 'nodepool.hash', 'provisioner'];

describe('provisioner', () => {
  it('plans the pods of one batch window together', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advance(500);
    expect(nodeClaims(sim)).toHaveLength(0);
    await scale(sim, 'web', 5);
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    const claims = nodeClaims(sim);
    expect(claims).toHaveLength(1);
    expect((claims[0]!.spec as { resources: { requests: Record<string, string> } }).resources.requests).toMatchObject({
      cpu: '5',
      memory: '5Gi',
      pods: '5',
    });
    // Without the lifecycle controller the NodeClaim never launches: cluster state is not synced, and the
    // provisioner plans nothing more while it waits.
    expect(sim.operator.cluster.synced()).toBe(false);
    await scale(sim, 'web', 8);
    await sim.clock.advance(60_000);
    expect(nodeClaims(sim)).toHaveLength(1);
    expect(sim.operator.controllers.provisioner!.lastPlan()!.newNodeClaims).toHaveLength(1);
  });

  it('tells each pod that fits no NodePool which constraint failed in which NodePool', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(
      deployment('arm', 1, {
        nodeSelector: { 'kubernetes.io/arch': 'arm64', 'karpenter.k8s.aws/instance-family': 'c5' },
      }),
    );
    await sim.clock.advance(5_000);
    expect(nodeClaims(sim)).toHaveLength(0);
    const failed = events(sim, 'FailedScheduling').filter(
      (e) => (e['source'] as { component?: string } | undefined)?.component === 'karpenter',
    );
    expect(failed).toHaveLength(1);
    expect(String(failed[0]!['message'])).toMatch(/^Failed to schedule pod, .*spot-diverse/);
    expect(
      await sim.operator.metrics.value('karpenter_scheduler_unschedulable_pods_count', { controller: 'provisioner' }),
    ).toBe(1);
    expect(
      await sim.operator.metrics.value('karpenter_scheduler_scheduling_duration_seconds', {
        controller: 'provisioner',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('says NoCompatibleInstanceTypes on a NodePool whose own minValues its instance types cannot meet', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    // Two c5 sizes in spot-diverse's range cannot give the 3 distinct instance types minValues asks for.
    await sim.apply(
      guide('guide-05.yaml').replace(
        "values: ['large', 'xlarge', '2xlarge', '4xlarge']",
        "values: ['large', 'xlarge']\n        - key: karpenter.k8s.aws/instance-family\n          operator: In\n          values: ['c5']\n        - key: node.kubernetes.io/instance-type\n          operator: Exists\n          minValues: 3",
      ),
    );
    await sim.apply(deployment('web', 1));
    await sim.clock.advance(5_000);
    expect(nodeClaims(sim)).toHaveLength(0);
    const e = events(sim, 'NoCompatibleInstanceTypes');
    expect(
      e.map((x) => [(x['involvedObject'] as { kind: string; name: string }).name, x['type'], x['message']]),
    ).toEqual([
      [
        'spot-diverse',
        'Warning',
        'NodePool requirements filtered out all compatible available instance types due to minValues incompatibility',
      ],
    ]);
    expect(String(events(sim, 'FailedScheduling')[0]!['message'])).toContain(
      'nodepool requirements filtered out all available instance types',
    );
  });

  it("creates the batch's NodeClaims before it reports the pods that fit nowhere", async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(
      deployment('arm', 3, {
        nodeSelector: { 'kubernetes.io/arch': 'arm64', 'karpenter.k8s.aws/instance-family': 'c5' },
      }),
    );
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    await sim.clock.advance(1_000);
    // The API server's resource versions count writes in order.
    const version = (o: { metadata?: unknown }) => Number((o.metadata as { resourceVersion: string }).resourceVersion);
    const claims = nodeClaims(sim);
    const failed = events(sim, 'FailedScheduling').filter(
      (e) => (e['source'] as { component?: string } | undefined)?.component === 'karpenter',
    );
    expect(claims).toHaveLength(1);
    expect(failed).toHaveLength(3);
    expect(Math.min(...failed.map(version))).toBeGreaterThan(version(claims[0]!));
  });

  it("works out the pass's per-pod metrics only once its first NodeClaim was created", async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    const order: string[] = [];
    const byZone = sim.operator.metrics.pendingPodsByZone;
    const reset = byZone.reset.bind(byZone);
    byZone.reset = () => {
      order.push('metrics');
      reset();
    };
    sim.operator.cluster.subscribe((c) => {
      if (c.kind === 'NodeClaim' && c.type === 'upsert' && !c.old) order.push('nodeclaim');
    });
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => order.includes('metrics'), 30_000, 'a decision');
    expect(order.slice(0, 2)).toEqual(['nodeclaim', 'metrics']);
  });

  it('reports every pod of a batch that fits nowhere, in plan order, however many turns the reporting takes', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    // More pods than a decision reports per turn of the event loop.
    await sim.apply(
      deployment('arm', 700, {
        nodeSelector: { 'kubernetes.io/arch': 'arm64', 'karpenter.k8s.aws/instance-family': 'c5' },
      }),
    );
    await sim.clock.advanceUntil(
      () => sim!.operator.controllers.provisioner!.lastPlan() !== undefined,
      30_000,
      'a decision',
    );
    await sim.clock.advance(1_000);
    const plan = sim.operator.controllers.provisioner!.lastPlan()!;
    expect(plan.unschedulable).toHaveLength(700);
    const names = new Map(sim.operator.cluster.provisionablePods().map((p) => [p.uid, p.name]));
    const reported = sim.operator.events
      .recent({ reason: 'FailedScheduling' })
      .filter((e) => e.involved.kind === 'Pod')
      .map((e) => e.involved.name);
    expect(reported).toEqual(plan.unschedulable.map((e) => names.get(e.uid)));
    expect(
      await sim.operator.metrics.value('karpenter_scheduler_unschedulable_pods_count', { controller: 'provisioner' }),
    ).toBe(700);
  });

  it('does not provision for a NodePool whose EC2NodeClass selects no subnet (it is not Ready)', async () => {
    sim = await simulation({ only: ONLY, clusterName: 'another-cluster' });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advance(10_000);
    expect(nodeClaims(sim)).toHaveLength(0);
    const nc = sim.cluster.api.get('ec2nodeclasses.karpenter.k8s.aws', undefined, 'default');
    expect(
      (nc.status as { conditions: Array<{ type: string; status: string; message: string }> }).conditions.find(
        (c) => c.type === 'SubnetsReady',
      ),
    ).toMatchObject({ status: 'False', message: expect.stringContaining('SubnetSelector did not match any subnets') });
    const pool = sim.cluster.api.get('nodepools.karpenter.sh', undefined, 'spot-diverse');
    expect(
      (pool.status as { conditions: Array<{ type: string; status: string }> }).conditions.find(
        (c) => c.type === 'NodeClassReady',
      )?.status,
    ).toBe('False');
    // The pod's event says which NodePool sat out, and why.
    const failed = events(sim, 'FailedScheduling').filter(
      (e) => (e['source'] as { component?: string } | undefined)?.component === 'karpenter',
    );
    expect(String(failed.at(-1)!['message'])).toContain(
      'NodePools not ready: spot-diverse (NodeClassReady is False: SubnetsReady, SecurityGroupsReady not True)',
    );
  });
});

describe('provisioner: a plan cut short by the clock', () => {
  /** The simulation's engine, with every provisioning plan marked as the solver marks one its safety net cut short. */
  function truncatingEngine(): Engine {
    const base = simulationEngine();
    const truncate = (c: ClusterEngine): ClusterEngine => ({
      ...c,
      name: c.name,
      lastShipped: () => c.lastShipped(),
      close: () => c.close(),
      provision: async (s, pending, o) => ({ ...(await c.provision(s, pending, o)), truncated: true as const }),
      disrupt: (s, o) => c.disrupt(s, o),
      validate: (s, d, o) => c.validate(s, d, o),
      explainNode: (s, n, o) => c.explainNode(s, n, o),
      lowerBound: (s, p, o) => c.lowerBound(s, p, o),
    });
    return {
      ...base,
      cluster: (name: string) => truncate(base.cluster(name)),
      close: () => Promise.resolve(),
    } as Engine;
  }

  it('counts it in karpenter_ts_solver_truncated_total and still creates its NodeClaims', async () => {
    sim = await simulation({ only: ONLY, engine: truncatingEngine() });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    expect(await sim.operator.metrics.value('karpenter_ts_solver_truncated_total', { controller: 'provisioner' })).toBe(
      1,
    );
  });

  it('counts nothing for plans the work budget finished', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 3));
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    expect(
      await sim.operator.metrics.value('karpenter_ts_solver_truncated_total', { controller: 'provisioner' }),
    ).toBeFalsy();
  });
});

describe('provisioner: pods shipped while the batch window is open', () => {
  /** The simulation's engine, recording what the provisioner's model is sent ahead of its decisions. */
  function recordingEngine(preloaded: number[], decided: Array<number | undefined>): Engine {
    const base = simulationEngine();
    const record = (c: ClusterEngine): ClusterEngine => ({
      ...c,
      name: c.name,
      lastShipped: () => c.lastShipped(),
      close: () => c.close(),
      provision: async (s, pending, o) => {
        const plan = await c.provision(s, pending, o);
        decided.push(c.lastShipped()?.pods);
        return plan;
      },
      preload: async (pods, o) => {
        preloaded.push(pods.length);
        await c.preload(pods, o);
      },
      disrupt: (s, o) => c.disrupt(s, o),
      validate: (s, d, o) => c.validate(s, d, o),
      explainNode: (s, n, o) => c.explainNode(s, n, o),
      lowerBound: (s, p, o) => c.lowerBound(s, p, o),
    });
    return {
      ...base,
      cluster: (name: string) => record(base.cluster(name)),
      close: () => Promise.resolve(),
    } as Engine;
  }

  it('ships the pods to the model before the window closes, so the decision ships none of them', async () => {
    const preloaded: number[] = [];
    const decided: Array<number | undefined> = [];
    sim = await simulation({ only: [...ONLY, 'nodeclaim.lifecycle'], engine: recordingEngine(preloaded, decided) });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 2));
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    await sim.clock.advanceUntil(() => sim!.operator.cluster.synced(), 60_000, 'the NodeClaim to launch');
    const before = decided.length;
    await scale(sim, 'web', 12);
    await sim.clock.advanceUntil(() => decided.length > before, 30_000, 'the next decision');
    expect(preloaded.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(10);
    expect(decided.at(-1)).toBe(0);
  });
});

describe('provisioner: the decision solved while the batch window is open', () => {
  interface Seen {
    speculated: number;
    /** Per decision: whether it got the speculative plan. */
    reused: boolean[];
    /** Per decision: its plan, and the plan a one-off solve of the same snapshot and pods makes. */
    plans?: Array<{ plan: unknown; fresh: unknown }>;
    /** Engine calls of the window still in flight (the sim clock does not wait for them). */
    inFlight: Promise<unknown>[];
  }

  /** The simulation's engine, recording speculative solves and whether each decision reused one. */
  function speculatingEngine(seen: Seen): Engine {
    const base = simulationEngine();
    const track = <T>(p: Promise<T>): Promise<T> => {
      seen.inFlight.push(p.catch(() => {}));
      return p;
    };
    const record = (c: ClusterEngine): ClusterEngine => ({
      ...c,
      provision: async (s, pending, o) => {
        const plan = await c.provision(s, pending, o);
        seen.reused.push(c.lastReused());
        if (seen.plans) seen.plans.push({ plan, fresh: await base.provision(s, pending, o) });
        return plan;
      },
      speculate: (s, pending, o) => track(c.speculate(s, pending, o).then(() => void seen.speculated++)),
      preload: (pods, o) => track(c.preload(pods, o)),
    });
    return {
      ...base,
      cluster: (name: string) => record(base.cluster(name)),
      close: () => Promise.resolve(),
    } as Engine;
  }

  /** Moves the sim clock in small steps, letting the window's engine calls finish in between, until `done`. */
  async function stepUntil(s: Simulation, seen: Seen, done: () => boolean, what: string): Promise<void> {
    for (let ms = 0; ms < 900 && !done(); ms += 20) {
      await s.clock.advance(20);
      await Promise.all(seen.inFlight);
    }
    if (!done()) throw new Error(`${what} did not happen within the batch window`);
  }

  const podUids = (s: Simulation): string[] =>
    s.operator.cluster
      .provisionablePods()
      .map((p) => p.uid)
      .sort();

  it('reuses the speculative plan when nothing changed before the window closed', async () => {
    const seen: Seen = { speculated: 0, reused: [], inFlight: [] };
    sim = await simulation({ only: ONLY, engine: speculatingEngine(seen) });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 4));
    await stepUntil(sim, seen, () => seen.speculated > 0, 'a speculative solve');
    expect(nodeClaims(sim)).toHaveLength(0);
    const pending = podUids(sim);
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    expect(seen.reused).toEqual([true]);
    // The solve ahead had finished: the decision found none in flight, and says so.
    expect(sim.operator.controllers.provisioner!.lastDecision()?.ahead).toBe('none in flight');
    const plan = sim.operator.controllers.provisioner!.lastPlan()!;
    expect(plan.newNodeClaims.flatMap((nc) => nc.pods).sort()).toEqual(pending);
  });

  it('places a pod that arrives after the speculative solve, whether or not the window solves ahead again', async () => {
    const seen: Seen = { speculated: 0, reused: [], inFlight: [] };
    sim = await simulation({ only: ONLY, engine: speculatingEngine(seen) });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 4));
    await stepUntil(sim, seen, () => seen.speculated > 0, 'a speculative solve');
    const before = podUids(sim);
    await scale(sim, 'web', 5);
    await sim.clock.settle();
    const pending = podUids(sim);
    expect(pending).toHaveLength(before.length + 1);
    // Straight to the close: the engine call a timer started may or may not have finished by then.
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    const plan = sim.operator.controllers.provisioner!.lastPlan()!;
    expect(plan.newNodeClaims.flatMap((nc) => nc.pods).sort()).toEqual(pending);
  });

  it('solves ahead again after a pod arrives, and the decision gets that plan', async () => {
    const seen: Seen = { speculated: 0, reused: [], inFlight: [] };
    sim = await simulation({ only: ONLY, engine: speculatingEngine(seen) });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 4));
    await stepUntil(sim, seen, () => seen.speculated > 0, 'a speculative solve');
    await scale(sim, 'web', 5);
    await stepUntil(sim, seen, () => seen.speculated > 1, 'a second speculative solve');
    const pending = podUids(sim);
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    expect(seen.reused).toEqual([true]);
    const plan = sim.operator.controllers.provisioner!.lastPlan()!;
    expect(plan.newNodeClaims.flatMap((nc) => nc.pods).sort()).toEqual(pending);
    expect(pending).toHaveLength(5);
  });

  it('solves ahead again when the cluster changed without reopening the window, and the close gets that plan', async () => {
    const seen: Seen = { speculated: 0, reused: [], inFlight: [], plans: [] };
    sim = await simulation({ only: ONLY, engine: speculatingEngine(seen) });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 4, { cpu: '1' }));
    await stepUntil(sim, seen, () => seen.speculated > 0, 'a speculative solve');
    // A DaemonSet is no reason to provision (no trigger), but its pods take room on every new node: the plan
    // solved ahead is stale, and the window solves ahead again once the cluster is quiet.
    await sim.apply(daemonSet('agent', '2'));
    await stepUntil(sim, seen, () => seen.speculated > 1, 'a second speculative solve');
    await sim.clock.advanceUntil(() => nodeClaims(sim!).length > 0, 30_000, 'a nodeclaim');
    expect(seen.reused).toEqual([true]);
    // The plan taken is the plan a solve at the close makes (the DaemonSet's 2 CPUs on the node).
    expect(seen.plans).toHaveLength(1);
    expect(seen.plans![0]!.plan).toEqual(seen.plans![0]!.fresh);
    const requests = nodeClaims(sim).map(
      (c) => (c.spec as { resources: { requests: Record<string, string> } }).resources.requests['cpu'],
    );
    expect(requests).toEqual(['6']);
  });
});

/** A DaemonSet whose pods request `cpu` each. */
function daemonSet(name: string, cpu: string): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'kube-system' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'agent', image: 'pause', resources: { requests: { cpu, memory: '64Mi' } } }] },
      },
    },
  });
}
