// Garbage collection: instances no NodeClaim owns, and registered NodeClaims whose instance is gone.
import { afterEach, describe, expect, it } from 'vitest';
import { deployment, guide, nodeClaims, running, simulation, type Simulation } from '../../../../test/support/environment.ts';

let sim: Simulation | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('nodeclaim.garbagecollection', () => {
  it('terminates an instance without a NodeClaim once it is 30 s old, at the next pass', async () => {
    sim = await simulation({ only: ['nodeclass.status', 'nodeclaim.garbagecollection'] });
    await sim.apply(guide('guide-03.yaml'));
    const orphan = await sim.provider.create({ nodeClaimName: 'never-created', nodePoolName: 'x', nodeClassName: 'default', requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5.large'] }], requests: {}, labels: {}, annotations: {}, taints: [], startupTaints: [] });
    await sim.clock.advance(9_000);
    expect((await sim.provider.get(orphan.providerID)).state).not.toBe('shutting-down');
    await sim.clock.advance(2 * 60_000 + 2_000);
    expect(['shutting-down', 'terminated']).toContain(sim.provider.all().find((i) => i.instance.providerID === orphan.providerID)!.instance.state);
  });

  it('keeps an instance whose NodeClaim has not recorded it yet (a launch in flight), and collects it once the NodeClaim records another', async () => {
    sim = await simulation({ only: ['nodeclass.status', 'nodeclaim.garbagecollection'] });
    await sim.apply(guide('guide-03.yaml'));
    const spec = { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: ['c5.large'] }] };
    await sim.kube.create('NodeClaim', { metadata: { name: 'slow', labels: { 'karpenter.sh/nodepool': 'x' } }, spec });
    const req = { nodeClaimName: 'slow', nodePoolName: 'x', nodeClassName: 'default', requirements: spec.requirements, requests: {}, labels: {}, annotations: {}, taints: [], startupTaints: [] };
    const first = await sim.provider.create(req);
    await sim.clock.advance(2 * 60_000 + 12_000);
    expect((await sim.provider.get(first.providerID)).state).toBe('running');
    // A restarted controller launched again and recorded the second instance: the first is an orphan now.
    const second = await sim.provider.create(req);
    await sim.kube.patchStatus('NodeClaim', 'slow', { providerID: second.providerID });
    await sim.clock.advance(2 * 60_000);
    expect(['shutting-down', 'terminated']).toContain(sim.provider.all().find((i) => i.instance.providerID === first.providerID)!.instance.state);
    expect((await sim.provider.get(second.providerID)).state).toBe('running');
  });

  it('deletes a registered NodeClaim whose instance is gone and whose node is not Ready', async () => {
    sim = await simulation({ kubeletDelays: { nodeRemovalMs: Infinity } });
    await sim.apply(guide('guide-03.yaml'));
    await sim.apply(guide('guide-05.yaml'));
    await sim.apply(deployment('web', 1));
    await sim.clock.advanceUntil(() => running(sim!, 'web') === 1, 180_000, 'running');
    const claim = nodeClaims(sim)[0]!;
    // The instance vanishes behind the controller's back (terminated in the console).
    await sim.provider.delete((claim.status as { providerID: string }).providerID);
    const gone = () => {
      const c = sim!.cluster.api.find('nodeclaims.karpenter.sh', undefined, claim.metadata.name!);
      return !c || c.metadata.deletionTimestamp !== undefined;
    };
    await sim.clock.advance(60_000);
    expect(gone()).toBe(false);
    await sim.clock.advanceUntil(gone, 3 * 60_000, 'nodeclaim deleted');
    expect(await sim.operator.metrics.value('karpenter_nodeclaims_disrupted_total', { reason: 'garbage_collected' })).toBe(1);
  });
});
