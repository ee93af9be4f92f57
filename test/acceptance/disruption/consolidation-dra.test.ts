// Karpenter's consolidation_dra_test.go (docs/karpenter/test-cases.md §8) at the engine level: the disruption scheduling
// simulation (engine/disruption/simulate.ts) run directly on candidates, with IgnoreDRARequests=false. It checks
// the two DRA concerns of a consolidation simulation: (A) devices a candidate node publishes are no scheduling
// target; (B) devices held by the candidates' pods are freed (only their share) and their claims re-allocated.
import { describe, expect, it } from 'vitest';
import { ModelCaches } from '../../../engine/model/caches.ts';
import type { ResourceClaim, ResourceSlice } from '../../../engine/domain/dra.ts';
import type { InstanceType, Pod, StateNode } from '../../../engine/domain/types.ts';
import { simulate, type Simulation } from '../../../engine/disruption/simulate.ts';
import { stateNode } from '../../fixtures/builders.ts';
import {
  allocatedClaim,
  clusterWideSlice,
  deviceClass,
  draPod,
  draState,
  GPU_DRIVER,
  gpuTemplates,
  nodeLocalPool,
  nodeLocalSlice,
  sharedCapacitySlice,
  claim,
} from '../../fixtures/dra.ts';
import { fakeInstanceType } from '../../fixtures/instancetypes.ts';
import { REQUESTED_DRA_DRIVERS_ANNOTATION } from '../../../engine/domain/dra.ts';
import { provision } from '../../../engine/solver/provision.ts';
import { env, OPTIONS, pool, reconcile, reference, wellKnown } from './harness.ts';

const options = { ...OPTIONS, ignoreDRARequests: false };
const gpuClass = deviceClass('gpu');

function gpuInstanceType(name: string, count: number): InstanceType {
  return {
    ...fakeInstanceType({ name, resources: { cpu: 16000, pods: 100 } }),
    deviceTemplates: gpuTemplates(name, count),
  };
}
const noGpu = fakeInstanceType({ name: 'no-gpu-it', resources: { cpu: 16000, pods: 100 } });

/** An initialized managed node of the type with 16 CPU / 100 pods allocatable (Karpenter's gpuNodeClaimAndNode). */
function gpuNode(name: string, it: InstanceType, pods: Pod[] = []): StateNode {
  const o = it.offerings.find((x) => x.capacityType === 'on-demand') ?? it.offerings[0]!;
  return stateNode({
    name,
    instanceType: it,
    zone: o.zone,
    capacityType: o.capacityType,
    allocatable: { cpu: '16', pods: '100' },
    pods,
  });
}

/** A ReplicaSet pod bound to the node, holding a claim allocated to one device (Karpenter's gpuPodOnNode). */
function gpuPodOnNode(
  node: string,
  claimName: string,
  poolName: string,
  device: string,
  o: { memory?: string } = {},
): { pod: Pod; claim: ResourceClaim } {
  const pod = draPod({
    name: `${claimName}-pod`,
    cpu: '100m',
    nodeName: node,
    claims: [{ name: 'gpu', claim: claimName }],
    containerClaims: ['gpu'],
  });
  return { pod, claim: allocatedClaim(claimName, poolName, GPU_DRIVER, device, pod, o) };
}

function run(
  its: InstanceType[],
  nodes: StateNode[],
  slices: ResourceSlice[],
  claims: ResourceClaim[],
  candidates: string[],
): Promise<Simulation> {
  const s = env({
    nodePools: [pool()],
    instanceTypes: its,
    nodes,
    options,
    dra: draState({ deviceClasses: [gpuClass], resourceSlices: slices, resourceClaims: claims }),
  });
  return simulate(
    s,
    s.nodes.filter((n) => candidates.includes(n.name)),
    { solver: reference, wellKnownLabels: wellKnown, caches: new ModelCaches() },
    true,
  );
}

const allNonPendingScheduled = (sim: Simulation) => sim.errors.size === 0;

