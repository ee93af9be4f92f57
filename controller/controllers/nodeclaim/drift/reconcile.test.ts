// nodeclaim.drift against the simulator, without the disruption loop (nothing gets replaced): each of
// Karpenter's drift reasons sets Drifted with its reason, and undoing the change clears it.
import { afterEach, describe, expect, it } from 'vitest';
import { condition, deployment, guide, nodeClaims, running, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const ONLY = ['nodeclass.status', 'nodepool.hash', 'nodepool.readiness', 'provisioner', 'nodeclaim.lifecycle', 'nodeclaim.drift'];
const drifted = (s: Simulation) => condition(nodeClaims(s)[0]!, 'Drifted');
const zoneOf = (s: Simulation) => nodeClaims(s)[0]!.metadata.labels!['topology.kubernetes.io/zone']!;
type Requirement = { key: string; operator: string; values: string[] };

describe('nodeclaim.drift', () => {
  it('sets Drifted for requirements, node class and template drift, first reason first, and clears it when undone', async () => {
    sim = await simulation({ only: ONLY });
    await sim.apply(guide('guide-07.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'web running');
    expect(drifted(sim)).toBeUndefined();
    const pool = () => sim!.cluster.api.get('nodepools.karpenter.sh', undefined, 'production');
    const spec = () => (pool().spec as { template: { spec: { requirements: Requirement[] } } }).template.spec;
    const original = spec();

    // The pool no longer allows the node's zone: RequirementsDrifted.
    const zones = ['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c'].filter((z) => z !== zoneOf(sim!));
    const requirements = original.requirements.map((r) => (r.key === 'topology.kubernetes.io/zone' ? { ...r, values: zones } : r));
    sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', { spec: { template: { spec: { ...original, requirements } } } });
    await sim.settle();
    expect(drifted(sim)).toMatchObject({ status: 'True', reason: 'RequirementsDrifted' });
    sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', { spec: { template: { spec: original } } });
    await sim.settle();
    expect(drifted(sim)).toBeUndefined();

    // The EC2NodeClass changes: the cloud provider reports node class drift.
    sim.cluster.api.patch('ec2nodeclasses.karpenter.k8s.aws', undefined, 'production', 'merge', { spec: { tags: { Environment: 'staging' } } });
    await sim.settle();
    expect(drifted(sim)).toMatchObject({ status: 'True', reason: 'NodeClassDrift' });

    // The template changes too: the NodePool hash is checked first.
    sim.cluster.api.patch('nodepools.karpenter.sh', undefined, 'production', 'merge', { spec: { template: { metadata: { labels: { release: 'v2' } } } } });
    await sim.settle();
    expect(drifted(sim)).toMatchObject({ status: 'True', reason: 'NodePoolDrifted' });
  });
});
