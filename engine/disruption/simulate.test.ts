import { describe, expect, it } from 'vitest';
import { ModelCaches } from '../model/caches.ts';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { FAKE_WELL_KNOWN_LABELS, fakeInstanceType, fakeOffering } from '../../test/fixtures/instancetypes.ts';
import { withExtraWellKnown } from '../scheduling/labels.ts';
import { solveReference } from '../solver/reference/scheduler.ts';
import type { ProvisionInput, ProvisionPlan } from '../model/types.ts';
import { simulate } from './simulate.ts';

const wellKnownLabels = withExtraWellKnown(FAKE_WELL_KNOWN_LABELS);
const it4 = fakeInstanceType({
  name: 'four',
  resources: { cpu: 4000, memory: 4 * 2 ** 30, pods: 20 },
  offerings: [fakeOffering({ zone: 'test-zone-1', capacityType: 'on-demand', price: 1 })],
});

/** The reference solver, with the given uids left out of every placement (a solver that loses pods). */
function losing(uids: ReadonlySet<string>) {
  return {
    name: 'losing',
    solve(input: ProvisionInput): ProvisionPlan {
      const plan = solveReference(input);
      return {
        ...plan,
        existing: new Map([...plan.existing].map(([n, us]) => [n, us.filter((u) => !uids.has(u))])),
        newNodeClaims: plan.newNodeClaims.map((k) => ({ ...k, pods: k.pods.filter((u) => !uids.has(u)) })),
      };
    },
  };
}

describe('disruption simulation', () => {
  const moving = pod({ cpu: '1', nodeName: 'gone' });
  const staying = pod({ cpu: '1', nodeName: 'other' });
  const waiting = { ...pod({ cpu: '1' }), unschedulable: true };
  const s = snapshot({
    nodePools: [nodePool({ consolidateAfter: 0 })],
    instanceTypes: [it4],
    nodes: [
      stateNode({ name: 'gone', instanceType: it4, zone: 'test-zone-1', capacityType: 'on-demand', pods: [moving] }),
      stateNode({ name: 'other', instanceType: it4, zone: 'test-zone-1', capacityType: 'on-demand', pods: [staying] }),
    ],
    pendingPods: [waiting],
  });
  const gone = s.nodes[0]!;

  it('places the pods of the removed node and of pending pods without errors', async () => {
    const sim = await simulate(
      s,
      [gone],
      { solver: { name: 'reference', solve: solveReference }, wellKnownLabels, caches: new ModelCaches() },
      true,
    );
    expect([...sim.errors]).toEqual([]);
    expect(sim.moved.map((p) => p.uid)).toEqual([moving.uid]);
    expect(sim.pods.size).toBe(2);
  });

  it('reports a moving pod the solver left out, but not a pending one', async () => {
    const lost = await simulate(
      s,
      [gone],
      { solver: losing(new Set([moving.uid])), wellKnownLabels, caches: new ModelCaches() },
      true,
    );
    expect([...lost.errors]).toEqual([[moving.uid, 'the solver did not place it']]);
    const lostPending = await simulate(
      s,
      [gone],
      { solver: losing(new Set([waiting.uid])), wellKnownLabels, caches: new ModelCaches() },
      true,
    );
    expect([...lostPending.errors]).toEqual([]);
  });

  it('marks the removed node in the simulated cluster and leaves the snapshot as it was', async () => {
    const sim = await simulate(
      s,
      [gone],
      { solver: { name: 'reference', solve: solveReference }, wellKnownLabels, caches: new ModelCaches() },
      true,
    );
    expect(sim.input.nodes.find((n) => n.name === 'gone')?.markedForDeletion).toBe(true);
    expect(sim.input.nodes.find((n) => n.name === 'other')).toBe(s.nodes[1]);
    expect(gone.markedForDeletion).toBeFalsy();
  });
});
