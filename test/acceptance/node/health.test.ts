// Karpenter core pkg/controllers/node/health/suite_test.go (main after v1.14.1), case for case, against the
// node.health controller in the simulator. As upstream, the cloud provider's repair policy here is the test
// policy "BadNode=False, tolerated 30 minutes" (Karpenter's fake provider); the AWS policies are covered by
// the node-repair scenario. Objects are written straight into the API server (no launch, no kubelet) and,
// as upstream's ExpectObjectReconciled, the test runs the controller's reconcile itself: the operator runs no
// controller, its informers only feed cluster state.
import { afterEach, describe, expect, it } from 'vitest';
import type { RepairPolicy } from '../../../controller/cloudprovider/types.ts';
import { toKubeTime } from '../../../controller/operator/clock.ts';
import { newNodeHealth } from '../../../controller/controllers/node/health/reconcile.ts';
import { engineOptionsOf } from '../../../controller/main.ts';
import { resolveOptions } from '../../../controller/operator/options.ts';
import type { ReconcileResult } from '../../../controller/operator/result.ts';
import type { Controller } from '../../../controller/operator/runtime.ts';
import { wrapCloud } from '../../support/drills.ts';
import { events, simulation, type Simulation } from '../../support/environment.ts';
import { simulationEngine } from '../../../sim/engine.ts';

const MIN = 60_000;
const BAD_NODE: RepairPolicy = { conditionType: 'BadNode', conditionStatus: 'False', tolerationMs: 30 * MIN };
const TERMINATION_TIMESTAMP = 'karpenter.sh/nodeclaim-termination-timestamp';

let sim: Simulation | undefined;
let health: Controller | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(policies: readonly RepairPolicy[] = [BAD_NODE]): Promise<Simulation> {
  const overrides = { 'feature-gates': 'NodeRepair=true' };
  sim = await simulation({ only: ['none'], options: overrides });
  const op = sim.operator;
  const options = resolveOptions([], {}, { 'cluster-name': 'my-cluster', ...overrides });
  health = newNodeHealth({
    clock: op.clock,
    kube: op.kube,
    cluster: op.cluster,
    events: op.events,
    metrics: op.metrics,
    activity: op.activity,
    log: op.log,
    options,
    engineOptions: engineOptionsOf(options),
    cloudProvider: { ...wrapCloud(op.cloudProvider, {}), repairPolicies: () => policies },
    engine: simulationEngine().cluster('node-health-test'),
  });
  return sim;
}

let seq = 0;
interface Made {
  readonly node: string;
  readonly claim: string;
}

/** A NodeClaim and its Node (matching providerIDs); the node's conditions transition `agoMs` before now. */
async function nodeAndClaim(
  s: Simulation,
  o: {
    pool?: string | null;
    conditions?: Array<{ type: string; status: string; agoMs?: number }>;
    claimAnnotations?: Record<string, string>;
    nodeAnnotations?: Record<string, string>;
    tgp?: string;
  } = {},
): Promise<Made> {
  const n = ++seq;
  const name = `node-${n}`;
  const pid = `aws:///ap-northeast-2a/i-${String(n).padStart(17, '0')}`;
  const labels: Record<string, string> = o.pool === null ? {} : { 'karpenter.sh/nodepool': o.pool ?? 'default' };
  await s.kube.create('NodeClaim', {
    metadata: {
      name: `claim-${n}`,
      labels,
      finalizers: ['karpenter.sh/termination'],
      ...(o.claimAnnotations ? { annotations: o.claimAnnotations } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [],
      ...(o.tgp ? { terminationGracePeriod: o.tgp } : {}),
    },
  });
  await s.kube.patchStatus('NodeClaim', `claim-${n}`, { providerID: pid, nodeName: name, imageID: 'ami-0123' });
  const now = s.clock.now();
  s.cluster.api.create('nodes', undefined, {
    metadata: {
      name,
      labels: { ...labels, 'karpenter.sh/capacity-type': 'on-demand' },
      ...(o.nodeAnnotations ? { annotations: o.nodeAnnotations } : {}),
    },
    spec: { providerID: pid },
    status: {
      conditions: (o.conditions ?? []).map((c) => ({
        type: c.type,
        status: c.status,
        lastTransitionTime: toKubeTime(now - (c.agoMs ?? 0)),
      })),
    },
  });
  await s.settle();
  return { node: name, claim: `claim-${n}` };
}

const claimOf = (s: Simulation, m: Made) => s.cluster.api.find('nodeclaims.karpenter.sh', undefined, m.claim);
const deleting = (s: Simulation, m: Made): boolean => claimOf(s, m)?.metadata.deletionTimestamp !== undefined;
const bad = (agoMs: number, status = 'False') => [{ type: 'BadNode', status, agoMs }];
const nodePool = (s: Simulation, budgets?: unknown[]) =>
  s.kube.create('NodePool', {
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
      },
      ...(budgets ? { disruption: { consolidateAfter: '0s', budgets } } : {}),
    },
  });

