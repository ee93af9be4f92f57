// Node registration and initialization (docs/karpenter/disruption.md §5.4): the kubelet registers the Node with
// karpenter.sh/unregistered:NoExecute; the controller takes it off, syncs the NodeClaim's labels,
// taints, finalizer and owner reference, and initializes the node only once its startup taints are gone.
import { afterEach, describe, expect, it } from 'vitest';
import {
  condition,
  deployment,
  guide,
  label,
  nodeClaims,
  nodes,
  running,
  simulation,
  taints,
  type Simulation,
} from '../support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: tainted }
spec:
  template:
    metadata:
      labels: { team: platform }
      annotations: { example.com/owner: platform }
    spec:
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
      requirements: [{ key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }]
      taints: [{ key: dedicated, value: platform, effect: NoSchedule }]
      startupTaints: [{ key: node.cilium.io/agent-not-ready, value: 'true', effect: NoExecute }]
`;

describe('registration and initialization', () => {
  it('removes the unregistered taint, syncs labels and taints, and initializes after the startup taint goes', async () => {
    sim = await simulation({ kubeletDelays: { startupTaintMs: 60_000 } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(POOL);
    await sim.apply(
      deployment('web', 1, {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }],
      }),
    );

    // The kubelet registers the node with the unregistered taint; the controller takes it off at once.
    await sim.clock.advanceUntil(
      () => nodes(sim!).length === 1 && label(nodes(sim!)[0]!, 'karpenter.sh/registered') === 'true',
      120_000,
      'registration',
    );
    const claim = nodeClaims(sim)[0]!;
    const node = nodes(sim)[0]!;
    expect(condition(claim, 'Registered')?.status).toBe('True');
    expect((claim.status as { nodeName: string }).nodeName).toBe(node.metadata.name);
    expect(taints(node).map((t) => t.key)).not.toContain('karpenter.sh/unregistered');
    expect(taints(node)).toEqual(
      expect.arrayContaining([
        { key: 'dedicated', value: 'platform', effect: 'NoSchedule' },
        { key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' },
      ]),
    );
    expect(node.metadata.labels).toMatchObject({
      team: 'platform',
      'karpenter.sh/nodepool': 'tainted',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'karpenter.sh/registered': 'true',
    });
    expect(node.metadata.annotations).toMatchObject({ 'example.com/owner': 'platform' });
    expect(node.metadata.finalizers).toContain('karpenter.sh/termination');
    expect(node.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'NodeClaim', name: claim.metadata.name, uid: claim.metadata.uid }),
    ]);

    // Ready, but the startup taint is still there: not initialized, and the pod waits.
    await sim.clock.advanceUntil(() => condition(nodes(sim!)[0]!, 'Ready')?.status === 'True', 60_000, 'node ready');
    await sim.settle();
    expect(condition(nodeClaims(sim)[0]!, 'Initialized')).toMatchObject({
      status: 'Unknown',
      reason: 'StartupTaintsExist',
    });
    expect(label(nodes(sim)[0]!, 'karpenter.sh/initialized')).toBeUndefined();
    expect(running(sim, 'web')).toBe(0);

    // The daemon that owns the startup taint removes it; the node initializes and the pod runs.
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 120_000, 'pod running');
    expect(label(nodes(sim)[0]!, 'karpenter.sh/initialized')).toBe('true');
    expect(condition(nodeClaims(sim)[0]!, 'Initialized')?.status).toBe('True');
    expect(condition(nodeClaims(sim)[0]!, 'Ready')?.status).toBe('True');
    expect(taints(nodes(sim)[0]!).map((t) => t.key)).toEqual(['dedicated']);
    expect(await sim.operator.metrics.value('karpenter_nodes_created_total', { nodepool: 'tainted' })).toBe(1);
    expect(
      await sim.operator.metrics.value('karpenter_nodeclaims_created_total', {
        nodepool: 'tainted',
        reason: 'provisioned',
      }),
    ).toBe(1);
  });
});
