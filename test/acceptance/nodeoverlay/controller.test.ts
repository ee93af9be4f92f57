// Karpenter core pkg/controllers/nodeoverlay/suite_test.go (main after v1.14.1), the controller's cases: the
// overlays' status conditions, the store the other controllers read, and what provisioning then sees, against
// the operator in the simulator with the gate NodeOverlay on.
import { afterEach, describe, expect, it } from 'vitest';
import { OverlayStore, UnevaluatedNodePoolError } from '../../../controller/controllers/nodeoverlay/store.ts';
import { deployment, guide, simulation, type Simulation } from '../../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ['m5.large', 'm5.xlarge']
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
`;

function overlay(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'karpenter.sh/v1alpha1',
    kind: 'NodeOverlay',
    metadata: { name },
    spec: { requirements: [], ...spec },
  });
}

async function start(): Promise<Simulation> {
  sim = await simulation({ options: { 'feature-gates': 'NodeOverlay=true' } });
  await sim.apply(guide('guide-03.yaml'));
  await sim.apply(POOL);
  await sim.settle();
  return sim;
}

const conditionOf = (s: Simulation, name: string, type: string) =>
  (
    (
      s.cluster.api.find('nodeoverlays.karpenter.sh', undefined, name)?.status as
        | { conditions?: Array<{ type: string; status: string; reason: string; message: string }> }
        | undefined
    )?.conditions ?? []
  ).find((c) => c.type === type);

describe('NodeOverlay controller', () => {
  it('should pass with a single overlay', async () => {
    const s = await start();
    await s.apply(overlay('cheaper', { priceAdjustment: '-10%' }));
    await s.settle();
    expect(conditionOf(s, 'cheaper', 'ValidationSucceeded')).toMatchObject({ status: 'True' });
    expect(conditionOf(s, 'cheaper', 'Ready')).toMatchObject({ status: 'True' });
  });

  describe('Runtime Validation', () => {
    it('should fail validation for invalid requirements values', async () => {
      const s = await start();
      await s.apply(
        overlay('restricted', {
          price: '1',
          requirements: [{ key: 'kubernetes.io/custom', operator: 'In', values: ['x'] }],
        }),
      );
      await s.settle();
      expect(conditionOf(s, 'restricted', 'ValidationSucceeded')).toMatchObject({
        status: 'False',
        reason: 'RuntimeValidation',
      });
      expect(conditionOf(s, 'restricted', 'ValidationSucceeded')?.message).toMatch(/kubernetes\.io\/custom/);
      expect(conditionOf(s, 'restricted', 'Ready')).toMatchObject({ status: 'False' });
    });
    it('refuses at admission what the CRD refuses: well-known capacity, price with priceAdjustment, weight out of range', async () => {
      const s = await start();
      await expect(s.apply(overlay('cpu', { capacity: { cpu: '1' } }))).rejects.toThrow(/invalid resource restricted/);
      await expect(s.apply(overlay('both', { price: '1', priceAdjustment: '+1' }))).rejects.toThrow(
        /cannot set both 'price' and 'priceAdjustment'/,
      );
      await expect(s.apply(overlay('heavy', { price: '1', weight: 10001 }))).rejects.toThrow(/weight/);
    });
  });

  describe('Requirements Validations', () => {
    it('should fail when requirements overlays overlap', async () => {
      const s = await start();
      await s.apply(
        overlay('a-first', {
          price: '0.5',
          requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
        }),
      );
      await s.apply(overlay('b-second', { price: '0.7' }));
      await s.settle();
      // Equal weights: b-second is applied first (the later name), a-first then sets m5.large again.
      expect(conditionOf(s, 'b-second', 'ValidationSucceeded')).toMatchObject({ status: 'True' });
      expect(conditionOf(s, 'a-first', 'ValidationSucceeded')).toMatchObject({
        status: 'False',
        reason: 'Conflict',
        message: 'conflict with another overlay',
      });
      // Giving it a higher weight resolves it.
      await s.apply(
        overlay('a-first', {
          price: '0.5',
          weight: 10,
          requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
        }),
      );
      await s.settle();
      expect(conditionOf(s, 'a-first', 'ValidationSucceeded')).toMatchObject({ status: 'True' });
    });
  });

  it('provisioning sees the overlaid prices', async () => {
    const s = await start();
    await s.apply(
      overlay('xlarge-cheap', {
        price: '0.001',
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }],
      }),
    );
    await s.apply(deployment('web', 1));
    await s.clock.advanceUntil(
      () => s.operator.controllers.provisioner!.lastPlan()?.newNodeClaims.length === 1,
      60_000,
      'a plan',
    );
    const [claim] = s.operator.controllers.provisioner!.lastPlan()!.newNodeClaims;
    // By the catalog m5.large ($0.118/h) is the cheaper option; with the overlay m5.xlarge is, at $0.001/h.
    expect(claim!.instanceTypes[0]).toEqual({ name: 'm5.xlarge', price: 0.001 });
    expect(claim!.price).toBeCloseTo(0.001);
  });

  it('a NodePool not evaluated yet gets no instance types rather than un-overlaid ones', () => {
    const store = new OverlayStore();
    expect(() => store.apply('default', [])).toThrow(UnevaluatedNodePoolError);
    store.swap(new Map(), ['default']);
    expect(store.apply('default', [])).toEqual([]);
  });
});