/** Runs the controller's reconcile for one node, as Karpenter's ExpectObjectReconciled does. */
async function reconcile(s: Simulation, node: string): Promise<ReconcileResult> {
  const r = await health!.reconcile(node);
  await s.settle();
  return r;
}

describe('Node Health', () => {
  describe('Reconciliation', () => {
    it('should delete nodes that are unhealthy by the cloud provider', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(60 * MIN) });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(true);
    });
    it('should not delete node when unhealthy type does not match cloud provider passed in value', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: [{ type: 'FakeHealthyNode', status: 'False', agoMs: 60 * MIN }] });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(false);
    });
    it('should not delete node when health status does not match cloud provider passed in value', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(60 * MIN, 'True') });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(false);
    });
    it('should not delete node when health duration is not reached', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(20 * MIN) });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(false);
    });
    it('should set annotation termination grace period when force termination is started', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(60 * MIN) });
      await reconcile(s, m.node);
      expect(claimOf(s, m)?.metadata.annotations?.[TERMINATION_TIMESTAMP]).toBe(toKubeTime(s.clock.now()));
    });
    it('should not respect termination grace period if set on the nodepool', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, {
        conditions: bad(60 * MIN),
        claimAnnotations: { [TERMINATION_TIMESTAMP]: toKubeTime(Date.now() + 120 * MIN) },
        tgp: '2h',
      });
      const now = toKubeTime(s.clock.now());
      await reconcile(s, m.node);
      expect(claimOf(s, m)?.metadata.annotations?.[TERMINATION_TIMESTAMP]).toBe(now);
    });
    it('should not update termination grace period if set before the current time', async () => {
      const s = await start();
      await nodePool(s);
      const earlier = toKubeTime(s.clock.now() - 3 * MIN);
      const m = await nodeAndClaim(s, {
        conditions: bad(60 * MIN),
        claimAnnotations: { [TERMINATION_TIMESTAMP]: earlier },
      });
      await reconcile(s, m.node);
      expect(claimOf(s, m)?.metadata.annotations?.[TERMINATION_TIMESTAMP]).toBe(earlier);
      expect(deleting(s, m)).toBe(true);
    });
    it('should return the requeue interval for the condition closest to its terminationDuration', async () => {
      const s = await start([
        { ...BAD_NODE, tolerationMs: 60 * MIN },
        { conditionType: 'ValidUnhealthyCondition', conditionStatus: 'False', tolerationMs: 30 * MIN },
      ]);
      await nodePool(s);
      const m = await nodeAndClaim(s, {
        conditions: [
          { type: 'ValidUnhealthyCondition', status: 'False', agoMs: 27 * MIN },
          { type: 'BadNode', status: 'False', agoMs: 27 * MIN },
        ],
      });
      expect(await reconcile(s, m.node)).toEqual({ kind: 'requeueAfter', ms: 3 * MIN });
    });
    it('should return the requeue interval for the time between now and when the nodeClaim termination time', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(27 * MIN) });
      expect(await reconcile(s, m.node)).toEqual({ kind: 'requeueAfter', ms: 3 * MIN });
    });
  });

  describe('Forceful termination', () => {
    it('should ignore node disruption budgets', async () => {
      const s = await start();
      await nodePool(s, [{ nodes: '0' }]);
      const m = await nodeAndClaim(s, { conditions: bad(60 * MIN) });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(true);
    });
    it('should ignore do-not-disrupt on a node', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, {
        conditions: bad(60 * MIN),
        nodeAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(true);
    });
    it('should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a nodepool', async () => {
      const s = await start();
      await nodePool(s);
      const all: Made[] = [];
      for (let i = 0; i < 10; i++) all.push(await nodeAndClaim(s, i < 3 ? { conditions: bad(60 * MIN) } : {}));
      for (const m of all.slice(0, 2)) {
        expect(await reconcile(s, m.node)).toEqual({ kind: 'requeueAfter', ms: 5 * MIN });
        expect(deleting(s, m)).toBe(false);
      }
      const blocked = events(s, 'NodeRepairBlocked');
      expect(blocked.map((e) => (e['involvedObject'] as { kind: string }).kind).sort()).toEqual([
        'Node',
        'Node',
        'NodeClaim',
        'NodeClaim',
        'NodePool',
      ]);
      expect(
        blocked.every(
          (e) => e['message'] === 'more than 20% nodes are unhealthy in the nodepool' && e['type'] === 'Warning',
        ),
      ).toBe(true);
    });
    it('should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a cluster', async () => {
      const s = await start();
      const all: Made[] = [];
      for (let i = 0; i < 10; i++)
        all.push(await nodeAndClaim(s, { pool: null, ...(i < 3 ? { conditions: bad(60 * MIN) } : {}) }));
      for (const m of all.slice(0, 3)) {
        expect(await reconcile(s, m.node)).toEqual({ kind: 'requeueAfter', ms: 5 * MIN });
        expect(deleting(s, m)).toBe(false);
      }
      expect(
        events(s, 'NodeRepairBlocked').every(
          (e) => e['message'] === 'more then 20% nodes are unhealthy in the cluster',
        ),
      ).toBe(true);
    });
    it('should consider round up when there is a low number of nodes for a nodepool', async () => {
      const s = await start();
      await nodePool(s);
      const all: Made[] = [];
      for (let i = 0; i < 3; i++) all.push(await nodeAndClaim(s, i === 0 ? { conditions: bad(60 * MIN) } : {}));
      await reconcile(s, all[0]!.node);
      expect(deleting(s, all[0]!)).toBe(true);
    });
  });

  describe('Metrics', () => {
    it('should fire a karpenter_nodeclaims_disrupted_total metric when unhealthy', async () => {
      const s = await start();
      await nodePool(s);
      const m = await nodeAndClaim(s, { conditions: bad(60 * MIN) });
      await reconcile(s, m.node);
      expect(deleting(s, m)).toBe(true);
      const metrics = s.operator.metrics;
      expect(
        await metrics.value('karpenter_nodeclaims_disrupted_total', {
          reason: 'unhealthy',
          nodepool: 'default',
          consolidation_policy: '',
          termination_mode: 'graceful',
        }),
      ).toBe(1);
      expect(
        await metrics.value('karpenter_nodeclaims_unhealthy_disrupted_total', {
          condition: 'bad_node',
          nodepool: 'default',
          capacity_type: 'on-demand',
          image_id: 'ami-0123',
        }),
      ).toBe(1);
    });
  });

  it('runs as node.health only with the gate on and a provider that has repair policies, and repairs from its own requeue', async () => {
    sim = await simulation({ only: ['node.health'] });
    expect(sim.operator.runtime.controllers.map((c) => c.name)).not.toContain('node.health');
    await sim.close();
    sim = await simulation({
      only: ['node.health'],
      options: { 'feature-gates': 'NodeRepair=true' },
      cloud: (cp) => ({ ...wrapCloud(cp, {}), repairPolicies: () => [] }),
    });
    expect(sim.operator.runtime.controllers.map((c) => c.name)).not.toContain('node.health');
    await sim.close();
    sim = await simulation({
      only: ['node.health'],
      options: { 'feature-gates': 'NodeRepair=true' },
      cloud: (cp) => ({ ...wrapCloud(cp, {}), repairPolicies: () => [BAD_NODE] }),
    });
    await nodePool(sim);
    const m = await nodeAndClaim(sim, { conditions: bad(20 * MIN) });
    await sim.clock.advance(9 * MIN);
    expect(deleting(sim, m)).toBe(false);
    await sim.clock.advance(2 * MIN);
    expect(deleting(sim, m)).toBe(true);
  });
});
