// Node and NodeClaim termination together against the simulator: a do-not-disrupt pod holds the drain
// until the NodePool's terminationGracePeriod runs out, then it is deleted and the node and instance go.
import { afterEach, describe, expect, it } from 'vitest';
import {
  deployment,
  events,
  guide,
  nodeClaims,
  nodes,
  pods,
  running,
  simulation,
  type Simulation,
} from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: graceful }
spec:
  template:
    spec:
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
      requirements: [{ key: node.kubernetes.io/instance-type, operator: In, values: [c5.xlarge] }]
      terminationGracePeriod: 5m
  disruption: { consolidateAfter: Never }
`;

describe('termination', () => {
  it('waits for do-not-disrupt pods until the termination grace period, then deletes them and the node', async () => {
    sim = await simulation();
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(POOL);
    await sim.apply(deployment('keep', 1, { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }));
    await sim.clock.advanceUntil(() => running(sim!, 'keep') === 1, 180_000, 'keep running');
    const node = nodes(sim)[0]!.metadata.name!;
    const claim = nodeClaims(sim)[0]!.metadata.name!;
    const deletedAt = sim.clock.now();
    await sim.operator.kube.delete('NodeClaim', claim);
    await sim.settle();
    const annotated = sim.cluster.api.get('nodeclaims.karpenter.sh', undefined, claim);
    expect(Date.parse(annotated.metadata.annotations!['karpenter.sh/nodeclaim-termination-timestamp']!)).toBe(
      Math.floor(deletedAt / 1000) * 1000 + 5 * 60_000,
    );
    // On the NodeClaim and on its Node, as Karpenter publishes it from both terminations.
    expect(
      events(sim, 'TerminationGracePeriodExpiring')
        .map((e) => (e['involvedObject'] as { kind: string }).kind)
        .sort(),
    ).toEqual(['Node', 'NodeClaim']);

    // The pod is not evicted; with a 30 s grace period it is deleted 30 s before the deadline.
    await sim.clock.advance(4 * 60_000);
    const original = pods(sim, 'keep').find((p) => (p.spec as { nodeName?: string }).nodeName === node)!;
    expect(original.metadata.deletionTimestamp).toBeUndefined();
    expect(events(sim, 'Evicted')).toHaveLength(0);
    await sim.clock.advanceUntil(() => !sim!.cluster.api.find('nodes', undefined, node), 3 * 60_000, 'node gone');
    expect(events(sim, 'Disrupted').map((e) => String(e['message']))).toEqual([
      expect.stringContaining('bypasses the PDB of the pod and the do-not-disrupt annotation'),
    ]);
    expect(sim.clock.now() - deletedAt).toBeGreaterThanOrEqual(4.5 * 60_000);
    await sim.clock.advanceUntil(
      () => !sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim),
      60_000,
      'nodeclaim gone',
    );
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_terminated_total', { nodepool: 'graceful' })).toBe(1);
    expect(await sim.operator.metrics.value('karpenter_nodes_terminated_total', { nodepool: 'graceful' })).toBe(1);
  });
});