describe('Consolidation/DRA', () => {
  it("re-allocates a candidate pod's device onto a replacement", async () => {
    const it1 = gpuInstanceType('gpu-it', 1);
    const { pod, claim: held } = gpuPodOnNode(
      'node-a',
      'gpu-claim',
      nodeLocalPool(GPU_DRIVER, 'node-a'),
      'incluster-gpu-0',
    );
    const sim = await run(
      [it1],
      [gpuNode('node-a', it1, [pod])],
      [nodeLocalSlice('node-a', GPU_DRIVER, 'incluster-gpu-0')],
      [held],
      ['node-a'],
    );
    expect(sim.errors.get(pod.uid)).toBeUndefined();
    expect(sim.plan.newNodeClaims).toHaveLength(1);
    expect(sim.plan.newNodeClaims[0]!.pods).toEqual([pod.uid]);
  });

  it("does not target a candidate node's published device", async () => {
    const it1 = gpuInstanceType('gpu-it', 1);
    const { pod, claim: held } = gpuPodOnNode(
      'node-a',
      'gpu-claim',
      nodeLocalPool(GPU_DRIVER, 'node-a'),
      'incluster-gpu-0',
    );
    // A second node publishes nothing: the candidate's own free-able device must not make the candidate a target.
    const sim = await run(
      [it1],
      [gpuNode('node-a', it1, [pod]), gpuNode('node-b', noGpu)],
      [nodeLocalSlice('node-a', GPU_DRIVER, 'incluster-gpu-0')],
      [held],
      ['node-a'],
    );
    expect(sim.errors.get(pod.uid)).toBeUndefined();
    expect(sim.plan.newNodeClaims).toHaveLength(1);
    expect([...sim.plan.existing.keys()]).not.toContain('node-a');
    expect([...sim.plan.existing.keys()]).toEqual([]);
  });

  it('does not consolidate when the claim cannot be satisfied elsewhere', async () => {
    const it1 = gpuInstanceType('gpu-it', 1); // the candidate's type, no longer offered
    const { pod, claim: held } = gpuPodOnNode(
      'node-a',
      'gpu-claim',
      nodeLocalPool(GPU_DRIVER, 'node-a'),
      'incluster-gpu-0',
    );
    const sim = await run(
      [noGpu],
      [gpuNode('node-a', it1, [pod])],
      [nodeLocalSlice('node-a', GPU_DRIVER, 'incluster-gpu-0')],
      [held],
      ['node-a'],
    );
    expect(sim.plan.newNodeClaims).toEqual([]);
    expect(allNonPendingScheduled(sim)).toBe(false);
    expect(sim.errors.get(pod.uid)).toMatch(/cannot be satisfied|device/);
  });

  it('does not free a device held by a live pod on a non-candidate node', async () => {
    const live = draPod({ name: 'live', cpu: '100m', nodeName: 'live-node' });
    const heldByLive = allocatedClaim('held-claim', 'shared-gpu-pool', GPU_DRIVER, 'shared-gpu-0', live);
    const { pod, claim: candidateClaim } = gpuPodOnNode(
      'candidate-node',
      'candidate-claim',
      'shared-gpu-pool',
      'shared-gpu-0',
    );
    const sim = await run(
      [noGpu],
      [gpuNode('live-node', noGpu, [live]), gpuNode('candidate-node', noGpu, [pod])],
      [clusterWideSlice('shared-gpu-pool', GPU_DRIVER, 'shared-gpu-0')],
      [heldByLive, candidateClaim],
      ['candidate-node'],
    );
    expect(sim.plan.newNodeClaims).toEqual([]);
    expect(allNonPendingScheduled(sim)).toBe(false);
  });

  it('re-allocates devices from multiple candidates onto one replacement (2 GPUs)', async () => {
    const it2 = gpuInstanceType('gpu-it', 2);
    const a = gpuPodOnNode('node-1', 'gpu-claim-1', nodeLocalPool(GPU_DRIVER, 'node-1'), 'incluster-gpu-0');
    const b = gpuPodOnNode('node-2', 'gpu-claim-2', nodeLocalPool(GPU_DRIVER, 'node-2'), 'incluster-gpu-0');
    const sim = await run(
      [it2],
      [gpuNode('node-1', it2, [a.pod]), gpuNode('node-2', it2, [b.pod])],
      [
        nodeLocalSlice('node-1', GPU_DRIVER, 'incluster-gpu-0'),
        nodeLocalSlice('node-2', GPU_DRIVER, 'incluster-gpu-0'),
      ],
      [a.claim, b.claim],
      ['node-1', 'node-2'],
    );
    expect(sim.errors.get(a.pod.uid)).toBeUndefined();
    expect(sim.errors.get(b.pod.uid)).toBeUndefined();
    expect(allNonPendingScheduled(sim)).toBe(true);
    expect(sim.plan.newNodeClaims).toHaveLength(1);
    expect([...sim.plan.newNodeClaims[0]!.pods].sort()).toEqual([a.pod.uid, b.pod.uid].sort());
    for (const n of sim.plan.existing.keys()) expect(['node-1', 'node-2']).not.toContain(n);
  });

  it("reclaims only the candidate's share of a shared device", async () => {
    const live = draPod({ name: 'live', cpu: '100m', nodeName: 'live-node' });
    const liveClaim = allocatedClaim('live-claim', 'shared-gpu-pool', GPU_DRIVER, 'shared-gpu-0', live, {
      memory: '4Gi',
    });
    const { pod, claim: candidateClaim } = gpuPodOnNode(
      'candidate-node',
      'candidate-claim',
      'shared-gpu-pool',
      'shared-gpu-0',
      { memory: '10Gi' },
    );
    const nodes = [gpuNode('live-node', noGpu, [live]), gpuNode('candidate-node', noGpu, [pod])];
    const slices = [sharedCapacitySlice('shared-gpu-pool', GPU_DRIVER, 'shared-gpu-0', '16Gi')];
    const sim = await run([noGpu], nodes, slices, [liveClaim, candidateClaim], ['candidate-node']);
    expect(sim.errors.get(pod.uid)).toBeUndefined();
    expect(allNonPendingScheduled(sim)).toBe(true);
    // The live pod's 4Gi stays: a claim for 13Gi would not fit on the 16Gi device, even with the candidate freed.
    const greedy = {
      ...candidateClaim,
      requests: candidateClaim.requests.map((r) => ({ ...r, capacity: { memory: 13 * 2 ** 30 } })),
      allocation: {
        devices: candidateClaim.allocation!.devices.map((d) => ({
          ...d,
          consumedCapacity: { [`${GPU_DRIVER}/memory`]: 10 * 2 ** 30 },
        })),
      },
    };
    const tooBig = await run([noGpu], nodes, slices, [liveClaim, greedy], ['candidate-node']);
    expect(allNonPendingScheduled(tooBig)).toBe(false);
  });

  it('consolidates two one-GPU nodes into one two-GPU replacement through disrupt()', async () => {
    // Multi-node consolidation never replaces nodes by their own type (filterOutSameInstanceType): the
    // candidates are one-GPU nodes and only the two-GPU type can take both claims.
    const it1 = gpuInstanceType('gpu-1', 1);
    const it2 = gpuInstanceType('gpu-2', 2);
    const a = gpuPodOnNode('node-1', 'gpu-claim-1', nodeLocalPool(GPU_DRIVER, 'node-1'), 'incluster-gpu-0');
    const b = gpuPodOnNode('node-2', 'gpu-claim-2', nodeLocalPool(GPU_DRIVER, 'node-2'), 'incluster-gpu-0');
    const s = env({
      nodePools: [pool()],
      instanceTypes: [it1, it2],
      options,
      nodes: [gpuNode('node-1', it1, [a.pod]), gpuNode('node-2', it1, [b.pod])],
      dra: draState({
        deviceClasses: [gpuClass],
        resourceSlices: [
          nodeLocalSlice('node-1', GPU_DRIVER, 'incluster-gpu-0'),
          nodeLocalSlice('node-2', GPU_DRIVER, 'incluster-gpu-0'),
        ],
        resourceClaims: [a.claim, b.claim],
      }),
    });
    const { decision } = await reconcile(s);
    expect(decision.kind).toBe('replace');
    if (decision.kind !== 'replace') return;
    expect(decision.candidates.map((c) => c.name).sort()).toEqual(['node-1', 'node-2']);
    expect(decision.replacements).toHaveLength(1);
    expect(decision.replacements[0]!.instanceTypes.map((o) => o.name)).toEqual(['gpu-2']);
    expect(decision.replacements[0]!.annotations).toEqual({ [REQUESTED_DRA_DRIVERS_ANNOTATION]: GPU_DRIVER });
  });

  it("provisioning re-plans a deleting node's DRA pod with its claim freed", async () => {
    const it1 = gpuInstanceType('gpu-it', 1);
    const { pod, claim: held } = gpuPodOnNode(
      'node-a',
      'gpu-claim',
      nodeLocalPool(GPU_DRIVER, 'node-a'),
      'incluster-gpu-0',
    );
    const deleting = { ...gpuNode('node-a', it1, [pod]), deleting: true };
    const s = env({
      nodePools: [pool()],
      instanceTypes: [it1],
      nodes: [deleting],
      options,
      dra: draState({
        deviceClasses: [gpuClass],
        resourceSlices: [nodeLocalSlice('node-a', GPU_DRIVER, 'incluster-gpu-0')],
        resourceClaims: [held],
      }),
    });
    const plan = await provision(s, [deleting.pods[0]!], { solver: reference, wellKnownLabels: wellKnown });
    expect(plan.unschedulable).toEqual([]);
    expect(plan.newNodeClaims.map((n) => n.pods)).toEqual([[pod.uid]]);
    // The same pod on a node that stays keeps its claim where it is: nowhere else to go.
    const staying = gpuNode('node-a', it1, [pod]);
    const kept = await provision({ ...s, nodes: [staying] }, [staying.pods[0]!], {
      solver: reference,
      wellKnownLabels: wellKnown,
    });
    expect(kept.newNodeClaims).toEqual([]);
  });

  it('keeps the candidate pod unscheduled when claims are ignored (IgnoreDRARequests=true)', async () => {
    const it1 = gpuInstanceType('gpu-it', 1);
    const { pod, claim: held } = gpuPodOnNode(
      'node-a',
      'gpu-claim',
      nodeLocalPool(GPU_DRIVER, 'node-a'),
      'incluster-gpu-0',
    );
    const s = env({
      nodePools: [pool()],
      instanceTypes: [it1],
      nodes: [gpuNode('node-a', it1, [pod])],
      options: OPTIONS,
      dra: draState({
        deviceClasses: [gpuClass],
        resourceSlices: [nodeLocalSlice('node-a', GPU_DRIVER, 'incluster-gpu-0')],
        resourceClaims: [held, claim('unused')],
      }),
    });
    const sim = await simulate(
      s,
      s.nodes,
      { solver: reference, wellKnownLabels: wellKnown, caches: new ModelCaches() },
      true,
    );
    expect(sim.errors.get(pod.uid)).toMatch(/IGNORE_DRA_REQUESTS/);
  });
});
