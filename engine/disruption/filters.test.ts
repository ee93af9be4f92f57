// The method filters (docs/karpenter/disruption.md §1.4) in Karpenter's order, with their words and events.
import { describe, expect, it } from 'vitest';
import { nodePool, pod, snapshot, stateNode } from '../../test/fixtures/builders.ts';
import { fakeInstanceType } from '../../test/fixtures/instancetypes.ts';
import { candidateSet } from './candidates.ts';
import { consolidationFilter, driftFilter, emptinessFilter, staticDriftFilter } from './filters.ts';

const it0 = fakeInstanceType({ name: 'x' });
const cand = (n: Parameters<typeof stateNode>[0] = {}, p: Parameters<typeof nodePool>[0] = {}, now = 0) => {
  const s = snapshot({
    now,
    nodePools: [nodePool(p)],
    instanceTypes: [it0],
    nodes: [stateNode({ name: 'n', instanceType: it0, zone: 'test-zone-1', capacityType: 'on-demand', ...n })],
  });
  return candidateSet(s, 'graceful').all[0]!;
};

describe('emptiness filter', () => {
  it('passes an empty consolidatable node and names what stops the others, in order', () => {
    expect(emptinessFilter(cand(), 0)).toBeUndefined();
    expect(emptinessFilter(cand({}, { replicas: 1 }), 0)?.code).toBe('static-nodepool');
    expect(emptinessFilter(cand({ pods: [pod()] }, { consolidateAfter: null }), 0)?.code).toBe(
      'consolidation-disabled',
    );
    expect(emptinessFilter({ ...cand(), node: { ...cand().node, bufferPods: 2 } }, 0)?.event?.message).toBe(
      'Node "n" has buffer pods',
    );
    expect(emptinessFilter(cand({ pods: [pod()] }), 0)?.code).toBe('not-empty');
    expect(emptinessFilter(cand({ conditions: {} }), 0)?.code).toBe('not-consolidatable');
  });
});

describe('consolidation filter', () => {
  it('checks instance type, labels, consolidateAfter, emptiness, policy and the condition, in that order', () => {
    const busy = { pods: [pod()] };
    expect(consolidationFilter(cand(busy), 0)).toBeUndefined();
    expect(
      consolidationFilter(cand({ ...busy, labels: { 'node.kubernetes.io/instance-type': 'gone' } }), 0)?.event?.message,
    ).toBe('Instance Type "gone" not found');
    expect(consolidationFilter(cand(busy, { consolidateAfter: null }), 0)?.event?.message).toBe(
      'NodePool "default" has consolidation disabled',
    );
    expect(consolidationFilter(cand(), 0)?.code).toBe('left-to-emptiness');
    expect(consolidationFilter(cand(), 0, true)).toBeUndefined();
    expect(consolidationFilter(cand(busy, { consolidationPolicy: 'WhenEmpty' }), 0)?.code).toBe('when-empty-policy');
    expect(consolidationFilter(cand(busy, { consolidationPolicy: 'Balanced' }), 0)).toBeUndefined();
  });

  it('counts consolidateAfter from the last pod event, else from initialization', () => {
    const minute = 60_000;
    const fromEvent = consolidationFilter(
      cand(
        { pods: [pod()], lastPodEventTime: 9 * minute, conditions: { initializedAt: 0 } },
        { consolidateAfter: 5 * minute },
        10 * minute,
      ),
      10 * minute,
    );
    expect(fromEvent?.message).toBe('consolidateAfter 5m not elapsed (4m left)');
    expect(fromEvent?.data).toMatchObject({ consolidateAfter: '5m0s', remainingMs: 4 * minute });
    const fromInit = consolidationFilter(
      cand({ pods: [pod()], conditions: { initializedAt: 8 * minute } }, { consolidateAfter: 5 * minute }, 10 * minute),
      10 * minute,
    );
    expect(fromInit?.message).toBe('consolidateAfter 5m not elapsed (3m left)');
    const elapsed = consolidationFilter(
      cand({ pods: [pod()], conditions: { initializedAt: 0 } }, { consolidateAfter: 5 * minute }, 10 * minute),
      10 * minute,
    );
    expect(elapsed?.code).toBe('not-consolidatable');
  });
});

describe('drift filters', () => {
  const drifted = { conditions: { drifted: { reason: 'x', since: 0 } } };
  it('send dynamic pools to Drift and static pools to StaticDrift', () => {
    expect(driftFilter(cand(drifted))).toBeUndefined();
    expect(driftFilter(cand())?.code).toBe('not-drifted');
    expect(driftFilter(cand(drifted, { replicas: 1 }))?.code).toBe('static-nodepool');
    expect(staticDriftFilter(cand(drifted, { replicas: 1 }))).toBeUndefined();
    expect(staticDriftFilter(cand(drifted))?.code).toBe('not-drifted');
  });
});
